// SPDX-License-Identifier: Apache-2.0
// Rank-2 temporal blocking with the tile in registers (after paper 004's
// register-resident 1D domains): a warp is a tile of its own. Each lane owns
// `Columns` adjacent columns and the warp streams down a share of a strip
// `Depth` levels deep, one row per level and iteration:
//  - vertical neighbours: each level keeps the last 2r + 1 rows of the level
//    below in registers (a ring indexed by the iteration's phase, so that
//    every index is a compile-time constant once the phases unroll);
//  - horizontal neighbours: the lane's own registers, and the r columns
//    across a lane edge by warp shuffles;
//  - no shared memory and no barrier: the warp's 32 * Columns columns
//    include a halo of Depth * r columns on each side, recomputed by the
//    neighbouring warps' tiles.
// Level t works r + 1 rows behind level t - 1, so a level reads only rows
// the level below finished in earlier iterations; the levels run deepest
// first, each reading its oldest row before the level below overwrites it.
// The levels of an iteration are then independent: the warp's instruction
// parallelism, with a few warps per SM. Input rows are loaded 2r
// iterations ahead.
//
// Against the shared-memory kernel (kernels.hpp), a cell's horizontal taps
// cost 2r shuffles per lane and row (r per side, two per 8-byte value) for
// all its `Columns` cells, where the ring costs a store and two loads per
// cell; the price is the narrower tile's halo. Which kernel a suite row
// runs was measured (docs/decisions/temporal-blocking-2d-warp-tiles.md).
#pragma once

#include <stencil/native_cuda/temporal_blocking/kernels.hpp>

#include <stencil/detail/neighbourhood.hpp>
#include <stencil/traits.hpp>

#include <type_traits>
#include <utility>

namespace stencil::native_cuda::temporal_blocking {

/// Warps per block of the warp-tiled kernel. They share nothing; four
/// warps per block give the scheduler blocks of a size that fill the
/// register file at the kernels' 160-255 registers per thread.
inline constexpr int warp_tiles_per_block = 4;

namespace detail {

/// The accessor a cell of the warp-tiled kernel gives the functor. Taps in
/// the lane's columns read the ring of the level below; the others the
/// values shuffled from the neighbouring lanes (for a star only the cell's
/// own row). `Phase` is the iteration modulo the ring's length.
template <class T, int Radius, int Columns, int Phase, bool Box>
struct WarpTileNeighbourhood {
  using value_type = T;
  static constexpr int ring = 2 * Radius + 1;
  static constexpr int lag = Radius + 1;
  T const (&below)[ring][Columns];
  T const (&left)[ring][Radius];
  T const (&right)[ring][Radius];
  int column;

  /// Ring slot of row `dy` relative to the cell (level t - 1 finished it
  /// `lag - dy` iterations ago).
  __device__ __forceinline__ static constexpr int slot(int dy) {
    return ((Phase - lag + dy) % ring + ring) % ring;
  }
  __device__ __forceinline__ T operator()(int dy, int dx) const {
    stencil::detail::check_offsets<Radius>(dy, dx);
    int const q = column + dx;
    int const row = Box ? dy + Radius : Radius;
    if (q < 0) return left[row][q + Radius];
    if (q >= Columns) return right[row][q - Columns];
    return below[slot(dy)][q];
  }
};

/// Output rows [y_begin, y_end) of `strip`, streamed by one warp.
template <class T, class Op, int Depth, int Columns>
__device__ __forceinline__ void stream_warp_tile(Params2D<T, Op> const& p,
                                                 int strip, int y_begin,
                                                 int y_end) {
  constexpr int r = Op::radius, C = Columns;
  constexpr int S = 2 * r + 1, L = r + 1;
  constexpr bool box = Op::shape != Shape::star;
  static_assert(C >= r, "a lane owns at least radius columns");
  int const lane = static_cast<int>(threadIdx.x) & 31;
  int const x0 = strip * p.valid_width - Depth * r + lane * C;
  ColumnFlags<C> const flags(p, Depth, strip, lane * C);
  auto const& interior = flags.interior;
  auto const& loadable = flags.loadable;
  auto const& output = flags.output;
  bool const warp_interior = __all_sync(~0u, flags.all_interior);
  int const first = first_streamed_row(y_begin, Depth, r);
  int const needed = y_end - first + Depth * L;
  int const iterations = (needed + S - 1) / S * S;
  T const* const src =
      p.in + static_cast<long>(p.halo) * p.stride + p.halo + x0;
  T* const dst = p.out + static_cast<long>(p.halo) * p.stride + p.halo + x0;
  auto load_row = [&](int y, T(&v)[C]) {
    bool const row = y >= -p.halo && y < p.ny + p.halo;
#pragma unroll
    for (int h = 0; h < C; ++h) {
      v[h] =
          row && loadable[h] ? src[static_cast<long>(y) * p.stride + h] : T(0);
    }
  };

  // window[t]: the last S rows level t finished (level 0: the input).
  T window[Depth][S][C] = {};
  T ahead[S][C];  // input rows, S - 1 iterations ahead
#pragma unroll
  for (int s = 0; s < S - 1; ++s) load_row(first + s, ahead[s]);

  auto step = [&](auto phase, auto guarded, int k) {
    constexpr int u = decltype(phase)::value;
    load_row(first + k + S - 1, ahead[(u + S - 1) % S]);
#pragma unroll
    for (int t = Depth; t >= 1; --t) {
      int const y = first + k - t * L;
      using Neighbourhood = WarpTileNeighbourhood<T, r, C, u, box>;
      T left[S][r], right[S][r];
#pragma unroll
      for (int i = 0; i < S; ++i) {
        if (box || i == r) {
#pragma unroll
          for (int j = 0; j < r; ++j) {
            int const s = Neighbourhood::slot(i - r);
            left[i][j] = __shfl_up_sync(~0u, window[t - 1][s][C - r + j], 1);
            right[i][j] = __shfl_down_sync(~0u, window[t - 1][s][j], 1);
          }
        }
      }
      T result[C];
#pragma unroll
      for (int h = 0; h < C; ++h) {
        T const value =
            static_cast<T>(p.op(Neighbourhood{window[t - 1], left, right, h}));
        if constexpr (decltype(guarded)::value) {
          // Boundary cells keep their value at every level.
          T const centre = window[t - 1][Neighbourhood::slot(0)][h];
          result[h] = interior[h] && y >= 0 && y < p.ny ? value : centre;
        } else {
          result[h] = value;
        }
      }
      if (t < Depth) {
#pragma unroll
        for (int h = 0; h < C; ++h) window[t][u][h] = result[h];
      } else if (y >= y_begin && y < y_end) {
#pragma unroll
        for (int h = 0; h < C; ++h) {
          if (output[h]) dst[static_cast<long>(y) * p.stride + h] = result[h];
        }
      }
    }
#pragma unroll
    for (int h = 0; h < C; ++h) window[0][u][h] = ahead[u][h];
  };

  for (int k0 = 0; k0 < iterations; k0 += S) {
    // Rows every level touches in these S iterations.
    bool const rows_interior =
        first + k0 - Depth * L >= 0 && first + k0 + S - L <= p.ny;
    [&]<int... Phase>(std::integer_sequence<int, Phase...>) {
      (
          [&] {
            constexpr std::integral_constant<int, Phase> phase{};
            // The selects only where a boundary is near: they cost the
            // common path its interleaving.
            if (warp_interior && rows_interior) {
              step(phase, std::false_type{}, k0 + Phase);
            } else {
              step(phase, std::true_type{}, k0 + Phase);
            }
          }(),
          ...);
    }
    (std::make_integer_sequence<int, S>{});
  }
}

}  // namespace detail

/// The warp-tiled kernel: warp w of the launch streams share w of the
/// strips' rows laid end to end (`rows_per_block` rows; a share may end in
/// one strip and continue in the next), so every SM gets the same work.
template <class T, class Op, int Depth,
          int Columns = warp_tile_columns_2d<T, Op>()>
__global__ void __launch_bounds__(32 * warp_tiles_per_block, 1)
    temporal_blocking_2d_warp_tiles(Params2D<T, Op> const p) {
  long const share = static_cast<long>(blockIdx.x) * warp_tiles_per_block +
                     static_cast<long>(threadIdx.x) / 32;
  for_each_segment(p, share, [&](int strip, int y_begin, int y_end) {
    detail::stream_warp_tile<T, Op, Depth, Columns>(p, strip, y_begin, y_end);
  });
}

}  // namespace stencil::native_cuda::temporal_blocking
