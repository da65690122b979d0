// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/detail/neighbourhood.hpp>
#include <stencil/detail/portable/layout.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>

namespace stencil::detail {

/// One time step, one kernel: out = op(in) on the interior.
///
/// Device spaces: a warp covers 32 consecutive x (every load instruction
/// coalesces) and each thread computes a small block of cells: 4 rows of one
/// column from rank 2 on, 4 cells 32 apart in rank 1. All of a thread's
/// results are computed before any is stored, so the loads its cells share
/// (the vertical neighbours) are issued once and independent loads overlap;
/// index arithmetic is paid once per block. Measured on an H200, j2d5pt
/// double: one cell per thread 144 GCells/s, four cells along x 180 (copy
/// bound 266); an MDRangePolicy with default tiles reached only ~30% of copy
/// bandwidth on an H100. Host spaces get one row (in 1D, a run of
/// `host_row` cells) per iteration so the contiguous inner loop can
/// vectorise.
template <class T, int Rank, class Op, class Index>
struct NaiveSweep {
  struct PerCellBlock {};
  struct PerRow {};
  static constexpr int rows_per_thread = Rank >= 2 ? 4 : 1;
  static constexpr int columns_per_thread = Rank >= 2 ? 1 : 4;
  static constexpr int warp_width = 32 * columns_per_thread;  // cells in x

  T const* in;
  T* out;
  Op op;
  PaddedLayout layout;
  Index chunks_per_row;  // warps across a row
  Index row_groups;      // blocks of rows_per_thread rows per plane

  KOKKOS_FUNCTION void operator()(PerCellBlock, Index thread) const {
    Index const warp = thread / 32;
    int const lane = static_cast<int>(thread - warp * 32);
    Index const band = warp / chunks_per_row;  // (z, row group)
    int const x0 =
        static_cast<int>(warp - band * chunks_per_row) * warp_width + lane;
    int const y0 = static_cast<int>(band % row_groups) * rows_per_thread;
    int const z = static_cast<int>(band / row_groups);
    Index const start = layout.offset<Index>(z, y0, 0);
    // Cell i of the thread's block: row i / columns_per_thread, column
    // i % columns_per_thread (constants once the loops unroll).
    constexpr int cells = rows_per_thread * columns_per_thread;
    T result[cells];
#ifdef KOKKOS_ENABLE_PRAGMA_UNROLL
#pragma unroll
#endif
    for (int i = 0; i < cells; ++i) {
      // Clamped so that cells past the edge read valid memory; their
      // results are not stored.
      int const x =
          Kokkos::min(x0 + 32 * (i % columns_per_thread), layout.nx - 1);
      int const y = Kokkos::min(i / columns_per_thread, layout.ny - 1 - y0);
      result[i] = static_cast<T>(op(Neighbourhood<T, Rank>{
          in + start + static_cast<Index>(y) * layout.stride_y + x,
          layout.stride_y, layout.stride_z}));
    }
#ifdef KOKKOS_ENABLE_PRAGMA_UNROLL
#pragma unroll
#endif
    for (int i = 0; i < cells; ++i) {
      int const x = x0 + 32 * (i % columns_per_thread);
      int const k = i / columns_per_thread;
      if (x < layout.nx && y0 + k < layout.ny) {
        out[start + static_cast<Index>(k) * layout.stride_y + x] = result[i];
      }
    }
  }

  /// Host rows; a rank-1 grid is cut into rows of `host_row` cells so that
  /// its threads share the work.
  static constexpr int host_row = 4096;

  KOKKOS_FUNCTION void operator()(PerRow, Index row) const {
    int x_begin = 0, x_end = layout.nx, y = 0, z = 0;
    if constexpr (Rank == 1) {
      x_begin = static_cast<int>(row) * host_row;
      x_end = Kokkos::min(layout.nx, x_begin + host_row);
    } else {
      y = static_cast<int>(row % layout.ny);
      z = static_cast<int>(row / layout.ny);
    }
    Index const start = layout.offset<Index>(z, y, 0);
    T const* in_row = in + start;
    T* out_row = out + start;
    for (int x = x_begin; x < x_end; ++x) {
      out_row[x] = static_cast<T>(op(Neighbourhood<T, Rank>{
          in_row + x, layout.stride_y, layout.stride_z}));
    }
  }
};

template <class ExecSpace, class T, int Rank, class Op, class Index>
void naive_step_as(ExecSpace const& space, T const* in, T* out,
                   PaddedLayout const& layout, Op const& op) {
  using Sweep = NaiveSweep<T, Rank, Op, Index>;
  Index const chunks_per_row =
      (layout.nx + Sweep::warp_width - 1) / Sweep::warp_width;
  Index const row_groups =
      (layout.ny + Sweep::rows_per_thread - 1) / Sweep::rows_per_thread;
  Sweep const sweep{in, out, op, layout, chunks_per_row, row_groups};
  Index const rows = static_cast<Index>(layout.nz) * layout.ny;
  if constexpr (is_host_space_v<ExecSpace>) {
    Index const host_rows =
        Rank == 1 ? (layout.nx + Sweep::host_row - 1) / Sweep::host_row : rows;
    Kokkos::parallel_for(
        "stencil::naive",
        Kokkos::RangePolicy<ExecSpace, typename Sweep::PerRow,
                            Kokkos::IndexType<Index>>(space, 0, host_rows),
        sweep);
  } else {
    Kokkos::parallel_for(
        "stencil::naive",
        Kokkos::RangePolicy<ExecSpace, typename Sweep::PerCellBlock,
                            Kokkos::IndexType<Index>>(
            space, 0,
            static_cast<Index>(layout.nz) * row_groups * chunks_per_row * 32),
        sweep);
  }
}

/// 32-bit index arithmetic is markedly cheaper on GPUs; use it whenever the
/// padded array fits.
template <class ExecSpace, class T, int Rank, class Op>
void naive_step(ExecSpace const& space, T const* in, T* out,
                PaddedLayout const& layout, std::int64_t padded_cells,
                Op const& op) {
  // Half the range: the thread count rounds every row up to whole groups.
  if (padded_cells < std::numeric_limits<std::int32_t>::max() / 2) {
    naive_step_as<ExecSpace, T, Rank, Op, std::int32_t>(space, in, out, layout,
                                                        op);
  } else {
    naive_step_as<ExecSpace, T, Rank, Op, std::int64_t>(space, in, out, layout,
                                                        op);
  }
}

}  // namespace stencil::detail
