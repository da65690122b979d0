// SPDX-License-Identifier: Apache-2.0
// The device kernel of the multi-field Naive (register windows per field,
// fields_naive_window.hpp) run on a host space at every vector width the
// buffers allow, against the host Naive, which tst_fields checks against
// plain loops. On a GPU tst_fields runs this kernel for real; here its index
// arithmetic, clamps, earlier levels and in-place leapfrog are checked on any
// machine, at sizes chosen to hit every edge: rows of 1 to 3 cells, partial
// row groups, rows of several warps, padded rows of every residue mod 4.
#include "fields_reference.hpp"
#include "mixed_radii.hpp"
#include "test_support.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite/solvers.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

namespace {

using Host = Kokkos::DefaultHostExecutionSpace;
using stencil::Boundary;
using stencil_test::fields::HostField;
using stencil_test::fields::to_host;

/// `steps` steps of the window kernel with vector width V, in the state's
/// own time loop (halo refresh, level rotation), as Naive runs them.
template <int V, class Op, class State>
void window_steps(State& s, Op const& op, int steps) {
  using Fields = typename Op::fields;
  constexpr int rank = State::rank;
  namespace sd = stencil::detail;
  sd::PaddedLayout const layout = sd::make_layout<rank>(s.extents(), s.halo());
  Host space;
  auto const one_step = [&](int) {
    sd::fields_window_step_as<V, int>(space, sd::field_buffers<Fields>(s), op,
                                      layout, s.time(), s.position_map());
    sd::finish_step<Fields>(s);
  };
  sd::state_time_loop(space, s, sd::step_blocks(steps, 1), one_step, {});
  space.fence();
}

/// Every level of every field from a pattern of its own, in [0.2, 1].
template <class Op, class State>
void fill_fields(State& s) {
  using Fields = typename Op::fields;
  for (int f = 0; f < Fields::count; ++f) {
    if (Fields::levels[f] == 1) {
      stencil_test::fields::fill_pattern(s, f, 10 + f, 0.2, 1.0);
    } else {
      for (int k = 0; k < Fields::levels[f]; ++k) {
        stencil_test::fields::fill_pattern(s, f, 20 + 4 * f + k, 0.2, 1.0, -k);
      }
    }
  }
}

/// Every interior value of every level of every field of `got` equals
/// `expected`'s to a few units in the last place: both run the same functor
/// per cell, so only a compiler's contraction into FMAs may differ.
template <class Op, class State>
void expect_same_levels(State const& got, State const& expected,
                        std::string const& what) {
  using Fields = typename Op::fields;
  using T = typename State::value_type;
  for (int f = 0; f < Fields::count; ++f) {
    for (int k = 0; k < Fields::levels[f]; ++k) {
      HostField const g = to_host(got, f, -k), e = to_host(expected, f, -k);
      int bad = 0;
      stencil_test::fields::for_interior(e, [&](int z, int y, int x) {
        double const ev = e(z, y, x), gv = g(z, y, x);
        double const ulps = 16 * std::numeric_limits<T>::epsilon();
        if (!(std::abs(gv - ev) <= ulps * (1 + std::abs(ev)))) {
          if (++bad <= 3) {
            ADD_FAILURE() << what << ": field " << f << " level " << -k
                          << " cell (" << z << ", " << y << ", " << x << ") is "
                          << gv << ", host Naive " << ev;
          }
        }
      });
      EXPECT_EQ(bad, 0) << what << ": field " << f << " level " << -k;
    }
  }
}

template <class T, class Op>
void check_size(Op const& op, std::array<int, Op::rank> const& extents,
                int halo) {
  using Fields = typename Op::fields;
  constexpr int rank = Op::rank;
  using State = stencil::State<T, rank, Kokkos::HostSpace>;
  constexpr int steps = 3;
  for (auto boundary :
       {Boundary::fixed, Boundary::periodic, Boundary::neumann}) {
    stencil::StateOptions const options{.halo = halo, .boundary = boundary};
    State expected("expected", extents, stencil::field_specs<Op>(), options);
    fill_fields<Op>(expected);
    stencil::iterate(Host{}, expected, op, steps, stencil::Naive{});
    auto run = [&](auto width) {
      constexpr int V = decltype(width)::value;
      State s("window", extents, stencil::field_specs<Op>(), options);
      stencil::detail::PaddedLayout const layout =
          stencil::detail::make_layout<rank>(extents, halo);
      int const allowed = stencil::detail::fields_vector_width<T, rank>(
          stencil::detail::field_buffers<Fields>(s), layout);
      if (V > allowed) return;
      std::ostringstream what;
      what << stencil_test::name_of<Op>() << ' '
           << (sizeof(T) == 4 ? "float" : "double") << " V=" << V
           << " (allowed " << allowed << ") " << stencil::to_string(boundary)
           << " halo=" << halo << " extents=";
      for (int e : extents) what << e << ' ';
      fill_fields<Op>(s);
      window_steps<V>(s, op, steps);
      expect_same_levels<Op>(s, expected, what.str());
    };
    run(std::integral_constant<int, 1>{});
    run(std::integral_constant<int, 2>{});
    if constexpr (sizeof(T) == 4) run(std::integral_constant<int, 4>{});
  }
}

/// Every size of `outer` (the slower extents) by `xs`, each plus 2 radius
/// (the narrowest extent a state takes is 2 radius + 1), at the radius's
/// halo and one wider, in both precisions.
template <class Op>
void check_sizes(Op const& op, std::initializer_list<int> outer,
                 std::initializer_list<int> xs) {
  for (int extra_halo : {0, 1}) {
    int const halo = Op::fields::radius + extra_halo;
    for (int o : outer) {
      for (int x : xs) {
        std::array<int, Op::rank> extents;
        extents.fill(o + 2 * Op::fields::radius);
        extents[Op::rank - 1] = x + 2 * Op::fields::radius;
        check_size<double>(op, extents, halo);
        check_size<float>(op, extents, halo);
      }
    }
  }
}

/// In 3D a thread of a stencil reading two or more fields around the cell
/// walks down runs of planes: two whole runs and three planes more, so that
/// runs start and end inside the grid and the last is short.
template <class Op>
void check_plane_runs(Op const& op) {
  using Sweep = stencil::detail::FieldsWindowSweep<double, 3, Op, int, 1>;
  constexpr int run =
      Sweep::planes_per_thread > 1 ? Sweep::planes_per_thread : 16;
  int const r = Op::fields::radius;
  std::array<int, 3> const extents{2 * run + 3, 3 + 2 * r, 35 + 2 * r};
  for (int extra_halo : {0, 1}) {
    check_size<double>(op, extents, r + extra_halo);
    check_size<float>(op, extents, r + extra_halo);
  }
}

// Rows and columns beyond the narrowest: partial row groups of four, rows
// of one to two warps of vectors at width 2, every residue mod 4.
constexpr std::initializer_list<int> rows_2d{1, 6, 9};
constexpr std::initializer_list<int> xs_2d{1, 2, 3, 6, 37, 70};

TEST(FieldsNaiveDevicePath, LeapfrogWave2d) {
  check_sizes(stencil::suite::Wave<2, 1>{}, rows_2d, xs_2d);
  check_sizes(stencil::suite::Wave<2, 4>{}, rows_2d, xs_2d);
}
TEST(FieldsNaiveDevicePath, LeapfrogWave3d) {
  check_sizes(stencil::suite::Wave<3, 1>{}, {1, 3}, {1, 35});
  check_sizes(stencil::suite::Wave<3, 2>{}, {1}, {2, 33});
  check_plane_runs(stencil::suite::Wave<3, 1>{});
  check_plane_runs(stencil::suite::Wave<3, 2>{});
}
TEST(FieldsNaiveDevicePath, VariableCoefficientHeat) {
  check_sizes(stencil::suite::HeatVarCoef<2>{}, rows_2d, xs_2d);
  check_sizes(stencil::suite::HeatVarCoef<3>{}, {1, 3}, {1, 35});
  static_assert(
      stencil::detail::FieldsWindowSweep<double, 3,
                                         stencil::suite::HeatVarCoef<3>, int,
                                         1>::planes_per_thread > 1,
      "u and k are read around the cell: the kernel walks down z");
  check_plane_runs(stencil::suite::HeatVarCoef<3>{});
}
TEST(FieldsNaiveDevicePath, TwoCoupledSpecies) {
  check_sizes(stencil::suite::GrayScott{}, rows_2d, xs_2d);
  check_sizes(stencil::suite::Bruss::for_points(12), {10}, {10});
}
TEST(FieldsNaiveDevicePath, EveryFieldKindAtEveryRank) {
  check_sizes(stencil_test::fields::MixedRadii<1>{}, {1}, {1, 2, 3, 6, 37, 70});
  check_sizes(stencil_test::fields::MixedRadii<2>{}, rows_2d, xs_2d);
  check_sizes(stencil_test::fields::MixedRadii<3>{}, {1, 3}, {1, 35});
  check_plane_runs(stencil_test::fields::MixedRadii<3>{});
}

}  // namespace
