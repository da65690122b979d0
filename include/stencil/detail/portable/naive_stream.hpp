// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/detail/neighbourhood.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/portable/vector_access.hpp>
#include <stencil/detail/unroll.hpp>
#include <stencil/traits.hpp>

#include <Kokkos_Core.hpp>

namespace stencil::detail {

/// How the streaming kernel holds planes, by stencil shape, as measured
/// (docs/decisions/naive-vector-kernel.md).
///
/// Star stencils read only the centre column of the other planes, so the
/// ring keeps just the centre vectors and the loads run a plane ahead. Box
/// stencils read whole windows of every plane; holding them beats reloading
/// them, and without a plane ahead the registers allow more rows.
template <class Op>
inline constexpr bool stream_whole_windows_v = Op::shape == Shape::box;
template <class Op>
inline constexpr int stream_lookahead_v = Op::shape == Shape::box ? 0 : 1;

/// Rows per thread of the streaming kernel: four, halved (4, 2, 1) until its
/// estimated live values fit in 96 32-bit registers: the ring and the part
/// of the current window that does not come from it. ptxas then uses
/// 119-160 registers for the suite's 3D stencils (it hoists the loads of the
/// next step) and spills nothing with 32-bit indices (sm_90, cuobjdump
/// -res-usage); with 64-bit indices, used only past 2^30 padded cells, it
/// spills for j3d7pt double and j3d13pt float at V = 2.
template <class T, class Op, int V>
constexpr int stream_rows() {
  constexpr int r = Op::radius;
  constexpr int ring = 2 * r + 1 + stream_lookahead_v<Op>;
  auto registers = [](int rows) {
    int const values =
        stream_whole_windows_v<Op>
            ? ring * (rows + 2 * r) * (V + 2 * r)
            // Star: the centre vectors in the ring, then the halo rows'
            // centre vectors and the side lanes of the current plane.
            : ring * rows * V + 2 * r * V + 2 * r * rows;
    return values * static_cast<int>(sizeof(T)) / 4;
  };
  int rows = 4;
  while (rows > 1 && registers(rows) > 96) rows /= 2;
  return rows;
}

/// The vector kernel of rank 3: each thread streams along z through a run
/// of planes, so that the z-neighbours of its cells come from registers.
///
/// Why: the window kernel (NaiveVectorSweep) loads the planes z-r..z+r of
/// every cell it computes, and the neighbouring planes are computed by warps
/// that run on other SMs, so those loads miss L1. For j3d7pt that is 3.5 row
/// loads from L2 per output row (1.5 in 2D), and L2 throughput, not DRAM,
/// bound the window kernel (docs/decisions/naive-vector-kernel.md).
///
/// A thread owns one vector column m (V adjacent padded columns) in
/// `rows_per_thread` rows and a run of `planes_per_thread` planes. It holds
/// planes in a ring of registers (see stream_whole_windows_v for what of
/// them): each step loads one new plane, `lookahead` planes ahead of the
/// last one it needs, into the slot of the plane no longer needed, then
/// reads the rest of the window from the cache; loads the functor does not
/// read are dead code. The ring slot of every plane is a constant because
/// the step loop is unrolled by the ring length.
///
/// Runs alternate direction (even runs up, odd runs down), so the two runs
/// that share a boundary's planes load them at about the same time, both
/// at the start or both at the end, and the second load hits L2.
///
/// Mapping: thread -> warp, lane; warp -> band = warp / chunks_per_row
/// (run, row group) and chunk; vector m = first_vector + chunk * 32 + lane;
/// row group -> y0 = group * rows_per_thread; run -> planes
/// [run * planes_per_thread, min(nz, (run + 1) * planes_per_thread)).
///
/// Bounds: vectors are clamped to [0, last_vector], rows to ny - 1 + r and
/// planes to [-r, nz - 1 + r], so every load is inside the buffer; as in the
/// window kernel, a stored cell reads only unclamped values.
template <class T, class Op, class Index, int V>
struct NaiveStreamSweep {
  static_assert(Op::rank == 3, "the streaming kernel is rank 3");
  static_assert(V >= 2, "the streaming kernel needs at least two lanes");
  static constexpr int radius = Op::radius;
  static constexpr int lookahead = stream_lookahead_v<Op>;
  static constexpr bool whole_windows = stream_whole_windows_v<Op>;
  static constexpr int rows_per_thread = stream_rows<T, Op, V>();
  static constexpr int side = (radius + V - 1) / V;  // vectors either side
  static constexpr int window_cols = (2 * side + 1) * V;
  static constexpr int window_rows = rows_per_thread + 2 * radius;
  static constexpr int window_planes = 2 * radius + 1;
  // The planes z-r..z+r and those loaded ahead for the next steps.
  static constexpr int ring = window_planes + lookahead;
  // Whole ring turns, 12 to 24 planes per run. Shorter runs reload more
  // boundary planes, longer ones leave fewer threads per sweep.
  static constexpr int planes_per_thread = 4 * ring;
  using Accessor = WindowNeighbourhood<T, 3, radius, window_planes, window_rows,
                                       window_cols>;

  /// Whether the ring holds vector s of window row `row` of its planes:
  /// all of the window, or the centre vectors of the owned rows.
  KOKKOS_INLINE_FUNCTION static constexpr bool in_ring(int row, int s) {
    return whole_windows ||
           (s == side && row >= radius && row < radius + rows_per_thread);
  }

  T const* in;
  T* out;
  Op op;
  PaddedLayout layout;
  int first_vector;      // halo / V
  int last_vector;       // last vector of a padded row
  Index chunks_per_row;  // warps across a row
  Index row_groups;      // blocks of rows_per_thread rows per plane
  Index runs;            // runs of planes_per_thread planes

  static NaiveStreamSweep make(T const* in, T* out, Op const& op,
                               PaddedLayout const& layout) {
    Index const chunks = (interior_vectors<V>(layout) + 31) / 32;
    Index const groups = (layout.ny + rows_per_thread - 1) / rows_per_thread;
    Index const runs = (layout.nz + planes_per_thread - 1) / planes_per_thread;
    return {in,
            out,
            op,
            layout,
            first_interior_vector<V>(layout),
            padded_row_length<3>(layout) / V - 1,
            chunks,
            groups,
            runs};
  }
  Index threads() const { return runs * row_groups * chunks_per_row * 32; }

  KOKKOS_FUNCTION void operator()(Index thread) const {
    Index const warp = thread / 32;
    int const lane = static_cast<int>(thread - warp * 32);
    Index const band = warp / chunks_per_row;  // (run, row group)
    int const m = first_vector +
                  static_cast<int>(warp - band * chunks_per_row) * 32 + lane;
    int const y0 = static_cast<int>(band % row_groups) * rows_per_thread;
    int const run = static_cast<int>(band / row_groups);
    int const z_begin = run * planes_per_thread;
    int const count = Kokkos::min(int{planes_per_thread}, layout.nz - z_begin);
    if (run % 2 == 0) {
      stream<1>(m, y0, z_begin, count);
    } else {
      stream<-1>(m, y0, z_begin + count - 1, count);
    }
  }

 private:
  /// Planes first, first + Dir, ..., `count` of them, computed in that
  /// order. Stream index q is plane first + Dir * (q - r) and lives in ring
  /// slot q mod ring; step i computes stream index i + r and loads
  /// i + 2r + lookahead, into the slot of i - 1, which no step needs again.
  template <int Dir>
  KOKKOS_FORCEINLINE_FUNCTION void stream(int m, int y0, int first,
                                          int count) const {
    constexpr int r = radius;
    // Offsets from a plane's start of the window rows' padded column 0, and
    // the window vectors; both clamped.
    Index row_at[window_rows];
    STENCIL_UNROLL
    for (int j = 0; j < window_rows; ++j) {
      int const y = Kokkos::min(y0 - r + j, layout.ny - 1 + r);
      row_at[j] = (static_cast<Index>(y) + layout.halo) * layout.stride_y;
    }
    int vector[2 * side + 1];
    STENCIL_UNROLL
    for (int s = 0; s < 2 * side + 1; ++s) {
      vector[s] = Kokkos::max(0, Kokkos::min(m - side + s, last_vector));
    }
    auto plane_start = [&](int z) {
      z = Kokkos::max(-r, Kokkos::min(z, layout.nz - 1 + r));
      return in + (static_cast<Index>(z) + layout.halo) * layout.stride_z;
    };
    auto load = [&](T* to, T const* plane, int row, int s) {
      load_window_vector<V>(to, plane + row_at[row] + V * vector[s], s == side);
    };
    T held[ring][window_rows][window_cols];
    auto load_plane = [&](T(&slot)[window_rows][window_cols], int z) {
      T const* const plane = plane_start(z);
      STENCIL_UNROLL
      for (int row = 0; row < window_rows; ++row) {
        STENCIL_UNROLL
        for (int s = 0; s < 2 * side + 1; ++s) {
          if (in_ring(row, s)) load(&slot[row][s * V], plane, row, s);
        }
      }
    };

    STENCIL_UNROLL
    for (int q = 0; q < 2 * r + lookahead; ++q) {
      load_plane(held[q], first + Dir * (q - r));
    }

    for (int i0 = 0; i0 < count; i0 += ring) {
      STENCIL_UNROLL
      for (int j = 0; j < ring; ++j) {
        int const i = i0 + j;
        int const z = first + Dir * i;
        load_plane(held[(j + 2 * r + lookahead) % ring],
                   z + Dir * (r + lookahead));

        // The window of plane z: what the ring holds (a renaming once
        // unrolled), the rest from memory.
        T window[window_planes][window_rows][window_cols];
        STENCIL_UNROLL
        for (int k = 0; k < window_planes; ++k) {
          int const slot = (j + r + Dir * (k - r) + ring) % ring;
          T const* const plane = plane_start(z + k - r);
          STENCIL_UNROLL
          for (int row = 0; row < window_rows; ++row) {
            STENCIL_UNROLL
            for (int s = 0; s < 2 * side + 1; ++s) {
              if (in_ring(row, s)) {
                STENCIL_UNROLL
                for (int l = 0; l < V; ++l) {
                  window[k][row][s * V + l] = held[slot][row][s * V + l];
                }
              } else {
                load(&window[k][row][s * V], plane, row, s);
              }
            }
          }
        }

        T result[rows_per_thread][V];
        STENCIL_UNROLL
        for (int row = 0; row < rows_per_thread; ++row) {
          STENCIL_UNROLL
          for (int l = 0; l < V; ++l) {
            result[row][l] =
                static_cast<T>(op(Accessor{window, r, r + row, side * V + l}));
          }
        }
        if (i < count) {
          store_window_vectors<Index>(out, layout, result, m, y0, z);
        }
      }
    }
  }
};

}  // namespace stencil::detail
