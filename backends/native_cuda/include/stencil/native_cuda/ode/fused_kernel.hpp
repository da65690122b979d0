// SPDX-License-Identifier: Apache-2.0
// The fused Runge-Kutta step of stencil::ode (paper 001's tiled
// integrator, on Hopper's thread-block clusters): one launch runs every
// stage of a step.
//
// A tile is a cluster of blocks. It loads y_n over the tile, which reaches
// stages x radius cells past the cells whose y_n+1 it writes, and runs the
// stages in place, the region each stage computes shrinking by the radius
// (a trapezoid in time). Each axis has its own radius where the fields
// declare `within` (fused_radius). Inside the cluster nothing is recomputed:
// each block owns a box of the tile, and after each stage reads its neighbours'
// edges of the new stage value from their shared memory (distributed
// shared memory) past a cluster barrier. Only the cluster's own rim is
// recomputed, by the neighbouring cluster.
//
// A stage value Y_i is read at neighbours, so it lives in shared memory
// (two slots that alternate, so that a block may write Y_i+1 while a
// slower one still reads Y_i's edges). k_1..k_s and y_n are read only at
// their own cell, by the thread that owns it, so they stay in registers:
// a step moves y_n in and y_n+1 out, and nothing else, through DRAM.
//
// Halo cells of a mirrored side (neumann, reflecting) are refreshed after
// each stage from the interior cells they mirror, read from whichever
// block owns them; a fixed side's halo is loaded once and never written;
// a periodic axis wraps the tile around the domain and has no halo.
//
// Where one cluster holds the whole domain (Resident), there are no rims:
// the tile is the domain, every stage computes every interior cell, and the
// launch runs several steps, y_n+1 staying in shared memory and registers
// as the next step's y_n. A periodic axis then has a halo, refreshed after
// each stage like a mirrored one, from the cell it wraps to. DRAM is read
// at the first step and written at the last.
//
// Where clusters do not fit (GlobalBarrier: a GPU without them, or a tile
// of more blocks than a cluster holds), the tile's blocks also write each
// stage value of their box to a buffer of the tile's in global memory, meet
// at a barrier in global memory, and read their neighbours' edges from that
// buffer through L2 (tile_barrier.hpp).
#pragma once

#include <stencil/native_cuda/fields/kernels.hpp>
#include <stencil/native_cuda/ode/cluster_memory.hpp>
#include <stencil/native_cuda/ode/tile_barrier.hpp>

#include <stencil/boundary.hpp>
#include <stencil/detail/fields/accessor.hpp>
#include <stencil/detail/portable/boundary_halo.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/ode/point_rates.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace stencil::native_cuda::ode {

using stencil::native_cuda::fields::for_each_field;

/// Threads per block: 64 along x (two warps per row), 4 rows.
inline constexpr int threads_x = 64;
inline constexpr int threads_y = 4;
inline constexpr int threads_per_block = threads_x * threads_y;
inline constexpr int max_stages = 8;

/// Cells of the block's box each thread owns (rows, or rows of two columns:
/// fused_columns): k_1..k_s of every written field at each of its cells
/// stay in registers, about 32 values a thread.
/// In double at four stages that spills a few registers, which costs less
/// than half the cells would: each cell more shares the two barriers of a
/// stage. More than 4 (8 for one written field at four stages) left too few
/// blocks to fill the GPU up to N = 128 and gained little beyond
/// (docs/decisions/ode-fused-plan.md).
__host__ __device__ constexpr int cells_per_thread(int stages, int written) {
  int const cells = 32 / (stages * written);
  return cells < 1 ? 1 : (cells > 4 ? 4 : cells);
}

/// Blocks a multiprocessor runs at once, as the kernel is compiled for:
/// 4 (64 registers a thread) where k_1..k_s of a thread's cells fit in 32
/// registers, else 3 (80). Where k is larger, 64 registers spill: two
/// fields at four stages in double lost to the fourth block, the other
/// cases moved by a few percent either way (docs/decisions/ode-fused-plan.md).
template <class T, int Stages, int Written>
__host__ __device__ constexpr int fused_blocks_per_sm() {
  int const k_bytes = Stages * cells_per_thread(Stages, Written) * Written *
                      static_cast<int>(sizeof(T));
  return k_bytes <= 128 ? 4 : 3;
}

/// Rows a thread owns where one cluster holds the domain: one block a
/// multiprocessor, so up to 255 registers, and twice the cells of a tiled
/// block where k_1..k_s still fit in about 64 values (8 for one written
/// field), so that a cluster of 16 blocks holds 256 x 128 cells.
__host__ __device__ constexpr int resident_cells_per_thread(int stages,
                                                            int written) {
  int const cells = 64 / (stages * written);
  return cells < 1 ? 1 : (cells > 8 ? 8 : cells);
}

/// The blocks a multiprocessor runs, tiled or resident.
template <class T, int Stages, int Written, bool Resident>
__host__ __device__ constexpr int fused_min_blocks() {
  return Resident ? 1 : fused_blocks_per_sm<T, Stages, Written>();
}

template <int Stages>
struct FusedTableau {
  double a[Stages][Stages] = {};
  double b[Stages] = {};
  double e[Stages] = {};  ///< b - bhat: the error estimate's weights
  double c[Stages] = {};
};

template <class T, class Rhs, int Stages>
struct FusedParams {
  using Fields = typename Rhs::fields;
  T const* in[Fields::count] = {};     ///< y_n and the coefficients
  T* out[Fields::written_count] = {};  ///< y_n+1 (written fields)
  double* error_squares = nullptr;     ///< summed scaled errors, or null
  Rhs rhs;
  stencil::detail::PaddedLayout layout;
  int cluster_x = 1, cluster_y = 1;  ///< blocks per cluster (or tile)
  int tiles_x = 1;                   ///< tiles along x
  /// GlobalBarrier: the buffers ([slot][block of the tile][parity][written
  /// field][grown-box cell]) and the counters.
  T* exchange = nullptr;
  TileCounters counters;
  bool wrap[2] = {false, false};     ///< x, y periodic
  /// [x, y][low, high]; neumann and reflecting sides are refreshed after
  /// every stage, the others never (a periodic axis is wrapped instead).
  Boundary side[2][2] = {};
  /// Step s of the launch starts at t + (first + s) dt, as the host's loop
  /// computes it where it does not contract that into an FMA; a tiled
  /// launch runs one step from the state's time, first = 0.
  double t = 0.0, dt = 0.0;
  long long first = 0;
  int steps = 1;
  double absolute = 0.0, relative = 0.0;
  FusedTableau<Stages> tableau;
};

/// The shared-memory slots of field f: two alternating ones for a written
/// field, one for a coefficient.
template <class Fields>
__host__ __device__ constexpr int fused_slot_base(int f) {
  int base = 0;
  for (int g = 0; g < f; ++g) base += Fields::written[g] ? 2 : 1;
  return base;
}

template <class Fields>
inline constexpr int fused_slots = fused_slot_base<Fields>(Fields::count);

/// Where the halo list (an int2 for each grown-box cell) starts behind the
/// slots of `slot_bytes` each, and the shared memory of a block in all.
template <class Fields>
__host__ __device__ constexpr std::size_t fused_list_offset(
    std::size_t slot_bytes) {
  return (fused_slots<Fields> * slot_bytes + 7) / 8 * 8;
}

template <class Fields>
__host__ __device__ constexpr std::size_t fused_shared_bytes(
    std::size_t slot_cells, std::size_t value_bytes) {
  return fused_list_offset<Fields>(slot_cells * value_bytes) + 8 * slot_cells;
}

/// The index of field `f` among the written fields.
template <class Fields>
__host__ __device__ constexpr int written_index(int f) {
  int index = 0;
  for (int g = 0; g < f; ++g) index += Fields::written[g] ? 1 : 0;
  return index;
}

/// How far the right-hand side's fields are read along x (axis 0) and y.
template <class Fields>
inline constexpr int fused_radius[2] = {
    stencil::detail::largest_radius_along<Fields>(0),
    stencil::detail::largest_radius_along<Fields>(1)};

/// Columns of the block's box each thread owns, threads_x apart so that a
/// warp's loads stay contiguous: two where the fields reach further along
/// x than along y (the interleaved BRUSS2D: 2 values along a row, 1 row)
/// and one field is written (a thread then owns four cells at up to
/// max_stages), which take two rows of each column. A tile's rims are
/// stages x radius deep on each side, so the box twice as wide halves their
/// share along the deeper axis. (Keeping four rows as well doubled k and lost
/// to spills: docs/decisions/ode-fused-plan.md.) A right-hand side that
/// evaluates a point at once (PointRates) takes the two columns as the
/// point's values instead, side by side.
template <class Fields, int Stages>
__host__ __device__ constexpr int fused_columns() {
  static_assert(Stages <= max_stages);
  bool const one = Fields::written_count == 1;
  return one && fused_radius<Fields>[0] > fused_radius<Fields>[1] ? 2 : 1;
}

/// Rows of the box each thread of a tiled block owns.
template <class Fields, int Stages>
__host__ __device__ constexpr int fused_rows() {
  return cells_per_thread(Stages, Fields::written_count) /
         fused_columns<Fields, Stages>();
}

/// The interior cell a halo cell `g` of an axis with `n` cells mirrors
/// (itself where that side is not mirrored).
__device__ __forceinline__ int mirrored(int g, int n, Boundary low,
                                        Boundary high) {
  Boundary const kind = g < 0 ? low : high;
  bool const mirror = (g < 0 || g >= n) && (kind == Boundary::neumann ||
                                            kind == Boundary::reflecting);
  return mirror ? stencil::detail::halo_source(kind, g, n) : g;
}

template <class T, class Rhs, int Stages, bool Resident, bool GlobalBarrier>
__global__ void __launch_bounds__(
    threads_per_block,
    (fused_min_blocks<T, Stages, Rhs::fields::written_count, Resident>()))
    fused_step(FusedParams<T, Rhs, Stages> p) {
  static_assert(!(Resident && GlobalBarrier),
                "stencil: the resident kernel runs on one cluster");
  using Fields = typename Rhs::fields;
  constexpr int W = Fields::written_count;
  constexpr int rx = fused_radius<Fields>[0], ry = fused_radius<Fields>[1];
  constexpr int r[2] = {rx, ry};
  constexpr int reach[2] = {Stages * rx, Stages * ry};
  constexpr int cells = Resident ? resident_cells_per_thread(Stages, W)
                                 : fused_rows<Fields, Stages>();
  constexpr int columns = Resident ? 1 : fused_columns<Fields, Stages>();
  // Cell q of a thread: column q / cells, row q % cells.
  constexpr int thread_cells = cells * columns;
  constexpr int own_x = threads_x * columns;
  constexpr int own_y = threads_y * cells;
  // The block's box grown by the radii: what its stage kernels read.
  constexpr int ex = own_x + 2 * rx;
  constexpr int ey = own_y + 2 * ry;
  constexpr int slot_cells = ex * ey;
  // Grown-box rows each thread loads, in each of its columns.
  constexpr int load_rows = (ey + threads_y - 1) / threads_y;
  // A thread's columns of the box, and one of the 2 rx columns past it.
  constexpr int load_columns = columns + 1;
  static_assert(load_columns * load_rows <= 32,
                "one bit of `valid` per cell loaded");
  static_assert(thread_cells <= 32, "one bit of `exported` per cell");
  static_assert(2 * rx <= threads_x, "a thread loads one column past the box");
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* const shared = reinterpret_cast<T*>(shared_raw);

  int const thread = static_cast<int>(threadIdx.y * threads_x + threadIdx.x);
  int const n[2] = {p.layout.nx, p.layout.ny};
  int const tile[2] = {p.cluster_x * own_x, p.cluster_y * own_y};
  dim3 member;
  int cluster_index[2];
  // GlobalBarrier: the block's tile and place in it, from its ticket; the
  // tile's buffer slot, and how many tiles held it before.
  int rank = 0, exchange_slot = 0;
  unsigned generation = 0;
  if constexpr (GlobalBarrier) {
    __shared__ unsigned ticket;
    if (thread == 0) ticket = atomicAdd(p.counters.ticket, 1u);
    __syncthreads();
    int const blocks = p.cluster_x * p.cluster_y;
    int const tile_index = static_cast<int>(ticket) / blocks;
    rank = static_cast<int>(ticket) % blocks;
    member = dim3(rank % p.cluster_x, rank / p.cluster_x, 0);
    cluster_index[0] = tile_index % p.tiles_x;
    cluster_index[1] = tile_index / p.tiles_x;
    exchange_slot = tile_index % p.counters.slots;
    generation = static_cast<unsigned>(tile_index / p.counters.slots);
  } else {
    member = cluster_block_index();
    cluster_index[0] = static_cast<int>(blockIdx.x) / p.cluster_x;
    cluster_index[1] = static_cast<int>(blockIdx.y) / p.cluster_y;
  }
  // Domain coordinate of tile cell 0, and of this block's box, per axis.
  int origin[2];
  for (int a = 0; a < 2; ++a) {
    origin[a] =
        Resident ? 0 : cluster_index[a] * (tile[a] - 2 * reach[a]) - reach[a];
  }
  // A resident tile's periodic axis has a halo (refreshed like a mirrored
  // one); a tiled one wraps around the domain.
  bool const wrap[2] = {!Resident && p.wrap[0], !Resident && p.wrap[1]};
  int const box[2] = {static_cast<int>(member.x) * own_x,
                      static_cast<int>(member.y) * own_y};
  auto slot = [&](int s) { return shared + s * slot_cells; };
  auto local = [&](int x, int y) {  // tile cell -> index in a block's slot
    return (y - box[1] + ry) * ex + (x - box[0] + rx);
  };
  auto domain = [&](int a, int c) {
    int const g = c + origin[a];
    return wrap[a] ? ((g % n[a]) + n[a]) % n[a] : g;
  };
  auto in_padded = [&](int a, int g) {
    return wrap[a] || (g >= -p.layout.halo && g < n[a] + p.layout.halo);
  };
  auto interior = [&](int a, int g) { return wrap[a] || (g >= 0 && g < n[a]); };
  // The tile coordinates a block's grown box may hold: a resident tile's
  // halo lies before cell 0 and past its last cell.
  auto in_tile = [&](int a, int c) {
    int const rim = Resident ? r[a] : 0;
    return c >= -rim && c < tile[a] + rim;
  };
  // Stage i computes the interior cells at least (i + 1) r from the tile's
  // edge along each axis of radius r (everything they read is valid after
  // stage i - 1): the stages that may compute a cell at tile coordinate c
  // along axis a (0 outside the domain); a cell takes the fewer of its two.
  auto stages_along = [&](int a, int c) {
    if constexpr (Resident) return interior(a, domain(a, c)) ? Stages : 0;
    int const d = c < tile[a] - 1 - c ? c : tile[a] - 1 - c;
    int const along = r[a] > 0 ? d / (r[a] > 0 ? r[a] : 1) : Stages;
    bool const in = interior(a, domain(a, c));
    return in ? (along < Stages ? along : Stages) : 0;
  };

  // One pass over the grown box (within the padded array) loads every
  // field, a written one into both slots so that a fixed halo holds in
  // either. A thread loads its own columns of the box and, where it has
  // one, one of the 2 rx columns past the box's, on every threads_y-th row:
  // what decides whether a cell is loaded splits into a part per column,
  // worked out once, and one per row. Every load is issued before the first
  // store: a store right behind its load waited for DRAM once per cell.
  auto column = [&](int lx, int& gx) {  // is grown-box column lx loaded
    int const cx = box[0] - rx + lx;
    gx = domain(0, cx);
    return in_tile(0, cx) && in_padded(0, gx);
  };
  int lx[load_columns], gx_load[load_columns];
  bool column_loaded[load_columns];
#pragma unroll
  for (int c = 0; c < load_columns; ++c) {
    lx[c] = static_cast<int>(threadIdx.x) + threads_x * c;
    column_loaded[c] =
        (c < columns || static_cast<int>(threadIdx.x) < 2 * rx) &&
        column(lx[c], gx_load[c]);
  }
  T loaded[load_rows][load_columns][Fields::count];
  unsigned valid = 0;  // bit load_columns j + c: row j's cell of column c
#pragma unroll
  for (int j = 0; j < load_rows; ++j) {
    int const ly = static_cast<int>(threadIdx.y) + threads_y * j;
    int const cy = box[1] - ry + ly;
    int const gy = domain(1, cy);
    if (ly >= ey || !in_tile(1, cy) || !in_padded(1, gy)) continue;
    std::int64_t const row = p.layout.template offset<std::int64_t>(0, gy, 0);
#pragma unroll
    for (int c = 0; c < load_columns; ++c) {
      if (!column_loaded[c]) continue;
      valid |= 1u << (load_columns * j + c);
      for_each_field<Fields>([&](auto field) {
        constexpr int f = decltype(field)::value;
        loaded[j][c][f] = p.in[f][row + gx_load[c]];
      });
    }
  }
#pragma unroll
  for (int j = 0; j < load_rows; ++j) {
#pragma unroll
    for (int c = 0; c < load_columns; ++c) {
      if ((valid & (1u << (load_columns * j + c))) == 0) continue;
      int const at =
          (static_cast<int>(threadIdx.y) + threads_y * j) * ex + lx[c];
      for_each_field<Fields>([&](auto field) {
        constexpr int f = decltype(field)::value;
        constexpr int base = fused_slot_base<Fields>(f);
        slot(base)[at] = loaded[j][c][f];
        if constexpr (Fields::written[f]) slot(base + 1)[at] = loaded[j][c][f];
      });
    }
  }

  // The cells the block refreshes after each stage, the same every stage: a
  // cell of another block's box, taken from it, or a halo cell of a
  // mirrored side, taken from the interior cell it mirrors (owned by
  // whichever block). Those are few, so the list behind the slots deals
  // them out one to a thread: a thread then waits for one load from another
  // block per field and stage, not one per grown-box cell it would
  // otherwise scan. Only the ring around the box is searched, and the box
  // itself only where it reaches past the domain's edge: searching every
  // grown-box cell put the list's branches on nearly every warp (each row
  // has ring cells) and cost more instructions than the loads.
  // GlobalBarrier: where block `b` of this tile keeps its buffers.
  auto exchange_block = [&](int b) {
    return ((exchange_slot * p.cluster_x * p.cluster_y + b) * 2 * W) *
           slot_cells;
  };
  __shared__ int halo_count;
  auto* const halo_list = reinterpret_cast<int2*>(
      shared_raw + fused_list_offset<Fields>(slot_cells * sizeof(T)));
  if (thread == 0) halo_count = 0;
  __syncthreads();
  // Where the grown box lies inside the domain on both axes and neither
  // wraps (most blocks of a large domain), a ring cell is taken from the
  // same tile cell in the block that owns it, and none of the tests of
  // source_of applies: skipping them made the tiled steps faster
  // (docs/decisions/ode-fused-plan.md).
  bool inside = true;
  for (int a = 0; a < 2; ++a) {
    int const first = box[a] - r[a] + origin[a];
    int const extent = (a == 0 ? own_x : own_y) + 2 * r[a];
    inside = inside && !wrap[a] && first >= 0 && first + extent <= n[a];
  }
  // Where refreshed cell (cx, cy) of the tile is taken from, or false where
  // it is computed here or keeps a fixed value.
  auto source_of = [&](int cx, int cy, int(&source)[2]) {
    int const g[2] = {domain(0, cx), domain(1, cy)};
    if (!in_padded(0, g[0]) || !in_padded(1, g[1])) return false;
    bool const own = cx >= box[0] && cx < box[0] + own_x && cy >= box[1] &&
                     cy < box[1] + own_y;
    bool const halo = !interior(0, g[0]) || !interior(1, g[1]);
    if (own && !halo) return false;  // computed by this block
    for (int a = 0; a < 2; ++a) {
      int const c = a == 0 ? cx : cy;
      if (wrap[a]) {
        source[a] = c;
      } else if (Resident && p.wrap[a]) {
        source[a] = ((g[a] % n[a]) + n[a]) % n[a];
      } else {
        source[a] =
            mirrored(g[a], n[a], p.side[a][0], p.side[a][1]) - origin[a];
      }
    }
    return !(halo && source[0] == cx && source[1] == cy);  // fixed
  };
  auto list_if_refreshed = [&](int lx, int ly) {
    int const cx = box[0] - rx + lx, cy = box[1] - ry + ly;
    if (!in_tile(0, cx) || !in_tile(1, cy)) return;
    int source[2] = {cx, cy};
    if (!inside && !source_of(cx, cy, source)) return;
    // Only a cell no computed cell reads mirrors one outside the tile.
    if (source[0] < 0 || source[1] < 0 || source[0] >= tile[0] ||
        source[1] >= tile[1]) {
      return;
    }
    int const owner_x = source[0] / own_x;
    int const owner_y = source[1] / own_y;
    int const from = (source[1] - owner_y * own_y + ry) * ex +
                     (source[0] - owner_x * own_x + rx);
    // `to` in this block's slot, and where the cell is taken from: the
    // cluster address in the owner's slot 0 (a later slot is a fixed offset
    // on), or the index in the owner's buffer of parity 0 and field 0.
    int const owner = owner_y * p.cluster_x + owner_x;
    int address;
    if constexpr (GlobalBarrier) {
      address = exchange_block(owner) + from;
    } else {
      address = static_cast<int>(
          cluster_address(shared + from, static_cast<unsigned>(owner)));
    }
    halo_list[atomicAdd(&halo_count, 1)] = make_int2(ly * ex + lx, address);
  };
  // The ring: ry rows above and below the box, then rx columns each side of
  // its rows.
  constexpr int band = ry * ex;
  constexpr int ring = slot_cells - own_x * own_y;
  constexpr int side_width = 2 * rx > 0 ? 2 * rx : 1;
  for (int e = thread; e < ring; e += threads_per_block) {
    if (e < 2 * band) {
      bool const above = e < band;
      int const b = above ? e : e - band;
      list_if_refreshed(b % ex, b / ex + (above ? 0 : ry + own_y));
    } else {
      int const s = e - 2 * band;
      int const c = s % side_width;
      list_if_refreshed(c < rx ? c : own_x + c, ry + s / side_width);
    }
  }
  bool past_edge = false;
  for (int a = 0; a < 2; ++a) {
    int const first = box[a] + origin[a];
    int const extent = a == 0 ? own_x : own_y;
    past_edge = past_edge || (!wrap[a] && (first < 0 || first + extent > n[a]));
  }
  if (past_edge) {
    for (int o = thread; o < own_x * own_y; o += threads_per_block) {
      list_if_refreshed(rx + o % own_x, ry + o / own_x);
    }
  }
  __syncthreads();
  int const halos = halo_count;
  if constexpr (GlobalBarrier && Stages > 1) {
    // The tiles that held this buffer before are done reading it (a
    // one-stage method exchanges nothing).
    wait_until(p.counters.done + exchange_slot,
               generation * static_cast<unsigned>(p.cluster_x * p.cluster_y),
               thread == 0);
  }

  // The thread's cells: columns box_x + threadIdx.x + threads_x v (or, a
  // point at once, box_x + 2 threadIdx.x + v), rows box_y + threadIdx.y +
  // threads_y m; cell q is column q / cells, row q % cells. A cell outside
  // the domain (a fixed or mirrored halo) is evaluated too, its result never
  // stored, at the nearest interior position: the right-hand side then only
  // ever sees positions it would in Unfused.
  auto evaluated_at = [&](int a, int c) {
    int const g = domain(a, c);
    return g < 0 ? 0 : (g >= n[a] ? n[a] - 1 : g);
  };
  // A point at once (PointRates): a thread's two columns are the two
  // values of a point, and a warp's points lie side by side, so that each
  // neighbouring pair is one aligned 16-byte (8 in float) load. The
  // right-hand side then loads and computes what it shares between the two
  // values once, and no warp diverges on which value it computes. An even
  // radius along x keeps every tile's origin, and so each point's first
  // value, at an even x.
  constexpr bool points = columns == 2 && W == 1 && Fields::count == 1 &&
                          rx % 2 == 0 && stencil::ode::PointRates<Rhs, T>;
  int x[columns], gx[columns], stages_x[columns];
#pragma unroll
  for (int v = 0; v < columns; ++v) {
    x[v] = points ? box[0] + 2 * static_cast<int>(threadIdx.x) + v
                  : box[0] + static_cast<int>(threadIdx.x) + threads_x * v;
    gx[v] = evaluated_at(0, x[v]);
    stages_x[v] = stages_along(0, x[v]);
  }
  T y_n[thread_cells][W];
  T k[Stages][thread_cells][W];
  int computed_by[thread_cells];  // cell q is stored by stages 0..computed_by-1
  int gy[cells];
#pragma unroll
  for (int m = 0; m < cells; ++m) {
    int const y = box[1] + static_cast<int>(threadIdx.y) + threads_y * m;
    int const stages_y = stages_along(1, y);
    gy[m] = evaluated_at(1, y);
#pragma unroll
    for (int v = 0; v < columns; ++v) {
      int const q = v * cells + m;
      for_each_field<Fields>([&](auto field) {
        constexpr int f = decltype(field)::value;
        if constexpr (Fields::written[f]) {
          y_n[q][written_index<Fields>(f)] =
              slot(fused_slot_base<Fields>(f))[local(x[v], y)];
        }
      });
      computed_by[q] = stages_x[v] < stages_y ? stages_x[v] : stages_y;
    }
  }
  // GlobalBarrier: the cells other blocks read, whose stage values go to the
  // buffer (bit m: cell m), as paper 001 writes only what is read. Those
  // within the radius of the box's edge, which the neighbours' grown boxes
  // reach, and those a mirrored halo copies: within the halo's width of the
  // domain's edge (halo_source), in any block of the tile.
  unsigned exported = 0;
  if constexpr (GlobalBarrier) {
    auto near_edge = [&](int a, int c) {
      int const g = domain(a, c);
      return !wrap[a] && (g <= p.layout.halo || g >= n[a] - 1 - p.layout.halo);
    };
#pragma unroll
    for (int q = 0; q < thread_cells; ++q) {
      int const v = q / cells, m = q % cells;
      int const lx = x[v] - box[0];
      int const ly = static_cast<int>(threadIdx.y) + threads_y * m;
      bool const column = lx < rx || lx >= own_x - rx || near_edge(0, x[v]);
      bool const row = ly < ry || ly >= own_y - ry || near_edge(1, box[1] + ly);
      if (column || row) exported |= 1u << q;
    }
  }

  double error_squares = 0.0;

  int const steps = Resident ? p.steps : 1;
  for (int s = 0; s < steps; ++s) {
    bool const last_step = s + 1 == steps;
    // Stage i of step s reads slot (s Stages + i) mod 2.
    int const parity = Stages % 2 == 1 ? (s & 1) : 0;
    // Rounded as the host's loop rounds t0 + n dt (no contraction to an FMA).
    double const t_step =
        __dadd_rn(p.t, __dmul_rn(static_cast<double>(p.first + s), p.dt));
#pragma unroll
  for (int i = 0; i < Stages; ++i) {
    int const current = (i + parity) & 1;
    stencil::detail::FieldBuffers<T, Fields> buffers;
    for_each_field<Fields>([&](auto field) {
      constexpr int f = decltype(field)::value;
      constexpr bool written = Fields::written[f];
      buffers.level[f][0] =
          slot(fused_slot_base<Fields>(f) + (written ? current : 0));
    });
    double const t = t_step + p.tableau.c[i] * p.dt;
    // Every cell's right-hand side first, with no branch between them, so
    // that the compiler interleaves their shared-memory loads; a cell
    // outside this stage's trapezoid reads stale neighbours and its result
    // is dropped below. (A branch per cell kept each cell's loads apart.)
    if constexpr (points) {
#pragma unroll
      for (int m = 0; m < cells; ++m) {
        int const y = box[1] + static_cast<int>(threadIdx.y) + threads_y * m;
        // At the even value's position: that of a point past the domain's
        // end is clamped to the last, odd, value.
        auto const rates = p.rhs.rates_of_point(
            stencil::detail::FieldsNeighbourhood<T, 2, Fields>{
                buffers, local(x[0], y), ex, 0, 0, gy[m], gx[0] & ~1, t});
        k[i][m][0] = static_cast<T>(rates.value[0]);
        k[i][cells + m][0] = static_cast<T>(rates.value[1]);
      }
    } else {
#pragma unroll
      for (int q = 0; q < thread_cells; ++q) {
        int const v = q / cells, m = q % cells;
        int const y = box[1] + static_cast<int>(threadIdx.y) + threads_y * m;
        auto const result =
            p.rhs(stencil::detail::FieldsNeighbourhood<T, 2, Fields>{
                buffers, local(x[v], y), ex, 0, 0, gy[m], gx[v], t});
#pragma unroll
        for (int w = 0; w < W; ++w) {
          if constexpr (requires { result.value[0]; }) {
            k[i][q][w] = static_cast<T>(result.value[w]);
          } else {
            k[i][q][w] = static_cast<T>(result);
          }
        }
      }
    }
#pragma unroll
    for (int q = 0; q < thread_cells; ++q) {
      int const v = q / cells, m = q % cells;
      int const y = box[1] + static_cast<int>(threadIdx.y) + threads_y * m;
      int const at = local(x[v], y);
      // As the Unfused plan: the combination in double, from k stored in T.
      // A resident step's last stage leaves y_n+1 where the next step's
      // first stage reads its Y_1, and in y_n.
      if (i + 1 < Stages || (Resident && !last_step)) {
        for_each_field<Fields>([&](auto field) {
          constexpr int f = decltype(field)::value;
          if constexpr (Fields::written[f]) {
            constexpr int w = written_index<Fields>(f);
            double combination = 0.0;
#pragma unroll
            for (int j = 0; j <= i; ++j) {
              double const weight =
                  i + 1 < Stages ? p.tableau.a[i + 1][j] : p.tableau.b[j];
              combination += weight * static_cast<double>(k[j][q][w]);
            }
            T const value = static_cast<T>(static_cast<double>(y_n[q][w]) +
                                           p.dt * combination);
            if (i < computed_by[q]) {
              slot(fused_slot_base<Fields>(f) + (current ^ 1))[at] = value;
            }
            if constexpr (GlobalBarrier) {
              // Computed or not: a neighbour that reads an uncomputed cell
              // drops what it computes from it, but reads nothing unwritten.
              if ((exported & (1u << q)) != 0) {
                __stcg(p.exchange + exchange_block(rank) +
                           ((current ^ 1) * W + w) * slot_cells + at,
                       value);
              }
            }
            if (i + 1 == Stages) y_n[q][w] = value;
          }
        });
      } else {
        // The last stage: y_n+1 where the tile owns the cell.
        int const gyo = y + origin[1], gxo = x[v] + origin[0];
        bool const owned = i < computed_by[q] && gxo >= 0 && gxo < n[0] &&
                           gyo >= 0 && gyo < n[1];
        if (!owned) continue;
        std::int64_t const to =
            p.layout.template offset<std::int64_t>(0, gyo, gxo);
#pragma unroll
        for (int w = 0; w < W; ++w) {
          double combination = 0.0;
#pragma unroll
          for (int j = 0; j < Stages; ++j) {
            combination += p.tableau.b[j] * static_cast<double>(k[j][q][w]);
          }
          double const before = static_cast<double>(y_n[q][w]);
          double const after = before + p.dt * combination;
          p.out[w][to] = static_cast<T>(after);
          if (p.error_squares != nullptr) {
            double estimate = 0.0;
#pragma unroll
            for (int j = 0; j < Stages; ++j) {
              estimate += p.tableau.e[j] * static_cast<double>(k[j][q][w]);
            }
            double const scale =
                p.absolute + p.relative * fmax(fabs(before), fabs(after));
            double const e = p.dt * estimate / scale;
            error_squares += e * e;
          }
        }
      }
    }
    if (i + 1 == Stages && (!Resident || last_step)) break;

    // Y_i+1 is written over every block's box; now each block takes what
    // its grown box needs from the others, and refreshes mirrored halos:
    // every load first, then the stores.
    if constexpr (GlobalBarrier) {
      arrive(p.counters.arrived + exchange_slot, thread == 0);
      wait_until(p.counters.arrived + exchange_slot,
                 (generation * (Stages - 1) + static_cast<unsigned>(i) + 1) *
                     static_cast<unsigned>(p.cluster_x * p.cluster_y),
                 thread == 0);
    } else {
      cluster_shared_barrier();
    }
    int const next = current ^ 1;
    for (int e = thread; e < halos; e += threads_per_block) {
      int2 const entry = halo_list[e];
      T taken[W];
      for_each_field<Fields>([&](auto field) {
        constexpr int f = decltype(field)::value;
        if constexpr (Fields::written[f]) {
          constexpr int w = written_index<Fields>(f);
          if constexpr (GlobalBarrier) {
            taken[w] = load_from_l2(p.exchange + entry.y +
                                    (next * W + w) * slot_cells);
          } else {
            constexpr std::uint32_t slot_bytes = slot_cells * sizeof(T);
            taken[w] = load_cluster<T>(static_cast<std::uint32_t>(entry.y) +
                                       (fused_slot_base<Fields>(f) + next) *
                                           slot_bytes);
          }
        }
      });
      for_each_field<Fields>([&](auto field) {
        constexpr int f = decltype(field)::value;
        if constexpr (Fields::written[f]) {
          slot(fused_slot_base<Fields>(f) + next)[entry.x] =
              taken[written_index<Fields>(f)];
        }
      });
    }
    __syncthreads();
  }
  }

  if (p.error_squares != nullptr) {
    for (int offset = 16; offset > 0; offset /= 2) {
      error_squares += __shfl_down_sync(0xffffffffu, error_squares, offset);
    }
    if ((threadIdx.x & 31) == 0 && error_squares != 0.0) {
      atomicAdd(p.error_squares, error_squares);
    }
  }
  if constexpr (GlobalBarrier) {
    // The buffer's next tile may write once every block here is done.
    if constexpr (Stages > 1) {
      arrive(p.counters.done + exchange_slot, thread == 0);
    }
  } else {
    // No block leaves while another may still read its shared memory.
    cluster_shared_barrier();
  }
}

}  // namespace stencil::native_cuda::ode
