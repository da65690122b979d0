// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace stencil::detail {

/// Every accessor's in(...) takes one offset per grid dimension; this keeps
/// the message the same whichever kernel the functor runs in.
template <int Rank, int Count>
KOKKOS_FORCEINLINE_FUNCTION constexpr void check_offset_count() {
  static_assert(Count == Rank,
                "stencil::in: in(...) takes one offset per grid dimension: "
                "in(dx) for rank 1, in(dy, dx) for rank 2, in(dz, dy, dx) "
                "for rank 3");
}

/// The accessor a stencil functor receives as `in`: a pointer to the centre
/// cell and the strides of the slower dimensions. The same type serves a
/// global-memory View and a scratch tile, so one functor body runs on both.
/// Offsets are literals in practice; after inlining they fold into fixed
/// address offsets.
template <class T, int Rank>
struct Neighbourhood {
  using value_type = T;
  T const* centre;
  int stride_y = 0;  // elements between consecutive rows (Rank >= 2)
  int stride_z = 0;  // elements between consecutive planes (Rank == 3)

  template <class... Offsets>
  KOKKOS_FORCEINLINE_FUNCTION T operator()(Offsets... offsets) const {
    check_offset_count<Rank, sizeof...(Offsets)>();
    return centre[linear_offset(static_cast<int>(offsets)...)];
  }

 private:
  KOKKOS_FORCEINLINE_FUNCTION int linear_offset(int dx) const { return dx; }
  KOKKOS_FORCEINLINE_FUNCTION int linear_offset(int dy, int dx) const {
    return dy * stride_y + dx;
  }
  KOKKOS_FORCEINLINE_FUNCTION int linear_offset(int dz, int dy, int dx) const {
    return dz * stride_z + dy * stride_y + dx;
  }
};

/// A 3D accessor over a ring of planes that need not be contiguous or in
/// order (a z-streaming kernel keeps 2r+1 planes in a circular buffer):
/// plane[dz + Radius] points at the centre column of plane dz.
template <class T, int Radius>
struct PlaneRingNeighbourhood {
  using value_type = T;
  T const* plane[2 * Radius + 1];
  int centre = 0;  // offset of the centre cell within each plane
  int stride_y = 0;

  KOKKOS_FORCEINLINE_FUNCTION T operator()(int dz, int dy, int dx) const {
    return plane[dz + Radius][centre + dy * stride_y + dx];
  }
};

/// The 2D counterpart: a ring of lines (a y-streaming kernel keeps 2r+1
/// lines in a circular buffer); line[dy + Radius] points at the centre
/// column of line dy.
template <class T, int Radius>
struct LineRingNeighbourhood {
  using value_type = T;
  T const* line[2 * Radius + 1];
  int centre = 0;  // offset of the centre cell within each line

  KOKKOS_FORCEINLINE_FUNCTION T operator()(int dy, int dx) const {
    return line[dy + Radius][centre + dx];
  }
};

}  // namespace stencil::detail
