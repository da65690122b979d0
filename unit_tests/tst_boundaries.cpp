// SPDX-License-Identifier: Apache-2.0
// Boundaries per axis and side: every kind, and mixes of them, against a
// host reference that mirrors indices directly on the padded array before
// every step (written apart from the kernels: its own loops, its own index
// rules). Also the refusals, and the time a dirichlet function sees.
#include "reference.hpp"
#include "stencil_test_spaces.hpp"
#include "test_support.hpp"

#include <stencil/detail/padded.hpp>
#include <stencil/detail/portable/boundary_halo.hpp>
#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace {

using stencil::Boundary;
using stencil::Shape;
using stencil::Side;

constexpr Boundary fixed = Boundary::fixed, periodic = Boundary::periodic,
                   neumann = Boundary::neumann,
                   reflecting = Boundary::reflecting,
                   dirichlet = Boundary::dirichlet;

/// The dirichlet values of every test: smooth in every coordinate and in
/// time, within [0.1, 0.9] like the random interior.
template <int Rank>
double dirichlet_value(std::array<int, Rank> const& cell, double time) {
  double s = 0.3 * time;
  for (int d = 0; d < Rank; ++d) s += (d + 1.7) * cell[d];
  return 0.5 + 0.4 * std::sin(s);
}

/// A boundary to test: the kind of each side, axes slowest first, low side
/// first. Dirichlet sides take dirichlet_value.
template <int Rank>
struct Sides {
  std::array<std::array<Boundary, 2>, Rank> kinds;
  std::string text() const {
    std::string t;
    for (int d = 0; d < Rank; ++d) {
      t += std::to_string(d) + ":" + stencil::to_string(kinds[d][0]) + "/" +
           stencil::to_string(kinds[d][1]) + " ";
    }
    return t;
  }
  bool all_fixed() const {
    for (auto const& pair : kinds) {
      if (pair[0] != fixed || pair[1] != fixed) return false;
    }
    return true;
  }
};

/// Sets `sides` on a Grid or a BoundarySet (both have set_boundary-like
/// calls of their own name), side by side; periodic axes both at once.
template <int Rank, class SetKind, class SetDirichlet>
void apply_sides(Sides<Rank> const& sides, SetKind&& set_kind,
                 SetDirichlet&& set_dirichlet) {
  for (int d = 0; d < Rank; ++d) {
    auto const& k = sides.kinds[d];
    if (k[0] == periodic) {
      set_kind(d, Side::both, periodic);
      continue;
    }
    for (int s = 0; s < 2; ++s) {
      Side const side = s == 0 ? Side::low : Side::high;
      if (k[s] == dirichlet) {
        set_dirichlet(d, side);
      } else {
        set_kind(d, side, k[s]);
      }
    }
  }
}

template <class T, int Rank, class Memory>
void apply_sides(stencil::Grid<T, Rank, Memory>& grid,
                 Sides<Rank> const& sides) {
  apply_sides<Rank>(
      sides, [&](int d, Side s, Boundary k) { grid.set_boundary(d, s, k); },
      [&](int d, Side s) {
        grid.set_dirichlet(d, s, [](std::array<int, Rank> const& c, double t) {
          return dirichlet_value<Rank>(c, t);
        });
      });
}

/// The reference refresh: for x, then y, then z, every padded cell whose
/// coordinate along that axis is in the halo takes the value its side's
/// rule names, read from the array as the earlier axes left it.
template <class T, int Rank>
void reference_refresh(stencil_test::HostField<T, Rank>& f,
                       Sides<Rank> const& sides, double time) {
  int const h = f.halo;
  for (int d = Rank - 1; d >= 0; --d) {
    int const a = 3 - Rank + d;  // HostField's axis (z, y, x)
    int const n = f.n[a];
    for (int pz = 0; pz < f.p[0]; ++pz)
      for (int py = 0; py < f.p[1]; ++py)
        for (int px = 0; px < f.p[2]; ++px) {
          std::array<int, 3> p{pz, py, px};
          int const i = p[a] - h;  // interior coordinate along the axis
          if (i >= 0 && i < n) continue;
          Boundary const kind = sides.kinds[d][i < 0 ? 0 : 1];
          std::array<int, 3> from = p;
          if (kind == fixed) {
            continue;
          } else if (kind == dirichlet) {
            std::array<int, Rank> cell;
            for (int e = 0; e < Rank; ++e) cell[e] = p[3 - Rank + e] - h;
            f.data[f.at(pz, py, px)] =
                static_cast<T>(dirichlet_value<Rank>(cell, time));
            continue;
          } else if (kind == periodic) {
            int j = i;
            while (j < 0) j += n;
            while (j >= n) j -= n;
            from[a] = j + h;
          } else if (kind == neumann) {
            // -1-k <- k; n+k <- n-1-k
            int const k = i < 0 ? -1 - i : i - n;
            from[a] = (i < 0 ? k : n - 1 - k) + h;
          } else {  // reflecting: -k <- k; n-1+k <- n-1-k
            int const k = i < 0 ? -i : i - (n - 1);
            from[a] = (i < 0 ? k : n - 1 - k) + h;
          }
          f.data[f.at(pz, py, px)] = f.data[f.at(from[0], from[1], from[2])];
        }
  }
}

/// `steps` steps of `op` with the boundary refreshed before each, at time
/// t0 + s * dt.
template <class T, int Rank, class Op>
stencil_test::HostField<T, Rank> reference_run(
    stencil_test::HostField<T, Rank> f, Op const& op, Sides<Rank> const& sides,
    int steps, double t0, double dt) {
  for (int s = 0; s < steps; ++s) {
    reference_refresh(f, sides, t0 + s * dt);
    f = stencil_test::reference(f, op, 1, fixed);
  }
  return f;
}

/// A linear stencil with unequal coefficients (so that a mirrored or
/// shifted read shows) that sum to one (so that values stay in range).
template <int Rank, Shape S, int R, class T>
stencil::Linear<Rank, S, R, T> weighted() {
  using L = stencil::Linear<Rank, S, R, T>;
  std::vector<T> c(L::size);
  T sum = 0;
  for (int i = 0; i < L::size; ++i) {
    c[i] = static_cast<T>(1 + (i * 7) % 11);
    sum += c[i];
  }
  return L(std::span<T const>(c.data(), c.size()), sum);
}

template <class Space>
class Boundaries : public ::testing::Test {};
TYPED_TEST_SUITE(Boundaries, stencil_test::ExecutionSpaces);

/// refresh_boundaries on its own: the full padded array, halo included,
/// must equal the reference refresh exactly (copies and the same function).
template <class Space, class T, int Rank>
void check_refresh(std::array<int, Rank> extents, int halo,
                   Sides<Rank> const& sides, double time) {
  SCOPED_TRACE(sides.text() + " halo " + std::to_string(halo));
  using Memory = typename Space::memory_space;
  auto expected = stencil_test::random_field<T, Rank>(
      extents, halo, stencil::Linear<Rank, Shape::star, 0, T>({T(1)}), 1, 99);
  auto const initial = expected;
  reference_refresh(expected, sides, time);

  stencil::detail::BoundarySet<Rank> set;
  apply_sides<Rank>(
      sides, [&](int d, Side s, Boundary k) { set.set(d, s, k); },
      [&](int d, Side s) { set.set_dirichlet(d, s, &dirichlet_value<Rank>); });
  Kokkos::View<T*, Memory> buffer("buffer", initial.data.size());
  auto host = Kokkos::create_mirror_view(buffer);
  std::copy(initial.data.begin(), initial.data.end(), host.data());
  Kokkos::deep_copy(buffer, host);
  Space space;
  auto const layout = stencil::detail::make_layout<Rank>(extents, halo);
  stencil::detail::refresh_boundaries<Space, T, Rank>(space, buffer.data(),
                                                      layout, set, time);
  // Twice: the second reuses the cached dirichlet buffers.
  stencil::detail::refresh_boundaries<Space, T, Rank>(space, buffer.data(),
                                                      layout, set, time);
  space.fence();
  Kokkos::deep_copy(host, buffer);
  for (std::size_t i = 0; i < expected.data.size(); ++i) {
    ASSERT_EQ(host(i), expected.data[i])
        << "padded cell " << i << " (z,y,x) = ("
        << i / expected.p[2] / expected.p[1] << ","
        << i / expected.p[2] % expected.p[1] << "," << i % expected.p[2] << ")";
  }
}

TYPED_TEST(Boundaries, RefreshMatchesTheReferenceHaloIncluded) {
  using S2 = Sides<2>;
  using S3 = Sides<3>;
  for (int halo : {1, 2, 3}) {
    for (S2 const& s :
         {S2{{{{neumann, neumann}, {neumann, neumann}}}},
          S2{{{{reflecting, reflecting}, {reflecting, reflecting}}}},
          S2{{{{periodic, periodic}, {periodic, periodic}}}},
          S2{{{{dirichlet, dirichlet}, {dirichlet, dirichlet}}}},
          S2{{{{neumann, neumann}, {periodic, periodic}}}},
          S2{{{{fixed, reflecting}, {dirichlet, reflecting}}}},
          S2{{{{dirichlet, fixed}, {fixed, neumann}}}}}) {
      check_refresh<TypeParam, double, 2>({7, 9}, halo, s, 1.5);
      check_refresh<TypeParam, float, 2>({7, 9}, halo, s, 0.0);
    }
  }
  for (S3 const& s :
       {S3{{{{neumann, neumann},
             {reflecting, reflecting},
             {periodic, periodic}}}},
        S3{{{{dirichlet, neumann},
             {periodic, periodic},
             {reflecting, dirichlet}}}},
        S3{{{{periodic, periodic}, {fixed, dirichlet}, {neumann, fixed}}}}}) {
    check_refresh<TypeParam, double, 3>({5, 6, 7}, 2, s, 2.0);
  }
  check_refresh<TypeParam, double, 1>(
      {11}, 3, Sides<1>{{{{reflecting, dirichlet}}}}, 0.5);
}

/// Runs `op` on a grid with `sides` with Naive and SpatialBlocking, for
/// halos radius and radius+1 and 1, 5 and 13 steps, against reference_run.
template <class Space, class T, class Op>
void check_runs(Op const& op, std::array<int, Op::rank> extents,
                std::vector<Sides<Op::rank>> const& cases) {
  constexpr int rank = Op::rank;
  using Memory = typename Space::memory_space;
  double const dt = 0.25;
  for (Sides<rank> const& sides : cases) {
    for (int halo : {Op::radius, Op::radius + 1}) {
      for (int steps : {1, 5, 13}) {
        auto const initial =
            stencil_test::random_field<T, rank>(extents, halo, op, steps, 17);
        auto const expected = reference_run(initial, op, sides, steps, 0.0, dt);
        auto run = [&](auto policy) {
          std::ostringstream where;
          where << (std::is_same_v<T, float> ? "float" : "double") << " "
                << stencil::to_string(Op::shape) << " r" << Op::radius << " "
                << sides.text() << "halo " << halo << " steps " << steps << " "
                << stencil::policy_traits<decltype(policy)>::name;
          SCOPED_TRACE(where.str());
          stencil::Grid<T, rank, Memory> grid("u", extents,
                                              {.halo = halo, .dt = dt});
          apply_sides(grid, sides);
          stencil_test::load(grid, initial);
          stencil::iterate(Space{}, grid, op, steps, policy);
          Space{}.fence();
          EXPECT_TRUE(stencil_test::matches(
              stencil_test::read_back(grid), expected, initial,
              sides.all_fixed() ? fixed : periodic, steps));
          EXPECT_DOUBLE_EQ(grid.time(), steps * dt);
        };
        run(stencil::Naive{});
        run(stencil::SpatialBlocking{});
      }
    }
  }
}

TYPED_TEST(Boundaries, OneDimensionalRunsMatchTheReference) {
  using S = Sides<1>;
  std::vector<S> const cases{
      S{{{{neumann, neumann}}}},      S{{{{reflecting, reflecting}}}},
      S{{{{dirichlet, dirichlet}}}},  S{{{{periodic, periodic}}}},
      S{{{{dirichlet, reflecting}}}}, S{{{{fixed, neumann}}}}};
  check_runs<TypeParam, double>(weighted<1, Shape::star, 2, double>(), {11},
                                cases);
  check_runs<TypeParam, float>(weighted<1, Shape::star, 2, float>(), {11},
                               cases);
}

TYPED_TEST(Boundaries, TwoDimensionalRunsMatchTheReference) {
  using S = Sides<2>;
  std::vector<S> const cases{
      S{{{{fixed, fixed}, {fixed, fixed}}}},
      S{{{{neumann, neumann}, {neumann, neumann}}}},
      S{{{{reflecting, reflecting}, {reflecting, reflecting}}}},
      S{{{{dirichlet, dirichlet}, {dirichlet, dirichlet}}}},
      S{{{{periodic, periodic}, {periodic, periodic}}}},
      // periodic x with neumann y
      S{{{{neumann, neumann}, {periodic, periodic}}}},
      // dirichlet low with reflecting high, and a fixed side
      S{{{{neumann, fixed}, {dirichlet, reflecting}}}},
      S{{{{dirichlet, reflecting}, {periodic, periodic}}}}};
  check_runs<TypeParam, double>(weighted<2, Shape::star, 1, double>(), {7, 9},
                                cases);
  check_runs<TypeParam, float>(weighted<2, Shape::star, 1, float>(), {7, 9},
                               cases);
  check_runs<TypeParam, double>(weighted<2, Shape::box, 2, double>(), {7, 9},
                                cases);
  check_runs<TypeParam, float>(weighted<2, Shape::box, 2, float>(), {7, 9},
                               cases);
}

TYPED_TEST(Boundaries, ThreeDimensionalRunsMatchTheReference) {
  using S = Sides<3>;
  std::vector<S> const cases{
      S{{{{neumann, neumann}, {neumann, neumann}, {neumann, neumann}}}},
      S{{{{reflecting, reflecting},
          {reflecting, reflecting},
          {reflecting, reflecting}}}},
      S{{{{periodic, periodic}, {reflecting, dirichlet}, {neumann, fixed}}}},
      S{{{{dirichlet, neumann},
          {periodic, periodic},
          {reflecting, reflecting}}}},
      S{{{{fixed, dirichlet}, {dirichlet, dirichlet}, {periodic, periodic}}}}};
  check_runs<TypeParam, double>(weighted<3, Shape::star, 1, double>(),
                                {5, 6, 7}, cases);
  check_runs<TypeParam, float>(weighted<3, Shape::box, 1, float>(), {5, 6, 7},
                               cases);
  check_runs<TypeParam, double>(weighted<3, Shape::box, 1, double>(), {5, 6, 7},
                                cases);
}

// A dirichlet function sees the grid's time at the first step of each
// block: with out(i) = in(i-1), cell j after k steps holds what the halo
// held at step k-1-j, time (k-1-j) * dt.
TYPED_TEST(Boundaries, DirichletSeesTheGridsTime) {
  using Memory = typename TypeParam::memory_space;
  stencil::Linear<1, Shape::star, 1, double> const shift({1, 0, 0});
  auto run = [&](auto policy) {
    SCOPED_TRACE(stencil::policy_traits<decltype(policy)>::name);
    stencil::Grid<double, 1, Memory> grid("u", {12}, {.halo = 1, .dt = 0.5});
    grid.set_dirichlet(0, Side::low,
                       [](std::array<int, 1> const&, double t) { return t; });
    auto expect_cells = [&](std::vector<double> const& want) {
      auto const f = stencil_test::read_back(grid);
      for (std::size_t j = 0; j < want.size(); ++j) {
        EXPECT_EQ(f.data[f.index(0, 0, static_cast<int>(j))], want[j])
            << "cell " << j;
      }
    };
    stencil::iterate(TypeParam{}, grid, shift, 5, policy);
    TypeParam{}.fence();
    EXPECT_EQ(grid.time(), 2.5);
    expect_cells({2.0, 1.5, 1.0, 0.5, 0.0});
    stencil::iterate(TypeParam{}, grid, shift, 3, policy);
    TypeParam{}.fence();
    EXPECT_EQ(grid.time(), 4.0);
    expect_cells({3.5, 3.0, 2.5, 2.0});
    grid.set_time(10.0);
    stencil::iterate(TypeParam{}, grid, shift, 2, policy);
    TypeParam{}.fence();
    EXPECT_EQ(grid.time(), 11.0);
    expect_cells({10.5, 10.0, 3.5});
  };
  run(stencil::Naive{});
  run(stencil::SpatialBlocking{});
}

TYPED_TEST(Boundaries, RefusalsNameTheSideAndLeaveTheGridAsItWas) {
  using Memory = typename TypeParam::memory_space;
  using Grid2 = stencil::Grid<double, 2, Memory>;
  using stencil_test::expect_error;
  Grid2 g("g", {7, 9});
  expect_error([&] { g.set_boundary(1, Side::low, periodic); },
               {"grid 'g'", "axis 1 (x)", "periodic on the low side",
                "fixed on the high side", "Side::both"});
  EXPECT_EQ(g.boundary(1, Side::low), fixed);
  g.set_boundary(1, Side::both, periodic);
  expect_error([&] { g.set_boundary(1, Side::high, neumann); },
               {"axis 1 (x)", "both its sides must be periodic"});
  EXPECT_EQ(g.boundary(1, Side::both), periodic);
  expect_error([&] { g.set_boundary(0, Side::both, dirichlet); },
               {"set_dirichlet(axis, side, f)"});
  expect_error([&] { g.set_boundary(2, Side::low, neumann); },
               {"axis 2 is out of range", "axes 0 (y) and 1 (x)"});
  expect_error(
      [&] {
        g.set_dirichlet(-1, Side::low,
                        [](std::array<int, 2> const&, double) { return 0.0; });
      },
      {"axis -1 is out of range"});
  EXPECT_THROW(g.set_boundary(2, Side::low, neumann), stencil::bad_input);
  EXPECT_EQ(g.boundary(0, Side::both), fixed);

  // Sides that differ: boundary() names them; boundary(axis, side) answers.
  g.set_boundary(0, Side::low, neumann);
  expect_error(
      [&] { (void)g.boundary(); },
      {"y: neumann/fixed, x: periodic/periodic", "boundary(axis, side)"});
  expect_error([&] { (void)g.boundary(0, Side::both); },
               {"neumann on the low side and fixed on the high side"});
  EXPECT_EQ(g.boundary(0, Side::low), neumann);

  // Whole-grid options: dirichlet needs its function.
  expect_error(
      [&] {
        Grid2("d", {7, 9}, {.boundary = dirichlet});
      },
      {"grid 'd'", "set_dirichlet"});
  // Mirroring kinds need enough interior cells.
  Grid2 thin("thin", {3, 9}, {.halo = 3});
  expect_error([&] { thin.set_boundary(0, Side::both, reflecting); },
               {"axis 0 (y) has 3 interior cells", "reflecting one 4"});
  thin.set_boundary(0, Side::both, neumann);  // 3 cells mirror a halo of 3
  EXPECT_EQ(thin.boundary(0, Side::high), neumann);
  expect_error(
      [&] {
        Grid2("n", {2, 9}, {.halo = 3, .boundary = neumann});
      },
      {"axis 0 (y) has 2 interior cells", "neumann axis needs at least 3"});

  // A plan names the sides; one made for other sides is refused.
  Grid2 wrapped("w", {7, 9}, {.boundary = periodic});
  auto const p = stencil::plan(TypeParam{}, wrapped, stencil::suite::J2d5pt{},
                               stencil::Naive{});
  std::ostringstream text;
  text << p;
  EXPECT_NE(text.str().find("halo 1, periodic,"), std::string::npos)
      << text.str();
  // Leaving periodic takes both sides at once.
  wrapped.set_boundary(0, Side::both, fixed);
  wrapped.set_boundary(0, Side::low, reflecting);
  expect_error(
      [&] {
        stencil::iterate(TypeParam{}, wrapped, stencil::suite::J2d5pt{}, 1, p);
      },
      {"boundary (plan: periodic, this call: y: reflecting/fixed, x: "
       "periodic/periodic)"});
  auto const mixed = stencil::plan(TypeParam{}, wrapped,
                                   stencil::suite::J2d5pt{}, stencil::Naive{});
  text.str("");
  text << mixed;
  EXPECT_NE(
      text.str().find("boundaries (y: reflecting/fixed, x: periodic/periodic)"),
      std::string::npos)
      << text.str();

  // A moved-from grid forgets its boundary and time.
  wrapped.set_time(3.0);
  Grid2 moved(std::move(wrapped));
  EXPECT_EQ(moved.boundary(0, Side::low), reflecting);
  EXPECT_EQ(moved.time(), 3.0);
  EXPECT_EQ(wrapped.time(), 0.0);
  EXPECT_EQ(wrapped.dt(), 1.0);
  EXPECT_EQ(wrapped.boundary(), fixed);
  expect_error([&] { wrapped.set_boundary(0, Side::low, neumann); },
               {"the grid is empty"});

  // The native temporal policies advance several steps per launch and
  // refuse any side that is not fixed; the streaming sweep runs it.
  if constexpr (stencil::native_available_v<TypeParam>) {
    Grid2 n("n", {64, 64});
    n.set_boundary(1, Side::high, neumann);
    EXPECT_THROW((void)stencil::plan(TypeParam{}, n, stencil::suite::J2d5pt{},
                                     stencil::TemporalBlocking{}),
                 stencil::unsupported);
    expect_error(
        [&] {
          (void)stencil::plan(TypeParam{}, n, stencil::suite::J2d5pt{},
                              stencil::TemporalBlocking{});
        },
        {"fixed boundaries only", "the high side of axis 1 (x) is neumann"});
    auto const auto_plan = stencil::plan(
        TypeParam{}, n, stencil::suite::J2d5pt{}, stencil::Auto{});
    EXPECT_NE(auto_plan.policy, stencil::PolicyKind::temporal_blocking);

    stencil::Grid<double, 3, Memory> cube("c", {20, 30, 40});
    cube.set_dirichlet(0, Side::low,
                       [](std::array<int, 3> const&, double) { return 1.0; });
    for (auto policy : {0, 1}) {
      expect_error(
          [&] {
            if (policy == 0) {
              (void)stencil::plan(TypeParam{}, cube, stencil::suite::J3d7pt{},
                                  stencil::DeviceTiling{});
            } else {
              (void)stencil::plan(TypeParam{}, cube, stencil::suite::J3d7pt{},
                                  stencil::TemporalBlocking{});
            }
          },
          {"fixed boundaries only", "the low side of axis 0 (z) is dirichlet"});
    }
    EXPECT_NO_THROW((void)stencil::plan(TypeParam{}, cube,
                                        stencil::suite::J3d7pt{},
                                        stencil::StreamingSweep{}));
  }
}

// The native streaming sweep refreshes every step through the time loop,
// so mixed sides run there too.
TYPED_TEST(Boundaries, StreamingSweepRunsMixedSides) {
  if constexpr (stencil::native_available_v<TypeParam>) {
    using Memory = typename TypeParam::memory_space;
    using S = Sides<2>;
    auto const op = weighted<2, Shape::box, 1, double>();
    for (S const& sides : {S{{{{neumann, dirichlet}, {periodic, periodic}}}},
                           S{{{{reflecting, fixed}, {dirichlet, neumann}}}}}) {
      SCOPED_TRACE(sides.text());
      int const steps = 5;
      std::array<int, 2> const extents{37, 53};
      auto const initial =
          stencil_test::random_field<double, 2>(extents, 1, op, steps, 5);
      auto const expected = reference_run(initial, op, sides, steps, 0.0, 1.0);
      stencil::Grid<double, 2, Memory> grid("u", extents);
      apply_sides(grid, sides);
      stencil_test::load(grid, initial);
      stencil::iterate(TypeParam{}, grid, op, steps, stencil::StreamingSweep{});
      TypeParam{}.fence();
      EXPECT_TRUE(stencil_test::matches(stencil_test::read_back(grid), expected,
                                        initial, periodic, steps));
    }
  } else {
    GTEST_SKIP() << "no native backend on " << TypeParam::name();
  }
}

/// copy_halo (what multi-field TemporalBlocking seeds its second buffers
/// with): every halo cell, edges and corners included, takes the source's
/// value, and no interior cell is touched.
template <int Rank>
void check_copy_halo(std::array<int, Rank> const& extents, int halo) {
  using View =
      typename stencil::Grid<double, Rank, Kokkos::HostSpace>::view_type;
  View const from =
      stencil::detail::allocate_padded<View, Rank>("from", extents, halo);
  View const to =
      stencil::detail::allocate_padded<View, Rank>("to", extents, halo);
  std::size_t const n = from.size();
  for (std::size_t i = 0; i < n; ++i) {
    from.data()[i] = static_cast<double>(i + 1);
    to.data()[i] = -1.0;
  }
  stencil::detail::copy_halo(Kokkos::DefaultHostExecutionSpace{}, to, from,
                             halo);
  Kokkos::fence();
  // Padded index i of a LayoutRight buffer, axis by axis from the fastest.
  int halo_cells = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t rest = i;
    bool in_halo = false;
    for (int a = Rank - 1; a >= 0; --a) {
      std::size_t const padded = from.extent(a);
      int const c = static_cast<int>(rest % padded);
      rest /= padded;
      in_halo = in_halo || c < halo || c >= halo + extents[a];
    }
    halo_cells += in_halo;
    EXPECT_EQ(to.data()[i], in_halo ? from.data()[i] : -1.0)
        << "rank " << Rank << " padded index " << i;
  }
  EXPECT_GT(halo_cells, 0);
}

TEST(PaddedBuffers, CopyHaloCopiesTheHaloOnly) {
  check_copy_halo<1>({7}, 2);
  check_copy_halo<2>({5, 7}, 1);
  check_copy_halo<2>({4, 3}, 3);
  check_copy_halo<3>({3, 5, 4}, 2);
}

}  // namespace
