// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/error.hpp>
#include <stencil/grid.hpp>

namespace stencil::detail {

/// Run-time checks of a grid against a stencil, shared by plan and iterate.
template <class Op, class T, int Rank, class MemorySpace>
void validate_grid(Grid<T, Rank, MemorySpace> const& grid) {
  constexpr int r = Op::radius;
  expect_not_empty(grid, "iterate/plan");
  STENCIL_EXPECT(grid.halo() >= r, "grid '", grid.label(), "' has a halo of ",
                 grid.halo(), " cells but the stencil's radius is ", r,
                 "; construct the grid with stencil::GridOptions{.halo = ", r,
                 "} or more");
  for (int d = 0; d < Rank; ++d) {
    STENCIL_EXPECT(grid.extent(d) >= 2 * r + 1, "grid '", grid.label(),
                   "': extent ", d, " is ", grid.extent(d),
                   " cells, smaller than the stencil's width 2*radius+1 = ",
                   2 * r + 1, "; every extent must be at least ", 2 * r + 1);
  }
}

}  // namespace stencil::detail
