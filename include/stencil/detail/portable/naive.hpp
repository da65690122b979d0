// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/detail/neighbourhood.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/portable/naive_stream.hpp>
#include <stencil/detail/portable/vector_access.hpp>
#include <stencil/detail/unroll.hpp>
#include <stencil/traits.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace stencil::detail {

/// One time step, one kernel: out = op(in) on the interior.
///
/// Device spaces run a vector kernel or the scalar kernel, chosen per step by
/// naive_vector_width (exactly: a vector kernel only where every one of its
/// accesses is aligned and inside the buffers):
///
/// - The vector kernel (NaiveVectorSweep; rank 3 streams along z instead,
///   with the same loads and stores: NaiveStreamSweep in naive_stream.hpp),
///   V elements per access: 2 doubles
///   or 4 floats (16 bytes), or 2 floats (8 bytes) where rows are only
///   8-byte aligned. It needs both buffers aligned to V * sizeof(T) and the
///   padded row (rank 1: the whole padded array) a multiple of V long, so
///   that every row starts on a vector boundary. Each thread owns one vector
///   of V adjacent padded columns, [V*m, V*m+V), in `rows_per_thread` rows
///   (rank 1: two vectors 32 apart); a warp covers 32*V consecutive columns,
///   so each load instruction is one coalesced 512-byte access. The thread
///   first loads a register window, its rows +- r by its own
///   vector and ceil(r/V) vectors on either side, then evaluates the functor
///   for each of its cells through WindowNeighbourhood, whose in(...) offsets
///   index the window with constants once the loops unroll, and finally
///   stores V results with one vector store where all V columns are interior
///   (scalar stores at the ends of a row, so halo columns are never written).
///   Centre vectors are whole-vector loads; side vectors, of which a stencil
///   often reads only the lanes next to the centre, are element loads from a
///   known-aligned address, fused into a vector load where all lanes are
///   read. Loads the functor does not read are dead code, so star stencils do
///   not pay for corners, and the rows of a thread share their vertical
///   neighbours' loads.
///   Why: a copy of one 8-byte item per thread is capped well below a
///   16-byte copy, and the scalar kernel was capped by its 8-byte accesses
///   rather than by DRAM (docs/decisions/naive-vector-kernel.md).
/// - The scalar kernel (NaiveSweep, PerCellBlock) otherwise: a warp covers 32
///   consecutive x and each thread computes 4 rows of one column from rank 2
///   on, 4 cells 32 apart in rank 1, all computed before any is stored so
///   independent loads overlap; index arithmetic is paid once per block
///   (faster than one cell per thread or an MDRangePolicy with default
///   tiles: docs/decisions/naive-vector-kernel.md).
///
/// Host spaces get one row (in 1D, a run of `host_row` cells) per iteration
/// so the contiguous inner loop can vectorise.
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
    STENCIL_UNROLL
    for (int i = 0; i < cells; ++i) {
      // Clamped so that cells past the edge read valid memory; their
      // results are not stored.
      int const x =
          Kokkos::min(x0 + 32 * (i % columns_per_thread), layout.nx - 1);
      int const y = Kokkos::min(i / columns_per_thread, layout.ny - 1 - y0);
      result[i] = static_cast<T>(op(Neighbourhood<T, Rank, Op::radius>{
          in + start + static_cast<Index>(y) * layout.stride_y + x,
          layout.stride_y, layout.stride_z}));
    }
    STENCIL_UNROLL
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
      out_row[x] = static_cast<T>(op(Neighbourhood<T, Rank, Op::radius>{
          in_row + x, layout.stride_y, layout.stride_z}));
    }
  }
};

/// Rows of one column block per thread in the vector kernel. Four rows
/// share the loads of their vertical neighbours. The window of a box stencil
/// holds (rows + 2r) x (V + 2r) live values, all loaded before any
/// arithmetic; rows halve (4, 2, 1) until that is at most 64 32-bit
/// registers, which keeps every suite stencil at or below ~96 registers per
/// thread and spill-free (sm_90, checked with cuobjdump). Star windows are
/// mostly dead corners and keep four rows.
template <class T, int Rank, class Op, int V>
constexpr int vector_rows() {
  if constexpr (Rank == 1) {
    return 1;
  } else if constexpr (Op::shape == Shape::star) {
    return 4;
  } else {
    constexpr int r = Op::radius;
    int rows = 4;
    while (rows > 1 &&
           (rows + 2 * r) * (V + 2 * r) * static_cast<int>(sizeof(T)) >
               64 * 4) {
      rows /= 2;
    }
    return rows;
  }
}

/// The vector kernel; see the comment above NaiveSweep. Index mapping, with
/// padded column p = x + halo and vector m = padded columns [V*m, V*m+V):
///
///   thread -> warp = thread / 32, lane = thread % 32
///   warp   -> band = warp / chunks_per_row (z, row group), chunk = the rest
///   band   -> y0 = (band % row_groups) * rows_per_thread,
///             z = band / row_groups
///   column block b (0 .. blocks-1) of the thread:
///             m = first_vector + chunk * 32 * blocks + 32 * b + lane
///
/// so a warp's lanes hold 32 consecutive vectors (one coalesced access per
/// load instruction). first_vector = halo / V is the vector holding the first
/// interior column; chunks_per_row warps cover every vector of a row that
/// holds an interior column.
///
/// Window of block b: window column q (0 .. (2*side+1)*V - 1) is padded
/// column V*(m - side) + q, i.e. lane q % V of vector m - side + q / V; cell
/// (row i, lane l) of the block is window column side*V + l, and its
/// neighbour dx is window column side*V + l + dx, inside the window because
/// |dx| <= r <= side*V. Window row j is interior row y0 - r + j, window plane
/// k interior plane z - r + k.
///
/// Bounds: vector indices are clamped to [0, last_vector] and rows to
/// ny - 1 + r, so every load is inside the buffer. A stored cell (interior
/// column c + halo, row y <= ny - 1) reads only padded columns
/// [c + halo - r, c + halo + r] within [0, row length) and rows <= ny - 1 + r,
/// for which the clamps are the identity; clamped values only reach results
/// that are not stored.
template <class T, int Rank, class Op, class Index, int V>
struct NaiveVectorSweep {
  static_assert(Rank <= 2, "rank 3 streams along z: NaiveStreamSweep");
  static_assert(V >= 2, "the vector kernel needs at least two lanes");
  static constexpr int radius = Op::radius;
  static constexpr int rows_per_thread = vector_rows<T, Rank, Op, V>();
  // Rank 1: two vectors 32 apart per thread, as the scalar kernel takes four
  // cells 32 apart.
  static constexpr int blocks = Rank == 1 ? 2 : 1;
  static constexpr int warp_vectors = 32 * blocks;
  static constexpr int side = (radius + V - 1) / V;  // vectors either side
  static constexpr int window_cols = (2 * side + 1) * V;
  static constexpr int ry = Rank >= 2 ? radius : 0;  // rows above and below
  static constexpr int window_rows = rows_per_thread + 2 * ry;
  // One plane: the accessor's window is 3D.
  using Accessor =
      WindowNeighbourhood<T, Rank, radius, 1, window_rows, window_cols>;

  T const* in;
  T* out;
  Op op;
  PaddedLayout layout;
  int first_vector;      // halo / V
  int last_vector;       // last vector of a padded row (or rank-1 array)
  Index chunks_per_row;  // warps across a row
  Index row_groups;      // blocks of rows_per_thread rows per plane

  static NaiveVectorSweep make(T const* in, T* out, Op const& op,
                               PaddedLayout const& layout) {
    Index const chunks =
        (interior_vectors<V>(layout) + warp_vectors - 1) / warp_vectors;
    Index const groups = (layout.ny + rows_per_thread - 1) / rows_per_thread;
    return {in,
            out,
            op,
            layout,
            first_interior_vector<V>(layout),
            padded_row_length<Rank>(layout) / V - 1,
            chunks,
            groups};
  }
  Index threads() const {
    return static_cast<Index>(layout.nz) * row_groups * chunks_per_row * 32;
  }

  KOKKOS_FUNCTION void operator()(Index thread) const {
    Index const warp = thread / 32;
    int const lane = static_cast<int>(thread - warp * 32);
    Index const band = warp / chunks_per_row;  // (z, row group)
    int const m0 =
        first_vector +
        static_cast<int>(warp - band * chunks_per_row) * warp_vectors + lane;
    int const y0 = static_cast<int>(band % row_groups) * rows_per_thread;
    int const z = static_cast<int>(band / row_groups);

    // Padded row starts (column 0) of the window rows, rows clamped.
    T const* rows[window_rows];
    STENCIL_UNROLL
    for (int j = 0; j < window_rows; ++j) {
      int const y = Kokkos::min(y0 - ry + j, layout.ny - 1 + ry);
      rows[j] = in + (layout.offset<Index>(z, y, 0) - layout.halo);
    }

    // The windows of all blocks, loaded before any arithmetic so that all
    // of a thread's loads are in flight at once. Loads the functor does not
    // read are removed as dead code.
    T window[blocks][1][window_rows][window_cols];
    STENCIL_UNROLL
    for (int b = 0; b < blocks; ++b) {
      STENCIL_UNROLL
      for (int s = 0; s < 2 * side + 1; ++s) {
        int const vector =
            Kokkos::max(0, Kokkos::min(m0 + 32 * b - side + s, last_vector));
        STENCIL_UNROLL
        for (int j = 0; j < window_rows; ++j) {
          load_window_vector<V>(&window[b][0][j][s * V], rows[j] + V * vector,
                                s == side);
        }
      }
    }

    T result[blocks][rows_per_thread][V];
    STENCIL_UNROLL
    for (int b = 0; b < blocks; ++b) {
      STENCIL_UNROLL
      for (int i = 0; i < rows_per_thread; ++i) {
        STENCIL_UNROLL
        for (int l = 0; l < V; ++l) {
          result[b][i][l] =
              static_cast<T>(op(Accessor{window[b], 0, ry + i, side * V + l}));
        }
      }
    }

    STENCIL_UNROLL
    for (int b = 0; b < blocks; ++b) {
      store_window_vectors<Index>(out, layout, result[b], m0 + 32 * b, y0, z);
    }
  }
};

/// The device path of one step with vector width V (1: the scalar kernel).
/// The caller guarantees V <= naive_vector_width<T, Rank>(in, out, layout).
/// Written for device spaces but correct on any space; the unit tests run it
/// on the host.
template <int V, class ExecSpace, class T, int Rank, class Op, class Index>
void naive_device_step_as(ExecSpace const& space, T const* in, T* out,
                          PaddedLayout const& layout, Op const& op) {
  if constexpr (V == 1) {
    using Sweep = NaiveSweep<T, Rank, Op, Index>;
    Index const chunks_per_row =
        (layout.nx + Sweep::warp_width - 1) / Sweep::warp_width;
    Index const row_groups =
        (layout.ny + Sweep::rows_per_thread - 1) / Sweep::rows_per_thread;
    Sweep const sweep{in, out, op, layout, chunks_per_row, row_groups};
    Kokkos::parallel_for(
        "stencil::naive",
        Kokkos::RangePolicy<ExecSpace, typename Sweep::PerCellBlock,
                            Kokkos::IndexType<Index>>(
            space, 0,
            static_cast<Index>(layout.nz) * row_groups * chunks_per_row * 32),
        sweep);
  } else {
    auto launch = [&](auto const& sweep) {
      Kokkos::parallel_for(
          "stencil::naive",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(
              space, 0, sweep.threads()),
          sweep);
    };
    if constexpr (Rank == 3) {
      launch(NaiveStreamSweep<T, Op, Index, V>::make(in, out, op, layout));
    } else {
      launch(
          NaiveVectorSweep<T, Rank, Op, Index, V>::make(in, out, op, layout));
    }
  }
}

template <class ExecSpace, class T, int Rank, class Op, class Index>
void naive_step_as(ExecSpace const& space, T const* in, T* out,
                   PaddedLayout const& layout, Op const& op) {
  if constexpr (is_host_space_v<ExecSpace>) {
    using Sweep = NaiveSweep<T, Rank, Op, Index>;
    Sweep const sweep{in, out, op, layout, 0, 0};
    Index const host_rows =
        Rank == 1 ? (layout.nx + Sweep::host_row - 1) / Sweep::host_row
                  : static_cast<Index>(layout.nz) * layout.ny;
    Kokkos::parallel_for(
        "stencil::naive",
        Kokkos::RangePolicy<ExecSpace, typename Sweep::PerRow,
                            Kokkos::IndexType<Index>>(space, 0, host_rows),
        sweep);
  } else {
    int const v = naive_vector_width<T, Rank>(in, out, layout);
    if constexpr (max_vector_width_v<T> >= 4) {
      if (v >= 4) {
        naive_device_step_as<4, ExecSpace, T, Rank, Op, Index>(space, in, out,
                                                               layout, op);
        return;
      }
    }
    if constexpr (max_vector_width_v<T> >= 2) {
      if (v >= 2) {
        naive_device_step_as<2, ExecSpace, T, Rank, Op, Index>(space, in, out,
                                                               layout, op);
        return;
      }
    }
    naive_device_step_as<1, ExecSpace, T, Rank, Op, Index>(space, in, out,
                                                           layout, op);
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
