// SPDX-License-Identifier: Apache-2.0
// The Fused plan on a host execution space (detail/ode/tiled_fused_*.hpp)
// against the Unfused reference on the same space: every method, float and
// double; 1D, 2D and 3D; heat, BRUSS2D (two fields and interleaved),
// Gray-Scott, a coefficient with position and time, a radius-2 box that
// reads the halo's corners; fixed, periodic, neumann, reflecting,
// dirichlet and mixed sides; odd sizes, tiles of one cell to the whole domain,
// domains smaller than a tile's rims; fixed and adaptive steps, hooks; the
// right-hand side is shown interior positions only; and what it refuses.
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
#include <iostream>
#include <string>
#include <vector>

// The right-hand sides in a named namespace: nvcc warns of the unused
// members of one in an anonymous namespace.
namespace tiled_fused_test {

/// u' = u(-1) + u(1) - 2 u, one field in 1D.
struct Heat1dRhs {
  static constexpr int rank = 1;
  static constexpr auto shape = stencil::Shape::star;
  using fields = stencil::fields<stencil::field<1>>;
  static constexpr char const* name = "heat1d-rhs";
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    auto const u = stencil::read<0>(in);
    return u(-1) + u(1) - 2 * u(0);
  }
};

/// u' = k (7-point Laplacian of u) + sin(z + t) / 10, with k a coefficient
/// field read at the cell alone: 3D, position and time.
struct Heat3dRhs {
  static constexpr int rank = 3;
  static constexpr auto shape = stencil::Shape::star;
  using fields = stencil::fields<stencil::field<1>, stencil::coefficient<0>>;
  static constexpr char const* name = "heat3d-rhs";
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    auto const u = stencil::read<0>(in);
    auto const k = stencil::read<1>(in);
    T const laplacian = u(-1, 0, 0) + u(1, 0, 0) + u(0, -1, 0) + u(0, 1, 0) +
                        u(0, 0, -1) + u(0, 0, 1) - 6 * u(0, 0, 0);
    double const source = 0.1 * Kokkos::sin(in.position()[0] + in.time());
    return k(0, 0, 0) * laplacian / 6 + static_cast<T>(source);
  }
};

/// A 5x5 box of distinct weights (radius 2), so that a corner of the halo
/// that takes a wrong value changes the result.
struct Box2dRhs {
  static constexpr int rank = 2;
  static constexpr auto shape = stencil::Shape::box;
  using fields = stencil::fields<stencil::field<2>>;
  static constexpr char const* name = "box2d-rhs";
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    auto const u = stencil::read<0>(in);
    T sum = 0;
    for (int dy = -2; dy <= 2; ++dy) {
      for (int dx = -2; dx <= 2; ++dx) {
        sum += static_cast<T>(0.01 * (5 * dy + dx + 13)) * u(dy, dx);
      }
    }
    return sum - static_cast<T>(1.69) * u(0, 0);
  }
};

/// A 3x3x3 box of distinct weights: the halo's edges and corners across
/// three axes change the result.
struct Box3dRhs {
  static constexpr int rank = 3;
  static constexpr auto shape = stencil::Shape::box;
  using fields = stencil::fields<stencil::field<1>>;
  static constexpr char const* name = "box3d-rhs";
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    auto const u = stencil::read<0>(in);
    T sum = 0;
    for (int dz = -1; dz <= 1; ++dz) {
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          sum += static_cast<T>(0.01 * (9 * dz + 3 * dy + dx + 14)) *
                 u(dz, dy, dx);
        }
      }
    }
    return sum - static_cast<T>(3.78) * u(0, 0, 0);
  }
};

/// Heat3dRhs declared 4 cells wide: rims of 4 x stages cells per side.
struct WideHeat3dRhs : Heat3dRhs {
  using fields = stencil::fields<stencil::field<4>, stencil::coefficient<0>>;
};

}  // namespace tiled_fused_test

namespace {

using Space = Kokkos::DefaultHostExecutionSpace;
using Memory = Space::memory_space;
using stencil::Boundary;
using stencil::ode::Method;
using stencil_test::WithinRhs;
using tiled_fused_test::Box2dRhs;
using tiled_fused_test::Box3dRhs;
using tiled_fused_test::Heat1dRhs;
using tiled_fused_test::Heat3dRhs;
using tiled_fused_test::WideHeat3dRhs;

using stencil_test::all;
using stencil_test::Sides;

/// A state of `Rhs`'s fields in host memory (ode_test_states.hpp).
template <class T, int Rank, class Rhs>
stencil::State<T, Rank, Memory> make_state(std::array<int, Rank> extents,
                                           Sides<Rank> const& sides, int halo) {
  return stencil_test::make_ode_state<T, Rank, Rhs, Memory>(extents, sides,
                                                            halo);
}

template <class T, int Rank, class Rhs>
double largest_difference(stencil::State<T, Rank, Memory> const& a,
                          stencil::State<T, Rank, Memory> const& b) {
  return stencil_test::largest_ode_difference<T, Rank, Rhs>(a, b);
}

/// Both plans evaluate the same expressions in the same order: bit for bit
/// the same where the compiler does not contract products into FMAs
/// (GCC 12 at -O3 without -march: 0 on every case here). Where it does,
/// one loop may be contracted and the other not: a few ulps a stage.
template <class T>
constexpr double rounding() {
#if defined(__FP_FAST_FMA) || defined(__FP_FAST_FMAF)
  return std::is_same_v<T, float> ? 1e-6 : 1e-14;
#else
  return 0.0;
#endif
}

template <int Rank>
struct Problem {
  std::array<int, Rank> extents;
  Sides<Rank> sides;
  int steps = 3;
  double dt = 0.1;
  int halo = 1;
};

/// `plan` (Fused, or Auto taking it) and Unfused from the same state: the
/// same result to rounding, the same stage count and time.
template <class T, int Rank, class Rhs, class P>
std::string expect_as_unfused(Rhs const& rhs, Problem<Rank> const& p, Method m,
                              P plan, std::string const& what) {
  auto reference = make_state<T, Rank, Rhs>(p.extents, p.sides, p.halo);
  auto state = make_state<T, Rank, Rhs>(p.extents, p.sides, p.halo);
  stencil::ode::FixedSteps const steps{0.0, p.dt, p.steps};
  stencil::ode::integrate(Space{}, reference, rhs, m, steps,
                          stencil::ode::Unfused{});
  auto const report =
      stencil::ode::integrate(Space{}, state, rhs, m, steps, plan);
  std::string label = what + " " + stencil::ode::to_string(m) + " " +
                      (std::is_same_v<T, float> ? "float" : "double");
  for (int e : p.extents) label += " " + std::to_string(e);
  label += ": " + report.plan;
  EXPECT_EQ(report.plan.rfind("Fused (", 0), 0u) << label;
  EXPECT_EQ(report.rhs_evaluations, p.steps * stencil::ode::tableau(m).stages)
      << label;
  EXPECT_DOUBLE_EQ(state.time(), reference.time()) << label;
  EXPECT_LE((largest_difference<T, Rank, Rhs>(state, reference)), rounding<T>())
      << label;
  return report.plan;
}

stencil::ode::Fused tiles(int x, int y = 0, int z = 0) {
  stencil::ode::Fused f;
  f.tile_x = x;
  f.tile_y = y;
  f.tile_z = z;
  return f;
}

constexpr Method methods[] = {Method::forward_euler, Method::rk4,
                              Method::bogacki_shampine, Method::dormand_prince,
                              Method::verner56};

/// Sides of several kinds: mirrored beside periodic, periodic beside fixed
/// and mirrored, fixed beside both mirrors, dirichlet beside each other
/// kind (on either axis: the slower one's rule wins at the corners), and
/// each kind alone.
std::vector<Sides<2>> every_side() {
  return {{Boundary::neumann, Boundary::reflecting, Boundary::periodic,
           Boundary::periodic},
          {Boundary::periodic, Boundary::periodic, Boundary::fixed,
           Boundary::neumann},
          {Boundary::fixed, Boundary::neumann, Boundary::reflecting,
           Boundary::fixed},
          {Boundary::dirichlet, Boundary::neumann, Boundary::periodic,
           Boundary::periodic},
          {Boundary::fixed, Boundary::reflecting, Boundary::dirichlet,
           Boundary::dirichlet},
          {Boundary::dirichlet, Boundary::dirichlet, Boundary::neumann,
           Boundary::fixed},
          {Boundary::periodic, Boundary::periodic, Boundary::reflecting,
           Boundary::dirichlet},
          all<2>(Boundary::fixed),
          all<2>(Boundary::periodic),
          all<2>(Boundary::neumann),
          all<2>(Boundary::reflecting),
          all<2>(Boundary::dirichlet)};
}

template <class T>
void every_problem_every_method() {
  auto const bruss = stencil::suite::BrussRhs::for_points(37);
  auto const interleaved = stencil::suite::BrussInterleavedRhs::for_points(37);
  // The plan's tiles, and tiles smaller than their rims.
  for (auto const& plan : {tiles(0), tiles(5, 3)}) {
    for (Method m : methods) {
      expect_as_unfused<T, 2>(stencil_test::HeatRhs{0.2},
                              {{37, 53}, all<2>(Boundary::fixed), 5}, m, plan,
                              "heat fixed");
      expect_as_unfused<T, 2>(bruss,
                              {{37, 37}, all<2>(Boundary::reflecting), 3, 0.01},
                              m, plan, "bruss reflecting");
      expect_as_unfused<T, 2>(stencil::suite::GrayScottRhs{},
                              {{41, 29}, all<2>(Boundary::periodic), 3, 0.5}, m,
                              plan, "gray-scott periodic");
      expect_as_unfused<T, 2>(interleaved,
                              {{37, 74}, all<2>(Boundary::fixed), 3, 0.01, 2},
                              m, plan, "bruss interleaved");
      expect_as_unfused<T, 2>(stencil_test::VarCoefSourceRhs{},
                              {{29, 31}, every_side()[0], 4, 0.1}, m, plan,
                              "varcoef source");
    }
  }
}

TEST(OdeTiledFused, MatchesUnfusedOnEveryProblemDouble) {
  every_problem_every_method<double>();
}

TEST(OdeTiledFused, MatchesUnfusedOnEveryProblemFloat) {
  every_problem_every_method<float>();
}

/// Whether the plan refuses a box stencil on `s`: a dirichlet side of y,
/// whose function gives the corners past periodic x other values than the
/// cells x wraps to.
bool box_refused(Sides<2> const& s) {
  return (s[0] == Boundary::dirichlet || s[1] == Boundary::dirichlet) &&
         s[2] == Boundary::periodic;
}

TEST(OdeTiledFused, MatchesUnfusedOnEverySideAndTile) {
  auto const bruss = stencil::suite::BrussRhs::for_points(23);
  std::array<std::array<int, 2>, 6> const shapes = {
      {{1, 1}, {3, 5}, {8, 4}, {4, 16}, {64, 64}, {0, 0}}};
  for (auto const& s : every_side()) {
    for (auto const& t : shapes) {
      std::string const what =
          "tile " + std::to_string(t[0]) + "x" + std::to_string(t[1]);
      // Odd sizes that no tile divides; corners read by the box.
      if (box_refused(s)) {
        auto state = make_state<double, 2, Box2dRhs>({23, 19}, s, 2);
        stencil_test::expect_error(
            [&] {
              stencil::ode::integrate(Space{}, state, Box2dRhs{}, Method::rk4,
                                      stencil::ode::FixedSteps{0, 0.05, 1},
                                      tiles(t[0], t[1]));
            },
            {"axis y's dirichlet function", "periodic axis x", "use Unfused"});
      } else {
        expect_as_unfused<double, 2>(Box2dRhs{}, {{23, 19}, s, 4, 0.05, 2},
                                     Method::rk4, tiles(t[0], t[1]), what);
      }
      expect_as_unfused<float, 2>(bruss, {{23, 19}, s, 5, 0.01},
                                  Method::verner56, tiles(t[0], t[1]), what);
    }
    // Rims and halos 2 deep along x, 1 along y.
    expect_as_unfused<double, 2>(WithinRhs{}, {{17, 21}, s, 4, 0.05, 2},
                                 Method::dormand_prince, tiles(5, 3),
                                 "within<1, 2>");
    // Smaller than a tile's rims: mirrored and wrapped cells lie within
    // the tile's own scratch, several times over.
    expect_as_unfused<double, 2>(bruss, {{5, 7}, s, 3, 0.01}, Method::rk4,
                                 tiles(0), "bruss tiny");
    expect_as_unfused<double, 2>(bruss, {{3, 3}, s, 2, 0.01},
                                 Method::dormand_prince, tiles(2, 2),
                                 "bruss 3x3");
    if (!box_refused(s)) {
      expect_as_unfused<double, 2>(Box2dRhs{}, {{4, 5}, s, 3, 0.05, 2},
                                   Method::verner56, tiles(1, 2), "box tiny");
    }
  }
}

TEST(OdeTiledFused, MatchesUnfusedInOneAndThreeDimensions) {
  std::vector<Sides<1>> const sides1 = {
      all<1>(Boundary::periodic),
      {Boundary::neumann, Boundary::reflecting},
      {Boundary::fixed, Boundary::neumann},
      {Boundary::dirichlet, Boundary::reflecting}};
  for (auto const& s : sides1) {
    for (int t : {0, 1, 4, 7}) {
      for (Method m : methods) {
        expect_as_unfused<double, 1>(Heat1dRhs{}, {{37}, s, 5, 0.2}, m,
                                     tiles(t), "heat1d");
      }
      expect_as_unfused<float, 1>(Heat1dRhs{}, {{6}, s, 4, 0.2},
                                  Method::verner56, tiles(t), "heat1d tiny");
    }
  }
  std::vector<Sides<3>> const sides3 = {
      all<3>(Boundary::periodic),
      all<3>(Boundary::neumann),
      {Boundary::reflecting, Boundary::fixed, Boundary::periodic,
       Boundary::periodic, Boundary::neumann, Boundary::reflecting},
      {Boundary::neumann, Boundary::dirichlet, Boundary::dirichlet,
       Boundary::fixed, Boundary::periodic, Boundary::periodic}};
  std::array<std::array<int, 3>, 3> const shapes = {
      {{0, 0, 0}, {3, 4, 5}, {16, 1, 2}}};
  for (auto const& s : sides3) {
    for (auto const& t : shapes) {
      for (Method m :
           {Method::rk4, Method::bogacki_shampine, Method::verner56}) {
        expect_as_unfused<double, 3>(Heat3dRhs{}, {{9, 11, 13}, s, 3, 0.05}, m,
                                     tiles(t[0], t[1], t[2]), "heat3d");
      }
      expect_as_unfused<float, 3>(Heat3dRhs{}, {{5, 4, 7}, s, 4, 0.05},
                                  Method::dormand_prince,
                                  tiles(t[0], t[1], t[2]), "heat3d small");
    }
  }
}

TEST(OdeTiledFused, MatchesUnfusedOnBoxCornersInThreeDimensions) {
  // Dirichlet sides on axes no faster periodic axis follows (the plan
  // refuses a box there: see MatchesUnfusedOnEverySideAndTile).
  std::vector<Sides<3>> const sides = {
      {Boundary::neumann, Boundary::dirichlet, Boundary::fixed,
       Boundary::reflecting, Boundary::dirichlet, Boundary::dirichlet},
      {Boundary::periodic, Boundary::periodic, Boundary::neumann,
       Boundary::dirichlet, Boundary::reflecting, Boundary::fixed},
      {Boundary::reflecting, Boundary::neumann, Boundary::periodic,
       Boundary::periodic, Boundary::periodic, Boundary::periodic},
      all<3>(Boundary::dirichlet)};
  std::array<std::array<int, 3>, 3> const shapes = {
      {{0, 0, 0}, {2, 3, 4}, {1, 1, 1}}};
  for (auto const& s : sides) {
    for (auto const& t : shapes) {
      expect_as_unfused<double, 3>(Box3dRhs{}, {{7, 6, 9}, s, 3, 0.05},
                                   Method::bogacki_shampine,
                                   tiles(t[0], t[1], t[2]), "box3d");
    }
  }
  // Dirichlet z beside periodic x: refused for a box.
  Sides<3> const refused = {Boundary::dirichlet, Boundary::neumann,
                            Boundary::fixed,     Boundary::fixed,
                            Boundary::periodic,  Boundary::periodic};
  auto state = make_state<double, 3, Box3dRhs>({7, 6, 9}, refused, 1);
  stencil_test::expect_error(
      [&] {
        stencil::ode::integrate(Space{}, state, Box3dRhs{}, Method::rk4,
                                stencil::ode::FixedSteps{0, 0.05, 1},
                                stencil::ode::Fused{});
      },
      {"axis z's dirichlet function", "periodic axis x", "use Unfused"});
}

TEST(OdeTiledFused, TakesTheTilesAskedForAndChoosesTheRest) {
  using stencil_test::expect_error;
  auto const run = [](auto rhs, auto extents, auto const& sides, int halo,
                      auto plan) {
    using Rhs = decltype(rhs);
    constexpr int rank = Rhs::rank;
    auto state = make_state<double, rank, Rhs>(extents, sides, halo);
    return stencil::ode::integrate(Space{}, state, rhs, Method::rk4,
                                   stencil::ode::FixedSteps{0, 0.01, 1}, plan);
  };
  // x asked, y chosen; a size past the extent is the extent.
  auto const x_only = run(Box2dRhs{}, std::array<int, 2>{23, 19},
                          all<2>(Boundary::neumann), 2, tiles(5));
  EXPECT_NE(x_only.plan.find("tiles of 5x"), std::string::npos) << x_only.plan;
  auto const whole = run(Box2dRhs{}, std::array<int, 2>{23, 19},
                         all<2>(Boundary::neumann), 2, tiles(100, 100));
  EXPECT_NE(whole.plan.find("tiles of 19x23 cells, 1 tiles"), std::string::npos)
      << whole.plan;
  // Tiles whose scratch the space does not give.
  expect_error(
      [&] {
        run(Heat3dRhs{}, std::array<int, 3>{96, 96, 96},
            all<3>(Boundary::periodic), 1, tiles(96, 96, 96));
      },
      {"bytes of scratch a thread", "ask for smaller tiles"});
  // Rims of 4 stages x 4 cells in 3D, on a domain no tile that fits the
  // cache covers: Auto leaves them to Unfused and says why; Fused{} runs
  // them (here on a smaller domain).
  auto const wide = run(WideHeat3dRhs{}, std::array<int, 3>{40, 40, 40},
                        all<3>(Boundary::neumann), 4, stencil::ode::Auto{});
  EXPECT_EQ(wide.plan, "Unfused");
  EXPECT_NE(wide.plan_reason.find("cells per cell they update"),
            std::string::npos)
      << wide.plan_reason;
  expect_as_unfused<double, 3>(
      WideHeat3dRhs{}, {{12, 10, 11}, all<3>(Boundary::neumann), 2, 0.05, 4},
      Method::rk4, stencil::ode::Fused{}, "wide");
}

TEST(OdeTiledFused, AdaptiveTakesTheStepsUnfusedTakes) {
  auto const rhs = stencil::suite::BrussRhs::for_points(41);
  // Rejected steps restore y_n; the dirichlet values of the step retried
  // are those of its own time.
  Sides<2> const dirichlet = {Boundary::dirichlet, Boundary::reflecting,
                              Boundary::neumann, Boundary::dirichlet};
  for (auto const& plan : {tiles(0), tiles(7, 5)}) {
    for (Method m :
         {Method::bogacki_shampine, Method::dormand_prince, Method::verner56}) {
      Sides<2> const s = m == Method::dormand_prince
                             ? dirichlet
                             : all<2>(Boundary::reflecting);
      auto a = make_state<double, 2, stencil::suite::BrussRhs>({41, 41}, s, 1);
      auto b = make_state<double, 2, stencil::suite::BrussRhs>({41, 41}, s, 1);
      // A first step of the whole interval: rejected at least once.
      stencil::ode::Adaptive const adaptive{.t0 = 0.0,
                                            .t_end = 0.5,
                                            .dt = 0.5,
                                            .absolute = 1e-6,
                                            .relative = 1e-6};
      std::vector<int> hooks;
      auto const ra = stencil::ode::integrate(Space{}, a, rhs, m, adaptive,
                                              stencil::ode::Unfused{});
      auto const rb = stencil::ode::integrate(
          Space{}, b, rhs, m, adaptive, plan,
          stencil::every(3, [&](int n) { hooks.push_back(n); }));
      std::string const name =
          std::string(stencil::ode::to_string(m)) + ": " + rb.plan;
      EXPECT_EQ(rb.plan.rfind("Fused (", 0), 0u) << name;
      EXPECT_GE(ra.rejected, 1) << name;
      EXPECT_EQ(rb.accepted, ra.accepted) << name;
      EXPECT_EQ(rb.rejected, ra.rejected) << name;
      EXPECT_EQ(rb.rhs_evaluations, ra.rhs_evaluations) << name;
      EXPECT_DOUBLE_EQ(rb.t, ra.t) << name;
      EXPECT_EQ(hooks.size(), static_cast<std::size_t>(rb.accepted / 3))
          << name;
      // The same steps over the whole interval; the error norms are summed
      // in another order, so the step sizes differ in their last bits (up
      // to 5.6e-16 here).
      EXPECT_LE((largest_difference<double, 2, stencil::suite::BrussRhs>(b, a)),
                1e-14)
          << name;
    }
  }
}

TEST(OdeTiledFused, ShowsTheRightHandSideInteriorPositionsOnly) {
  Sides<2> const mixed = {Boundary::fixed, Boundary::neumann,
                          Boundary::periodic, Boundary::periodic};
  for (std::array<int, 2> const extents :
       {std::array<int, 2>{5, 7}, std::array<int, 2>{41, 33}}) {
    for (auto const& s :
         {all<2>(Boundary::reflecting), mixed, all<2>(Boundary::periodic)}) {
      stencil_test::PositionProbeRhs<Memory> rhs;
      rhs.scale = 0.2;
      rhs.outside = Kokkos::View<int, Memory>("outside");
      rhs.ny = extents[0];
      rhs.nx = extents[1];
      for (auto const& plan : {tiles(0), tiles(3, 2)}) {
        expect_as_unfused<double, 2>(rhs, {extents, s, 2, 0.05},
                                     Method::verner56, plan, "probe");
      }
      EXPECT_EQ(rhs.outside(), 0)
          << extents[0] << "x" << extents[1]
          << ": the right-hand side saw a position past the domain";
    }
  }
}

TEST(OdeTiledFused, AutoTakesItAndSaysWhereItCannotRun) {
  using stencil_test::expect_error;
  using stencil_test::HeatRhs;
  stencil::ode::FixedSteps const steps{0.0, 0.1, 2};
  auto s =
      make_state<double, 2, HeatRhs>({9, 11}, all<2>(Boundary::neumann), 1);
  auto const r = expect_as_unfused<double, 2>(
      HeatRhs{0.2}, {{9, 11}, all<2>(Boundary::neumann), 2}, Method::rk4,
      stencil::ode::Auto{}, "auto");
  EXPECT_NE(r.find("tiles of"), std::string::npos) << r;
  auto const reasoned = stencil::ode::integrate(
      Space{}, s, HeatRhs{0.2}, Method::rk4, steps, stencil::ode::Auto{});
  EXPECT_NE(reasoned.plan_reason.find("Fused: "), std::string::npos)
      << reasoned.plan_reason;

  stencil::ode::Fused cluster;
  cluster.cluster_x = 2;
  expect_error(
      [&] {
        stencil::ode::integrate(Space{}, s, HeatRhs{}, Method::rk4, steps,
                                cluster);
      },
      {"native CUDA backend's", "tile_x"});
  stencil::ode::Fused barrier;
  barrier.barrier = stencil::ode::TileBarrier::global_memory;
  expect_error(
      [&] {
        stencil::ode::integrate(Space{}, s, HeatRhs{}, Method::rk4, steps,
                                barrier);
      },
      {"tile barriers", "barrier"});
  expect_error(
      [&] {
        stencil::ode::integrate(Space{}, s, HeatRhs{}, Method::rk4, steps,
                                tiles(4, 4, 2));
      },
      {"tile size along z", "2D state"});
  expect_error(
      [&] {
        stencil::ode::integrate(Space{}, s, HeatRhs{}, Method::rk4, steps,
                                tiles(-1, 4));
      },
      {"give positive sizes"});

  // A part of a distributed state: its halos are its neighbours' cells.
  auto part =
      make_state<double, 2, HeatRhs>({9, 11}, all<2>(Boundary::fixed), 1);
  stencil::detail::PositionMap map;
  map.origin[2] = 11;
  part.set_position_map(map);
  expect_error(
      [&] {
        stencil::ode::integrate(Space{}, part, HeatRhs{}, Method::rk4, steps,
                                stencil::ode::Fused{});
      },
      {"part of a distributed one", "use Unfused"});
  auto const auto_part = stencil::ode::integrate(
      Space{}, part, HeatRhs{}, Method::rk4, steps, stencil::ode::Auto{});
  EXPECT_EQ(auto_part.plan, "Unfused");
  EXPECT_NE(auto_part.plan_reason.find("distributed"), std::string::npos)
      << auto_part.plan_reason;
}

}  // namespace
