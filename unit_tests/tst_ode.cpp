// SPDX-License-Identifier: Apache-2.0
// stencil::ode::integrate (Unfused) against what it must give:
// - 2D heat on a sine mode, whose semi-discrete solution is exp(lambda t)
//   times the mode: each method's observed order within 0.3 of its own;
// - a two-species reaction-diffusion system (the Brusselator's right-hand
//   side, periodic) against a plain host loop of the same tableau;
// - adaptive steps that meet their tolerance, rejecting a first step that
//   is too long; hooks; and refused input.
#include <stencil/ode.hpp>
#include <stencil/stencil.hpp>

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include "ode_test_problems.hpp"
#include "test_support.hpp"

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
using stencil::ode::Method;

constexpr double pi = 3.14159265358979323846;

using stencil_test::HeatRhs;

/// The sine mode on n x n interior cells with zero (fixed) halo: x_i =
/// (i + 1) h, h = 1 / (n + 1). The Laplacian's eigenvalue for it is
/// -8 sin^2(pi h / 2) / h^2 cells^-2; `scale` is chosen so that lambda = -2.
/// Few cells keep the other modes' eigenvalues (up to 5.8x this one at n =
/// 3) inside every method's stability region at the steps tested, so that
/// round-off in them does not grow: the error measured is the method's.
struct SineMode {
  int n = 3;
  double h() const { return 1.0 / (n + 1); }
  double eigenvalue_per_scale() const {
    double const s = std::sin(pi * h() / 2);
    return -8 * s * s;
  }
  double scale() const { return -2.0 / eigenvalue_per_scale(); }
  double value(int i, int j) const {
    return std::sin(pi * (i + 1) * h()) * std::sin(pi * (j + 1) * h());
  }
};

template <class T>
stencil::State<T, 2, Memory> heat_state(SineMode const& m) {
  stencil::State<T, 2, Memory> s(
      "heat", {m.n, m.n}, stencil::field_specs<HeatRhs>({"u"}), {.halo = 1});
  stencil::fill(s, 0, [&](int i, int j) {
    bool const inside = i >= 0 && j >= 0 && i < m.n && j < m.n;
    return static_cast<T>(inside ? m.value(i, j) : 0.0);
  });
  return s;
}

/// The largest difference from exp(lambda t) times the mode.
template <class T>
double heat_error(stencil::State<T, 2, Memory> const& s, SineMode const& m,
                  double t) {
  auto const u =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, s.current(0));
  double const decay = std::exp(-2.0 * t);
  double worst = 0;
  for (int i = 0; i < m.n; ++i)
    for (int j = 0; j < m.n; ++j)
      worst = std::max(worst, std::abs(static_cast<double>(u(i + 1, j + 1)) -
                                       decay * m.value(i, j)));
  return worst;
}

double heat_error_after(Method method, int steps) {
  SineMode const m;
  auto s = heat_state<double>(m);
  stencil::ode::integrate(Space{}, s, HeatRhs{m.scale()}, method,
                          stencil::ode::FixedSteps{0.0, 1.0 / steps, steps});
  EXPECT_DOUBLE_EQ(s.time(), 1.0);
  return heat_error(s, m, 1.0);
}

TEST(Ode, EveryMethodConvergesAtItsOrder) {
  struct Case {
    Method method;
    int steps;  // and twice as many
  };
  for (auto c : {Case{Method::forward_euler, 64}, Case{Method::rk4, 8},
                 Case{Method::bogacki_shampine, 16},
                 Case{Method::dormand_prince, 8}, Case{Method::verner56, 12}}) {
    double const coarse = heat_error_after(c.method, c.steps);
    double const fine = heat_error_after(c.method, 2 * c.steps);
    double const observed = std::log2(coarse / fine);
    int const order = stencil::ode::tableau(c.method).order;
    EXPECT_NEAR(observed, order, 0.3)
        << stencil::ode::to_string(c.method) << ": errors " << coarse << " and "
        << fine;
    std::printf("%-17s order %d, observed %.2f (errors %.3g, %.3g)\n",
                stencil::ode::to_string(c.method), order, observed, coarse,
                fine);
    EXPECT_GT(fine, 1e-14) << "round-off, not the method's error";
  }
}

TEST(Ode, FloatFollowsDouble) {
  SineMode const m;
  auto s = heat_state<float>(m);
  auto const r =
      stencil::ode::integrate(Space{}, s, HeatRhs{m.scale()}, Method::rk4,
                              stencil::ode::FixedSteps{0.0, 1.0 / 16, 16});
  EXPECT_EQ(r.accepted, 16);
  EXPECT_EQ(r.rhs_evaluations, 64);
  EXPECT_LT(heat_error(s, m, 1.0), 2e-6);
}

// -------------------------------------------- two species against a host loop

/// The Brusselator's right-hand side (STENCILS.md, bruss2d) with diffusion
/// `alpha` / h^2 per cell.
struct BrussRhs {
  static constexpr int rank = 2;
  static constexpr auto shape = stencil::Shape::star;
  using fields = stencil::fields<stencil::field<1>, stencil::field<1>>;
  static constexpr char const* name = "bruss-rhs";
  double diffusion = 0.5;
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    auto const u = stencil::read<0>(in);
    auto const v = stencil::read<1>(in);
    double const uu = u(0, 0), vv = v(0, 0);
    double const lu = u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1) - 4 * uu;
    double const lv = v(-1, 0) + v(1, 0) + v(0, -1) + v(0, 1) - 4 * vv;
    return stencil::values{1 + uu * uu * vv - 4.4 * uu + diffusion * lu,
                           3.4 * uu - uu * uu * vv + diffusion * lv};
  }
};

/// The same right-hand side and tableau as plain host loops, periodic.
std::vector<std::vector<double>> bruss_reference(
    stencil::ode::Tableau const& t, int ny, int nx, double dt, int steps,
    std::vector<std::vector<double>> y, double diffusion) {
  int const cells = ny * nx;
  auto at = [&](int i, int j) { return ((i + ny) % ny) * nx + (j + nx) % nx; };
  auto rhs = [&](std::vector<std::vector<double>> const& s) {
    std::vector<std::vector<double>> k(2, std::vector<double>(cells));
    for (int i = 0; i < ny; ++i) {
      for (int j = 0; j < nx; ++j) {
        double const u = s[0][at(i, j)], v = s[1][at(i, j)];
        auto lap = [&](std::vector<double> const& f) {
          return f[at(i - 1, j)] + f[at(i + 1, j)] + f[at(i, j - 1)] +
                 f[at(i, j + 1)] - 4 * f[at(i, j)];
        };
        k[0][at(i, j)] = 1 + u * u * v - 4.4 * u + diffusion * lap(s[0]);
        k[1][at(i, j)] = 3.4 * u - u * u * v + diffusion * lap(s[1]);
      }
    }
    return k;
  };
  for (int n = 0; n < steps; ++n) {
    std::vector<std::vector<std::vector<double>>> k;
    for (int i = 0; i < t.stages; ++i) {
      auto stage = y;
      for (int f = 0; f < 2; ++f)
        for (int c = 0; c < cells; ++c)
          for (int j = 0; j < i; ++j)
            stage[f][c] += dt * t.a_at(i, j) * k[j][f][c];
      k.push_back(rhs(stage));
    }
    for (int f = 0; f < 2; ++f)
      for (int c = 0; c < cells; ++c)
        for (int j = 0; j < t.stages; ++j) y[f][c] += dt * t.b[j] * k[j][f][c];
  }
  return y;
}

TEST(Ode, TwoSpeciesMatchAHostLoopOfTheSameTableau) {
  int const ny = 9, nx = 7, steps = 3;
  double const dt = 0.01, diffusion = 0.5;
  auto u0 = [](int i, int j) { return 0.5 + 0.1 * i + 0.03 * j * j; };
  auto v0 = [](int i, int j) { return 1.0 + 0.5 * std::sin(0.7 * j + i); };
  for (Method m : {Method::forward_euler, Method::rk4, Method::bogacki_shampine,
                   Method::dormand_prince, Method::verner56}) {
    stencil::State<double, 2, Memory> s(
        "bruss", {ny, nx}, stencil::field_specs<BrussRhs>({"u", "v"}),
        {.halo = 1, .boundary = stencil::Boundary::periodic});
    stencil::fill(s, 0, u0);
    stencil::fill(s, 1, v0);
    stencil::ode::integrate(Space{}, s, BrussRhs{diffusion}, m,
                            stencil::ode::FixedSteps{0.0, dt, steps});
    std::vector<std::vector<double>> y(2, std::vector<double>(ny * nx));
    for (int i = 0; i < ny; ++i)
      for (int j = 0; j < nx; ++j) {
        y[0][i * nx + j] = u0(i, j);
        y[1][i * nx + j] = v0(i, j);
      }
    auto const expected = bruss_reference(stencil::ode::tableau(m), ny, nx, dt,
                                          steps, y, diffusion);
    double worst = 0;
    for (int f = 0; f < 2; ++f) {
      auto const got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{},
                                                           s.current(f));
      for (int i = 0; i < ny; ++i)
        for (int j = 0; j < nx; ++j)
          worst = std::max(
              worst, std::abs(got(i + 1, j + 1) - expected[f][i * nx + j]));
    }
    EXPECT_LT(worst, 1e-13) << stencil::ode::to_string(m);
  }
}

// ------------------------------------------------------------ adaptive steps

TEST(Ode, AdaptiveStepsMeetTheirTolerance) {
  SineMode const m;
  struct Case {
    Method method;
    double tolerance, allowed;
  };
  for (auto c : {Case{Method::bogacki_shampine, 1e-6, 1e-4},
                 Case{Method::dormand_prince, 1e-8, 1e-6},
                 Case{Method::verner56, 1e-10, 1e-8}}) {
    auto s = heat_state<double>(m);
    // A first step of the whole interval: too long, so rejected.
    auto const r = stencil::ode::integrate(
        Space{}, s, HeatRhs{m.scale()}, c.method,
        stencil::ode::Adaptive{.t0 = 0.0,
                               .t_end = 1.0,
                               .dt = 1.0,
                               .absolute = c.tolerance,
                               .relative = c.tolerance});
    std::string const name = stencil::ode::to_string(c.method);
    EXPECT_DOUBLE_EQ(r.t, 1.0) << name;
    EXPECT_DOUBLE_EQ(s.time(), 1.0) << name;
    EXPECT_GE(r.rejected, 1) << name;
    EXPECT_GE(r.accepted, 2) << name;
    EXPECT_EQ(r.rhs_evaluations, (r.accepted + r.rejected) *
                                     stencil::ode::tableau(c.method).stages)
        << name;
    EXPECT_LT(heat_error(s, m, 1.0), c.allowed) << name;
  }
  // A tighter tolerance takes more steps.
  auto loose = heat_state<double>(m), tight = heat_state<double>(m);
  auto const a = stencil::ode::integrate(
      Space{}, loose, HeatRhs{m.scale()}, Method::dormand_prince,
      stencil::ode::Adaptive{.t_end = 1.0, .absolute = 1e-5, .relative = 1e-5});
  auto const b = stencil::ode::integrate(
      Space{}, tight, HeatRhs{m.scale()}, Method::dormand_prince,
      stencil::ode::Adaptive{.t_end = 1.0, .absolute = 1e-9, .relative = 1e-9});
  EXPECT_LT(a.accepted, b.accepted);
  EXPECT_LT(heat_error(tight, m, 1.0), heat_error(loose, m, 1.0));
}

TEST(Ode, HooksRunEveryNSteps) {
  SineMode const m;
  auto s = heat_state<double>(m);
  std::vector<int> calls;
  std::vector<double> times;
  stencil::ode::integrate(Space{}, s, HeatRhs{m.scale()}, Method::rk4,
                          stencil::ode::FixedSteps{0.0, 0.1, 10},
                          stencil::ode::Unfused{},
                          stencil::every(3, [&](int n) {
                            calls.push_back(n);
                            times.push_back(s.time());
                          }));
  EXPECT_EQ(calls, (std::vector<int>{3, 6, 9}));
  ASSERT_EQ(times.size(), 3u);
  EXPECT_NEAR(times[1], 0.6, 1e-12);
  // What a hook throws reaches the caller as thrown.
  struct Stop {};
  EXPECT_THROW(
      stencil::ode::integrate(Space{}, s, HeatRhs{m.scale()}, Method::rk4,
                              stencil::ode::FixedSteps{0.0, 0.1, 10},
                              stencil::ode::Unfused{},
                              stencil::every(2, [](int) { throw Stop{}; })),
      Stop);
}

TEST(Ode, BadInputIsRefusedWithWhatWouldBeValid) {
  SineMode const m;
  auto s = heat_state<double>(m);
  using stencil_test::expect_error;

  expect_error(
      [&] {
        stencil::ode::integrate(Space{}, s, HeatRhs{}, Method::rk4,
                                stencil::ode::Adaptive{.t_end = 1.0});
      },
      {"has no embedded method"});
  expect_error(
      [&] {
        stencil::ode::integrate(Space{}, s, HeatRhs{}, Method::rk4,
                                stencil::ode::FixedSteps{0.0, 0.0, 3});
      },
      {"give a positive, finite step"});
  expect_error(
      [&] {
        stencil::ode::integrate(
            Space{}, s, HeatRhs{}, Method::dormand_prince,
            stencil::ode::Adaptive{.t0 = 1.0, .t_end = 0.5});
      },
      {"must be after t0"});
  expect_error(
      [&] {
        stencil::ode::integrate(
            Space{}, s, HeatRhs{}, Method::dormand_prince,
            stencil::ode::Adaptive{.t_end = 1.0, .absolute = 0.0});
      },
      {"give absolute > 0"});
  stencil::State<double, 2, Memory> two(
      "two", {8, 8}, stencil::field_specs<BrussRhs>({"u", "v"}));
  expect_error(
      [&] {
        stencil::ode::integrate(Space{}, two, HeatRhs{}, Method::rk4,
                                stencil::ode::FixedSteps{0.0, 0.1, 1});
      },
      {"field_specs<Rhs>"});
}

}  // namespace
