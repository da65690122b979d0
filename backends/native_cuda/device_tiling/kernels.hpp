// SPDX-License-Identifier: Apache-2.0
// Device tiling with deep temporal blocking for rank-3 grids (after EBISU,
// Zhang et al., ICS'23, sections 4.1 and 6.3): the whole GPU works on one
// region of the xy plane at a time. Every block owns a 32x32 tile of it and
// all blocks stream along z together, `depth` time levels deep. A level
// reads the level below from shared memory; the cells of its tile's
// `radius`-wide rim come from the neighbouring blocks through an exchange
// buffer in global memory (which stays in L2), once per streamed plane,
// behind one device-wide barrier.
//
// Level t works `lag` = r + 1 planes behind level t-1, so every plane a
// level reads was finished (and exchanged) in an earlier iteration: one
// device-wide barrier per iteration however deep the blocking, and no
// dependency between the levels inside an iteration. Each level keeps a
// ring of 2r + 2 planes of its tile plus rim in shared memory: the 2r + 1
// the level above reads and the one being written.
//
// A region is a rectangle of tiles, at most one per resident block. When
// the grid's xy plane needs more tiles, it is cut into regions that overlap
// by depth*r cells on each side (recomputed, as the strips of the 2D
// kernel), run one after another; each writes only its core.
#pragma once

#include <native_cuda/common/device.hpp>

#include <stencil/detail/neighbourhood.hpp>
#include <stencil/traits.hpp>

#include <cuda_runtime.h>

#include <cstddef>

namespace stencil::native_cuda::device_tiling {

inline constexpr int tile_x = 32;
inline constexpr int tile_y = 32;
/// 16 warps: the kernel is latency-bound (ncu at 256 threads: 0.38
/// eligible warps per scheduler, `wait` and `barrier` stalls on top), and
/// 512 threads fit in the register file at up to 128 registers each (H200,
/// 2560x352x384, double: j3d7pt 163 -> 170 GCells/s; float 232 -> 268).
inline constexpr int threads_per_block = 512;
/// Tile rows per thread: each warp computes one 32-cell row of the tile
/// per pass.
inline constexpr int rows_per_thread = tile_x * tile_y / threads_per_block;

template <int Radius>
struct TileShape {
  static constexpr int radius = Radius;
  static constexpr int lag = Radius + 1;
  static constexpr int ring = 2 * Radius + 2;
  static constexpr int row = tile_x + 2 * Radius;  // shared row length
  static constexpr int plane = row * (tile_y + 2 * Radius);
  static constexpr int rim_cells = plane - tile_x * tile_y;

  /// Ring slot of plane z. Levels not yet started (or finished) read
  /// planes far below 0; their results are discarded, but their addresses
  /// must stay in the ring.
  __device__ static constexpr int slot(int z) {
    return ((z % ring) + ring) % ring;
  }
};

template <class T, int Radius>
constexpr std::size_t shared_bytes_per_level() {
  using S = TileShape<Radius>;
  return static_cast<std::size_t>(S::ring) * S::plane * sizeof(T);
}

/// Levels 0 (the input) to depth-1 keep rings; level `depth` goes to the
/// output directly.
template <class T, int Radius>
constexpr std::size_t shared_bytes(int depth) {
  return static_cast<std::size_t>(depth) * shared_bytes_per_level<T, Radius>();
}

/// One region: tiles_x * tiles_y blocks, each a 32x32 tile whose first cell
/// is at (y0 + 32 * tile row, x0 + 32 * tile column) of the grid.
struct Region {
  int x0, y0;
  int tiles_x, tiles_y;
  /// Cells written to the output: [core_x0, core_x1) x [core_y0, core_y1),
  /// within the grid.
  int core_x0, core_x1, core_y0, core_y1;
};

template <class T, class Op, class Barrier>
struct Params3D {
  T const* in;
  T* out;
  /// (depth - 1) levels x 2 iteration parities x the region's cells.
  T* exchange;
  Op op;
  int nx, ny, nz;
  int halo;
  int stride_y, stride_z;  // of the grid's padded buffers
  Region region;
  Barrier barrier;
};

template <class T, class Op, int Depth, class Barrier>
__global__ void __launch_bounds__(threads_per_block, 1)
    device_tiling_3d(Params3D<T, Op, Barrier> const p) {
  constexpr int r = Op::radius;
  using S = TileShape<r>;
  constexpr int L = S::lag;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* const rings = reinterpret_cast<T*>(shared_raw);
  auto level_plane = [&](int level, int z) {
    return rings + (level * S::ring + S::slot(z)) * S::plane;
  };

  Region const& g = p.region;
  int const tile = static_cast<int>(blockIdx.x);
  int const tile_col = tile % g.tiles_x;
  int const tile_row = tile / g.tiles_x;
  int const x_origin = g.x0 + tile_col * tile_x;  // grid x of tile cell 0
  int const y_origin = g.y0 + tile_row * tile_y;
  int const region_nx = g.tiles_x * tile_x;
  int const region_ny = g.tiles_y * tile_y;
  long const region_cells = static_cast<long>(region_nx) * region_ny;

  int const lx = static_cast<int>(threadIdx.x) % tile_x;
  int const ly0 = static_cast<int>(threadIdx.x) / tile_x;
  constexpr int row_step = threads_per_block / tile_x;
  int const gx = x_origin + lx;
  bool const x_inside = gx >= 0 && gx < p.nx;
  bool const x_core = gx >= g.core_x0 && gx < g.core_x1;

  auto grid_index = [&](int z, int y, int x) {
    return static_cast<long>(z + p.halo) * p.stride_z +
           static_cast<long>(y + p.halo) * p.stride_y + (x + p.halo);
  };
  // The rim of a tile: the cells of the shared plane outside the 32x32
  // interior, `rim_per_thread` per thread, and where each comes from: the
  // exchange (a cell of the grid that a tile of this region computes) or
  // the input (fixed boundary cells, which never change; and, at a region's
  // edge inside the grid, cells only the overlap reads).
  struct RimCell {
    bool valid, from_exchange, input_inside;
    int shared_offset;
    long exchange_offset, input_offset;
  };
  constexpr int rim_per_thread =
      (S::rim_cells + threads_per_block - 1) / threads_per_block;
  RimCell rim[rim_per_thread];
#pragma unroll
  for (int i = 0; i < rim_per_thread; ++i) {
    int const k = static_cast<int>(threadIdx.x) + i * threads_per_block;
    constexpr int band = r * S::row;  // top and bottom bands
    int sy, sx;
    if (k < band) {
      sy = k / S::row;
      sx = k % S::row;
    } else if (k < 2 * band) {
      sy = tile_y + r + (k - band) / S::row;
      sx = (k - band) % S::row;
    } else {
      int const side = k - 2 * band;  // left and right bands, 2r per row
      sy = r + side / (2 * r);
      int const c = side % (2 * r);
      sx = c < r ? c : tile_x + c;
    }
    int const y = y_origin + sy - r, x = x_origin + sx - r;
    RimCell& c = rim[i];
    c.valid = k < S::rim_cells;
    c.shared_offset = c.valid ? sy * S::row + sx : 0;
    bool const in_grid = y >= 0 && y < p.ny && x >= 0 && x < p.nx;
    bool const in_region =
        y >= g.y0 && y < g.y0 + region_ny && x >= g.x0 && x < g.x0 + region_nx;
    c.from_exchange = c.valid && in_grid && in_region;
    c.exchange_offset =
        c.from_exchange ? static_cast<long>(y - g.y0) * region_nx + (x - g.x0)
                        : 0;
    c.input_inside = c.valid && !c.from_exchange && y >= -p.halo &&
                     y < p.ny + p.halo && x >= -p.halo && x < p.nx + p.halo;
    c.input_offset = c.input_inside ? grid_index(0, y, x) : 0;
  }

  for (long k = threadIdx.x; k < static_cast<long>(Depth) * S::ring * S::plane;
       k += threads_per_block) {
    rings[k] = T(0);
  }

  // The level-0 plane is loaded one iteration ahead: its loads are in
  // flight during the barrier and the rim exchange. Thread-invariant parts
  // of each loaded cell's address are computed once.
  constexpr int loads = (S::plane + threads_per_block - 1) / threads_per_block;
  long input_offset[loads];
  bool input_inside[loads];
#pragma unroll
  for (int i = 0; i < loads; ++i) {
    int const k = static_cast<int>(threadIdx.x) + i * threads_per_block;
    int const y = y_origin + k / S::row - r, x = x_origin + k % S::row - r;
    input_inside[i] = k < S::plane && y >= -p.halo && y < p.ny + p.halo &&
                      x >= -p.halo && x < p.nx + p.halo;
    input_offset[i] = input_inside[i] ? grid_index(0, y, x) : 0;
  }
  T incoming[loads];
  auto fetch_input = [&](int z) {
    bool const z_inside = z >= -p.halo && z < p.nz + p.halo;
#pragma unroll
    for (int i = 0; i < loads; ++i) {
      incoming[i] =
          z_inside && input_inside[i]
              ? p.in[input_offset[i] + static_cast<long>(z) * p.stride_z]
              : T(0);
    }
  };
  fetch_input(-r);
  __syncthreads();

  int const iterations = p.nz + r + Depth * L;
  for (int it = 0; it < iterations; ++it) {
    int const parity = it & 1;
    // Levels 1..Depth: level t computes plane it - r - t*lag. All levels
    // read first, then all write: the slots differ, but the compiler cannot
    // know that, and reads after writes would serialise the levels.
    T values[Depth][rows_per_thread];
#pragma unroll
    for (int t = 1; t <= Depth; ++t) {
      int const z = it - r - t * L;
      bool const z_inside = z >= 0 && z < p.nz;
      stencil::detail::PlaneRingNeighbourhood<T, r> nb{};
#pragma unroll
      for (int dz = -r; dz <= r; ++dz) {
        nb.plane[dz + r] = level_plane(t - 1, z + dz);
      }
      nb.stride_y = S::row;
#pragma unroll
      for (int j = 0; j < rows_per_thread; ++j) {
        int const ly = ly0 + j * row_step;
        int const gy = y_origin + ly;
        nb.centre = (ly + r) * S::row + lx + r;
        bool const interior = z_inside && x_inside && gy >= 0 && gy < p.ny;
        T const centre = nb.plane[r][nb.centre];
        values[t - 1][j] = interior ? static_cast<T>(p.op(nb)) : centre;
      }
    }
#pragma unroll
    for (int t = 1; t <= Depth; ++t) {
      int const z = it - r - t * L;
      bool const wanted =
          t < Depth ? (z >= -r && z < p.nz + r) : (z >= 0 && z < p.nz);
      if (!wanted) continue;
      T* const exchange =
          p.exchange + (static_cast<long>(t - 1) * 2 + parity) * region_cells;
#pragma unroll
      for (int j = 0; j < rows_per_thread; ++j) {
        int const ly = ly0 + j * row_step;
        int const gy = y_origin + ly;
        T const value = values[t - 1][j];
        if (t < Depth) {
          level_plane(t, z)[(ly + r) * S::row + lx + r] = value;
          bool const rim_source =
              lx < r || lx >= tile_x - r || ly < r || ly >= tile_y - r;
          if (rim_source) {
            exchange[static_cast<long>(gy - g.y0) * region_nx + (gx - g.x0)] =
                value;
          }
        } else if (z >= 0 && x_inside && x_core && gy >= g.core_y0 &&
                   gy < g.core_y1 && gy < p.ny) {
          p.out[grid_index(z, gy, gx)] = value;
        }
      }
    }
    // Level 0: the input plane it - r, with its rim, loaded last iteration.
    if (it - r < p.nz + r) {
      T* const plane = level_plane(0, it - r);
#pragma unroll
      for (int i = 0; i < loads; ++i) {
        int const k = static_cast<int>(threadIdx.x) + i * threads_per_block;
        if (k < S::plane) plane[k] = incoming[i];
      }
      fetch_input(it - r + 1);
    }
    if constexpr (Depth > 1) {
      p.barrier.sync();
    } else {
      __syncthreads();  // one level: nothing to exchange
    }
    // The rims of the planes levels 1..Depth-1 computed in this iteration:
    // from the blocks that computed them, or fixed boundary values. Every
    // level's loads are issued before any store, so their L2 latencies
    // overlap instead of adding up.
    if constexpr (Depth > 1) {
      T rim_values[Depth - 1][rim_per_thread];
#pragma unroll
      for (int t = 1; t < Depth; ++t) {
        int const z = it - r - t * L;
        bool const z_padded = z >= -p.halo && z < p.nz + p.halo;
        T const* const exchange =
            p.exchange + (static_cast<long>(t - 1) * 2 + parity) * region_cells;
#pragma unroll
        for (int i = 0; i < rim_per_thread; ++i) {
          rim_values[t - 1][i] = rim[i].from_exchange
                                     ? exchange[rim[i].exchange_offset]
                                 : rim[i].input_inside && z_padded
                                     ? p.in[rim[i].input_offset +
                                            static_cast<long>(z) * p.stride_z]
                                     : T(0);
        }
      }
#pragma unroll
      for (int t = 1; t < Depth; ++t) {
        int const z = it - r - t * L;
        if (z < -r || z >= p.nz + r) continue;
        T* const plane = level_plane(t, z);
#pragma unroll
        for (int i = 0; i < rim_per_thread; ++i) {
          if (rim[i].valid) plane[rim[i].shared_offset] = rim_values[t - 1][i];
        }
      }
    }
    __syncthreads();
  }
}

}  // namespace stencil::native_cuda::device_tiling
