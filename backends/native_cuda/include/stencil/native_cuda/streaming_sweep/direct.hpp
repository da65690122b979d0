// SPDX-License-Identifier: Apache-2.0
// The rank-3 single-step sweep with plain loads: no shared tile. Every
// thread computes a run of 16 bytes of adjacent cells and loads each row
// its taps touch straight from global memory, in the widest aligned items
// the grid's rows allow; the L1 cache serves the taps that neighbouring
// threads share. A block covers 32 runs x 4 rows x 2 planes, and blocks are
// numbered x fastest, then y, then z, so that the blocks running at any
// time cover a slab of a few consecutive planes: the planes above and below
// a block are read by its neighbours at about the same time, and the second
// read of each comes from L2.
//
// Why not the shared tile with async copies (kernels.hpp) in 3D: its
// 16-plane segments spread the running blocks over many slabs; this shape
// measured faster (docs/decisions/streaming-sweep-direct-3d.md).
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

namespace stencil::native_cuda::streaming_sweep::direct {

inline constexpr int threads_x = 32;
inline constexpr int threads_y = 4;
inline constexpr int threads_z = 2;
inline constexpr int threads = threads_x * threads_y * threads_z;

/// Cells per thread: 16 bytes of them.
template <class T>
inline constexpr int run_cells = 16 / static_cast<int>(sizeof(T));

template <class T, class Op>
struct Params {
  T const* in;
  T* out;
  Op op;
  int nx, ny, nz;
  int halo;
  int stride_y;   // elements between rows of the padded buffers
  long stride_z;  // elements between planes
  /// A thread's first cell is at x = run * run_cells - shift: its run
  /// starts where a padded row has a whole number of runs, so that loads
  /// and stores of `Item` cells are aligned.
  int shift;
  int runs_x;  // runs per row (covering [-shift, nx))
  /// Block (x, y, z) covers runs from 32 x, rows from 4 (y + y_block0)
  /// and planes from 2 (z + z_block0): a grid may need more blocks along y
  /// or z than one launch has.
  int y_block0, z_block0;
};

/// `Item` cells loaded at once: T[Item] as one 4-, 8- or 16-byte access.
template <class T, int Item>
struct alignas(sizeof(T) * Item) ItemOf {
  T cell[Item];
};

template <class T, int Item>
__device__ __forceinline__ ItemOf<T, Item> load_item(T const* p) {
  if constexpr (Item == 1) {
    return ItemOf<T, Item>{{__ldg(p)}};
  } else {
    // __ldg has no overload for T[Item]: load the bytes as a vector word.
    using Word = std::conditional_t<sizeof(ItemOf<T, Item>) == 16, int4, int2>;
    static_assert(sizeof(Word) == sizeof(ItemOf<T, Item>));
    Word const v = __ldg(reinterpret_cast<Word const*>(p));
    ItemOf<T, Item> r;
    memcpy(&r, &v, sizeof r);
    return r;
  }
}

/// The taps of one thread's run: for every row (dz, dy) of the
/// neighbourhood, the cells [x - r, x + cells + r), with x the run's first
/// cell.
template <class T, int Radius, int Cells>
struct Window {
  static constexpr int width = Cells + 2 * Radius;
  static constexpr int side = 2 * Radius + 1;
  T cell[side][side][width];
};

/// The accessor a functor receives: cell `centre` of the window, whose rows
/// hold every tap a cell of the run can read.
template <class T, int Radius, int Cells>
struct WindowNeighbourhood {
  using value_type = T;
  using W = Window<T, Radius, Cells>;
  W const* window;
  int centre;

  __device__ __forceinline__ T operator()(int dz, int dy, int dx) const {
    stencil::detail::check_offsets<Radius>(dz, dy, dx);
    return window->cell[dz + Radius][dy + Radius][centre + dx];
  }
};

/// The widest item, at most `Item` cells, that divides `cells`: the rims
/// of a run are loaded in items that neither reach past them nor lose the
/// alignment of the run's own items.
template <int Item, int Cells>
__host__ __device__ constexpr int rim_item() {
  int item = Item;
  while (Cells % item != 0) item /= 2;
  return item;
}

/// `Item`: cells per load (a divisor of run_cells<T>; the widest the
/// grid's rows and buffers are aligned for). Blocks of threads_x x
/// threads_y x threads_z threads, numbered x fastest, as the hardware
/// starts them.
template <class T, class Op, int Item>
__global__ void __launch_bounds__(threads) sweep(Params<T, Op> const p) {
  constexpr int r = Op::radius;
  constexpr int C = run_cells<T>;
  static_assert(C % Item == 0);
  using W = Window<T, r, C>;

  int const run = static_cast<int>(blockIdx.x * threads_x + threadIdx.x);
  int const y = (static_cast<int>(blockIdx.y) + p.y_block0) * threads_y +
                static_cast<int>(threadIdx.y);
  int const z = (static_cast<int>(blockIdx.z) + p.z_block0) * threads_z +
                static_cast<int>(threadIdx.z);
  if (run >= p.runs_x || y >= p.ny || z >= p.nz) return;
  int const x = run * C - p.shift;  // first cell of the run

  // The window's items: the run's own cells in items of `Item`, its rims
  // in items of `Rim`, each wholly inside the padded row or wholly outside
  // it (the row is a whole number of items). Those outside are read only by
  // cells outside the grid, which are not written; they load the run's
  // first item instead of memory that may lie outside the buffer.
  constexpr int Rim = rim_item<Item, r>();
  int const px = x + p.halo;  // padded x of the run's first cell
  int const padded_nx = p.nx + 2 * p.halo;
  long const offset = static_cast<long>(z + p.halo) * p.stride_z +
                      static_cast<long>(y + p.halo) * p.stride_y + px;
  T const* const centre = p.in + offset;
  W window;
#pragma unroll
  for (int dz = -r; dz <= r; ++dz) {
#pragma unroll
    for (int dy = -r; dy <= r; ++dy) {
      T const* const row = centre + dz * p.stride_z + dy * p.stride_y;
      T(&cells)[W::width] = window.cell[dz + r][dy + r];
#pragma unroll
      for (int k = 0; k < r; k += Rim) {
        int const left = k - r, right = C + k;  // from the run's first cell
        ItemOf<T, Rim> const l =
            load_item<T, Rim>(row + (px + left >= 0 ? left : 0));
        ItemOf<T, Rim> const g = load_item<T, Rim>(
            row + (px + right + Rim <= padded_nx ? right : 0));
#pragma unroll
        for (int i = 0; i < Rim; ++i) {
          cells[k + i] = l.cell[i];
          cells[r + C + k + i] = g.cell[i];
        }
      }
#pragma unroll
      for (int k = 0; k < C; k += Item) {
        ItemOf<T, Item> const item = load_item<T, Item>(row + k);
#pragma unroll
        for (int i = 0; i < Item; ++i) cells[r + k + i] = item.cell[i];
      }
    }
  }

  T values[C];
#pragma unroll
  for (int v = 0; v < C; ++v) {
    WindowNeighbourhood<T, r, C> const nb{&window, r + v};
    values[v] = static_cast<T>(p.op(nb));
  }
  T* const out = p.out + offset;
  if (x >= 0 && x + C <= p.nx) {
#pragma unroll
    for (int k = 0; k < C; k += Item) {
      ItemOf<T, Item> item;
#pragma unroll
      for (int i = 0; i < Item; ++i) item.cell[i] = values[k + i];
      *reinterpret_cast<ItemOf<T, Item>*>(out + k) = item;
    }
  } else {
#pragma unroll
    for (int v = 0; v < C; ++v) {
      if (x + v >= 0 && x + v < p.nx) out[v] = values[v];
    }
  }
}

}  // namespace stencil::native_cuda::streaming_sweep::direct
