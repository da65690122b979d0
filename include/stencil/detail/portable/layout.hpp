// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>

namespace stencil::detail {

/// True for execution spaces whose threads are host threads: the portable
/// kernels give them contiguous inner loops instead of one cell per thread.
template <class ExecSpace>
inline constexpr bool is_host_space_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                               typename ExecSpace::memory_space>::accessible;

/// The index arithmetic of one padded buffer, as plain integers that kernels
/// capture by value: interior extents (z, y, x; unused dims are 1), the halo
/// and the strides of the padded LayoutRight array.
struct PaddedLayout {
  int nz = 1, ny = 1, nx = 1;
  int halo = 0;
  int stride_y = 0;  // padded row length
  int stride_z = 0;  // padded plane size

  /// Offset of interior cell (z, y, x) in the padded array. Unused
  /// dimensions have stride 0, so their coordinates drop out.
  template <class Index = std::int64_t>
  KOKKOS_FORCEINLINE_FUNCTION Index offset(int z, int y, int x) const {
    return (static_cast<Index>(z) + halo) * stride_z +
           (static_cast<Index>(y) + halo) * stride_y + x + halo;
  }
  std::int64_t interior_cells() const {
    return static_cast<std::int64_t>(nz) * ny * nx;
  }
};

template <int Rank>
PaddedLayout make_layout(std::array<int, Rank> const& extents, int halo) {
  PaddedLayout l;
  l.halo = halo;
  l.nx = extents[Rank - 1];
  if constexpr (Rank >= 2) {
    l.ny = extents[Rank - 2];
    l.stride_y = l.nx + 2 * halo;
  }
  if constexpr (Rank == 3) {
    l.nz = extents[0];
    l.stride_z = l.stride_y * (l.ny + 2 * halo);
  }
  return l;
}

}  // namespace stencil::detail
