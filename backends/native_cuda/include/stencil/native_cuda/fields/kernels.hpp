// SPDX-License-Identifier: Apache-2.0
// The native kernel of multi-field stencils: overlapped tiles in shared
// memory. Each block loads a tile of every field's levels (the current level
// with a rim of radius x depth cells, earlier levels and coefficients where
// they are read), advances it `depth` steps in shared memory, the region it
// computes shrinking by the radius each step, and writes the levels of the
// valid centre back. Every field is read from DRAM once per launch and its
// new levels written once, so the DRAM traffic of `depth` steps is that of
// one; the rims are recomputed by the neighbouring blocks.
//
// Depth 1 is the single-step sweep and runs any boundary (the time loop
// refreshes the halo between launches); deeper launches need halos that do
// not change between steps, which fixed boundaries are, or no halo at all:
// along a periodic axis a tile loads the wrapped cells of the other side
// and recomputes them like any rim, so it never reads that axis's halo.
//
// A written field keeps max(2, levels) slots in shared memory: with one
// level the new one goes to a second slot, with more it overwrites the
// oldest in place (an earlier level is read at its own cell only, by the
// thread that writes that cell). A coefficient keeps one slot. Each slot
// stands for one of the field's buffers and keeps that buffer's halo.
#pragma once

#include <stencil/detail/fields/accessor.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/unroll.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace stencil::native_cuda::fields {

/// Threads per block: 32 x 8 for rank 2 and 3 (a warp along x), 256 along x
/// for rank 1.
inline constexpr int threads_per_block = 256;

/// Shared-memory slots of field `f` of `Fields`.
template <class Fields>
__host__ __device__ constexpr int slots(int f) {
  return !Fields::written[f] ? 1
                             : (Fields::levels[f] > 2 ? Fields::levels[f] : 2);
}

/// The first slot of field `f`; slot_base<Fields>(Fields::count) is the
/// total.
template <class Fields>
__host__ __device__ constexpr int slot_base(int f) {
  int base = 0;
  for (int g = 0; g < f; ++g) base += slots<Fields>(g);
  return base;
}

template <class Fields>
inline constexpr int total_slots = slot_base<Fields>(Fields::count);

/// The slot (of the field's `Slots`) holding time level -k (k >= 0) after
/// `s` steps of the launch; level 0 of step 0 lies in the field's slot 0.
template <int Slots>
__host__ __device__ constexpr int slot_of(int s, int k) {
  return ((s - k) % Slots + Slots) % Slots;
}

using stencil::detail::for_each_constant;

/// f(std::integral_constant<int, F>{}) for every field F of `Fields`: the
/// fields' constexpr tables are then read at compile time only, never
/// indexed in device code.
template <class Fields, class F>
__host__ __device__ __forceinline__ void for_each_field(F&& f) {
  for_each_constant<Fields::count>(static_cast<F&&>(f));
}

template <class T, class Op>
struct Params {
  using Fields = typename Op::fields;
  /// Level -k of field f in global memory, read at the start of a launch.
  T const* in[Fields::count][Fields::most_levels] = {};
  /// Where level -k of written field f goes after the launch, for
  /// k < `write_levels` (1: only the new level, into the state's next
  /// buffer; the field's levels: every level, into separate buffers).
  T* out[Fields::count][Fields::most_levels] = {};
  int write_levels = 1;
  Op op;
  stencil::detail::PaddedLayout layout;
  int depth = 1;
  /// The loaded tile (x, y, z; 1 along unused axes) and tiles per axis.
  int lx = 1, ly = 1, lz = 1;
  int tiles_x = 1, tiles_y = 1;
  /// Axes (x, y, z) whose tiles wrap around the domain instead of reading
  /// the halo; the sweep leaves them 0, since its halo is refreshed every
  /// step.
  bool wrap[3] = {false, false, false};
  double t0 = 0.0, dt = 1.0;
};

/// A box of tile cells [lo, hi) per axis (x, y, z).
struct Box {
  int lo[3];
  int hi[3];
};

/// Runs f(tile cell x, y, z) over `box`, the block's threads spread over x
/// and y.
template <class F>
__device__ __forceinline__ void for_box(Box const& box, F&& f) {
  for (int z = box.lo[2]; z < box.hi[2]; ++z) {
    for (int y = box.lo[1] + static_cast<int>(threadIdx.y); y < box.hi[1];
         y += static_cast<int>(blockDim.y)) {
      for (int x = box.lo[0] + static_cast<int>(threadIdx.x); x < box.hi[0];
           x += static_cast<int>(blockDim.x)) {
        f(x, y, z);
      }
    }
  }
}

template <class T, class Op>
__global__ void __launch_bounds__(threads_per_block)
    tile_steps(Params<T, Op> p) {
  using Fields = typename Op::fields;
  constexpr int rank = Op::rank;
  constexpr int radius = Fields::radius;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* const shared = reinterpret_cast<T*>(shared_raw);

  int const reach = radius * p.depth;
  int const extent[3] = {p.lx, p.ly, p.lz};
  int const n[3] = {p.layout.nx, p.layout.ny, p.layout.nz};
  int const cells = p.lx * p.ly * p.lz;
  int const sy = p.lx;
  int const sz = p.lx * p.ly;

  // Interior coordinate of tile cell 0 along each axis.
  int block = static_cast<int>(blockIdx.x);
  int const tile_index[3] = {block % p.tiles_x, (block / p.tiles_x) % p.tiles_y,
                             block / (p.tiles_x * p.tiles_y)};
  int origin[3];
  for (int a = 0; a < 3; ++a) {
    bool const used = a < rank;
    origin[a] = used ? tile_index[a] * (extent[a] - 2 * reach) - reach : 0;
  }
  // Tile cells [inset, extent - inset) that lie in the interior, grown by
  // `grow` cells into the halo; along a wrapped axis every tile cell is an
  // interior cell, unless `owned`: the cells of [0, n) only, which the
  // block writes back.
  auto region = [&](int inset, int grow, bool owned = false) {
    Box b;
    for (int a = 0; a < 3; ++a) {
      if (a < rank && p.wrap[a] && !owned) {
        b.lo[a] = inset;
        b.hi[a] = extent[a] - inset;
      } else if (a < rank) {
        int const lo = -grow - origin[a];
        int const hi = n[a] + grow - origin[a];
        b.lo[a] = inset > lo ? inset : lo;
        b.hi[a] = extent[a] - inset < hi ? extent[a] - inset : hi;
      } else {
        b.lo[a] = 0;
        b.hi[a] = 1;
      }
    }
    return b;
  };
  // The domain coordinate of tile cell c along axis a, wrapped where the
  // axis wraps (a tile may reach past more than one period of a small
  // domain).
  auto domain = [&](int a, int c) {
    int const g = c + origin[a];
    return p.wrap[a] ? ((g % n[a]) + n[a]) % n[a] : g;
  };
  auto global_offset = [&](int x, int y, int z) {
    return p.layout.template offset<std::int64_t>(domain(2, z), domain(1, y),
                                                  domain(0, x));
  };

  // The current level of every field over the whole tile that lies in the
  // padded array; earlier levels where the first step reads them (its own
  // cells, so never where another block writes) and in the halo. The halo
  // is never computed, and each slot keeps the halo of the buffer it stands
  // for: a leapfrog's two buffers may hold different fixed halos, and the
  // level that is n-1 at a step reads its own. A field of one level keeps
  // a second slot (the next buffer) that takes level 0's halo.
  Box const padded = region(0, p.layout.halo);
  Box const first = region(radius, 0);
  auto in_halo = [&](int x, int y, int z) {
    int const c[3] = {x, y, z};
    bool outside = false;
    for (int a = 0; a < rank; ++a) {
      int const g = c[a] + origin[a];
      outside = outside || (!p.wrap[a] && (g < 0 || g >= n[a]));
    }
    return outside;
  };
  auto in_first = [&](int x, int y, int z) {
    int const c[3] = {x, y, z};
    bool inside = true;
    for (int a = 0; a < 3; ++a) {
      inside = inside && c[a] >= first.lo[a] && c[a] < first.hi[a];
    }
    return inside;
  };
  for_each_field<Fields>([&](auto field) {
    constexpr int f = decltype(field)::value;
    constexpr int base = slot_base<Fields>(f);
    constexpr int count = slots<Fields>(f);
    constexpr int levels = Fields::levels[f];
#pragma unroll
    for (int k = 0; k < levels; ++k) {
      T* const slot = shared + (base + slot_of<count>(0, k)) * cells;
      T const* const from = p.in[f][k];
      for_box(padded, [&](int x, int y, int z) {
        bool const halo = in_halo(x, y, z);
        if (k > 0 && !halo && !in_first(x, y, z)) return;
        int const at = (z * p.ly + y) * p.lx + x;
        T const value = from[global_offset(x, y, z)];
        slot[at] = value;
        if constexpr (count > levels) {
          if (k == 0 && halo) {
            // Level 0 lies in slot 0 at step 0 (slot_of(0, 0)).
#pragma unroll
            for (int other = 1; other < count; ++other) {
              shared[(base + other) * cells + at] = value;
            }
          }
        }
      });
    }
  });
  __syncthreads();

  for (int s = 0; s < p.depth; ++s) {
    stencil::detail::FieldBuffers<T, Fields> buffers;
    int written = 0;
    for_each_field<Fields>([&](auto field) {
      constexpr int f = decltype(field)::value;
      constexpr int base = slot_base<Fields>(f);
      constexpr int count = slots<Fields>(f);
      constexpr int levels = Fields::levels[f];
#pragma unroll
      for (int k = 0; k < levels; ++k) {
        buffers.level[f][k] = shared + (base + slot_of<count>(s, k)) * cells;
      }
      if constexpr (Fields::written[f]) {
        buffers.out[written++] =
            shared + (base + slot_of<count>(s + 1, 0)) * cells;
      }
    });
    double const t = p.t0 + s * p.dt;
    for_box(region(radius * (s + 1), 0), [&](int x, int y, int z) {
      std::int64_t const at = (z * p.ly + y) * p.lx + x;
      int const gx = domain(0, x);
      int const gy = rank >= 2 ? domain(1, y) : 0;
      int const gz = rank == 3 ? domain(2, z) : 0;
      // Unused axes are 0, as the portable kernels give them.
      stencil::detail::store_fields(
          buffers, at,
          p.op(stencil::detail::FieldsNeighbourhood<T, rank, Fields>{
              buffers, at, sy, sz, rank == 3 ? gz : 0, rank >= 2 ? gy : 0, gx,
              t}));
    });
    __syncthreads();
  }

  // The valid centre: the new levels of every written field.
  Box const valid = region(reach, 0, /*owned=*/true);
  for_each_field<Fields>([&](auto field) {
    constexpr int f = decltype(field)::value;
    if constexpr (Fields::written[f]) {
      constexpr int base = slot_base<Fields>(f);
      constexpr int count = slots<Fields>(f);
      constexpr int kept = Fields::levels[f];
      int const levels = p.write_levels < kept ? p.write_levels : kept;
      for (int k = 0; k < levels; ++k) {
        T const* const slot =
            shared + (base + slot_of<count>(p.depth, k)) * cells;
        T* const to = p.out[f][k];
        for_box(valid, [&](int x, int y, int z) {
          to[global_offset(x, y, z)] = slot[(z * p.ly + y) * p.lx + x];
        });
      }
    }
  });
}

}  // namespace stencil::native_cuda::fields
