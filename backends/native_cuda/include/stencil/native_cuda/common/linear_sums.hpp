// SPDX-License-Identifier: Apache-2.0
// Summing a linear box slice by slice: rows in rank-2 temporal blocking
// (sums_rows_2d), planes in rank-3 device tiling (sums_planes). A level
// reads each slice of the level below once, as it arrives, and adds that
// slice's part to the 2r + 1 cells that read it: the one it finishes and
// the 2r after it, whose unfinished sums it carries in registers. A slice's
// reads are then shared by all the cells that need them, and the taps
// become 2r + 1 independent chains instead of one.
//
// The kernels get a slice's part by applying the functor to a neighbourhood
// that reads only that slice and returns zero for the others: a linear
// functor then yields the weighted sum of that slice's taps, and the
// compiler drops the zero terms. The neighbourhoods stay with their
// kernels, since they read their own storage (a plane of a shared ring in
// 3D, register runs in 2D).
#pragma once

#include <type_traits>
#include <utility>

namespace stencil::native_cuda {

/// Adds the newest slice's parts to the sums carried for the cells after
/// the one it finishes, and returns that finished cell.
/// - `part_of(std::integral_constant<int, D>{})`: the newest slice's part of
///   the cell that reads it at offset D (-Radius..Radius along the streamed
///   dimension); D = Radius is the cell it finishes, D = -Radius the last
///   one to start.
/// - `sums(m)`, m = 0..2 Radius - 1: a reference to a carried sum. On entry
///   sums(0) is the finished cell's and sums(m) that of the m-th cell after
///   it; on return sums(m) is that of the (m + 1)-th (sums(2 Radius - 1):
///   the cell this slice starts).
template <int Radius, class T, class PartOf, class Sums>
__device__ __forceinline__ T add_newest_slice(PartOf const& part_of,
                                              Sums const& sums) {
  T part[2 * Radius + 1];
  [&]<int... M>(std::integer_sequence<int, M...>) {
    ((part[M] =
          static_cast<T>(part_of(std::integral_constant<int, Radius - M>{}))),
     ...);
  }
  (std::make_integer_sequence<int, 2 * Radius + 1>{});
  T const finished = sums(0) + part[0];
#pragma unroll
  for (int m = 1; m < 2 * Radius; ++m) sums(m - 1) = sums(m) + part[m];
  sums(2 * Radius - 1) = part[2 * Radius];
  return finished;
}

}  // namespace stencil::native_cuda
