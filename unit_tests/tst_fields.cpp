// SPDX-License-Identifier: Apache-2.0
// Multi-field stencils on a State: the suite's solvers (two time levels, a
// read-only coefficient, two coupled species) on every policy that runs
// them, against plain host loops written from their formulas; position and
// time; hooks; and the refusals.
#include "fields_reference.hpp"
#include "stencil_test_spaces.hpp"
#include "test_support.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>
#include <stencil/suite/solvers.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using stencil::Boundary;
using stencil_test::fields::HostField;
using stencil_test::fields::to_host;

template <class Space>
class Fields : public ::testing::Test {};
TYPED_TEST_SUITE(Fields, stencil_test::ExecutionSpaces);

/// A smooth, cell-dependent value in [lo, hi] (halo cells included).
double pattern(int seed, int z, int y, int x, double lo = 0.0,
               double hi = 1.0) {
  double const s = std::sin(0.37 * x + 0.91 * y + 1.31 * z + 0.73 * seed);
  return lo + (hi - lo) * 0.5 * (1.0 + s);
}

/// Fills level `level` of field `f` (or every buffer, level = 1) with
/// pattern(seed).
template <class State>
void fill_pattern(State& s, int f, int seed, double lo = 0.0, double hi = 1.0,
                  int level = 1) {
  constexpr int rank = State::rank;
  auto value = [&](auto... c) {
    int const cs[] = {c...};
    int zyx[3] = {0, 0, 0};
    for (int d = 0; d < rank; ++d) zyx[3 - rank + d] = cs[d];
    return pattern(seed, zyx[0], zyx[1], zyx[2], lo, hi);
  };
  if (level == 1) {
    stencil::fill(s, f, value);
  } else {
    stencil::fill_level(s, f, level, value);
  }
}

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 2e-5 : 1e-12;
}

/// Expects field `f` of `s` to equal `expected` on the interior.
template <class State>
void expect_field(State const& s, int f, HostField const& expected,
                  std::string const& what) {
  using T = typename State::value_type;
  HostField const got = to_host(s, f);
  int bad = 0;
  stencil_test::fields::for_interior(expected, [&](int z, int y, int x) {
    double const e = expected(z, y, x);
    double const g = got(z, y, x);
    if (!(std::abs(g - e) <= tolerance<T>() * (1.0 + std::abs(e)))) {
      if (++bad <= 3) {
        ADD_FAILURE() << what << ": field " << f << " cell (" << z << ", " << y
                      << ", " << x << ") is " << g << ", reference " << e;
      }
    }
  });
  EXPECT_EQ(bad, 0) << what;
}

/// The policies a multi-field run is checked with on this space.
template <class Space, class F>
void for_each_fields_policy(F&& f) {
  f(stencil::Naive{}, "Naive");
  f(stencil::SpatialBlocking{{.x = 8, .y = 4, .z = 3}}, "SpatialBlocking");
  f(stencil::SpatialBlocking{}, "SpatialBlocking default tile");
  f(stencil::Auto{}, "Auto");
}

/// Runs `steps` steps; every policy for_each_fields_policy lists must run
/// every multi-field stencil (a refusal fails the test).
template <class Space, class State, class Op, class Policy>
bool run(State& s, Op const& op, int steps, Policy const& policy,
         std::string const& what) {
  try {
    stencil::iterate(Space{}, s, op, steps, policy);
  } catch (stencil::error const& e) {
    ADD_FAILURE() << what << ": " << e.what();
    return false;
  }
  Kokkos::fence();
  return true;
}

// ---------------------------------------------------------------- wave

template <class Space, class T, int Rank, int R>
void check_wave(std::array<int, Rank> extents, int halo, Boundary boundary,
                int steps) {
  using Op = stencil::suite::Wave<Rank, R>;
  for_each_fields_policy<Space>([&](auto policy, char const* name) {
    std::string const what = std::string(Op::name) + " " + name + " " +
                             (boundary == Boundary::periodic ? "periodic"
                                                             : "fixed") +
                             " halo " + std::to_string(halo) + " steps " +
                             std::to_string(steps) +
                             (std::is_same_v<T, float> ? " float" : " double");
    stencil::State<T, Rank, typename Space::memory_space> s(
        "wave", extents, stencil::field_specs<Op>({"u"}),
        {.halo = halo, .boundary = boundary});
    fill_pattern(s, 0, 1, -1.0, 1.0, 0);
    fill_pattern(s, 0, 2, -1.0, 1.0, -1);
    HostField u = to_host(s, 0, 0), u_old = to_host(s, 0, -1);
    auto const w = stencil_test::fields::second_difference(R);
    for (int n = 0; n < steps; ++n) {
      if (boundary == Boundary::periodic) stencil_test::fields::wrap_halo(u);
      HostField next = u_old;  // the new level overwrites n-1 in place
      stencil_test::fields::for_interior(u, [&](int z, int y, int x) {
        next(z, y, x) = 2 * u(z, y, x) - u_old(z, y, x) +
                        0.09 * stencil_test::fields::laplacian(u, z, y, x, w);
      });
      u_old = u;
      u = next;
    }
    if (!run<Space>(s, Op{}, steps, policy, what)) return;
    expect_field(s, 0, u, what);
    // The level before is the reference's n-1 (two buffers, rotated).
    if (steps > 0) {
      HostField const got_old = to_host(s, 0, -1);
      double const e = u_old(0, 0, extents[Rank - 1] / 2);
      EXPECT_NEAR(got_old(0, 0, extents[Rank - 1] / 2), e,
                  tolerance<T>() * (1 + std::abs(e)))
          << what << ": level n-1";
    }
    EXPECT_EQ(s.buffers(0), 2) << "leapfrog keeps two buffers";
    EXPECT_DOUBLE_EQ(s.time(), steps * 1.0);
  });
}

TYPED_TEST(Fields, LeapfrogWaveMatchesTheReference) {
  using Space = TypeParam;
  check_wave<Space, double, 2, 1>({13, 11}, 1, Boundary::fixed, 7);
  check_wave<Space, float, 2, 1>({9, 14}, 2, Boundary::periodic, 6);
  check_wave<Space, double, 2, 2>({11, 9}, 2, Boundary::periodic, 5);
  check_wave<Space, float, 2, 4>({13, 17}, 5, Boundary::fixed, 3);
  check_wave<Space, double, 3, 1>({7, 9, 11}, 1, Boundary::periodic, 5);
  check_wave<Space, float, 3, 2>({7, 6, 9}, 3, Boundary::fixed, 4);
  check_wave<Space, double, 2, 3>({15, 7}, 3, Boundary::fixed, 1);
}

// ------------------------------------------------------- heat-varcoef

template <class Space, class T, int Rank>
void check_heat_varcoef(std::array<int, Rank> extents, int halo,
                        Boundary boundary, int steps) {
  using Op = stencil::suite::HeatVarCoef<Rank>;
  for_each_fields_policy<Space>([&](auto policy, char const* name) {
    std::string const what = std::string(Op::name) + " " + name + " steps " +
                             std::to_string(steps) +
                             (std::is_same_v<T, float> ? " float" : " double");
    stencil::State<T, Rank, typename Space::memory_space> s(
        "heat", extents, stencil::field_specs<Op>({"u", "k"}),
        {.halo = halo, .boundary = boundary});
    EXPECT_EQ(s.buffers(1), 1) << "a coefficient keeps one buffer";
    fill_pattern(s, 0, 3);
    fill_pattern(s, 1, 4, 0.5, 1.5);
    HostField u = to_host(s, 0), k = to_host(s, 1);
    if (boundary == Boundary::periodic) stencil_test::fields::wrap_halo(k);
    for (int n = 0; n < steps; ++n) {
      if (boundary == Boundary::periodic) stencil_test::fields::wrap_halo(u);
      HostField next = u;
      stencil_test::fields::for_interior(u, [&](int z, int y, int x) {
        double flux = 0;
        for (int a = 3 - Rank; a < 3; ++a) {
          int o[3] = {0, 0, 0};
          o[a] = 1;
          double const c = u(z, y, x), kc = k(z, y, x);
          double const up = u(z + o[0], y + o[1], x + o[2]);
          double const um = u(z - o[0], y - o[1], x - o[2]);
          double const kp = k(z + o[0], y + o[1], x + o[2]);
          double const km = k(z - o[0], y - o[1], x - o[2]);
          flux += 0.5 * (kc + kp) * (up - c) - 0.5 * (kc + km) * (c - um);
        }
        next(z, y, x) = u(z, y, x) + 0.1 * flux;
      });
      u = next;
    }
    if (!run<Space>(s, Op{}, steps, policy, what)) return;
    expect_field(s, 0, u, what);
  });
}

TYPED_TEST(Fields, VariableCoefficientHeatMatchesTheReference) {
  using Space = TypeParam;
  check_heat_varcoef<Space, double, 2>({13, 9}, 1, Boundary::fixed, 7);
  check_heat_varcoef<Space, float, 2>({10, 17}, 2, Boundary::periodic, 5);
  check_heat_varcoef<Space, double, 3>({5, 9, 7}, 1, Boundary::periodic, 6);
  check_heat_varcoef<Space, float, 3>({7, 5, 11}, 2, Boundary::fixed, 3);
}

// ------------------------------------------------- two coupled species

template <class Space, class T, class Op, class Reaction>
void check_two_species(Op const& op, std::array<int, 2> extents, int halo,
                       Boundary boundary, int steps, Reaction reaction,
                       double diffusion_u, double diffusion_v) {
  for_each_fields_policy<Space>([&](auto policy, char const* name) {
    std::string const what = std::string(Op::name) + " " + name + " steps " +
                             std::to_string(steps) +
                             (std::is_same_v<T, float> ? " float" : " double");
    stencil::State<T, 2, typename Space::memory_space> s(
        "species", extents, stencil::field_specs<Op>({"u", "v"}),
        {.halo = halo, .boundary = boundary});
    fill_pattern(s, 0, 5, 0.2, 1.0);
    fill_pattern(s, 1, 6, 0.0, 0.5);
    HostField u = to_host(s, 0), v = to_host(s, 1);
    auto const w = stencil_test::fields::second_difference(1);
    for (int n = 0; n < steps; ++n) {
      if (boundary == Boundary::periodic) {
        stencil_test::fields::wrap_halo(u);
        stencil_test::fields::wrap_halo(v);
      }
      HostField un = u, vn = v;
      stencil_test::fields::for_interior(u, [&](int z, int y, int x) {
        double const lu = stencil_test::fields::laplacian(u, z, y, x, w);
        double const lv = stencil_test::fields::laplacian(v, z, y, x, w);
        auto const [du, dv] = reaction(u(z, y, x), v(z, y, x));
        un(z, y, x) = u(z, y, x) + diffusion_u * lu + du;
        vn(z, y, x) = v(z, y, x) + diffusion_v * lv + dv;
      });
      u = un;
      v = vn;
    }
    if (!run<Space>(s, op, steps, policy, what)) return;
    expect_field(s, 0, u, what);
    expect_field(s, 1, v, what);
  });
}

TYPED_TEST(Fields, GrayScottMatchesTheReference) {
  using Space = TypeParam;
  auto const reaction = [](double u, double v) {
    return std::array<double, 2>{-u * v * v + 0.035 * (1 - u),
                                 u * v * v - (0.035 + 0.065) * v};
  };
  stencil::suite::GrayScott const op;
  check_two_species<Space, double>(op, {13, 11}, 1, Boundary::periodic, 9,
                                   reaction, 0.16, 0.08);
  check_two_species<Space, float>(op, {9, 16}, 2, Boundary::periodic, 4,
                                  reaction, 0.16, 0.08);
  check_two_species<Space, double>(op, {7, 7}, 1, Boundary::fixed, 5,
                                   reaction, 0.16, 0.08);
}

TYPED_TEST(Fields, BrusselatorMatchesTheReference) {
  using Space = TypeParam;
  auto const op = stencil::suite::Bruss::for_points(12);
  double const dt = op.dt, diffusion = 2e-3 * op.inv_h2 * op.dt;
  auto const reaction = [dt](double u, double v) {
    return std::array<double, 2>{dt * (1 + u * u * v - 4.4 * u),
                                 dt * (3.4 * u - u * u * v)};
  };
  check_two_species<Space, double>(op, {12, 12}, 1, Boundary::fixed, 11,
                                   reaction, diffusion, diffusion);
  check_two_species<Space, float>(op, {12, 12}, 1, Boundary::fixed, 6,
                                  reaction, diffusion, diffusion);
}

// ---------------------------------------------- position, time, hooks

/// u' = u + dt * S(y, x, t) with S from the cell's position and the time.
struct Source {
  static constexpr int rank = 2;
  static constexpr auto shape = stencil::Shape::star;
  using fields = stencil::fields<stencil::field<0>>;
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    auto const p = in.position();
    return stencil::read<0>(in)(0, 0) +
           0.5 * (p[0] + 10.0 * p[1]) * (1.0 + in.time());
  }
};

TYPED_TEST(Fields, PositionAndTimeReachTheFunctor) {
  using Space = TypeParam;
  stencil::State<double, 2, typename Space::memory_space> s(
      "source", {5, 7}, stencil::field_specs<Source>({"u"}),
      {.halo = 0, .t0 = 2.0, .dt = 0.5});
  int hooks = 0;
  std::vector<double> hook_times;
  stencil::iterate(Space{}, s, Source{}, 6, stencil::Naive{},
                   stencil::every(2, [&](int step) {
                     ++hooks;
                     EXPECT_EQ(step, 2 * hooks);
                     hook_times.push_back(s.time());
                   }));
  Kokkos::fence();
  EXPECT_EQ(hooks, 3);
  EXPECT_EQ(hook_times, (std::vector<double>{3.0, 4.0, 5.0}));
  EXPECT_DOUBLE_EQ(s.time(), 5.0);
  EXPECT_EQ(s.steps_done(), 6);
  HostField const u = to_host(s, 0);
  // Steps at t = 2, 2.5, ..., 4.5: sum of (1 + t) = 6 + 19.5.
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x)
      EXPECT_DOUBLE_EQ(u(0, y, x), 0.5 * (y + 10.0 * x) * 25.5);
}

TYPED_TEST(Fields, HooksRunOnASingleGridToo) {
  using Space = TypeParam;
  stencil::Grid<double, 2, typename Space::memory_space> g("g", {9, 8});
  std::vector<int> fives, threes;
  stencil::iterate(Space{}, g, stencil::suite::J2d5pt{}, 16, stencil::Naive{},
                   stencil::every(5, [&](int step) { fives.push_back(step); }),
                   stencil::every(3, [&](int step) { threes.push_back(step); }));
  EXPECT_EQ(fives, (std::vector<int>{5, 10, 15}));
  EXPECT_EQ(threes, (std::vector<int>{3, 6, 9, 12, 15}));
}

TYPED_TEST(Fields, SummaryReducesTheInteriorOnly) {
  using Space = TypeParam;
  stencil::State<double, 3, typename Space::memory_space> s(
      "s", {3, 4, 5}, {{"u"}, {"v"}}, {.halo = 2});
  stencil::fill(s, 0, [](int z, int y, int x) {
    bool const inside = z >= 0 && z < 3 && y >= 0 && y < 4 && x >= 0 && x < 5;
    return inside ? 1.0 + x + 10.0 * y - 100.0 * z : 1e6;  // halo: ignored
  });
  stencil::fill(s, 1, [](int, int, int x) {
    return x == 2 ? std::nan("") : 0.5;
  });
  double sum = 0, sum_sq = 0, max_abs = 0;
  for (int z = 0; z < 3; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 5; ++x) {
        double const v = 1.0 + x + 10.0 * y - 100.0 * z;
        sum += v;
        sum_sq += v * v;
        max_abs = std::max(max_abs, std::abs(v));
      }
  auto const u = stencil::summarize(Space{}, s, 0);
  EXPECT_DOUBLE_EQ(u.sum, sum);
  EXPECT_DOUBLE_EQ(u.sum_sq, sum_sq);
  EXPECT_DOUBLE_EQ(u.max_abs, max_abs);
  EXPECT_EQ(u.nans, 0);
  EXPECT_EQ(u.cells, 60);
  auto const v = stencil::summarize(Space{}, s, 1);
  EXPECT_EQ(v.nans, 12);
  EXPECT_DOUBLE_EQ(v.sum, 0.5 * 48);
  stencil::Grid<float, 1, typename Space::memory_space> g("g", {7});
  stencil::fill(g, [](int i) { return i < 0 || i >= 7 ? 99.0f : -2.0f; });
  auto const gs = stencil::summarize(Space{}, g);
  EXPECT_DOUBLE_EQ(gs.sum, -14.0);
  EXPECT_DOUBLE_EQ(gs.rms(), 2.0);
}

// ---------------------------------------------------------- refusals

TYPED_TEST(Fields, MisuseIsRefusedWithWhatWouldBeValid) {
  using Space = TypeParam;
  using Mem = typename Space::memory_space;
  using Op = stencil::suite::HeatVarCoef<2>;
  using stencil_test::expect_error;
  // One field where the stencil declares two.
  stencil::State<double, 2, Mem> one("one", {9, 9}, {{"u"}});
  expect_error([&] { stencil::iterate(Space{}, one, Op{}, 1); },
               {"has 1 fields but the stencil declares 2", "field_specs"});
  // The coefficient is declared writable in the stencil's place: fine; a
  // written field that the state calls read-only is not.
  stencil::State<double, 2, Mem> read_only(
      "ro", {9, 9}, {{"u", 1, true}, {"k", 1, true}});
  expect_error([&] { stencil::iterate(Space{}, read_only, Op{}, 1); },
               {"is read-only in the state but the stencil writes it"});
  // Too few levels for leapfrog, too narrow a halo.
  using Wave = stencil::suite::Wave<2, 2>;
  stencil::State<double, 2, Mem> one_level("w", {9, 9}, {{"u", 1}},
                                           {.halo = 2});
  expect_error([&] { stencil::iterate(Space{}, one_level, Wave{}, 1); },
               {"keeps 1 time levels but the stencil reads 2"});
  stencil::State<double, 2, Mem> narrow("w", {9, 9}, {{"u", 2}});
  expect_error([&] { stencil::iterate(Space{}, narrow, Wave{}, 1); },
               {"halo of 1 cells but the stencil's largest radius is 2"});
  // Bad specs.
  expect_error(
      [] { stencil::State<double, 2, Mem> s("s", {4, 4}, {{"u"}, {"u"}}); },
      {"two fields are named 'u'"});
  expect_error(
      [] { stencil::State<double, 2, Mem> s("s", {4, 4}, {{"k", 2, true}}); },
      {"a coefficient never changes"});
  expect_error([] { stencil::State<double, 2, Mem> s("s", {4, 4}, {}); },
               {"a state holds 1 to 8 fields"});
  expect_error([&] { (void)one.index("v"); }, {"no field named 'v'", "'u'"});
  // A moved-from state is empty and refused.
  stencil::State<double, 2, Mem> moved("m", {9, 9}, {{"u", 2}});
  auto owner = std::move(moved);
  EXPECT_TRUE(moved.empty());
  EXPECT_FALSE(owner.empty());
  expect_error([&] { stencil::iterate(Space{}, moved, Wave{}, 1); },
               {"the state is empty"});
  // Auto says why it takes Naive; the plan names the fields.
  stencil::State<double, 2, Mem> heat("h", {9, 9},
                                      stencil::field_specs<Op>({"u", "k"}));
  auto const p = stencil::plan(Space{}, heat, Op{}, stencil::Auto{});
  EXPECT_EQ(p.policy, stencil::PolicyKind::naive);
  EXPECT_TRUE(p.chosen_by_auto);
  EXPECT_NE(p.reason.find("multi-field"), std::string::npos) << p.reason;
  EXPECT_NE(p.fields.find("k (radius 1, read-only)"), std::string::npos)
      << p.fields;
  // A plan for other fields is refused.
  stencil::State<double, 2, Mem> other("o", {9, 9},
                                       stencil::field_specs<Op>({"a", "b"}));
  expect_error([&] { stencil::iterate(Space{}, other, Op{}, 1, p); },
               {"the plan was made for a different run"});
  if constexpr (stencil::policy_available_v<stencil::StreamingSweep, Space>) {
    expect_error(
        [&] {
          (void)stencil::plan(Space{}, heat, Op{}, stencil::StreamingSweep{});
        },
        {"does not run multi-field stencils", "Naive and SpatialBlocking"});
  }
}

}  // namespace
