// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/detail/padded.hpp>
#include <stencil/grid.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <string>

namespace stencil::detail {

/// The interior of `grid`'s current level as one contiguous host array in
/// the grid's order (the last index fastest, which is x), for writers that
/// hand the values to a file. Waits for pending steps first: iterate is
/// asynchronous, and a host-accessible space (HostSpace, UVM) is read in
/// place without a copy that would fence.
///
/// The whole level, halo included, is copied to the host and packed there
/// rather than packed on the device: the interior is a strided subview,
/// and packing it on the device would need a device temporary as large as
/// the interior, which a grid sized to fill the GPU does not leave room
/// for. A host copy is one contiguous transfer.
template <class T, int Rank, class MemorySpace>
Kokkos::View<T*, Kokkos::HostSpace> host_interior(
    Grid<T, Rank, MemorySpace> const& grid, std::string const& call) {
  expect_not_empty(grid, call.c_str());
  Kokkos::fence("stencil::" + call + ": the grid's pending steps");
  auto const level =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, grid.current());
  Kokkos::View<T*, Kokkos::HostSpace> packed(
      Kokkos::view_alloc(Kokkos::WithoutInitializing,
                         grid.label() + ":" + call),
      grid.interior_cells());
  pack_interior<decltype(level), Rank>(level, grid.extents(), grid.halo(),
                                       packed.data());
  return packed;
}

}  // namespace stencil::detail
