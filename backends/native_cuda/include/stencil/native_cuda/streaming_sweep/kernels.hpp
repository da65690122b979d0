// SPDX-License-Identifier: Apache-2.0
// The native single-step sweep: one kernel per time step. Each block streams
// a tile of the grid along its slowest dimension through a ring of
// shared-memory units (a line of 1024 cells for rank 2, a 64x16 piece of a
// plane for rank 3, each with its rim), and the units `Stages` ahead are
// being copied in asynchronously (common/prefetch.hpp) while the current
// one is computed. Every input cell is read from DRAM once per step, apart
// from the tiles' rims, so the sweep is bound by DRAM bandwidth; the
// prefetch keeps enough bytes in flight to reach it with a few blocks per
// SM. It runs what temporal blocking cannot (periodic boundaries, any
// radius) and is the baseline the temporal kernels are measured against.
//
// With `bulk` copies (sm_90), one thread moves each line of a unit with a
// single cp.async.bulk that completes on the unit's ring slot's mbarrier,
// and every thread waits on that mbarrier's phase instead of on its own
// cp.async groups: the copy engine, not the threads, keeps the bytes in
// flight.
//
// On rank 3 this is the kernel of prefetch 1-4; prefetch 0 runs direct.hpp,
// which has no shared tile.
//
// Every block streams one tile through one segment of the streamed
// dimension. Block b takes tile b % tiles, so the blocks that run at the
// same time cover whole units (and read each other's rims from L2).
#pragma once

#include <stencil/native_cuda/common/prefetch.hpp>

#include <stencil/detail/neighbourhood.hpp>

#include <cuda_runtime.h>
#include <cuda/ptx>

#include <cstddef>
#include <cstdint>

namespace stencil::native_cuda::streaming_sweep {

inline constexpr int threads_per_block = 256;
inline constexpr int cells_per_thread = 4;

/// Cells in one 16-byte access: the copies and stores move whole 16-byte
/// items where the grid's rows allow it, because 8-byte accesses cap a copy
/// well below 16-byte ones (docs/decisions/streaming-sweep-stages.md).
template <class T>
inline constexpr int vector_cells = 16 / sizeof(T);

/// The unit a block streams, and the ring that holds the units in shared
/// memory. Tiles start where the grid's padded rows have a 16-byte
/// boundary, and a shared row starts `lead` cells before its tile (the rim
/// rounded up to whole 16-byte items), so that copies and stores can move
/// aligned 16-byte items.
template <class T, int Rank, int Radius>
struct UnitShape {
  static_assert(Rank == 2 || Rank == 3);
  static constexpr int vector = vector_cells<T>;
  /// Rank 3: 64x16 rather than 32x32, for rows of 512 contiguous bytes
  /// (docs/decisions/streaming-sweep-stages.md).
  static constexpr int width =
      Rank == 3 ? 64 : threads_per_block * cells_per_thread;
  static constexpr int height = Rank == 3 ? 16 : 1;
  static constexpr int lead = (Radius + vector - 1) / vector * vector;
  static constexpr int row =
      (lead + width + Radius + vector - 1) / vector * vector;
  static constexpr int rows = Rank == 3 ? height + 2 * Radius : 1;
  static constexpr int cells = row * rows;
  /// Ring slots: the 2r+1 units a step reads, `stages` in flight, and the
  /// one being refilled while the slowest thread may still read the unit
  /// it replaces, which keeps the pipeline at one barrier per unit.
  __host__ __device__ static constexpr int ring(int stages) {
    return 2 * Radius + 2 + stages;
  }
  /// A thread's cells: runs of `vector` adjacent cells (one 16-byte
  /// store), `cells_per_thread / vector` runs per thread.
  static constexpr int runs = cells_per_thread / vector;
  static constexpr int run_threads_per_row = width / vector;
};

/// The ring of units, then one mbarrier per ring slot (used by bulk copies
/// only; the units keep the barriers 8-byte aligned, being whole 16-byte
/// items).
template <class T, int Rank, int Radius>
constexpr std::size_t shared_bytes(int stages) {
  using U = UnitShape<T, Rank, Radius>;
  return static_cast<std::size_t>(U::ring(stages)) *
         (U::cells * sizeof(T) + sizeof(std::uint64_t));
}

template <class T, class Op>
struct Params {
  T const* in;
  T* out;
  Op op;
  int nx, ny;  // extents of a unit's dimensions (rank 2: ny = 1)
  int ns;      // extent of the streamed dimension
  int halo;
  int stride_y;   // rank 3: elements between rows
  long stride_s;  // elements between units (rows in 2D, planes in 3D)
  int tiles_x;    // tiles across x
  int tiles;      // tiles across a unit
  int segment;    // units per block
  /// Whether every padded row starts 16 bytes aligned (then copies and
  /// stores move 16-byte items; else single cells).
  bool vector;
  /// Lines copied by cp.async.bulk (needs `vector`, sm_90 and Stages >= 1).
  bool bulk;
};

/// The bulk-copy side of the sweep: one mbarrier per ring slot, armed by
/// the thread that issues a unit's line copies with the unit's byte count.
/// Compiled to nothing below sm_90, where the plan refuses bulk copies.
struct BulkLines {
  std::uint64_t* barriers;

  __device__ void init(int slots) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (threadIdx.x == 0) {
      for (int i = 0; i < slots; ++i) cuda::ptx::mbarrier_init(barriers + i, 1);
      cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release,
                                     cuda::ptx::scope_cluster);
    }
#endif
    __syncthreads();
  }
  /// The issuing thread: expects `bytes` on `slot`'s barrier (its one
  /// arrival), before any copy to the slot. The slot's previous unit was
  /// read through the generic proxy before the last __syncthreads; the fence
  /// orders those reads before the copies, which write through the async
  /// proxy.
  __device__ void arm(int slot, unsigned bytes) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    cuda::ptx::mbarrier_arrive_expect_tx(
        cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
        barriers + slot, bytes);
#endif
  }
  __device__ void copy(void* shared, void const* global, unsigned bytes,
                       int slot) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global,
                             shared, global, bytes, barriers + slot);
#endif
  }
  /// Every thread: until the `use`-th unit copied into `slot` has landed.
  __device__ void wait(int slot, int use) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    std::uint32_t const parity = static_cast<std::uint32_t>(use) & 1u;
    while (!cuda::ptx::mbarrier_try_wait_parity(barriers + slot, parity)) {
    }
#else
    __trap();
#endif
  }
};

// At least 3 blocks per SM (85 registers): with no minimum, ptxas held the
// kernels to 64 registers and spilled (j3d13pt double: 32 bytes of stack),
// and at 4 (64 registers) j3d13pt still spills.
template <class T, class Op, int Stages>
__global__ void __launch_bounds__(threads_per_block, 3)
    streaming_sweep(Params<T, Op> const p) {
  constexpr int rank = Op::rank;
  constexpr int r = Op::radius;
  using U = UnitShape<T, rank, r>;
  using Copy = AsyncCopy<Stages>;
  constexpr int V = U::vector;
  constexpr int ring = U::ring(Stages);
  constexpr int loads = (U::cells + threads_per_block - 1) / threads_per_block;
  constexpr int chunks = U::cells / V;
  constexpr int vector_loads =
      (chunks + threads_per_block - 1) / threads_per_block;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* const units = reinterpret_cast<T*>(shared_raw);
  BulkLines const bulk{
      reinterpret_cast<std::uint64_t*>(units + ring * U::cells)};
  int const tid = static_cast<int>(threadIdx.x);

  auto slot_of = [](int cur, int d) {  // slot of the unit d after `cur`'s
    int v = cur + d;
    v += v < 0 ? ring : 0;
    return v >= ring ? v - ring : v;
  };

  // Block b: tile b % tiles, segment b / tiles.
  int const tile = static_cast<int>(blockIdx.x) % p.tiles;
  int const s_begin = static_cast<int>(blockIdx.x) / p.tiles * p.segment;
  int const s_end = min(p.ns, s_begin + p.segment);
  // Grid coordinates of the tile's first cell; the tiles are shifted left
  // by halo % V cells, so that they start at a 16-byte boundary of the
  // padded row.
  int const x0 = tile % p.tiles_x * U::width - p.halo % V;
  int const y0 = rank == 3 ? tile / p.tiles_x * U::height : 0;
  constexpr int lead = U::lead;
  int const padded_nx = p.nx + 2 * p.halo;

  // Which cells (or 16-byte chunks) of a shared unit this thread copies,
  // and from where in a unit of the grid. Those outside the padded grid
  // are left alone: only outputs that are not written read them.
  constexpr int copies = loads > vector_loads ? loads : vector_loads;
  int load_offset[copies];
  bool load_inside[copies];
#pragma unroll
  for (int i = 0; i < copies; ++i) {
    int const k = tid + i * threads_per_block;
    int const cell = p.vector ? k * V : k;  // first shared cell copied
    int const px = x0 - lead + cell % U::row + p.halo;  // padded x
    int const y = y0 - r + cell / U::row;
    bool const exists = p.vector ? k < chunks : k < U::cells;
    load_inside[i] = exists && px >= 0 && px < padded_nx &&
                     (rank == 2 || (y >= -p.halo && y < p.ny + p.halo));
    load_offset[i] =
        load_inside[i] ? (rank == 3 ? (y + p.halo) * p.stride_y : 0) + px : 0;
  }
  // The thread's cells: runs of V adjacent cells (one 16-byte store);
  // rank 3, `runs` rows of the tile height/runs apart; rank 2, runs
  // width/runs cells apart.
  int const run_x = tid % U::run_threads_per_row * V;
  int const run_row = tid / U::run_threads_per_row;
  // Cells [out_first, out_end) of each run are in the grid.
  int centre[U::runs], out_offset[U::runs], out_first[U::runs],
      out_end[U::runs];
#pragma unroll
  for (int j = 0; j < U::runs; ++j) {
    int lx, ly;
    if constexpr (rank == 3) {
      lx = run_x;
      ly = run_row + j * (U::height / U::runs);
    } else {
      lx = run_x + j * (U::width / U::runs);
      ly = 0;
    }
    int const x = x0 + lx, y = y0 + ly;
    centre[j] = (rank == 3 ? (ly + r) * U::row : 0) + lx + lead;
    out_first[j] = max(0, -x);
    out_end[j] = rank == 3 && y >= p.ny ? 0 : min(V, p.nx - x);
    out_offset[j] = (rank == 3 ? (y + p.halo) * p.stride_y : 0) + x + p.halo;
  }

  // Units [s_begin - r, s_end + r) are read; unit u goes to slot
  // (u - s_begin + r) % ring.
  int const last = s_end + r;
  // Bulk: the unit's rows, each the padded row's part [px_begin, px_end)
  // copied to shared offset px_begin - px_first of its line.
  int const px_first = x0 - lead + p.halo;
  int const px_begin = max(px_first, 0);
  int const px_end = min(px_first + U::row, padded_nx);
  // One thread issues them all. Spreading a 3D unit's 18-20 line copies
  // over the first warp's lanes gained a little on the 3D rows but took the
  // registers of the kernels without bulk copies past their bound
  // (docs/decisions/streaming-sweep-bulk-copy-rank-2.md).
  auto issue_bulk = [&](int u, int slot) {
    if (tid != 0 || u >= last) return;
    T const* const from = p.in + static_cast<long>(u + p.halo) * p.stride_s;
    T* const to = units + slot * U::cells + (px_begin - px_first);
    unsigned const line_bytes =
        static_cast<unsigned>((px_end - px_begin) * sizeof(T));
    int rows_in = U::rows, first_row = 0;
    if constexpr (rank == 3) {
      // Rows y0 - r + i that lie in the padded grid.
      first_row = max(0, -p.halo - (y0 - r));
      rows_in = min(U::rows, p.ny + p.halo - (y0 - r)) - first_row;
    }
    bulk.arm(slot, line_bytes * static_cast<unsigned>(rows_in));
    for (int i = first_row; i < first_row + rows_in; ++i) {
      long const row_offset =
          rank == 3 ? static_cast<long>(y0 - r + i + p.halo) * p.stride_y : 0;
      bulk.copy(to + i * U::row, from + row_offset + px_begin, line_bytes,
                slot);
    }
  };
  auto issue = [&](int u, int slot) {
    if (p.bulk) {
      issue_bulk(u, slot);
      return;
    }
    if (u < last) {
      T const* const from = p.in + static_cast<long>(u + p.halo) * p.stride_s;
      T* const to = units + slot * U::cells;
      if (p.vector) {
#pragma unroll
        for (int i = 0; i < vector_loads; ++i) {
          if (load_inside[i]) {
            Copy::copy(
                reinterpret_cast<int4*>(to) + tid + i * threads_per_block,
                reinterpret_cast<int4 const*>(from + load_offset[i]));
          }
        }
      } else {
#pragma unroll
        for (int i = 0; i < loads; ++i) {
          if (load_inside[i]) {
            Copy::copy(to + tid + i * threads_per_block, from + load_offset[i]);
          }
        }
      }
    }
    Copy::commit();
  };
  if (p.bulk) bulk.init(ring);
  for (int q = 0; q < 2 * r + Stages; ++q) issue(s_begin - r + q, q);
  if (p.bulk) {
    // Barriers complete in any order: the units before s_begin + r are
    // waited for here, each later one in the iteration that first reads it.
    for (int q = 0; q < 2 * r; ++q) bulk.wait(q, 0);
  }
  int cur = r;  // slot of unit s
  for (int s = s_begin; s < s_end; ++s) {
    issue(s + r + Stages, slot_of(cur, r + Stages));
    if (p.bulk) {
      // Unit s + r: the ((s + 2r - s_begin) / ring)-th use of its slot.
      bulk.wait(slot_of(cur, r), (s + 2 * r - s_begin) / ring);
    } else {
      Copy::wait();  // unit s + r has landed
    }
    __syncthreads();
    T* const out = p.out + static_cast<long>(s + p.halo) * p.stride_s;
#pragma unroll
    for (int j = 0; j < U::runs; ++j) {
      T values[V];
      if constexpr (rank == 3) {
        stencil::detail::PlaneRingNeighbourhood<T, r> nb{};
#pragma unroll
        for (int dz = -r; dz <= r; ++dz) {
          nb.plane[dz + r] = units + slot_of(cur, dz) * U::cells + centre[j];
        }
        nb.stride_y = U::row;
#pragma unroll
        for (int v = 0; v < V; ++v) {
          nb.centre = v;
          values[v] = static_cast<T>(p.op(nb));
        }
      } else {
        stencil::detail::LineRingNeighbourhood<T, r> nb{};
#pragma unroll
        for (int dy = -r; dy <= r; ++dy) {
          nb.line[dy + r] = units + slot_of(cur, dy) * U::cells + centre[j];
        }
#pragma unroll
        for (int v = 0; v < V; ++v) {
          nb.centre = v;
          values[v] = static_cast<T>(p.op(nb));
        }
      }
      T* const to = out + out_offset[j];
      if (p.vector && out_first[j] == 0 && out_end[j] == V) {
        int4 packed;
        memcpy(&packed, values, sizeof packed);
        *reinterpret_cast<int4*>(to) = packed;
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) {
          if (v >= out_first[j] && v < out_end[j]) to[v] = values[v];
        }
      }
    }
    cur = cur + 1 == ring ? 0 : cur + 1;
  }
}

}  // namespace stencil::native_cuda::streaming_sweep
