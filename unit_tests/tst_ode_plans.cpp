// SPDX-License-Identifier: Apache-2.0
// The plans of stencil::ode::integrate against the Unfused reference:
// - on the native CUDA backend, Fused agrees with Unfused to rounding for
//   every method, float and double, on heat, BRUSS2D (two fields, and
//   interleaved in one), Gray-Scott; fixed, periodic, neumann, reflecting
//   and mixed sides; odd sizes, domains smaller than a tile and domains of
//   many tiles, every cluster shape, tiles whose blocks meet in global
//   memory instead (more tiles than run at once); fixed and adaptive
//   steps; the
//   right-hand side is shown interior positions only; where one cluster
//   holds the domain, the resident kernel (many steps a launch, cut at
//   hooks) and the tiled one both;
// - everywhere, Auto says which plan it took and why, and Fused refuses
//   what it cannot run, naming Unfused;
// - BRUSS2D interleaved is the same ODE as BRUSS2D in two fields.
#include <stencil/ode.hpp>
#include <stencil/stencil.hpp>
#include <stencil/suite/solvers.hpp>

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include "ode_test_problems.hpp"
#include "ode_test_states.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
using stencil::Boundary;
using stencil::ode::Method;
constexpr bool native = stencil::ode::detail::NativeOde<Space>::available;
/// A host space runs the host Fused plan (tst_ode_tiled_fused.cpp).
constexpr bool host = stencil::ode::detail::runs_on_host_v<Space>;
#if defined(KOKKOS_ENABLE_CUDA) && STENCIL_ENABLE_NATIVE_CUDA
/// Rows of a fused block's box for Verner's 8 stages of two fields.
constexpr int verner_rows = stencil::native_cuda::ode::threads_y *
                            stencil::native_cuda::ode::cells_per_thread(8, 2);
#else
constexpr int verner_rows = 0;
#endif

using stencil_test::HeatRhs;
using PositionProbeRhs = stencil_test::PositionProbeRhs<>;
using stencil_test::VarCoefSourceRhs;

/// The sides of a 2D state: y low, y high, x low, x high.
using Sides = std::array<Boundary, 4>;

Sides all(Boundary kind) { return {kind, kind, kind, kind}; }

/// A state of `Rhs`'s fields (ode_test_states.hpp).
template <class T, class Rhs>
stencil::State<T, 2, Memory> make_state(std::array<int, 2> extents, Sides sides,
                                        int halo) {
  return stencil_test::make_ode_state<T, 2, Rhs, Memory>(extents, sides, halo);
}

template <class T, class Rhs>
double largest_difference(stencil::State<T, 2, Memory> const& a,
                          stencil::State<T, 2, Memory> const& b) {
  return stencil_test::largest_ode_difference<T, 2, Rhs>(a, b);
}

/// Fused evaluates the same expressions in the same order as Unfused; on
/// an H200 they differ by at most 1.1e-16 in double and not at all in
/// float. The margin covers another compiler contracting other products
/// into FMAs: a few ulps per stage over a few steps.
template <class T>
constexpr double rounding() {
  return std::is_same_v<T, float> ? 1e-6 : 1e-14;
}

/// The largest difference any Fused case of type T has shown, printed by
/// each test so that the tolerances above can be held to what a GPU gives.
template <class T>
double& largest_seen() {
  static double worst = 0.0;
  return worst;
}

template <class T>
void print_largest_seen() {
  std::cout << "largest Fused-Unfused difference so far, "
            << (std::is_same_v<T, float> ? "float: " : "double: ")
            << largest_seen<T>() << " (tolerance " << rounding<T>() << ")\n";
}

struct Problem {
  std::array<int, 2> extents;
  Sides sides;
  int steps = 3;
  double dt = 0.1;
  int halo = 1;
};

/// `plan` and Unfused from the same state: the same result to rounding,
/// and `plan` ran Fused.
/// Whether `plan` is Fused's resident kernel, as the Report describes it.
bool resident(std::string const& plan) {
  return plan.find("held by one cluster") != std::string::npos;
}

template <class T, class Rhs, class P>
std::string expect_as_unfused(Rhs const& rhs, Problem const& p, Method m,
                              P plan, std::string const& what) {
  auto reference = make_state<T, Rhs>(p.extents, p.sides, p.halo);
  auto state = make_state<T, Rhs>(p.extents, p.sides, p.halo);
  stencil::ode::FixedSteps const steps{0.0, p.dt, p.steps};
  stencil::ode::integrate(Space{}, reference, rhs, m, steps,
                          stencil::ode::Unfused{});
  auto const report =
      stencil::ode::integrate(Space{}, state, rhs, m, steps, plan);
  std::string const label = what + " " + stencil::ode::to_string(m) + " " +
                            (std::is_same_v<T, float> ? "float" : "double") +
                            " " + std::to_string(p.extents[0]) + "x" +
                            std::to_string(p.extents[1]) + ": " + report.plan;
  EXPECT_EQ(report.plan.rfind("Fused", 0), 0u) << label;
  EXPECT_EQ(report.rhs_evaluations, p.steps * stencil::ode::tableau(m).stages)
      << label;
  EXPECT_DOUBLE_EQ(state.time(), reference.time()) << label;
  double const difference = largest_difference<T, Rhs>(state, reference);
  largest_seen<T>() = std::max(largest_seen<T>(), difference);
  EXPECT_LE(difference, rounding<T>()) << label;
  return report.plan;
}

/// Sides of several kinds: mirrored beside periodic, periodic beside fixed
/// and mirrored, fixed beside both mirrors.
std::vector<Sides> mixed_sides() {
  return {{Boundary::neumann, Boundary::reflecting, Boundary::periodic,
           Boundary::periodic},
          {Boundary::periodic, Boundary::periodic, Boundary::fixed,
           Boundary::neumann},
          {Boundary::fixed, Boundary::neumann, Boundary::reflecting,
           Boundary::fixed}};
}

constexpr Method methods[] = {Method::forward_euler, Method::rk4,
                              Method::bogacki_shampine, Method::dormand_prince,
                              Method::verner56};

/// Every problem on a domain one cluster holds: the resident kernel
/// (Fused{}, the default, and Auto) and the tiled one (Fused{.resident =
/// false}).
template <class T>
void every_problem_every_method() {
  auto const bruss = stencil::suite::BrussRhs::for_points(37);
  auto const interleaved = stencil::suite::BrussInterleavedRhs::for_points(37);
  for (bool const on_chip : {true, false}) {
    stencil::ode::Fused const fused{0, 0, on_chip};
    for (Method m : methods) {
      std::vector<std::string> plans;
      plans.push_back(expect_as_unfused<T>(HeatRhs{0.2},
                                           {{37, 53}, all(Boundary::fixed), 5},
                                           m, fused, "heat fixed"));
      Problem const reflecting{{37, 37}, all(Boundary::reflecting), 3, 0.01};
      // Auto takes the resident kernel where one cluster holds the domain.
      plans.push_back(
          on_chip ? expect_as_unfused<T>(bruss, reflecting, m,
                                         stencil::ode::Auto{}, "bruss auto")
                  : expect_as_unfused<T>(bruss, reflecting, m, fused,
                                         "bruss reflecting"));
      plans.push_back(
          expect_as_unfused<T>(stencil::suite::GrayScottRhs{},
                               {{41, 29}, all(Boundary::periodic), 3, 0.5}, m,
                               fused, "gray-scott periodic"));
      plans.push_back(expect_as_unfused<T>(
          interleaved, {{37, 74}, all(Boundary::fixed), 3, 0.01, 2}, m, fused,
          "bruss interleaved"));
      for (auto const& plan : plans) EXPECT_EQ(resident(plan), on_chip) << plan;
    }
  }
}

TEST(OdePlans, FusedMatchesUnfusedOnEveryProblemDouble) {
  if constexpr (!native) {
    GTEST_SKIP() << "the native CUDA plan's cases (tst_ode_tiled_fused.cpp: "
                    "the host's; AutoAndFusedSayWhereFusedCannotRun: a "
                    "device space without the native backend)";
  } else {
    every_problem_every_method<double>();
    print_largest_seen<double>();
  }
}

TEST(OdePlans, FusedMatchesUnfusedOnEveryProblemFloat) {
  if constexpr (!native) {
    GTEST_SKIP()
        << "the native CUDA plan's cases (tst_ode_tiled_fused.cpp: the host's)";
  } else {
    every_problem_every_method<float>();
    print_largest_seen<float>();
  }
}

TEST(OdePlans, FusedMatchesUnfusedOnEverySideAndCluster) {
  if constexpr (!native) {
    GTEST_SKIP()
        << "the native CUDA plan's cases (tst_ode_tiled_fused.cpp: the host's)";
  } else {
    std::vector<Sides> sides = mixed_sides();
    sides.push_back(all(Boundary::neumann));
    sides.push_back(all(Boundary::reflecting));
    auto const bruss = stencil::suite::BrussRhs::for_points(40);
    // Powers of two (the plan's own choices) and other counts, asked for.
    std::array<std::array<int, 2>, 12> const clusters = {{{1, 1},
                                                          {2, 1},
                                                          {1, 2},
                                                          {2, 2},
                                                          {4, 2},
                                                          {2, 4},
                                                          {1, 8},
                                                          {8, 1},
                                                          {1, 16},
                                                          {3, 3},
                                                          {1, 5},
                                                          {1, 12}}};
    // A tile must keep 4 rows past Verner's rims of 8.
    int const rows = verner_rows;
    for (auto const& s : sides) {
      for (auto const& c : clusters) {
        stencil::ode::Fused const plan{c[0], c[1]};
        std::string const what = "bruss cluster " + std::to_string(c[0]) + "x" +
                                 std::to_string(c[1]);
        // Many tiles along both axes, sizes that fill none of them.
        if (c[1] * rows - 2 * 8 >= 4) {
          expect_as_unfused<double>(bruss, {{151, 133}, s, 4, 0.01},
                                    Method::verner56, plan, what);
        } else {
          auto state =
              make_state<double, stencil::suite::BrussRhs>({151, 133}, s, 1);
          stencil_test::expect_error(
              [&] {
                stencil::ode::integrate(Space{}, state, bruss, Method::verner56,
                                        stencil::ode::FixedSteps{0, 0.01, 1},
                                        plan);
              },
              {"no cluster of the size asked", "use Unfused"});
        }
        expect_as_unfused<float>(bruss, {{151, 133}, s, 5, 0.01},
                                 Method::bogacki_shampine, plan, what);
      }
      // Smaller than one tile: the mirrored and wrapped cells lie in the
      // tile's own blocks.
      expect_as_unfused<double>(bruss, {{5, 7}, s, 3, 0.01}, Method::rk4,
                                stencil::ode::Fused{}, "bruss tiny");
      expect_as_unfused<double>(bruss, {{3, 3}, s, 2, 0.01},
                                Method::dormand_prince, stencil::ode::Fused{},
                                "bruss 3x3");
    }
    print_largest_seen<double>();
    print_largest_seen<float>();
  }
}

/// The resident kernel over many steps a launch, cut where hooks run:
/// every side, odd and even stage counts (the shared-memory slot a step
/// starts in alternates with an odd count), clusters of one to several
/// blocks, domains smaller than the tile and of its size; a hook sees the
/// state of its step.
TEST(OdePlans, FusedResidentRunsTheStepsBetweenHooksInOneLaunch) {
  if constexpr (!native) {
    GTEST_SKIP()
        << "the native CUDA plan's cases (tst_ode_tiled_fused.cpp: the host's)";
  } else {
    std::vector<Sides> sides = mixed_sides();
    sides.push_back(all(Boundary::fixed));
    sides.push_back(all(Boundary::periodic));
    auto const bruss = stencil::suite::BrussRhs::for_points(40);
    auto const interleaved =
        stencil::suite::BrussInterleavedRhs::for_points(23);
    int constexpr steps = 11, every = 4;
    for (auto const& s : sides) {
      for (std::array<int, 2> const extents :
           {std::array<int, 2>{5, 7}, std::array<int, 2>{29, 101},
            std::array<int, 2>{61, 45}, std::array<int, 2>{32, 64},
            std::array<int, 2>{64, 128}}) {
        for (Method m : {Method::forward_euler, Method::rk4,
                         Method::dormand_prince, Method::verner56}) {
          auto reference =
              make_state<double, stencil::suite::BrussRhs>(extents, s, 1);
          auto state =
              make_state<double, stencil::suite::BrussRhs>(extents, s, 1);
          stencil::ode::FixedSteps const fixed{0.25, 0.01, steps};
          stencil::ode::integrate(Space{}, reference, bruss, m, fixed,
                                  stencil::ode::Unfused{});
          std::vector<int> calls;
          std::vector<double> times;
          // A launch rotates the state's buffers once: after the first
          // launch of 4 steps they are swapped, after the second back (a
          // launch a step would leave them as they were at both hooks).
          double const* const initial = state.current(0).data();
          std::vector<bool> swapped;
          auto const report = stencil::ode::integrate(
              Space{}, state, bruss, m, fixed, stencil::ode::Fused{0, 0, true},
              stencil::every(every, [&](int n) {
                calls.push_back(n);
                times.push_back(state.time());
                swapped.push_back(state.current(0).data() != initial);
              }));
          std::string const label = std::string(stencil::ode::to_string(m)) +
                                    " " + std::to_string(extents[0]) + "x" +
                                    std::to_string(extents[1]) + ": " +
                                    report.plan;
          EXPECT_TRUE(resident(report.plan)) << label;
          EXPECT_EQ(calls, (std::vector<int>{4, 8})) << label;
          EXPECT_EQ(swapped, (std::vector<bool>{true, false})) << label;
          EXPECT_EQ(times,
                    (std::vector<double>{0.25 + 4 * 0.01, 0.25 + 8 * 0.01}))
              << label;
          EXPECT_EQ(report.accepted, steps) << label;
          EXPECT_EQ(report.rhs_evaluations,
                    steps * stencil::ode::tableau(m).stages)
              << label;
          EXPECT_DOUBLE_EQ(state.time(), reference.time()) << label;
          double const difference =
              largest_difference<double, stencil::suite::BrussRhs>(state,
                                                                   reference);
          largest_seen<double>() = std::max(largest_seen<double>(), difference);
          EXPECT_LE(difference, rounding<double>()) << label;
        }
      }
      // A cluster asked for that holds the domain, in float; then radius 2
      // along x.
      EXPECT_TRUE(resident(expect_as_unfused<float>(
          bruss, {{29, 101}, s, 9, 0.01}, Method::bogacki_shampine,
          stencil::ode::Fused{2, 2, true}, "bruss 2x2")));
      EXPECT_TRUE(resident(expect_as_unfused<float>(
          interleaved, {{23, 46}, s, 6, 0.01, 2}, Method::dormand_prince,
          stencil::ode::Fused{0, 0, true}, "interleaved")));
      // The tile as wide and as tall as the domain: the halo lies past the
      // last block, in its grown box only.
      EXPECT_TRUE(resident(expect_as_unfused<double>(
          interleaved, {{32, 128}, s, 5, 0.01, 2}, Method::rk4,
          stencil::ode::Fused{0, 0, true}, "interleaved, the tile's size")));
    }
    print_largest_seen<double>();
    print_largest_seen<float>();
  }
}

/// The tiles and exchange buffer slots a Fused run whose blocks meet in
/// global memory reports ({0, 0} for another kind of run).
std::array<long, 2> tiles_and_slots(std::string const& plan) {
  auto const marker = plan.find("meet in global memory");
  if (marker == std::string::npos) return {0, 0};
  auto const tiles = plan.find(" tiles, exchange buffers for ");
  auto const count_start = plan.rfind(' ', tiles - 1) + 1;
  long const t = std::stol(plan.substr(count_start, tiles - count_start));
  long const slots = std::stol(plan.substr(tiles + 29));
  return {t, slots};
}

/// A right-hand side of one written field that reaches further along x
/// than along y gives each thread two columns of its block's box, at every
/// method's stages: every side, clusters one and two blocks wide, several
/// tiles along x, and tiles that meet in global memory.
TEST(OdePlans, FusedTwoColumnBoxesMatchUnfused) {
  if constexpr (!native) {
    GTEST_SKIP()
        << "the native CUDA plan's cases (tst_ode_tiled_fused.cpp: the host's)";
  } else {
    using stencil_test::WithinRhs;
#if defined(KOKKOS_ENABLE_CUDA) && STENCIL_ENABLE_NATIVE_CUDA
    using stencil::native_cuda::ode::fused_columns;
    using stencil::native_cuda::ode::fused_rows;
    static_assert(fused_columns<WithinRhs::fields, 4>() == 2 &&
                  fused_columns<WithinRhs::fields, 1>() == 2 &&
                  fused_columns<WithinRhs::fields, 8>() == 2 &&
                  fused_columns<HeatRhs::fields, 4>() == 1 &&
                  fused_rows<WithinRhs::fields, 4>() == 2);
#endif
    std::vector<Sides> sides = mixed_sides();
    sides.push_back(all(Boundary::neumann));
    sides.push_back(all(Boundary::reflecting));
    // A block of 8 rows: four stages need tiles of two blocks or more
    // along y to keep 4 rows past their rims of 4.
    std::array<std::array<int, 2>, 4> const clusters = {
        {{1, 2}, {2, 2}, {1, 4}, {2, 4}}};
    WithinRhs const rhs{};
    for (auto const& s : sides) {
      for (auto const& c : clusters) {
        std::string const what = "within cluster " + std::to_string(c[0]) +
                                 "x" + std::to_string(c[1]);
        // 301 values along x: three tiles one block wide, two two wide.
        for (Method m : {Method::forward_euler, Method::bogacki_shampine}) {
          expect_as_unfused<double>(rhs, {{61, 301}, s, 5, 0.05, 2}, m,
                                    stencil::ode::Fused{c[0], c[1]}, what);
        }
        expect_as_unfused<float>(rhs, {{61, 301}, s, 3, 0.05, 2}, Method::rk4,
                                 stencil::ode::Fused{c[0], c[1]}, what);
        // Seven and eight stages: rims of 8 rows need tiles of 4 blocks.
        if (c[1] == 4) {
          expect_as_unfused<double>(rhs, {{61, 301}, s, 3, 0.05, 2},
                                    Method::verner56,
                                    stencil::ode::Fused{c[0], c[1]}, what);
          expect_as_unfused<float>(rhs, {{61, 301}, s, 2, 0.05, 2},
                                   Method::dormand_prince,
                                   stencil::ode::Fused{c[0], c[1]}, what);
        }
      }
      // One stage: tiles of a single block.
      expect_as_unfused<double>(
          rhs, {{61, 301}, s, 3, 0.05, 2}, Method::forward_euler,
          stencil::ode::Fused{1, 1}, "within cluster 1x1");
      stencil::ode::Fused global{2, 2};
      global.barrier = stencil::ode::TileBarrier::global_memory;
      EXPECT_GT(tiles_and_slots(expect_as_unfused<double>(
                    rhs, {{61, 301}, s, 4, 0.05, 2}, Method::rk4, global,
                    "within, global barrier"))[0],
                0);
    }
    // Smaller than one tile, and the resident kernel (one column a thread).
    expect_as_unfused<double>(rhs, {{7, 9}, all(Boundary::neumann), 3, 0.05, 2},
                              Method::bogacki_shampine, stencil::ode::Fused{},
                              "within tiny");
    print_largest_seen<double>();
    print_largest_seen<float>();
  }
}

/// A right-hand side that evaluates a point's two interleaved values at
/// once (BrussInterleavedRhs::rates_of_point) gives each thread of the
/// tiled kernel a pair: an odd N, two blocks along x and tiles along both
/// axes, clusters one and two blocks wide, four and eight stages, both
/// precisions, and tiles that meet in global memory.
TEST(OdePlans, FusedInterleavedPointsMatchUnfused) {
  if constexpr (!native) {
    GTEST_SKIP()
        << "the native CUDA plan's cases (tst_ode_tiled_fused.cpp: the host's)";
  } else {
    using stencil::suite::BrussInterleavedRhs;
    static_assert(stencil::ode::PointRates<BrussInterleavedRhs, double> &&
                  stencil::ode::PointRates<BrussInterleavedRhs, float> &&
                  !stencil::ode::PointRates<stencil_test::WithinRhs, double>);
    auto const rhs = BrussInterleavedRhs::for_points(75);  // 150 a row
    Problem const p{{75, 150}, all(Boundary::fixed), 3, 0.005, 2};
    for (std::array<int, 2> const c :
         {std::array<int, 2>{1, 4}, {2, 4}, {1, 6}}) {
      stencil::ode::Fused const fused{c[0], c[1]};
      std::string const what = "interleaved points " + std::to_string(c[0]) +
                               "x" + std::to_string(c[1]);
      for (Method m : {Method::bogacki_shampine, Method::verner56}) {
        expect_as_unfused<double>(rhs, p, m, fused, what);
        expect_as_unfused<float>(rhs, p, m, fused, what);
      }
    }
    stencil::ode::Fused global{2, 4};
    global.barrier = stencil::ode::TileBarrier::global_memory;
    EXPECT_GT(tiles_and_slots(expect_as_unfused<double>(
                  rhs, p, Method::rk4, global,
                  "interleaved points, global barrier"))[0],
              0);
    print_largest_seen<double>();
    print_largest_seen<float>();
  }
}

/// Tiles whose blocks meet in global memory (paper 001's barriers, where
/// clusters do not fit): every problem and method in both precisions, the
/// sides, tiles of one block to more than a cluster holds, and more tiles
/// than the device runs at once, so that tiles take turns with the
/// exchange buffers.
TEST(OdePlans, FusedGlobalBarrierMatchesUnfused) {
  if constexpr (!native) {
    GTEST_SKIP()
        << "the native CUDA plan's cases (tst_ode_tiled_fused.cpp: the host's)";
  } else {
    using stencil::ode::TileBarrier;
    auto global = [](int cx, int cy) {
      stencil::ode::Fused plan{cx, cy};
      plan.barrier = TileBarrier::global_memory;
      return plan;
    };
    auto const bruss = stencil::suite::BrussRhs::for_points(40);
    auto const interleaved =
        stencil::suite::BrussInterleavedRhs::for_points(37);
    auto expect_global = [](std::string const& plan) {
      EXPECT_GT(tiles_and_slots(plan)[0], 0) << plan;
    };
    for (Method m : methods) {
      expect_global(expect_as_unfused<double>(
          HeatRhs{0.2}, {{37, 53}, all(Boundary::fixed), 5}, m, global(0, 0),
          "heat fixed, global barrier"));
      expect_global(expect_as_unfused<float>(
          stencil::suite::GrayScottRhs{},
          {{141, 129}, all(Boundary::periodic), 3, 0.5}, m, global(2, 4),
          "gray-scott periodic, global barrier"));
      // Seven and eight stages give this layout blocks of 8 rows (two
      // columns a thread), and rims of 7 and 8 rows: tiles of 4 blocks.
      bool const many = m == Method::dormand_prince || m == Method::verner56;
      expect_global(expect_as_unfused<double>(
          interleaved, {{37, 74}, all(Boundary::fixed), 3, 0.01, 2}, m,
          global(2, many ? 4 : 2), "bruss interleaved, global barrier"));
    }
    std::array<std::array<int, 2>, 6> const tiles = {
        {{1, 1}, {2, 1}, {1, 4}, {4, 4}, {1, 32}, {8, 8}}};
    for (auto const& s : mixed_sides()) {
      for (auto const& c : tiles) {
        std::string const what =
            "bruss global " + std::to_string(c[0]) + "x" + std::to_string(c[1]);
        if (c[1] * verner_rows - 2 * 8 >= 4) {
          expect_global(expect_as_unfused<double>(
              bruss, {{151, 133}, s, 4, 0.01}, Method::verner56,
              global(c[0], c[1]), what));
        }
        expect_global(expect_as_unfused<float>(bruss, {{151, 133}, s, 5, 0.01},
                                               Method::bogacki_shampine,
                                               global(c[0], c[1]), what));
      }
    }
    // More tiles than fit at once: later tiles wait for a buffer slot.
    for (auto const& c : std::array<std::array<int, 2>, 2>{{{1, 1}, {2, 1}}}) {
      auto const plan = expect_as_unfused<double>(
          bruss, {{1200, 1000}, mixed_sides()[1], 2, 0.01},
          Method::bogacki_shampine, global(c[0], c[1]), "bruss many tiles");
      auto const [count, slots] = tiles_and_slots(plan);
      EXPECT_GT(count, slots) << plan;
    }
    // Automatic: a tile of more blocks than a cluster holds.
    expect_global(expect_as_unfused<double>(
        bruss, {{300, 200}, all(Boundary::fixed)}, Method::rk4,
        stencil::ode::Fused{4, 8}, "4x8"));
    // `resident` (the default) applies to clusters only.
    expect_global(expect_as_unfused<double>(
        HeatRhs{0.2}, {{9, 11}, all(Boundary::neumann)}, Method::rk4,
        global(0, 0), "heat one tile, global barrier"));
    auto state = make_state<double, HeatRhs>({9, 11}, all(Boundary::fixed), 1);
    stencil::ode::FixedSteps const one{0.0, 0.1, 1};
    stencil_test::expect_error(
        [&] {
          stencil::ode::integrate(Space{}, state, HeatRhs{}, Method::rk4, one,
                                  global(128, 1));
        },
        {"blocks in all at most", "64"});
    print_largest_seen<double>();
    print_largest_seen<float>();
  }
}

TEST(OdePlans, FusedReadsCoefficientsPositionAndTime) {
  if constexpr (!native) {
    GTEST_SKIP()
        << "the native CUDA plan's cases (tst_ode_tiled_fused.cpp: the host's)";
  } else {
    Sides const mixed = {Boundary::reflecting, Boundary::neumann,
                         Boundary::periodic, Boundary::periodic};
    for (Method m : {Method::rk4, Method::dormand_prince, Method::verner56}) {
      for (Sides const& s : {all(Boundary::neumann), mixed}) {
        expect_as_unfused<double>(VarCoefSourceRhs{}, {{77, 131}, s, 4, 0.1}, m,
                                  stencil::ode::Fused{}, "varcoef source");
        expect_as_unfused<float>(VarCoefSourceRhs{}, {{77, 131}, s, 4, 0.1}, m,
                                 stencil::ode::Fused{}, "varcoef source");
      }
    }
    print_largest_seen<double>();
    print_largest_seen<float>();
  }
}

TEST(OdePlans, FusedShowsTheRightHandSideInteriorPositionsOnly) {
  if constexpr (!native) {
    GTEST_SKIP()
        << "the native CUDA plan's cases (tst_ode_tiled_fused.cpp: the host's)";
  } else {
    Sides const mixed = {Boundary::fixed, Boundary::neumann, Boundary::periodic,
                         Boundary::periodic};
    for (std::array<int, 2> const extents :
         {std::array<int, 2>{5, 7}, std::array<int, 2>{151, 133}}) {
      for (Sides const& s :
           {all(Boundary::fixed), all(Boundary::reflecting), mixed}) {
        PositionProbeRhs rhs{
            {}, Kokkos::View<int, Memory>("outside"), extents[0], extents[1]};
        for (Method m : {Method::rk4, Method::verner56}) {
          for (bool const on_chip : {true, false}) {
            expect_as_unfused<double>(rhs, {extents, s, 2, 0.05}, m,
                                      stencil::ode::Fused{0, 0, on_chip},
                                      "position probe");
          }
        }
        int outside = 0;
        Kokkos::deep_copy(outside, rhs.outside);
        EXPECT_EQ(outside, 0) << extents[0] << "x" << extents[1]
                              << ": the right-hand side saw a position past "
                                 "the domain";
      }
    }
  }
}

TEST(OdePlans, HooksRunEveryNStepsWithEveryPlan) {
  auto s = make_state<double, HeatRhs>({19, 23}, all(Boundary::neumann), 1);
  std::vector<int> calls;
  auto const r = stencil::ode::integrate(
      Space{}, s, HeatRhs{0.2}, Method::rk4,
      stencil::ode::FixedSteps{0.0, 0.1, 7}, stencil::ode::Auto{},
      stencil::every(2, [&](int n) { calls.push_back(n); }));
  EXPECT_EQ(calls, (std::vector<int>{2, 4, 6})) << r.plan;
  EXPECT_EQ(r.accepted, 7);
}

TEST(OdePlans, FusedAdaptiveTakesTheStepsUnfusedTakes) {
  if constexpr (!native) {
    GTEST_SKIP()
        << "the native CUDA plan's cases (tst_ode_tiled_fused.cpp: the host's)";
  } else {
    auto const rhs = stencil::suite::BrussRhs::for_points(61);
    for (bool const on_chip : {false, true}) {
      for (Method m : {Method::bogacki_shampine, Method::dormand_prince,
                       Method::verner56}) {
        auto a = make_state<double, stencil::suite::BrussRhs>(
            {61, 61}, all(Boundary::reflecting), 1);
        auto b = make_state<double, stencil::suite::BrussRhs>(
            {61, 61}, all(Boundary::reflecting), 1);
        // A first step of the whole interval: rejected at least once.
        stencil::ode::Adaptive const adaptive{.t0 = 0.0,
                                              .t_end = 0.5,
                                              .dt = 0.5,
                                              .absolute = 1e-6,
                                              .relative = 1e-6};
        auto const ra = stencil::ode::integrate(Space{}, a, rhs, m, adaptive,
                                                stencil::ode::Unfused{});
        auto const rb = stencil::ode::integrate(
            Space{}, b, rhs, m, adaptive, stencil::ode::Fused{0, 0, on_chip});
        std::string const name =
            std::string(stencil::ode::to_string(m)) + ": " + rb.plan;
        EXPECT_EQ(resident(rb.plan), on_chip) << name;
        EXPECT_GE(ra.rejected, 1) << name;
        EXPECT_EQ(rb.accepted, ra.accepted) << name;
        EXPECT_EQ(rb.rejected, ra.rejected) << name;
        EXPECT_DOUBLE_EQ(rb.t, ra.t) << name;
        double const difference =
            largest_difference<double, stencil::suite::BrussRhs>(b, a);
        std::cout << name << " adaptive: Fused-Unfused difference "
                  << difference << " (tolerance 1e-13)\n";
        // The same steps, accepted and rejected, over the whole interval:
        // up to 1.3e-14 on an H200.
        EXPECT_LE(difference, 1e-13) << name;
      }
    }
  }
}

TEST(OdePlans, AutoAndFusedSayWhereFusedCannotRun) {
  using stencil_test::expect_error;
  auto s = make_state<double, HeatRhs>({9, 11}, all(Boundary::fixed), 1);
  stencil::ode::FixedSteps const steps{0.0, 0.1, 1};
  if constexpr (host) {
    GTEST_SKIP() << "the host Fused plan: tst_ode_tiled_fused.cpp";
  } else if constexpr (!native) {
    expect_error(
        [&] {
          stencil::ode::integrate(Space{}, s, HeatRhs{}, Method::rk4, steps,
                                  stencil::ode::Fused{});
        },
        {"Fused runs on the native CUDA backend", "use Unfused"});
    auto const r = stencil::ode::integrate(Space{}, s, HeatRhs{}, Method::rk4,
                                           steps, stencil::ode::Auto{});
    EXPECT_EQ(r.plan, "Unfused");
    EXPECT_NE(r.plan_reason.find("native CUDA backend"), std::string::npos)
        << r.plan_reason;
  } else {
    auto const r = stencil::ode::integrate(Space{}, s, HeatRhs{}, Method::rk4,
                                           steps, stencil::ode::Auto{});
    EXPECT_EQ(r.plan.rfind("Fused", 0), 0u) << r.plan;
    expect_error(
        [&] {
          stencil::ode::integrate(Space{}, s, HeatRhs{}, Method::rk4, steps,
                                  stencil::ode::Fused{-1, 2});
        },
        {"a tile of -1x2 blocks", "give a positive count along each axis"});
    // A dirichlet side is refreshed by a host function between stages.
    auto d = make_state<double, HeatRhs>({9, 11}, all(Boundary::fixed), 1);
    d.set_dirichlet(1, stencil::Side::low,
                    [](std::array<int, 2> const&, double t) { return t; });
    expect_error(
        [&] {
          stencil::ode::integrate(Space{}, d, HeatRhs{}, Method::rk4, steps,
                                  stencil::ode::Fused{});
        },
        {"is dirichlet", "use Unfused"});
    auto const auto_d = stencil::ode::integrate(
        Space{}, d, HeatRhs{}, Method::rk4, steps, stencil::ode::Auto{});
    EXPECT_EQ(auto_d.plan, "Unfused");
    EXPECT_NE(auto_d.plan_reason.find("is dirichlet"), std::string::npos)
        << auto_d.plan_reason;
  }
}

/// BRUSS2D interleaved declared without `within`: radius 2 along y too.
struct BrussInterleavedWide : stencil::suite::BrussInterleavedRhs {
  using fields = stencil::fields<stencil::field<2>>;
};

TEST(OdePlans, AutoTakesFusedWhereItsRimsPay) {
  if constexpr (host) {
    GTEST_SKIP() << "a GPU's rule; on the host Auto takes Fused wherever it "
                    "runs (tst_ode_tiled_fused.cpp)";
  }
  using stencil::suite::BrussInterleavedRhs;
  auto const rhs = BrussInterleavedRhs::for_points(37);  // within<1, 2>
  BrussInterleavedWide const wide{rhs};                  // radius 2, 2
  stencil::ode::FixedSteps const steps{0.0, 0.01, 2};
  auto w =
      make_state<float, BrussInterleavedRhs>({37, 74}, all(Boundary::fixed), 2);
  auto const wide_float = stencil::ode::integrate(Space{}, w, wide, Method::rk4,
                                                  steps, stencil::ode::Auto{});
  EXPECT_EQ(wide_float.plan, "Unfused");
  EXPECT_NE(wide_float.plan_reason.find("on 4-byte values"), std::string::npos)
      << wide_float.plan_reason;
  auto f =
      make_state<float, BrussInterleavedRhs>({37, 74}, all(Boundary::fixed), 2);
  auto const in_float = stencil::ode::integrate(Space{}, f, rhs, Method::rk4,
                                                steps, stencil::ode::Auto{});
  auto d = make_state<double, BrussInterleavedRhs>({37, 74},
                                                   all(Boundary::fixed), 2);
  auto const wide_double = stencil::ode::integrate(
      Space{}, d, wide, Method::rk4, steps, stencil::ode::Auto{});
  for (auto const* report : {&in_float, &wide_double}) {
    if constexpr (native) {
      EXPECT_EQ(report->plan.rfind("Fused", 0), 0u) << report->plan;
    } else {
      EXPECT_EQ(report->plan, "Unfused");
      EXPECT_NE(report->plan_reason.find("native CUDA backend"),
                std::string::npos)
          << report->plan_reason;
    }
  }
  static_assert(stencil::ode::auto_takes_fused(1, 1, 4) &&
                stencil::ode::auto_takes_fused(2, 1, 4) &&
                !stencil::ode::auto_takes_fused(2, 2, 4) &&
                stencil::ode::auto_takes_fused(2, 2, 8) &&
                !stencil::ode::auto_takes_fused(3, 2, 8));
}

/// BrussInterleavedRhs::rates_of_point gives, at every point of an odd grid
/// (edges, where it mirrors, included), what operator() gives at the
/// point's two values, computed in the same order: on the host, where no
/// plan calls it, so that CI checks the contract the fused CUDA kernel
/// relies on.
TEST(OdePlans, BrussInterleavedRatesOfPointAreItsRates) {
  using Rhs = stencil::suite::BrussInterleavedRhs;
  int const n = 9, halo = 2;
  auto const rhs = Rhs::for_points(n);
  int const stride = 2 * n + 2 * halo;
  std::vector<double> values(static_cast<std::size_t>(stride) * (n + 2 * halo));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = 0.5 + 0.37 * static_cast<double>((i * 7919) % 101) / 101;
  }
  stencil::detail::FieldBuffers<double, Rhs::fields> buffers;
  buffers.level[0][0] = values.data();
  using Neighbourhood =
      stencil::detail::FieldsNeighbourhood<double, 2, Rhs::fields>;
  auto at = [&](int y, int x) {
    std::int64_t const cell =
        static_cast<std::int64_t>(y + halo) * stride + x + halo;
    return Neighbourhood{buffers, cell, stride, 0, 0, y, x, 0.0};
  };
  double worst = 0.0;
  for (int y = 0; y < n; ++y) {
    for (int x = 0; x < 2 * n; x += 2) {
      auto const pair = rhs.rates_of_point(at(y, x));
      double const u = rhs(at(y, x)), v = rhs(at(y, x + 1));
      worst = std::max({worst, std::abs(pair.value[0] - u) / std::abs(u),
                        std::abs(pair.value[1] - v) / std::abs(v)});
    }
  }
  // The same operations in the same order; 1e-15 leaves room for a
  // compiler that contracts one form's products into FMAs and not the other's.
  EXPECT_LE(worst, 1e-15);
}

TEST(OdePlans, BrussInterleavedIsBrussInTwoFields) {
  int const n = 23;
  auto const two = stencil::suite::BrussRhs::for_points(n);
  auto const one = stencil::suite::BrussInterleavedRhs::for_points(n);
  stencil::State<double, 2, Memory> fields(
      "two", {n, n}, stencil::field_specs<stencil::suite::BrussRhs>({"u", "v"}),
      {.halo = 1, .boundary = Boundary::reflecting});
  stencil::State<double, 2, Memory> interleaved(
      "one", {n, 2 * n},
      stencil::field_specs<stencil::suite::BrussInterleavedRhs>({"uv"}),
      {.halo = 2});
  double const h = 1.0 / (n - 1);
  stencil::fill(fields, 0, [&](int i, int) { return 0.5 + i * h; });
  stencil::fill(fields, 1, [&](int, int j) { return 1.0 + 5 * j * h; });
  stencil::fill(interleaved, 0, [&](int i, int j) {
    return j % 2 == 0 ? 0.5 + i * h : 1.0 + 5 * (j / 2) * h;
  });
  stencil::ode::FixedSteps const steps{0.0, 0.002, 7};
  stencil::ode::integrate(Space{}, fields, two, Method::dormand_prince, steps,
                          stencil::ode::Auto{});
  stencil::ode::integrate(Space{}, interleaved, one, Method::dormand_prince,
                          steps, stencil::ode::Auto{});
  auto const u = stencil_test::host_copy(fields.interior(0));
  auto const v = stencil_test::host_copy(fields.interior(1));
  auto const uv = stencil_test::host_copy(interleaved.interior(0));
  double worst = 0.0, change = 0.0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      worst = std::max({worst, std::abs(uv(i, 2 * j) - u(i, j)),
                        std::abs(uv(i, 2 * j + 1) - v(i, j))});
      change = std::max(change, std::abs(u(i, j) - (0.5 + i * h)));
    }
  }
  EXPECT_LE(worst, 1e-13);
  EXPECT_GT(change, 1e-3) << "the solution should have moved";
}

}  // namespace
