// SPDX-License-Identifier: Apache-2.0
// Low-occupancy deep temporal blocking (after EBISU, Zhang et al., ICS'23):
// one 256-thread block per SM keeps a strip of the grid on chip for `depth`
// time steps.
//
// Rank 2: a block owns a strip of columns (its valid width plus an
// overlapped halo of depth*radius columns on each side, recomputed by the
// neighbouring strips) and a run of rows, and streams down the rows. Each
// time level t < depth keeps its last 2r+2 rows in a circular queue in
// shared memory. Level t works on row i - t(r+1) while level 0 loads row i:
// this skew (lazy streaming) means every level reads only rows finished in
// earlier iterations, so one barrier per streamed row suffices, however
// deep the blocking.
//
// Rank 1: a block loads a tile plus halo once and runs `depth` steps on it
// in shared memory, ping-ponging two buffers.
#pragma once

#include <stencil/detail/neighbourhood.hpp>

#include <cuda_runtime.h>

namespace stencil::native_cuda::temporal_blocking {

inline constexpr int threads_per_block = 256;

/// Rows of one time level in the circular queue: the 2r+1 rows the next
/// level reads plus the row being written. The ring index is a modulo by
/// this compile-time constant (a multiply and shift); rounding it up to a
/// power of two would cost a quarter of the queue's shared memory at r = 2.
template <int Radius>
inline constexpr int ring_rows = 2 * Radius + 2;

/// The accessor the functor sees in the rank-2 kernel: 2r+1 rows of the
/// previous time level in shared memory, and the centre column.
template <class T, int Radius>
struct RowRingNeighbourhood {
  using value_type = T;
  T const* row[2 * Radius + 1];
  int centre;

  __device__ __forceinline__ T operator()(int dy, int dx) const {
    return row[dy + Radius][centre + dx];
  }
};

template <class T, class Op>
struct Params2D {
  T const* in;
  T* out;
  Op op;
  int nx, ny;
  int halo;    // of the grid's buffers
  int stride;  // padded row length
  int depth;
  int valid_width;    // output columns per strip
  int rows_per_part;  // output rows per streaming partition
};

/// Columns per thread: the instruction-level parallelism of a row. Chosen
/// so a thread moves 16 bytes of each row (two doubles, four floats).
template <class T>
inline constexpr int columns_per_thread = sizeof(T) >= 8 ? 2 : 4;

template <class T>
inline constexpr int block_width_2d =
    threads_per_block * columns_per_thread<T>;

template <class T, int Radius>
constexpr std::size_t shared_bytes_per_level_2d() {
  return static_cast<std::size_t>(ring_rows<Radius>) *
         (block_width_2d<T> + 2 * Radius) * sizeof(T);
}

/// The deepest 2D blocking compiled: what fits in the largest shared memory
/// a block can have today (227 KiB on Hopper), at most 16. Each depth is its
/// own kernel so that the level loop unrolls (see below).
template <class T, int Radius>
inline constexpr int max_compiled_depth_2d = [] {
  int const fit = static_cast<int>(232448 / shared_bytes_per_level_2d<T, Radius>());
  return fit < 16 ? fit : 16;
}();

template <class T, class Op, int Depth>
__global__ void __launch_bounds__(threads_per_block, 1)
    temporal_blocking_2d(Params2D<T, Op> const p) {
  constexpr int r = Op::radius;
  constexpr int ring = ring_rows<r>;
  constexpr int columns = columns_per_thread<T>;
  constexpr int row_length = block_width_2d<T> + 2 * r;  // + pads
  // Keeps ring indices of rows above the first streamed row non-negative.
  constexpr int bias = ring * (Depth + 4);
  extern __shared__ unsigned char shared_raw[];
  T* const queue = reinterpret_cast<T*>(shared_raw);

  constexpr int halo_width = Depth * r;
  int const x_base = static_cast<int>(blockIdx.x) * p.valid_width - halo_width;
  int const y_begin = static_cast<int>(blockIdx.y) * p.rows_per_part;
  int const y_end = min(p.ny, y_begin + p.rows_per_part);
  // Rows streamed through level 0: the partition plus depth*r rows of
  // overlap above and below (or the grid's boundary rows).
  int const first = max(-r, y_begin - halo_width);
  int const last = min(p.ny + r, y_end + halo_width);

  // Pads and rows never loaded are read only by cells whose results are
  // discarded; zero them so those stay finite.
  for (int k = threadIdx.x; k < Depth * ring * row_length;
       k += threads_per_block) {
    queue[k] = T(0);
  }
  __syncthreads();

  // Row y of level t (0 <= t < Depth) starts at this address, pads included.
  auto level_row = [&](int level, int y) {
    return queue + (level * ring + (y + bias) % ring) * row_length;
  };

  for (int i = first; i < last + Depth * (r + 1); ++i) {
    // Issue the next row's loads first: they complete while the levels
    // compute.
    T incoming[columns];
    T const* const src =
        p.in + static_cast<long>(i + p.halo) * p.stride + p.halo;
#pragma unroll
    for (int c = 0; c < columns; ++c) {
      int const x = x_base + static_cast<int>(threadIdx.x) + c * threads_per_block;
      incoming[c] = (i < last && x >= -p.halo && x < p.nx + p.halo) ? src[x]
                                                                    : T(0);
    }
    // All levels read before any level writes: the reads of one level do
    // not wait for another's stores, so the unrolled levels overlap (the
    // instruction-level parallelism a 256-thread block needs). Rows outside
    // the streamed range are computed from stale queue rows and dropped.
    T result[Depth][columns];
#pragma unroll
    for (int t = 1; t <= Depth; ++t) {
      int const y = i - t * (r + 1);
      RowRingNeighbourhood<T, r> nb;
#pragma unroll
      for (int k = 0; k <= 2 * r; ++k) nb.row[k] = level_row(t - 1, y - r + k);
      bool const interior_row = y >= 0 && y < p.ny;
#pragma unroll
      for (int c = 0; c < columns; ++c) {
        int const col = static_cast<int>(threadIdx.x) + c * threads_per_block;
        int const x = x_base + col;
        nb.centre = col + r;
        // Boundary cells keep their value at every time level.
        result[t - 1][c] = (interior_row && x >= 0 && x < p.nx)
                               ? static_cast<T>(p.op(nb))
                               : nb.row[r][col + r];
      }
    }
    if (i < last) {
#pragma unroll
      for (int c = 0; c < columns; ++c) {
        level_row(0, i)[r + static_cast<int>(threadIdx.x) + c * threads_per_block] =
            incoming[c];
      }
    }
#pragma unroll
    for (int t = 1; t < Depth; ++t) {
      int const y = i - t * (r + 1);
      if (y < first || y >= last) continue;  // uniform over the block
      T* const dst = level_row(t, y) + r;
#pragma unroll
      for (int c = 0; c < columns; ++c) {
        dst[static_cast<int>(threadIdx.x) + c * threads_per_block] = result[t - 1][c];
      }
    }
    int const y = i - Depth * (r + 1);
    if (y >= y_begin && y < y_end) {
      T* const dst = p.out + static_cast<long>(y + p.halo) * p.stride + p.halo;
#pragma unroll
      for (int c = 0; c < columns; ++c) {
        int const col = static_cast<int>(threadIdx.x) + c * threads_per_block;
        int const x = x_base + col;
        if (x >= 0 && x < p.nx && col >= halo_width &&
            col < halo_width + p.valid_width) {
          dst[x] = result[Depth - 1][c];
        }
      }
    }
    __syncthreads();
  }
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
          interior ? static_cast<T>(p.op(stencil::detail::Neighbourhood<T, 1>{
                         from + k + r}))
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
