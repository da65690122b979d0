// SPDX-License-Identifier: Apache-2.0
// The device kernel of the portable Naive for multi-field stencils: the
// single-field vector kernel's register windows (naive.hpp,
// vector_access.hpp), one window per field.
#pragma once

#include <stencil/detail/fields/accessor.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/portable/vector_access.hpp>
#include <stencil/detail/unroll.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace stencil::detail {

/// Rows of one column block per thread, which share their vertical
/// neighbours' loads: those re-reads from L2 bound this kernel (L2 88%
/// busy at four rows on heat-varcoef2d). Eight rows in 2D at radius 1,
/// four otherwise (at radius 2 and 4 eight ran slower:
/// docs/decisions/naive-vector-kernel.md), halving while the values a
/// functor of this shape can read from the windows (each field at its own
/// radius, plus the earlier levels' centres) exceed a register budget.
/// Unread window entries are dead loads and cost nothing; the budget keeps
/// the deep 3D waves from spilling.
template <class T, int Rank, class Op, int V>
constexpr int fields_window_rows() {
  using Fields = typename Op::fields;
  if constexpr (Rank == 1) {
    return 1;
  } else {
    auto live_registers = [](int rows) {
      int values = 0;
      for (int f = 0; f < Fields::count; ++f) {
        int const r = Fields::radii[f];
        int const rz = Rank == 3 ? r : 0;
        if (Op::shape == Shape::star) {
          values += rows * (V + 2 * r) + 2 * r * V + 2 * rz * rows * V;
        } else {
          values += (rows + 2 * r) * (V + 2 * r) * (1 + 2 * rz);
        }
        values += (Fields::levels[f] - 1) * rows * V;
      }
      return values * static_cast<int>(sizeof(T)) / 4;
    };
    constexpr bool narrow = Rank == 2 && Fields::radius == 1;
    int rows = narrow ? 8 : 4;
    int const budget = narrow ? 160 : 128;  // 32-bit registers
    while (rows > 1 && live_registers(rows) > budget) rows /= 2;
    return rows;
  }
}

/// A thread's register windows: for each field, its current level over the
/// thread's rows and V columns and the largest radius around them (planes x
/// rows x columns, laid out as WindowNeighbourhood reads them), and its
/// earlier levels at the thread's cells only (they are read there only).
template <class T, int Rank, class Fields, int Rows, int V>
struct FieldWindows {
  static constexpr int radius = Fields::radius;
  static constexpr int side = (radius + V - 1) / V;  // vectors either side
  static constexpr int cols = (2 * side + 1) * V;
  static constexpr int ry = Rank >= 2 ? radius : 0;
  static constexpr int rz = Rank >= 3 ? radius : 0;
  static constexpr int planes = 2 * rz + 1;
  static constexpr int rows = Rows + 2 * ry;
  static constexpr int earlier_levels =
      Fields::most_levels > 1 ? Fields::most_levels - 1 : 1;

  T current[Fields::count][planes][rows][cols];
  T earlier[Fields::count][earlier_levels][1][Rows][V];
};

/// The `in` of the window kernel: as FieldsNeighbourhood, with every read a
/// fixed register once the kernel's loops unroll. (`row`, `lane`) is the
/// cell within the thread's block, (z, y, x) its interior position.
template <class T, int Rank, class Fields, int Rows, int V>
struct WindowFieldsNeighbourhood {
  using fields_type = Fields;
  using value_type = T;
  using Windows = FieldWindows<T, Rank, Fields, Rows, V>;

  Windows const& windows;
  int row, lane;
  int z, y, x;
  double t;
  PositionMap map = {};

  template <int I, int Level>
  KOKKOS_FORCEINLINE_FUNCTION auto level() const {
    if constexpr (Level == 0) {
      return WindowNeighbourhood<T, Rank, Fields::radii[I], Windows::planes,
                                 Windows::rows, Windows::cols>{
          windows.current[I], Windows::rz, Windows::ry + row,
          Windows::side * V + lane};
    } else {
      return WindowNeighbourhood<T, Rank, 0, 1, Rows, V>{
          windows.earlier[I][-Level - 1], 0, row, lane};
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION Kokkos::Array<int, Rank> position() const {
    return map.template position<Rank>(z, y, x);
  }

  KOKKOS_FORCEINLINE_FUNCTION double time() const { return t; }
};

/// One step of a multi-field stencil on a device: each thread computes V
/// adjacent columns (one vector, V = 1 included) in `rows_per_thread` rows
/// of every written field, and in 3D of `planes_per_thread` planes, one
/// after another. It loads every field's window first (in 3D, the next
/// plane of it), so that all its loads are in flight at once, then
/// evaluates the functor per cell, then stores one vector per written field
/// and row. The mapping of threads to vectors and rows, and the clamps that
/// keep every load inside the buffers, are NaiveVectorSweep's (naive.hpp):
/// clamped values reach only results that are not stored.
///
/// Why: one cell per thread issues one 8-byte load per field and neighbour,
/// which caps a sweep well below copy bandwidth
/// (docs/decisions/naive-vector-kernel.md); a leapfrog's new level may
/// overwrite its oldest (the same buffer), which is safe because a thread
/// reads an earlier level only at the cells it stores, before storing.
template <class T, int Rank, class Op, class Index, int V>
struct FieldsWindowSweep {
  using Fields = typename Op::fields;
  static constexpr int rows_per_thread = fields_window_rows<T, Rank, Op, V>();
  /// Fields read beyond the cell itself.
  static constexpr int fields_with_neighbours = [] {
    int n = 0;
    for (int f = 0; f < Fields::count; ++f) n += Fields::radii[f] > 0;
    return n;
  }();
  /// Planes a thread walks down in 3D, keeping its windows' planes in
  /// registers: each plane is loaded once per run of planes instead of
  /// 2r + 1 times (as centre and as every neighbour plane). The carried
  /// windows cost registers, and with one field read around the cell that
  /// cost more than the saved loads (docs/decisions/naive-vector-kernel.md),
  /// so only stencils that read two or more fields around the cell walk.
  static constexpr int planes_per_thread =
      Rank == 3 && fields_with_neighbours >= 2 ? 16 : 1;
  using Windows = FieldWindows<T, Rank, Fields, rows_per_thread, V>;
  using Accessor =
      WindowFieldsNeighbourhood<T, Rank, Fields, rows_per_thread, V>;

  FieldBuffers<T, Fields> buffers;
  Op op;
  PaddedLayout layout;
  double time;
  PositionMap map;
  int first_vector;      // halo / V
  int last_vector;       // last vector of a padded row (or rank-1 array)
  Index chunks_per_row;  // warps across a row
  Index row_groups;      // blocks of rows_per_thread rows per plane
  Index segments;        // runs of planes_per_thread planes

  static FieldsWindowSweep make(FieldBuffers<T, Fields> const& buffers,
                                Op const& op, PaddedLayout const& layout,
                                double time, PositionMap const& map) {
    return {buffers,
            op,
            layout,
            time,
            map,
            first_interior_vector<V>(layout),
            padded_row_length<Rank>(layout) / V - 1,
            (interior_vectors<V>(layout) + 31) / 32,
            (layout.ny + rows_per_thread - 1) / rows_per_thread,
            (layout.nz + planes_per_thread - 1) / planes_per_thread};
  }
  Index threads() const { return segments * row_groups * chunks_per_row * 32; }

  KOKKOS_FUNCTION void operator()(Index thread) const {
    constexpr int side = Windows::side;
    constexpr int ry = Windows::ry;
    constexpr int rz = Windows::rz;
    constexpr int planes = Windows::planes;
    Index const warp = thread / 32;
    int const lane = static_cast<int>(thread - warp * 32);
    Index const band = warp / chunks_per_row;  // (plane segment, row group)
    int const m = first_vector +
                  static_cast<int>(warp - band * chunks_per_row) * 32 + lane;
    int const y0 = static_cast<int>(band % row_groups) * rows_per_thread;
    int const z_begin = static_cast<int>(band / row_groups) * planes_per_thread;

    // Padded column 0 of every window row in plane 0, rows clamped; a
    // plane adds its multiple of stride_z. The same offsets serve every
    // field (one layout).
    Index row_at[Windows::rows];
    STENCIL_UNROLL
    for (int j = 0; j < Windows::rows; ++j) {
      int const y = Kokkos::min(y0 - ry + j, layout.ny - 1 + ry);
      row_at[j] = layout.offset<Index>(0, y, 0) - layout.halo;
    }
    int vector[2 * side + 1];
    STENCIL_UNROLL
    for (int s = 0; s < 2 * side + 1; ++s) {
      vector[s] = Kokkos::max(0, Kokkos::min(m - side + s, last_vector));
    }

    // Where plane z starts, relative to plane 0 (below rank 3 a constant 0,
    // so the 2D kernels carry no plane arithmetic).
    auto plane_offset = [&](int z) -> Index {
      return Rank == 3 ? static_cast<Index>(z) * layout.stride_z : 0;
    };
    // Plane z (a halo plane at either end) into window slot k of every field.
    Windows w;
    auto load_plane = [&](auto slot, int z) {
      constexpr int k = decltype(slot)::value;
      Index const plane = plane_offset(z);
      for_each_constant<Fields::count>([&](auto field) {
        constexpr int f = decltype(field)::value;
        T const* const current = buffers.level[f][0] + plane;
        STENCIL_UNROLL
        for (int s = 0; s < 2 * side + 1; ++s) {
          STENCIL_UNROLL
          for (int j = 0; j < Windows::rows; ++j) {
            load_window_vector<V>(&w.current[f][k][j][s * V],
                                  current + row_at[j] + V * vector[s],
                                  s == side);
          }
        }
      });
    };
    for_each_constant<planes - 1>([&](auto slot) {
      load_plane(slot, z_begin - rz + decltype(slot)::value);
    });

    auto sweep_plane = [&](int z) {
      load_plane(std::integral_constant<int, planes - 1>{}, z + rz);
      Index const plane = plane_offset(z);
      for_each_constant<Fields::count>([&](auto field) {
        constexpr int f = decltype(field)::value;
        constexpr int levels = Fields::levels[f];
        STENCIL_UNROLL
        for (int e = 1; e < levels; ++e) {
          T const* const earlier = buffers.level[f][e] + plane;
          STENCIL_UNROLL
          for (int i = 0; i < rows_per_thread; ++i) {
            load_window_vector<V>(&w.earlier[f][e - 1][0][i][0],
                                  earlier + row_at[ry + i] + V * vector[side],
                                  true);
          }
        }
      });

      T result[Fields::written_count][rows_per_thread][V];
      STENCIL_UNROLL
      for (int i = 0; i < rows_per_thread; ++i) {
        STENCIL_UNROLL
        for (int l = 0; l < V; ++l) {
          T values[Fields::written_count];
          functor_values<T, Fields>(
              op(Accessor{w, i, l, z, y0 + i, V * m - layout.halo + l, time,
                          map}),
              values);
          STENCIL_UNROLL
          for (int s = 0; s < Fields::written_count; ++s) {
            result[s][i][l] = values[s];
          }
        }
      }
      STENCIL_UNROLL
      for (int s = 0; s < Fields::written_count; ++s) {
        store_window_vectors<Index>(buffers.out[s], layout, result[s], m, y0,
                                    z);
      }
    };
    if constexpr (planes_per_thread == 1) {
      sweep_plane(z_begin);
    } else {
      int const z_end = Kokkos::min(z_begin + planes_per_thread, layout.nz);
      for (int z = z_begin; z < z_end; ++z) {
        sweep_plane(z);
        // Down one plane: the slots move down, the next iteration loads the
        // top one. (Registers: the unrolled copies are renames or moves.)
        STENCIL_UNROLL
        for (int k = 0; k + 1 < planes; ++k) {
          STENCIL_UNROLL
          for (int f = 0; f < Fields::count; ++f) {
            STENCIL_UNROLL
            for (int j = 0; j < Windows::rows; ++j) {
              STENCIL_UNROLL
              for (int c = 0; c < Windows::cols; ++c) {
                w.current[f][k][j][c] = w.current[f][k + 1][j][c];
              }
            }
          }
        }
      }
    }
  }
};

/// The widest vector every buffer of this step allows (1: scalar accesses):
/// naive_vector_width's rule applied to each field level and output.
template <class T, int Rank, class Fields>
int fields_vector_width(FieldBuffers<T, Fields> const& buffers,
                        PaddedLayout const& layout) {
  int width = max_vector_width_v<T>;
  auto allow = [&](T const* p) {
    if (p != nullptr) {
      width = Kokkos::min(width, naive_vector_width<T, Rank>(p, p, layout));
    }
  };
  for (int f = 0; f < Fields::count; ++f) {
    for (int k = 0; k < Fields::most_levels; ++k) allow(buffers.level[f][k]);
  }
  for (int s = 0; s < Fields::written_count; ++s) allow(buffers.out[s]);
  return width;
}

/// One step of the window kernel with vector width V, which the caller
/// checked with fields_vector_width. Written for device spaces but correct
/// on any space; the unit tests run it on the host.
template <int V, class Index, class ExecSpace, class T, class Op>
void fields_window_step_as(ExecSpace const& space,
                           FieldBuffers<T, typename Op::fields> const& buffers,
                           Op const& op, PaddedLayout const& layout,
                           double time, PositionMap const& map) {
  using Sweep = FieldsWindowSweep<T, Op::rank, Op, Index, V>;
  Sweep const sweep = Sweep::make(buffers, op, layout, time, map);
  Kokkos::parallel_for("stencil::fields_naive",
                       Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(
                           space, 0, sweep.threads()),
                       sweep);
}

}  // namespace stencil::detail
