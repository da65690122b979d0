// SPDX-License-Identifier: Apache-2.0
// stencil::Divisor must return exactly what `x / b` returns, for every x.
//  - The checked reciprocal path, run on the host: for float, every
//    significand of x at the binades where the path's safe range starts and
//    ends and at one in between (rounding depends on x's significand, not
//    its binade, inside the safe range: this covers every float there); for
//    double, random significands over the whole safe range.
//  - The branch-free path (integer divisors), on the host: for float, every
//    x whose quotient is subnormal or in the lowest normal binade, and every
//    significand at 1 and at the top of the range; for double, random x,
//    random subnormal quotients and quotients exactly halfway between two
//    subnormals. Plus zeros, infinities and NaN.
//  - `x / d` on each enabled execution space (the reciprocal path on a GPU)
//    against the host's plain division, bit for bit, including zeros, the
//    edges of the safe range, subnormals, infinities and NaN.
#include "stencil_test_spaces.hpp"

#include <stencil/divisor.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <class T>
bool same(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<Bits<T>>(a) == std::bit_cast<Bits<T>>(b);
}

// Divisors of the suite (118, 159), ones whose reciprocal needs a second
// correction (float 159), negative ones, powers of two and ones far from 1.
template <class T>
std::vector<T> divisors() {
  return {T(118), T(159), T(3),    T(-7),   T(10),    T(0.1),
          T(1),   T(-2),  T(1e-6), T(3e20), T(0.996), T(1.67)};
}

TEST(Divisor, ConstantsAndRefusals) {
  using Method = stencil::Divisor<double>::Method;
  using FloatMethod = stencil::Divisor<float>::Method;
  constexpr stencil::Divisor<double> d118(118.0);
  static_assert(d118.corrections() == 1 && d118.value() == 118.0);
  static_assert(d118.method() == Method::any_x);
  constexpr stencil::Divisor<float> f118(118.0f);
  static_assert(f118.corrections() == 1);
  static_assert(f118.method() == FloatMethod::any_x);
  // RN(1/159) in float is too far from 1/159 for one correction.
  constexpr stencil::Divisor<float> f159(159.0f);
  static_assert(f159.corrections() == 2);
  static_assert(f159.method() == FloatMethod::checked);
  constexpr stencil::Divisor<double> d159(159.0);
  static_assert(d159.corrections() == 1 && d159.method() == Method::any_x);
  // Not integers, or integers beyond 2^53: the checked path.
  static_assert(stencil::Divisor<double>(0.1).method() == Method::checked);
  static_assert(stencil::Divisor<double>(1.67).method() == Method::checked);
  static_assert(stencil::Divisor<double>(3e20).method() == Method::checked);
  static_assert(stencil::Divisor<double>(-7.0).method() == Method::any_x);
  // Out-of-range divisors divide plainly.
  static_assert(stencil::Divisor<double>(0.0).corrections() == 0);
  static_assert(stencil::Divisor<double>(-0.0).corrections() == 0);
  static_assert(
      stencil::Divisor<double>(std::numeric_limits<double>::denorm_min())
          .corrections() == 0);
  static_assert(stencil::Divisor<float>(std::numeric_limits<float>::infinity())
                    .corrections() == 0);
  // NaN is not a constant expression for every compiler's front end.
  EXPECT_EQ(stencil::Divisor<float>(std::numeric_limits<float>::quiet_NaN())
                .corrections(),
            0);
  // Built at run time (as stencil::Linear does), the same choice.
  for (double b : divisors<double>()) {
    volatile double runtime_b = b;
    stencil::Divisor<double> const at_run_time(runtime_b);
    EXPECT_GE(at_run_time.corrections(), 1) << b;
    EXPECT_EQ(at_run_time.method(), b == std::trunc(b) && std::abs(b) < 0x1p53
                                        ? Method::any_x
                                        : Method::checked)
        << b;
  }
  volatile float f = 159.0f;
  EXPECT_EQ(stencil::Divisor<float>(f).corrections(), 2);
}

template <class T>
void expect_reciprocal_path_exact(stencil::Divisor<T> const& d, T x,
                                  long& checked) {
  if (!d.in_fast_range(x)) return;
  ++checked;
  T const expected = x / d.value();
  T const got = d.quotient_by_reciprocal(x);
  if (!same(got, expected)) {
    ADD_FAILURE() << "x = " << x << ", b = " << d.value() << ": got " << got
                  << ", x / b is " << expected;
  }
}

TEST(Divisor, FloatReciprocalPathEverySignificand) {
  for (float b : divisors<float>()) {
    stencil::Divisor<float> const d(b);
    ASSERT_GE(d.corrections(), 1) << b;
    // The first and last binades of the safe range, and one in between.
    float low = std::numeric_limits<float>::min();
    while (!d.in_fast_range(low)) low *= 2;
    float high = std::numeric_limits<float>::max();
    while (!d.in_fast_range(high)) high /= 2;
    long checked = 0;
    expect_reciprocal_path_exact(d, 0.0f, checked);
    expect_reciprocal_path_exact(d, -0.0f, checked);
    for (float binade : {low, 1.0f, high}) {
      auto const base = std::bit_cast<std::uint32_t>(binade) & 0x7f800000u;
      for (std::uint32_t m = 0; m < (1u << 23); ++m) {
        float const x = std::bit_cast<float>(base | m);
        expect_reciprocal_path_exact(d, x, checked);
        expect_reciprocal_path_exact(d, -x, checked);
      }
    }
    EXPECT_EQ(checked, 2 + 3L * 2 * (1L << 23)) << b;
  }
}

TEST(Divisor, DoubleReciprocalPathRandomSignificands) {
  std::mt19937_64 gen(20261121);
  for (double b : divisors<double>()) {
    stencil::Divisor<double> const d(b);
    ASSERT_GE(d.corrections(), 1) << b;
    long checked = 0;
    for (int i = 0; i < 400000; ++i) {
      // A random sign, significand and biased exponent.
      double const x = std::bit_cast<double>(gen());
      expect_reciprocal_path_exact(d, x, checked);
      // The same significand near 1, where data usually is.
      double const near_one = std::bit_cast<double>(
          (std::bit_cast<std::uint64_t>(x) & 0x800fffffffffffffull) |
          0x3ff0000000000000ull);
      expect_reciprocal_path_exact(d, near_one, checked);
    }
    EXPECT_GT(checked, 400000) << b;
  }
}

template <class T>
void expect_any_x_exact(stencil::Divisor<T> const& d, T x, long& checked) {
  ++checked;
  T const expected = x / d.value();
  T const got = d.quotient_any_x(x);
  if (!same(got, expected)) {
    ADD_FAILURE() << "x = " << x << " (bits " << std::hex
                  << std::bit_cast<Bits<T>>(x) << std::dec
                  << "), b = " << d.value() << ": got " << got << ", x / b is "
                  << expected;
  }
}

// Integer divisors (even ones have quotients halfway between subnormals).
template <class T>
std::vector<T> integer_divisors() {
  return {T(118), T(159), T(3), T(-7), T(1), T(1024), T(-10)};
}

TEST(Divisor, FloatBranchFreePathSubnormalQuotientsAndSignificands) {
  // Fewer divisors than elsewhere: each costs every float below 4|b|
  // times the smallest normal.
  for (float b : {118.0f, 3.0f, -10.0f, 1.0f}) {
    stencil::Divisor<float> const d(b);
    ASSERT_EQ(d.method(), stencil::Divisor<float>::Method::any_x) << b;
    long checked = 0;
    // Every x up to where x / b leaves the lowest normal binade: x
    // subnormal, and the binades of x from 2^-126 to 2^(-125 + log2|b|).
    float const top = 4 * std::numeric_limits<float>::min() * std::abs(b);
    std::uint32_t const last = std::bit_cast<std::uint32_t>(top);
    for (std::uint32_t bits = 0; bits <= last; ++bits) {
      float const x = std::bit_cast<float>(bits);
      expect_any_x_exact(d, x, checked);
      expect_any_x_exact(d, -x, checked);
    }
    // Every significand at 1 and in the top binade.
    for (float binade : {1.0f, 0x1p127f}) {
      auto const base = std::bit_cast<std::uint32_t>(binade);
      for (std::uint32_t m = 0; m < (1u << 23); ++m) {
        expect_any_x_exact(d, std::bit_cast<float>(base | m), checked);
      }
    }
    for (float x : {std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::max()}) {
      expect_any_x_exact(d, x, checked);
    }
    EXPECT_GT(checked, 2L * last) << b;
  }
}

TEST(Divisor, DoubleBranchFreePathTiesAndRandom) {
  std::mt19937_64 gen(118);
  constexpr double u = std::numeric_limits<double>::denorm_min();
  for (double b : integer_divisors<double>()) {
    stencil::Divisor<double> const d(b);
    ASSERT_EQ(d.method(), stencil::Divisor<double>::Method::any_x) << b;
    long checked = 0;
    std::int64_t const tie_step = static_cast<std::int64_t>(std::abs(b)) / 2;
    for (int i = 0; i < 200000; ++i) {
      std::uint64_t const g = gen();
      expect_any_x_exact(d, std::bit_cast<double>(g), checked);
      // A random subnormal quotient: x below 2^-1022 * |b|.
      double const tiny =
          std::bit_cast<double>(g & 0x800fffffffffffffull) * std::abs(b);
      expect_any_x_exact(d, tiny, checked);
      // x = (b/2)(2m+1)u: x / b = (m + 1/2)u, halfway between subnormals,
      // with m odd and even.
      if (std::fmod(b, 2.0) == 0) {
        std::int64_t const m = static_cast<std::int64_t>(g >> 14);
        double const tie = static_cast<double>(tie_step * (2 * m + 1)) * u;
        expect_any_x_exact(d, tie, checked);
        expect_any_x_exact(d, -tie, checked);
      }
    }
    for (double x :
         {0.0, -0.0, std::numeric_limits<double>::infinity(),
          -std::numeric_limits<double>::infinity(),
          std::numeric_limits<double>::quiet_NaN(),
          std::numeric_limits<double>::max(), u, -u, 59 * u, 61 * u, 177 * u}) {
      expect_any_x_exact(d, x, checked);
    }
    EXPECT_GT(checked, 400000) << b;
  }
}

// Values on either side of every edge of the safe range, zeros, subnormals,
// infinities, NaN and random ones.
template <class T>
std::vector<T> probe_values(stencil::Divisor<T> const& d) {
  using L = std::numeric_limits<T>;
  std::vector<T> xs{T(0),     -T(0),         L::denorm_min(), L::min(),
                    L::max(), L::infinity(), -L::infinity(),  L::quiet_NaN(),
                    T(1),     T(-1.5),       T(117.99),       T(236)};
  for (T edge = L::min(); edge < L::max() / 2; edge *= 2) {
    if (d.in_fast_range(edge) != d.in_fast_range(edge * 2)) {
      for (T e : {edge, edge * 2}) {
        xs.push_back(e);
        xs.push_back(std::nextafter(e, T(0)));
        xs.push_back(std::nextafter(e, L::infinity()));
        xs.push_back(-e);
      }
    }
  }
  std::mt19937_64 gen(7);
  T const b = Kokkos::abs(d.value());
  for (int i = 0; i < 2000; ++i) {
    // Subnormal quotients (a random subnormal times |b|), and quotients
    // halfway between subnormals.
    Bits<T> const sign_and_fraction = (Bits<T>(1) << (sizeof(T) * 8 - 1)) |
                                      ((Bits<T>(1) << (L::digits - 1)) - 1);
    xs.push_back(
        std::bit_cast<T>(static_cast<Bits<T>>(gen()) & sign_and_fraction) * b);
    xs.push_back(static_cast<T>(2 * i + 1) * b / 2 * L::denorm_min());
  }
  for (int i = 0; i < 20000; ++i) {
    xs.push_back(std::bit_cast<T>(static_cast<Bits<T>>(gen())));
    xs.push_back(
        static_cast<T>(std::uniform_real_distribution<double>(-4.0, 4.0)(gen)));
  }
  return xs;
}

template <class Space>
class DivisorOnSpace : public ::testing::Test {};
TYPED_TEST_SUITE(DivisorOnSpace, stencil_test::ExecutionSpaces);

template <class Space, class T>
void expect_divisions_exact_on(T b) {
  stencil::Divisor<T> const d(b);
  std::vector<T> const xs = probe_values(d);
  int const n = static_cast<int>(xs.size());
  Kokkos::View<T*, Space> x("x", n), q("q", n);
  auto x_host = Kokkos::create_mirror_view(x);
  for (int i = 0; i < n; ++i) x_host(i) = xs[i];
  Kokkos::deep_copy(x, x_host);
  Kokkos::parallel_for(
      "divisor", Kokkos::RangePolicy<Space>(0, n),
      KOKKOS_LAMBDA(int i) { q(i) = x(i) / d; });
  auto q_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, q);
  int failures = 0;
  for (int i = 0; i < n && failures < 10; ++i) {
    T const expected = xs[i] / b;
    if (!same(q_host(i), expected)) {
      ++failures;
      ADD_FAILURE() << "x = " << xs[i] << ", b = " << b << ": got " << q_host(i)
                    << ", x / b is " << expected;
    }
  }
}

TYPED_TEST(DivisorOnSpace, MatchesPlainDivisionBitForBit) {
  for (double b : divisors<double>()) {
    expect_divisions_exact_on<TypeParam>(b);
  }
  for (float b : divisors<float>()) {
    expect_divisions_exact_on<TypeParam>(b);
  }
  // Divisors that divide plainly everywhere.
  expect_divisions_exact_on<TypeParam>(
      std::numeric_limits<double>::denorm_min());
  expect_divisions_exact_on<TypeParam>(-0.0f);
}

}  // namespace
