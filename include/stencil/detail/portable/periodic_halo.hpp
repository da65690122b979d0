// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/detail/portable/layout.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace stencil::detail {

/// Copies the interior's opposite side into the halo along one axis
/// (0 = z, 1 = y, 2 = x). The other axes run over their full padded range,
/// so doing x, then y, then z also fills edges and corners.
template <class T>
struct PeriodicHaloAxis {
  T* data;
  int axis;
  int halo;
  int extent;     // interior extent along `axis`
  int padded[3];  // padded extents (z, y, x); unused dims are 1
  std::int64_t stride[3];

  KOKKOS_FUNCTION void operator()(std::int64_t i) const {
    int coord[3];
    for (int a = 2; a >= 0; --a) {
      int const n = a == axis ? 2 * halo : padded[a];
      coord[a] = static_cast<int>(i % n);
      i /= n;
    }
    // Halo cell c of 2*halo: the low side first, then the high side.
    int const c = coord[axis];
    int const dst = c < halo ? c : extent + c;
    int const interior = dst - halo;
    int const wrapped = ((interior % extent) + extent) % extent;
    std::int64_t dst_at = 0, src_at = 0;
    for (int a = 0; a < 3; ++a) {
      int const d = a == axis ? dst : coord[a];
      int const s = a == axis ? wrapped + halo : coord[a];
      dst_at += d * stride[a];
      src_at += s * stride[a];
    }
    data[dst_at] = data[src_at];
  }
};

template <class ExecSpace, class T, int Rank>
void refresh_periodic_halo(ExecSpace const& space, T* data,
                           PaddedLayout const& layout) {
  if (layout.halo == 0) return;
  PeriodicHaloAxis<T> fill{data, 0, layout.halo, 0, {1, 1, 1}, {0, 0, 1}};
  int const interior[3] = {layout.nz, layout.ny, layout.nx};
  for (int a = 3 - Rank; a < 3; ++a)
    fill.padded[a] = interior[a] + 2 * layout.halo;
  fill.stride[1] = layout.stride_y;
  fill.stride[0] = layout.stride_z;
  for (int axis = 2; axis >= 3 - Rank; --axis) {
    fill.axis = axis;
    fill.extent = interior[axis];
    std::int64_t count = 2 * layout.halo;
    for (int a = 0; a < 3; ++a) {
      if (a != axis) count *= fill.padded[a];
    }
    Kokkos::parallel_for(
        "stencil::periodic_halo",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
            space, 0, count),
        fill);
  }
}

}  // namespace stencil::detail
