// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Kokkos_Core.hpp>

#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace stencil {

/// Division by a value fixed before the sweep: `x / d` with a
/// `Divisor<T> d(b)` returns exactly `x / b` (the correctly rounded
/// quotient, to the last bit, for every x), but cheaper on GPUs.
///
/// Why: a GPU has no divide instruction. For every `x / b` it computes an
/// approximate reciprocal of b (in double: a MUFU.RCP64H and five FMAs),
/// then the quotient, then a range check that branches to a slow path. When
/// b is the same for every cell, the reciprocal is loop-invariant, but the
/// compiler redoes it for every division; and the branch splits the code
/// into one basic block per cell, so the scheduler cannot overlap the cells
/// of a thread (in the temporal-blocking kernels that cost more than the
/// arithmetic). A Divisor keeps y = RN(1/b) and divides with one multiply
/// and two FMAs (Markstein's correction: q = x*y, r = q*b - x exactly,
/// RN(q - r*y) = RN(x/b) whenever q is within an ulp of x/b).
///
/// How x / d divides, chosen by the constructor (`method()`):
///  - `any_x`, when b is an integer (1 <= |b| < 2^digits) and y is close
///    enough to 1/b for one correction: no branch at all. With an integer b
///    the residual q*b - x is exact for every finite x, subnormal quotients
///    included; two cases are fixed with selects: a quotient exactly halfway
///    between two subnormals (the correction rounds it towards zero, IEEE
///    to even) and x = +-inf (the correction makes a NaN; q is right).
///  - `checked`, for other b in range: the reciprocal for x in a range where
///    no step under- or overflows (and x = +-0), a branch to the plain
///    division for the rest; a second correction where y is not close enough.
///  - `plain`: b is zero, subnormal, infinite or NaN, or so large or small
///    that no x range is safe.
/// Host code always divides plainly: CPUs have a divide instruction.
///
/// Write the divisor as a constexpr local in a functor so that its
/// reciprocal and ranges are compile-time constants and the method choice
/// folds away:
///
///   constexpr stencil::Divisor<T> by_118(T(118));
///   return (5 * in(-1, 0) + ... ) / by_118;
template <std::floating_point T>
class Divisor {
 public:
  KOKKOS_FUNCTION constexpr explicit Divisor(T divisor) : m_divisor(divisor) {
    T const magnitude = divisor < T(0) ? -divisor : divisor;
    if (!(magnitude >= smallest_normal && magnitude <= largest)) {
      return;  // zero, subnormal, infinite or NaN: plain division
    }
    int const e = exponent(magnitude);
    // x range in which the quotient, x*y and the residual neither overflow
    // nor underflow: [2^low, 2^high).
    int const low = max_of(min_exponent + digits + 1, min_exponent + 2 + e);
    int const high = max_exponent - 1 + (e < 0 ? e : 0);
    if (low >= high) return;
    m_reciprocal = T(1) / magnitude;
    m_magnitude = magnitude;
    m_negative = divisor < T(0);
    m_low = power_of_two(low);
    m_high = power_of_two(high);
    // |x*y - x/b| = |x/b|*|y*b - 1| < ulp(x/b)/2 (|x/b| is below the next
    // power of two) keeps RN(x*y) within an ulp of x/b, which one
    // correction needs.
    m_corrections =
        reciprocal_error(m_reciprocal, magnitude) <= power_of_two(-digits - 1)
            ? 1
            : 2;
    m_method = Method::checked;
    if (m_corrections == 1 && magnitude < power_of_two(digits) &&
        is_integer(magnitude)) {
      m_method = Method::any_x;
      // An odd b has no quotient halfway between two subnormals; |r| >= 0
      // never equals -1.
      m_tie_residual =
          is_integer(magnitude / T(2)) ? magnitude / T(2) * denorm_min : T(-1);
    }
  }

  enum class Method : unsigned char { plain, checked, any_x };

  KOKKOS_FUNCTION constexpr T value() const { return m_divisor; }
  KOKKOS_FUNCTION constexpr Method method() const { return m_method; }
  /// Corrections after the multiply by the reciprocal: 0 for `plain`, else
  /// 1 or 2.
  KOKKOS_FUNCTION constexpr int corrections() const { return m_corrections; }

  /// x / b, rounded as the plain division rounds it. The device paths,
  /// `quotient_any_x` and `quotient_by_reciprocal`, are callable anywhere
  /// so that hosts can test them.
  KOKKOS_FORCEINLINE_FUNCTION T divide(T x) const {
    KOKKOS_IF_ON_DEVICE((return device_divide(x);))
    KOKKOS_IF_ON_HOST((return x / m_divisor;))
  }
  KOKKOS_FORCEINLINE_FUNCTION friend T operator/(T x, Divisor const& d) {
    return d.divide(x);
  }

  /// The quotient for method() == any_x, branch-free.
  KOKKOS_FORCEINLINE_FUNCTION T quotient_any_x(T x) const {
    T const q = x * m_reciprocal;
    T const r = residual(x, q);
    T v = Kokkos::fma(-r, m_reciprocal, q);
    // Halfway between two subnormals (then and only then |r| = b/2 times the
    // smallest subnormal): v is the neighbour towards zero; IEEE wants the
    // even one, one unit further when v is odd.
    using Bits =
        std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    Bits const bits = Kokkos::bit_cast<Bits>(v);
    Bits const odd = bits & Bits(1);
    v = Kokkos::bit_cast<T>(bits +
                            (Kokkos::abs(r) == m_tie_residual ? odd : Bits(0)));
    // Only x = +-inf makes a NaN from a number (inf*b - inf); q is +-inf.
    v = Kokkos::isnan(v) ? q : v;
    return m_negative ? -v : v;
  }

  /// Whether the reciprocal path is exact for x: |x| in [2^low, 2^high), or
  /// x = ±0 (which it gets right, sign included).
  KOKKOS_FORCEINLINE_FUNCTION bool in_fast_range(T x) const {
    T const magnitude = Kokkos::abs(x);
    return (magnitude >= m_low && magnitude < m_high) || x == T(0);
  }
  /// The quotient through the reciprocal, for x in the fast range and a
  /// divisor with corrections() > 0.
  KOKKOS_FORCEINLINE_FUNCTION T quotient_by_reciprocal(T x) const {
    T q = x * m_reciprocal;
    if (m_corrections == 2) q = Kokkos::fma(-residual(x, q), m_reciprocal, q);
    // residual() is -(x - q*b): written with the sign flipped so that
    // x = -0 gives -0 (the plain form gives +0 there).
    q = Kokkos::fma(-residual(x, q), m_reciprocal, q);
    return m_negative ? -q : q;
  }

 private:
  KOKKOS_FORCEINLINE_FUNCTION T device_divide(T x) const {
    if (m_method == Method::any_x) return quotient_any_x(x);
    if (m_method == Method::checked && in_fast_range(x)) {
      return quotient_by_reciprocal(x);
    }
    return x / m_divisor;
  }
  KOKKOS_FORCEINLINE_FUNCTION T residual(T x, T q) const {
    return Kokkos::fma(q, m_magnitude, -x);
  }

  // Class-scope constants: usable in device code, unlike the functions.
  static constexpr T smallest_normal = std::numeric_limits<T>::min();
  static constexpr T largest = std::numeric_limits<T>::max();
  static constexpr int digits = std::numeric_limits<T>::digits;  // 53, 24
  static constexpr int min_exponent =
      std::numeric_limits<T>::min_exponent - 1;  // of min(): -1022, -126
  static constexpr int max_exponent =
      std::numeric_limits<T>::max_exponent - 1;  // of max(): 1023, 127

  static constexpr T denorm_min = std::numeric_limits<T>::denorm_min();

  /// Whether a positive normal v is an integer: subtracting its binary
  /// digits from 2^exponent(v) down to 2^0 leaves nothing (each subtraction
  /// is exact).
  KOKKOS_FUNCTION static constexpr bool is_integer(T v) {
    T rest = v;
    for (T p = power_of_two(exponent(v)); p >= T(1); p /= T(2)) {
      if (rest >= p) rest -= p;
    }
    return rest == T(0);
  }
  KOKKOS_FUNCTION static constexpr int max_of(int a, int b) {
    return a > b ? a : b;
  }
  /// floor(log2(v)) of a positive normal v, exactly.
  KOKKOS_FUNCTION static constexpr int exponent(T v) {
    int e = 0;
    while (v >= T(2)) {
      v /= T(2);
      ++e;
    }
    while (v < T(1)) {
      v *= T(2);
      --e;
    }
    return e;
  }
  KOKKOS_FUNCTION static constexpr T power_of_two(int e) {
    T v = T(1);
    for (; e > 0; --e) v *= T(2);
    for (; e < 0; ++e) v /= T(2);
    return v;
  }
  /// |y*b - 1|, exact enough to compare with 2^-digits: in a constant
  /// evaluation through Dekker's exact product (no FMA there), at run time
  /// through an FMA (a contracting compiler would break Dekker's split).
  KOKKOS_FUNCTION static constexpr T reciprocal_error(T y, T b) {
    T error{};
    if (__builtin_is_constant_evaluated()) {
      T const product = y * b;
      T const product_error = exact_product_error(y, b, product);
      error = (product - T(1)) + product_error;  // product - 1 is exact
    } else {
      error = Kokkos::fma(y, b, T(-1));
    }
    return error < T(0) ? -error : error;
  }
  /// a*b - RN(a*b), exactly (Veltkamp split, Dekker product).
  KOKKOS_FUNCTION static constexpr T exact_product_error(T a, T b, T product) {
    T const split = power_of_two((digits + 1) / 2) + T(1);
    T const a_scaled = split * a, b_scaled = split * b;
    T const a_high = a_scaled - (a_scaled - a), a_low = a - a_high;
    T const b_high = b_scaled - (b_scaled - b), b_low = b - b_high;
    return ((a_high * b_high - product) + a_high * b_low + a_low * b_high) +
           a_low * b_low;
  }

  T m_divisor;
  T m_reciprocal = T(0);
  T m_magnitude = T(0);
  T m_low = T(0);
  T m_high = T(0);
  T m_tie_residual = T(-1);
  int m_corrections = 0;
  Method m_method = Method::plain;
  bool m_negative = false;
};

}  // namespace stencil
