// SPDX-License-Identifier: Apache-2.0
// The body every stencil test runs: each policy on the execution space under
// test against the reference loop, float and double, both boundaries, and
// several step counts.
#pragma once

#include "reference.hpp"
#include "stencil_test_spaces.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace stencil_test {

/// Calls f(policy, description) for every portable policy: Naive, the
/// default SpatialBlocking tile, a small odd tile (13x5x3, so every size has
/// partial tiles and several teams), and Auto.
template <class F>
void for_each_policy(F&& f) {
  f(stencil::Naive{}, "Naive");
  f(stencil::SpatialBlocking{}, "SpatialBlocking{default tile}");
  f(stencil::SpatialBlocking{{.x = 13, .y = 5, .z = 3}},
    "SpatialBlocking{13x5x3}");
  f(stencil::Auto{}, "Auto");
}

struct Case {
  std::vector<int> steps;
  int extra_halo = 0;  // halo = radius + extra_halo
};

template <class Space, class T, class Op, int Rank>
void check_type(Op const& op, std::array<int, Rank> const& extents,
                Case const& c) {
  using MemorySpace = typename Space::memory_space;
  int const halo = Op::radius + c.extra_halo;
  unsigned seed = 1234;
  for (auto boundary :
       {stencil::Boundary::fixed, stencil::Boundary::periodic}) {
    for (int steps : c.steps) {
      auto const initial =
          random_field<T, Rank>(extents, halo, op, steps, ++seed);
      auto const expected = reference(initial, op, steps, boundary);
      for_each_policy([&](auto policy, char const* name) {
        std::ostringstream where;
        where << Op::name << ' ' << (sizeof(T) == 4 ? "float" : "double") << ' '
              << name << ' ' << stencil::to_string(boundary) << " halo=" << halo
              << " steps=" << steps << " extents=";
        for (int e : extents) where << e << ' ';
        SCOPED_TRACE(where.str());
        stencil::Grid<T, Rank, MemorySpace> grid(
            "u", extents, {.halo = halo, .boundary = boundary});
        load(grid, initial);
        Space space{};
        stencil::iterate(space, grid, op, steps, policy);
        space.fence();
        EXPECT_TRUE(
            matches(read_back(grid), expected, initial, boundary, steps));
      });
    }
  }
}

/// `extents` with the last one grown by 0 to 3 cells so that the padded row
/// (last extent + 2 * halo) is a multiple of 4. With that halo the device
/// path of Naive runs its vector kernel at full width (4 floats or 2 doubles
/// per access); with one more halo cell the row is 2 mod 4 (2 floats per
/// access). Odd padded rows run the scalar kernel.
template <std::size_t Rank>
std::array<int, Rank> with_rows_of_4(std::array<int, Rank> extents, int halo) {
  while ((extents[Rank - 1] + 2 * halo) % 4 != 0) ++extents[Rank - 1];
  return extents;
}

/// Small sizes that are not multiples of any tile, with steps 1, 2, 7 and
/// 100; one large size (halo wider than the radius) with 7 steps; and the
/// small size with padded rows a multiple of 4 (halo = radius) and 2 mod 4
/// (halo = radius + 1), for the vector kernels of Naive on devices.
template <class Space, class Op>
void check_stencil(Op const& op, std::array<int, Op::rank> const& small,
                   std::array<int, Op::rank> const& large) {
  constexpr int Rank = Op::rank;
  auto const rows_of_4 = with_rows_of_4(small, Op::radius);
  for (auto const& [extents, c] :
       {std::pair{small, Case{{1, 2, 7, 100}, 0}},
        std::pair{large, Case{{7}, 1}}, std::pair{rows_of_4, Case{{1, 7}, 0}},
        std::pair{rows_of_4, Case{{7}, 1}}}) {
    check_type<Space, double, Op, Rank>(op, extents, c);
    check_type<Space, float, Op, Rank>(op, extents, c);
  }
}

/// Both forms of a suite stencil that divides (stencil::suite::Division):
/// other arithmetic, the same checks.
template <class Space, template <stencil::suite::Division> class Form,
          std::size_t Rank>
void check_both_forms(std::array<int, Rank> const& small,
                      std::array<int, Rank> const& large) {
  check_stencil<Space>(Form<stencil::suite::Division::divided>{}, small, large);
  check_stencil<Space>(Form<stencil::suite::Division::prescaled>{}, small,
                       large);
}

}  // namespace stencil_test
