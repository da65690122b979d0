// SPDX-License-Identifier: Apache-2.0
// Low-occupancy deep temporal blocking (after EBISU, Zhang et al., ICS'23):
// one block of 256 to 512 threads per SM keeps a strip of the grid on chip
// for `depth` time steps.
//
// Rank 2: a block owns a strip of 256, 384 or 512 columns (its valid width plus
// an overlapped halo of depth*radius columns on each side, recomputed by the
// neighbouring strips), one column per thread, and streams down the rows,
// `rows` rows per level per iteration (3 for stars, 4 for boxes). Level t
// works `lag` = rows + r rows behind level t-1, which makes every value a
// level reads from another thread one finished in an earlier iteration: a
// single barrier per iteration, however deep the blocking, and no
// dependency between the levels inside an iteration (they overlap; this is
// the kernel's instruction-level parallelism). Each level keeps:
//  - its own column's recent values in registers (a window of lag + r
//    rows): every in(dy, 0) tap is a register read;
//  - its recent rows in a shared-memory ring of `ring` rows, read only for
//    the in(dy, dx != 0) taps of the neighbouring columns.
// The ring holds a multiple of `rows` rows and the iteration loop is
// unrolled by ring/rows, so every ring slot, and every shared-memory
// address, is a compile-time offset from the thread's column.
//
// Blocks take equal shares of the strips' rows laid end to end (a share may
// end in one strip and continue in the next), so every SM gets the same work
// whatever the grid's extents.
//
// Input rows come in a whole iteration ahead of their use: with prefetch 0
// as plain loads into registers, with prefetch s > 0 as cp.async copies s
// iterations ahead into a staging ring of s + 1 slots in shared memory
// (each thread's own column: its own wait makes them visible, no barrier).
//
// Rank 1: a block loads a tile plus halo once and runs `depth` steps on it
// in shared memory, ping-ponging two buffers.
#pragma once

#include <stencil/native_cuda/common/device.hpp>
#include <stencil/native_cuda/common/linear_sums.hpp>
#include <stencil/native_cuda/common/prefetch.hpp>

#include <stencil/detail/neighbourhood.hpp>
#include <stencil/traits.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace stencil::native_cuda::temporal_blocking {

inline constexpr int threads_per_block = 256;  // rank 1

/// Rows a rank-2 level computes per iteration. A level's ring must hold
/// its live rows (lag + rows, plus r for a box) rounded up to a multiple of
/// `rows`. For a star, 3 rows fill the ring exactly (radius 1: 7 live rows
/// in 9 slots, against 9 in 12 with 4 rows), and the freed shared memory
/// takes double radius 1 from depth 9 to 12 at 256 columns. A box reads
/// rows + 2r rows of each neighbouring column per iteration, so it keeps 4
/// rows: fewer rows read more per cell, and no other count beat 4
/// (docs/decisions/temporal-blocking-2d-block-shape.md).
template <class Op>
constexpr int rows_2d_for() {
  return Op::shape == Shape::star ? 3 : 4;
}

/// Whether a rank-2 thread of stencil `Op` on `T` that owns `Columns`
/// adjacent columns sums the box row by row: a double box whose functor
/// declares itself linear, on a pair of columns. A level then reads each
/// row of the level below once, as it arrives (the 2r columns on either
/// side of the pair from the ring, its own from the window), adds that
/// row's part to the 2r + 1 cells of each column that read it, and carries
/// the 2r unfinished sums per column in registers. A radius-2 box pair
/// then issues 4 16-byte shared loads per level and iteration instead of
/// 12 (2 per row read), and its 25 taps become 5 independent chains of 5,
/// for 4 more adds per cell. It pays on pairs; on one column per thread
/// it lost, since a column's 4 rows already share their loads
/// (docs/decisions/linear-box-sums.md).
template <class T, class Op, int Columns>
inline constexpr bool sums_rows_2d =
    sizeof(T) == 8 && (Op::shape == Shape::box) &&
    stencil::detail::is_linear<Op>() && Columns > 1;

/// The deepest depth at which a rank-2 thread of stencil `Op` on `T` owns
/// a pair of adjacent columns (0: never). A pair reads the neighbouring
/// columns of a row once for both its cells, as 16-byte loads: a radius-2
/// box reads 4 values per row for two cells where a column per thread
/// reads 4 per cell. The price is two register windows per thread, so a
/// pair level computes 2 rows per iteration, and only at shallow depths.
/// Pairs paid for the double radius-2 box on 384 threads up to depth 3
/// (deeper they spill); not for the radius-2 star (its exact form lost),
/// the radius-1 box or float
/// (docs/decisions/temporal-blocking-2d-block-shape.md).
template <class T, class Op>
constexpr int deepest_pair_depth_2d() {
  bool const double_radius_2_box =
      sizeof(T) == 8 && Op::radius == 2 && Op::shape == Shape::box;
  return double_radius_2_box ? 3 : 0;
}
template <class T, class Op>
constexpr bool pairs_2d_at(int depth) {
  return depth <= deepest_pair_depth_2d<T, Op>();
}

/// Adjacent columns a lane owns in the warp-tiled kernel (warp_tiles.hpp:
/// the tile in registers, horizontal neighbours by warp shuffles, no shared
/// memory): 128 columns per warp in float, 64 in double (an 8-byte value
/// takes two shuffles and twice the registers), and at least the radius, so
/// that a cell's taps across a lane edge come from the next lane only.
template <class T, class Op>
constexpr int warp_tile_columns_2d() {
  int const columns = sizeof(T) <= 4 ? 4 : 2;
  return columns < Op::radius ? Op::radius : columns;
}

/// Whether TemporalBlocking's plan runs stencil `Op` on `T` in warp tiles
/// where the policy leaves the choice to it (Tiles2D::automatic): where
/// they were measured faster than the shared-memory kernel
/// (docs/decisions/temporal-blocking-2d-warp-tiles.md). A float radius-1
/// box without a division: a box reads three rows of the ring per cell, so
/// the ring's loads cost it most, and at radius 1 in float a level's window
/// leaves room for three blocks per SM. A star reads one row across lanes,
/// so it saves less than the narrow tile's halo costs; a division makes
/// that halo dearer; radius 2 and double take too many registers per level
/// to keep enough warps.
template <class T, class Op>
inline constexpr bool prefers_warp_tiles_2d =
    (Op::rank == 2) && (sizeof(T) == 4) && (Op::radius == 1) &&
    (Op::shape == Shape::box) && (stencil::detail::divisions_of<Op>() == 0);

/// Window registers (the per-level register windows, the bulk of a
/// pipeline's registers) that a `threads`-wide block of stencil `Op` on `T`
/// may take without spilling: the register file allows 128 per thread at
/// 512 threads, 168 at 384 and 255 at 256. Boxes get less room, their taps
/// need more temporaries. Set from the sm_90 register counts of the suite
/// (`cuobjdump -res-usage`), both forms: at 512 threads the exact float
/// radius-1 box spilled at 36 window registers, the double radius-2 box at
/// 32 and the prescaled double radius-1 box at 48, while a float star at 60
/// took 116 registers; at 384 the double radius-1 box spilled at 84, while
/// a double radius-2 star at 98 and a double radius-2 box at 96 did not.
template <class T, class Op>
constexpr int window_register_budget(int threads) {
  bool const dbl = sizeof(T) == 8;
  bool const box = Op::shape == Shape::box;
  if (threads <= 256) return 1 << 20;  // 255 registers: the depth decides
  if (threads <= 384) {
    if (!box) return dbl ? 100 : 84;
    return Op::radius >= 2 ? (dbl ? 96 : 48) : (dbl ? 72 : 48);
  }
  if (!box) return dbl ? 48 : 60;
  return Op::radius >= 2 ? (dbl ? 16 : 32) : (dbl ? 40 : 30);
}

/// Threads of a rank-2 block at `depth`: 384 for pairs (above);
/// otherwise (one column per thread) the widest of 512, 384 and 256 whose
/// register windows fit its budget and whose rings fit in shared memory. A
/// wider block has more warps to hide the FP64 latency chains and less halo to
/// recompute per valid column; a narrower one holds more levels. Which wins
/// was measured (docs/decisions/temporal-blocking-2d-block-shape.md).
template <class T, class Op>
constexpr int threads_2d_at(int depth) {
  if (pairs_2d_at<T, Op>(depth)) return 384;
  int const rows = rows_2d_for<Op>();
  int const lag = rows + Op::radius;
  int const live = lag + rows + (Op::shape == Shape::star ? 0 : Op::radius);
  int const ring = (live + rows - 1) / rows * rows;
  int const window_registers =
      depth * (rows + 2 * Op::radius) * static_cast<int>(sizeof(T) / 4);
  for (int threads : {512, 384}) {
    std::size_t const shared = static_cast<std::size_t>(depth) * ring *
                               (threads + 2 * Op::radius) * sizeof(T);
    if (window_registers <= window_register_budget<T, Op>(threads) &&
        shared <= max_shared_per_block) {
      return threads;
    }
  }
  return 256;
}
template <class T, class Op, int Depth>
inline constexpr int threads_2d = threads_2d_at<T, Op>(Depth);
template <class T, class Op, int Depth>
inline constexpr int rows_2d = pairs_2d_at<T, Op>(Depth) ? 2
                                                         : rows_2d_for<Op>();
/// Adjacent columns a rank-2 thread owns (see PairNeighbourhood).
template <class T, class Op, int Depth>
inline constexpr int columns_2d = pairs_2d_at<T, Op>(Depth) ? 2 : 1;

/// The compile-time shape of the rank-2 pipeline for stencil `Op` with
/// `Threads` threads per block, each owning `Columns` adjacent columns.
template <class Op, int Threads, int Rows, int Columns = 1>
struct Pipeline2D {
  static_assert(Columns == 1 || Columns == 2,
                "a rank-2 thread owns one column or an aligned pair");
  static constexpr int radius = Op::radius;
  static constexpr bool star = Op::shape == Shape::star;
  static constexpr int rows = Rows;  // per level per iteration
  static constexpr int columns = Columns;
  static constexpr int threads = Threads;
  static constexpr int width = Threads * Columns;  // columns per block
  /// Rows between consecutive levels: the rows a level computes and their
  /// lower neighbours are all finished by the level above one iteration
  /// earlier.
  static constexpr int lag = rows + radius;
  /// Rows of a level that are read (horizontal taps of the level below) or
  /// written during one iteration; they must not share a ring slot.
  static constexpr int live_rows = lag + rows + (star ? 0 : radius);
  static constexpr int ring = (live_rows + rows - 1) / rows * rows;
  /// Iterations after which the ring slots repeat: the unroll factor.
  static constexpr int period = ring / rows;
  /// Register window per level and column: rows [y - r, y + lag) of the
  /// level below, where y is the level's first row this iteration; the
  /// level reads the first rows + 2r of them.
  static constexpr int window = lag + radius;
  /// Pads for the taps on either side of a row, a whole number of `Columns`
  /// so that every thread's columns start on a vector boundary.
  static constexpr int pad = (radius + Columns - 1) / Columns * Columns;
  static constexpr int row_length = width + 2 * pad;

  /// Ring slot of the row `relative` rows after the segment's first.
  __host__ __device__ static constexpr int slot(int relative) {
    return ((relative % ring) + ring) % ring;
  }
};

template <class T, class Op, int Depth, int Threads = threads_2d<T, Op, Depth>,
          int Rows = rows_2d<T, Op, Depth>,
          int Columns = columns_2d<T, Op, Depth>>
constexpr std::size_t shared_bytes_2d() {
  using P = Pipeline2D<Op, Threads, Rows, Columns>;
  return static_cast<std::size_t>(Depth) * P::ring * P::row_length * sizeof(T);
}

/// The deepest 2D blocking compiled: what fits in the largest shared memory
/// a block can have today (227 KiB on Hopper), at most 12. Warp tiles use
/// none: registers bound their depth, each level holding 2r + 1 rows of a
/// lane's columns, and depths whose windows alone take more than 192 of a
/// thread's 255 registers are not compiled (the plan also refuses any
/// depth whose kernel spills). Each depth is its own kernel so that the
/// level loops unroll.
template <class T, class Op, bool WarpTiles = false>
inline constexpr int max_compiled_depth_2d = [] {
  if (WarpTiles) {
    int const words = static_cast<int>((sizeof(T) + 3) / 4);
    int const per_level =
        (2 * Op::radius + 1) * warp_tile_columns_2d<T, Op>() * words;
    int const fit = 192 / per_level;
    return fit < max_depth_compiled ? fit : max_depth_compiled;
  }
  using P = Pipeline2D<Op, threads_2d<T, Op, 12>, rows_2d<T, Op, 12>,
                       columns_2d<T, Op, 12>>;
  int const fit = static_cast<int>(
      max_shared_per_block /
      (static_cast<std::size_t>(P::ring) * P::row_length * sizeof(T)));
  return fit < max_depth_compiled ? fit : max_depth_compiled;
}();

/// The accessor the functor sees in the rank-2 kernel with a column per
/// thread. `in(dy, 0)` reads the thread's register window, other taps the
/// ring of the level below. All arguments are compile-time constants once
/// the loops unroll, so the branch and the slot arithmetic fold away.
template <class T, class P>
struct StreamNeighbourhood {
  using value_type = T;
  T const (&window)[P::window];
  T const* ring;  // the thread's column in slot 0 of the level below
  int row;        // of this cell in the window, less the radius
  int relative;   // of this cell's row, for the ring slot

  __device__ __forceinline__ T operator()(int dy, int dx) const {
    stencil::detail::check_offsets<P::radius>(dy, dx);
    if (dx == 0) return window[row + P::radius + dy];
    return ring[P::slot(relative + dy) * P::row_length + dx];
  }
};

/// The taps of one row of the level below, read as row `Dy` of a cell's
/// neighbourhood (the other rows read as zero): a linear functor applied to
/// it gives that row's part of the cell's update (add_newest_slice,
/// common/linear_sums.hpp). The other rows read as -0, not +0: a positive
/// weight times -0 is -0, and adding -0 is exact for every value, so the
/// compiler drops those terms (x + +0 is -0's one exception, and it would
/// keep an add per row for it).
template <class T, int Dy, int Radius, int Columns>
struct RowTermsNeighbourhood {
  using value_type = T;
  T const (&own)[Columns];      // the thread's columns of the row
  T const (&side)[2 * Radius];  // r columns left of them, then r right
  int column;                   // of this cell among the thread's

  __device__ __forceinline__ T operator()(int dy, int dx) const {
    stencil::detail::check_offsets<Radius>(dy, dx);
    if (dy != Dy) return T(-0.0);
    int const q = column + dx;
    if (q >= 0 && q < Columns) return own[q];
    return q < 0 ? side[q + Radius] : side[Radius + q - Columns];
  }
};

/// Rows of the level below a pair-of-columns thread reads from the ring in
/// one iteration, and the neighbouring columns it reads of each: r on the
/// left of its pair and r on the right.
template <class P>
inline constexpr int side_rows = P::rows + 2 * P::radius;
template <class P>
inline constexpr int side_columns = 2 * P::radius;

/// The accessor for a thread that owns a pair of columns: taps in the pair
/// read the two register windows, the others the neighbouring columns the
/// thread loaded from the ring once for all its cells of the iteration (as
/// 16-byte pairs where aligned: half the shared loads of a column per
/// thread for a radius-2 box).
template <class T, class P>
struct PairNeighbourhood {
  using value_type = T;
  T const (&window)[P::columns][P::window];
  T const (&side)[side_rows<P>][side_columns<P>];
  int row;     // of this cell in the window, less the radius
  int column;  // of this cell in the pair

  __device__ __forceinline__ T operator()(int dy, int dx) const {
    stencil::detail::check_offsets<P::radius>(dy, dx);
    int const q = column + dx;
    int const i = row + P::radius + dy;
    if (q >= 0 && q < P::columns) return window[q][i];
    return q < 0 ? side[i][q + P::radius] : side[i][P::radius + q - P::columns];
  }
};

template <class T>
struct VectorPair;
template <>
struct VectorPair<double> {
  using type = double2;
};
template <>
struct VectorPair<float> {
  using type = float2;
};

/// Loads `Count` values from `row[Offset]` on into `out`, as aligned pairs
/// where `Offset` is even (`row` is pair-aligned when Columns == 2).
template <class T, int Columns, int Offset, int Count>
__device__ __forceinline__ void load_run(T const* row, T* out) {
  if constexpr (Count > 0) {
    if constexpr (Columns == 2 && Count >= 2 && (Offset & 1) == 0) {
      auto const v =
          *reinterpret_cast<typename VectorPair<T>::type const*>(row + Offset);
      out[0] = v.x;
      out[1] = v.y;
      load_run<T, Columns, Offset + 2, Count - 2>(row, out + 2);
    } else {
      out[0] = row[Offset];
      load_run<T, Columns, Offset + 1, Count - 1>(row, out + 1);
    }
  }
}

/// Stores a thread's values of one row (one per column) at `to`.
template <class T, int Columns>
__device__ __forceinline__ void store_columns(T* to, T const (&v)[Columns]) {
  if constexpr (Columns == 2) {
    *reinterpret_cast<typename VectorPair<T>::type*>(to) = {v[0], v[1]};
  } else {
    to[0] = v[0];
  }
}

template <class T, class Op>
struct Params2D {
  T const* in;
  T* out;
  Op op;
  int nx, ny;
  int halo;         // of the grid's buffers
  int stride;       // padded row length
  int valid_width;  // output columns per strip
  int strips;
  int rows_per_block;  // of the strips' rows laid end to end, per block
                       // (warp tiles: per warp)
  int prefetch;        // 0: plain loads into registers; s: cp.async s ahead
};

/// Shared memory of the rank-2 staging ring for `prefetch` stages: s + 1
/// slots of `rows` rows of the block's columns (none for prefetch 0).
template <class T>
constexpr std::size_t staging_bytes_2d(int prefetch, int width, int rows) {
  return prefetch == 0 ? 0
                       : static_cast<std::size_t>(prefetch + 1) * rows * width *
                             sizeof(T);
}

/// How a warp computes the cells of a step. Chosen per warp, so that no
/// warp runs two of them one after the other: a warp that straddles the
/// grid's left or right edge ran `compute` and `copy` both, and its block,
/// waiting for it at every barrier, set the kernel's time (ncu: the slowest
/// SM 16% behind the average). It runs `guarded` now, which costs less
/// than the two; a fourth variant for it cost more registers in every
/// variant than it saved.
///  - `compute`: every cell of the warp is interior.
///  - `copy`: every column of the warp is a boundary column (or beyond),
///    whose values never change.
///  - `guarded`: some rows of the step are boundary rows (or beyond), or
///    some columns of the warp are; a per-cell select.
/// Keeping the selects out of the common path matters: they split the code
/// into regions the compiler cannot interleave, which costs the ILP the
/// low-occupancy design lives on.
enum class StepMode { compute, copy, guarded };

/// What a thread's `Columns` adjacent columns are, from column `tile_column`
/// of a `depth`-deep tile of `strip` on: interior (computed; the others are
/// boundary columns that keep their values), loadable (inside the
/// allocation) and written (the strip's valid columns inside the grid).
template <int Columns>
struct ColumnFlags {
  bool interior[Columns], loadable[Columns], output[Columns];
  bool all_interior = true, any_interior = false;

  template <class T, class Op>
  __device__ __forceinline__ ColumnFlags(Params2D<T, Op> const& p, int depth,
                                         int strip, int tile_column) {
    int const skirt = depth * Op::radius;  // recomputed columns on each side
    int const x0 = strip * p.valid_width - skirt + tile_column;
#pragma unroll
    for (int h = 0; h < Columns; ++h) {
      int const x = x0 + h, c = tile_column + h;
      interior[h] = x >= 0 && x < p.nx;
      loadable[h] = x >= -p.halo && x < p.nx + p.halo;
      output[h] = c >= skirt && c < skirt + p.valid_width && x < p.nx;
      all_interior = all_interior && interior[h];
      any_interior = any_interior || interior[h];
    }
  }
};

/// The first row a segment starting at output row `y_begin` streams through
/// level 0: depth * radius rows of overlap before it, or the boundary rows
/// at the grid's edge.
__device__ __forceinline__ int first_streamed_row(int y_begin, int depth,
                                                  int radius) {
  return max(y_begin - depth * radius, -radius);
}

/// Calls `stream(strip, y_begin, y_end)` for each segment of share `share`:
/// `p.rows_per_block` rows of the strips' rows laid end to end, so a share
/// may end in one strip and continue in the next and every share has the
/// same work.
template <class T, class Op, class Stream>
__device__ __forceinline__ void for_each_segment(Params2D<T, Op> const& p,
                                                 long share, Stream&& stream) {
  long const total = static_cast<long>(p.strips) * p.ny;
  long const begin = share * p.rows_per_block;
  long const end =
      begin + p.rows_per_block < total ? begin + p.rows_per_block : total;
  for (long g = begin; g < end;) {
    int const strip = static_cast<int>(g / p.ny);
    int const y_begin = static_cast<int>(g - static_cast<long>(strip) * p.ny);
    int const y_end =
        static_cast<int>(end - g < p.ny - y_begin ? y_begin + (end - g) : p.ny);
    stream(strip, y_begin, y_end);
    g += y_end - y_begin;
  }
}

/// One segment: output rows [y_begin, y_end) of `strip`. `Staged`: the
/// input comes through the staging ring (prefetch > 0); a kernel of its
/// own, since a run-time choice between the two cost the plain-load kernel
/// up to 18% (docs/decisions/temporal-blocking-2d-block-shape.md).
template <class T, class Op, int Depth, bool Staged, int Threads, int Rows,
          int Columns>
__device__ __forceinline__ void stream_segment(Params2D<T, Op> const& p,
                                               T* const column, T* const staged,
                                               int strip, int y_begin,
                                               int y_end) {
  using P = Pipeline2D<Op, Threads, Rows, Columns>;
  constexpr int r = P::radius, R = P::rows, L = P::lag, U = P::period;
  constexpr int W = P::window, C = Columns;
  constexpr int level_stride = P::ring * P::row_length;
  constexpr bool sums = sums_rows_2d<T, Op, Columns>;
  int const col = static_cast<int>(threadIdx.x) * C;  // first of the thread's
  int const x_base = strip * p.valid_width - Depth * r;
  ColumnFlags<C> const flags(p, Depth, strip, col);
  auto const& x_interior = flags.interior;
  auto const& x_loadable = flags.loadable;
  auto const& x_output = flags.output;
  bool const all_interior = flags.all_interior;
  bool const any_interior = flags.any_interior;
  int const first = first_streamed_row(y_begin, Depth, r);
  int const last = min(y_end + Depth * r, p.ny + r);
  // Level t computes rows first + 4k - t*lag + [0, 4) in iteration k.
  int const needed = (y_end - first + Depth * L + R - 1) / R;
  int const iterations = (needed + U - 1) / U * U;

  T const* src[C];
#pragma unroll
  for (int h = 0; h < C; ++h) {
    src[h] = p.in + static_cast<long>(first + p.halo) * p.stride +
             (x_loadable[h] ? x_base + col + h : 0) + p.halo;
  }
  T* const dst =
      p.out + static_cast<long>(p.halo) * p.stride + x_base + col + p.halo;

  T window[Depth][C][W];
#pragma unroll
  for (int t = 0; t < Depth; ++t) {
#pragma unroll
    for (int h = 0; h < C; ++h) {
#pragma unroll
      for (int i = 0; i < W; ++i) window[t][h][i] = T(0);
    }
  }
  // Summed by row: carried[t][m] is the sum so far of the cell m + 1 rows
  // after the last one level t + 1 finished (the rows of level t it has
  // added in).
  [[maybe_unused]] T carried[Depth][C][sums ? 2 * r : 1];
  if constexpr (sums) {
#pragma unroll
    for (int t = 0; t < Depth; ++t) {
#pragma unroll
      for (int h = 0; h < C; ++h) {
#pragma unroll
        for (int m = 0; m < 2 * r; ++m) carried[t][h][m] = T(0);
      }
    }
  }
  // Prefetch s > 0: iteration k's rows are copied at iteration k - s into
  // staging slot k % (s + 1), the slot read at iteration k - 1.
  int const stages = p.prefetch;
  RuntimeAsyncCopy const async{stages};
  auto stage_input = [&](int k, int slot) {
#pragma unroll
    for (int j = 0; j < R; ++j) {
      int const relative = R * k + j;
#pragma unroll
      for (int h = 0; h < C; ++h) {
        T* const to = staged + (slot * R + j) * P::width + h;
        if (x_loadable[h] && first + relative < last) {
          async.copy(to, src[h] + static_cast<long>(relative) * p.stride);
        } else {
          *to = T(0);
        }
      }
    }
    async.commit();
  };
  int issue_slot = stages, read_slot = 0;
  T incoming[R][C];
  if constexpr (!Staged) {
#pragma unroll
    for (int j = 0; j < R; ++j) {
#pragma unroll
      for (int h = 0; h < C; ++h) {
        incoming[j][h] = (x_loadable[h] && first + j < last)
                             ? src[h][static_cast<long>(j) * p.stride]
                             : T(0);
      }
    }
  } else {
    for (int k = 0; k < stages; ++k) stage_input(k, k);
  }

  auto step = [&](auto mode_constant, auto phase, int k) {
    constexpr StepMode mode = decltype(mode_constant)::value;
    constexpr int u = decltype(phase)::value;
    // The next iteration's input rows, loaded a whole iteration ahead (or
    // those `stages` iterations ahead, copied).
    [[maybe_unused]] T next[R][C];
    if constexpr (!Staged) {
#pragma unroll
      for (int j = 0; j < R; ++j) {
        int const relative = R * (k + 1) + j;
#pragma unroll
        for (int h = 0; h < C; ++h) {
          next[j][h] = (x_loadable[h] && first + relative < last)
                           ? src[h][static_cast<long>(relative) * p.stride]
                           : T(0);
        }
      }
    } else {
      stage_input(k + stages, issue_slot);
      issue_slot = issue_slot == stages ? 0 : issue_slot + 1;
    }
    // Deepest level first: level t consumes the oldest entries of its
    // window before level t-1's results arrive, so each window only ever
    // holds lag + r values (registers are what limits the depth).
#pragma unroll
    for (int t = Depth; t >= 1; --t) {
      T const* const below = column + (t - 1) * level_stride;
      int const y0 = first + R * k - t * L;
      // A pair's neighbouring columns, rows y0 - r to y0 + R + r: loaded
      // once for both columns' cells (unused rows of a star fold away).
      [[maybe_unused]] T side[side_rows<P>][side_columns<P>];
      if constexpr (C > 1 && mode != StepMode::copy) {
        // Summed by row, only the newest R rows are read.
#pragma unroll
        for (int i = sums ? 2 * r : 0; i < side_rows<P>; ++i) {
          T const* const row =
              below + P::slot(R * u - t * L + i - r) * P::row_length;
          load_run<T, C, -r, r>(row, side[i]);
          load_run<T, C, C, r>(row, side[i] + r);
        }
      }
      T result[R][C];
#pragma unroll
      for (int j = 0; j < R; ++j) {
#pragma unroll
        for (int h = 0; h < C; ++h) {
          // Boundary cells keep their value at every time level.
          T const centre = window[t - 1][h][j + r];
          if constexpr (mode == StepMode::copy) {
            result[j][h] = centre;
          } else {
            T value;
            if constexpr (sums) {
              // The newest row this cell reads, row y0 + j + r of the level
              // below, is row dy of the cell r - dy rows after this one.
              T own[C];
#pragma unroll
              for (int q = 0; q < C; ++q) own[q] = window[t - 1][q][j + 2 * r];
              value = add_newest_slice<r, T>(
                  [&](auto dy) {
                    return p.op(
                        RowTermsNeighbourhood<T, decltype(dy)::value, r, C>{
                            own, side[j + 2 * r], h});
                  },
                  [&](int m) -> T& { return carried[t - 1][h][m]; });
            } else if constexpr (C == 1) {
              StreamNeighbourhood<T, P> const nb{window[t - 1][0], below, j,
                                                 R * u - t * L + j};
              value = static_cast<T>(p.op(nb));
            } else {
              PairNeighbourhood<T, P> const nb{window[t - 1], side, j, h};
              value = static_cast<T>(p.op(nb));
            }
            if constexpr (mode == StepMode::guarded) {
              int const y = y0 + j;
              result[j][h] =
                  x_interior[h] && y >= 0 && y < p.ny ? value : centre;
            } else {
              result[j][h] = value;
            }
          }
        }
      }
      if (t < Depth) {
        T* const ring = column + t * level_stride;
#pragma unroll
        for (int j = 0; j < R; ++j) {
          store_columns<T, C>(ring + P::slot(R * u - t * L + j) * P::row_length,
                              result[j]);
#pragma unroll
          for (int h = 0; h < C; ++h) window[t][h][W - R + j] = result[j][h];
        }
      } else {
#pragma unroll
        for (int j = 0; j < R; ++j) {
          int const y = y0 + j;
#pragma unroll
          for (int h = 0; h < C; ++h) {
            if (x_output[h] && y >= y_begin && y < y_end) {
              dst[static_cast<long>(y) * p.stride + h] = result[j][h];
            }
          }
        }
      }
#pragma unroll
      for (int h = 0; h < C; ++h) {
#pragma unroll
        for (int i = 0; i + R < W; ++i) {
          window[t - 1][h][i] = window[t - 1][h][i + R];
        }
      }
    }
    if constexpr (Staged) {
      async.wait();
#pragma unroll
      for (int j = 0; j < R; ++j) {
#pragma unroll
        for (int h = 0; h < C; ++h) {
          incoming[j][h] = staged[(read_slot * R + j) * P::width + h];
        }
      }
      read_slot = read_slot == stages ? 0 : read_slot + 1;
    }
#pragma unroll
    for (int j = 0; j < R; ++j) {
      store_columns<T, C>(column + P::slot(R * u + j) * P::row_length,
                          incoming[j]);
#pragma unroll
      for (int h = 0; h < C; ++h) {
        window[0][h][W - R + j] = incoming[j][h];
        if constexpr (!Staged) incoming[j][h] = next[j][h];
      }
    }
  };

  using Compute = std::integral_constant<StepMode, StepMode::compute>;
  using Copy = std::integral_constant<StepMode, StepMode::copy>;
  using Guarded = std::integral_constant<StepMode, StepMode::guarded>;
  unsigned const interior_lanes = __ballot_sync(~0u, all_interior);
  unsigned const touching_lanes = __ballot_sync(~0u, any_interior);
  for (int k0 = 0; k0 < iterations; k0 += U) {
    // Rows every level touches in these U iterations.
    bool const rows_interior =
        first + R * k0 - Depth * L >= 0 && first + R * (k0 + U) - L <= p.ny;
    [&]<int... Phase>(std::integer_sequence<int, Phase...>) {
      (
          [&] {
            constexpr std::integral_constant<int, Phase> phase{};
            // One call site per mode: each inlines the whole step, and a
            // second copy of one cost instruction-cache misses.
            if (touching_lanes == 0u) {
              step(Copy{}, phase, k0 + Phase);
            } else if (rows_interior && interior_lanes == ~0u) {
              step(Compute{}, phase, k0 + Phase);
            } else {
              step(Guarded{}, phase, k0 + Phase);
            }
            __syncthreads();
          }(),
          ...);
    }
    (std::make_integer_sequence<int, U>{});
  }
  // Copies still in flight (rows past the segment) must not land in the
  // next segment's staging slots.
  if constexpr (Staged) RuntimeAsyncCopy::wait_all_but(0);
}

template <class T, class Op, int Depth, bool Staged,
          int Threads = threads_2d<T, Op, Depth>,
          int Rows = rows_2d<T, Op, Depth>,
          int Columns = columns_2d<T, Op, Depth>>
__global__ void __launch_bounds__(Threads, 1)
    temporal_blocking_2d(Params2D<T, Op> const p) {
  using P = Pipeline2D<Op, Threads, Rows, Columns>;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* const queue = reinterpret_cast<T*>(shared_raw);
  // Slots not yet written in a segment are read only by cells whose results
  // are discarded; zero them once so those stay finite.
  for (int k = threadIdx.x; k < Depth * P::ring * P::row_length; k += Threads) {
    queue[k] = T(0);
  }
  __syncthreads();
  T* const column = queue + P::pad + threadIdx.x * Columns;
  T* const staged =
      queue + Depth * P::ring * P::row_length + threadIdx.x * Columns;

  for_each_segment(p, blockIdx.x, [&](int strip, int y_begin, int y_end) {
    stream_segment<T, Op, Depth, Staged, Threads, Rows, Columns>(
        p, column, staged, strip, y_begin, y_end);
  });
}

template <class T, class Op>
struct Params1D {
  T const* in;
  T* out;
  Op op;
  int nx;
  int halo;
  int depth;
  int valid_width;  // output cells per block
};

/// Cells a rank-1 block holds (valid cells plus both halos).
inline constexpr int tile_cells_1d = 16 * threads_per_block;

template <class T, int Radius>
constexpr std::size_t shared_bytes_1d() {
  return 2 * static_cast<std::size_t>(tile_cells_1d + 2 * Radius) * sizeof(T);
}

template <class T, class Op>
__global__ void __launch_bounds__(threads_per_block, 1)
    temporal_blocking_1d(Params1D<T, Op> const p) {
  constexpr int r = Op::radius;
  constexpr int length = tile_cells_1d + 2 * r;
  extern __shared__ unsigned char shared_raw[];
  T* const buffer = reinterpret_cast<T*>(shared_raw);  // two, ping-pong
  int const halo_width = p.depth * r;
  int const x_base = static_cast<int>(blockIdx.x) * p.valid_width - halo_width;
  T const* const src = p.in + p.halo;

  for (int k = threadIdx.x; k < length; k += threads_per_block) {
    int const x = x_base + k - r;
    T const v = (x >= -p.halo && x < p.nx + p.halo) ? src[x] : T(0);
    buffer[k] = v;
    buffer[length + k] = v;
  }
  __syncthreads();
  for (int t = 1; t <= p.depth; ++t) {
    T const* const from = buffer + ((t - 1) & 1) * length;
    T* const to = buffer + (t & 1) * length;
    for (int k = threadIdx.x; k < tile_cells_1d; k += threads_per_block) {
      int const x = x_base + k;
      bool const interior = x >= 0 && x < p.nx;
      T const value =
          interior ? static_cast<T>(p.op(
                         stencil::detail::Neighbourhood<T, 1, r>{from + k + r}))
                   : from[k + r];
      if (t < p.depth) {
        to[k + r] = value;
      } else if (interior && k >= halo_width &&
                 k < halo_width + p.valid_width) {
        p.out[p.halo + x] = value;
      }
    }
    __syncthreads();
  }
}

}  // namespace stencil::native_cuda::temporal_blocking
