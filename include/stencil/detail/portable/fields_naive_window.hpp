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
/// of every written field. It loads every field's window first, so that all
/// its loads are in flight at once, then evaluates the functor per cell,
/// then stores one vector per written field and row. The mapping of threads
/// to vectors, rows and planes, and the clamps that keep every load inside
/// the buffers, are NaiveVectorSweep's (naive.hpp): clamped values reach
/// only results that are not stored.
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
            (layout.ny + rows_per_thread - 1) / rows_per_thread};
  }
  Index threads() const {
    return static_cast<Index>(layout.nz) * row_groups * chunks_per_row * 32;
  }

  KOKKOS_FUNCTION void operator()(Index thread) const {
    constexpr int side = Windows::side;
    constexpr int ry = Windows::ry;
    constexpr int rz = Windows::rz;
    Index const warp = thread / 32;
    int const lane = static_cast<int>(thread - warp * 32);
    Index const band = warp / chunks_per_row;  // (z, row group)
    int const m = first_vector +
                  static_cast<int>(warp - band * chunks_per_row) * 32 + lane;
    int const y0 = static_cast<int>(band % row_groups) * rows_per_thread;
    int const z = static_cast<int>(band / row_groups);

    // Padded column 0 of every window row, rows clamped; the same offsets
    // serve every field (one layout).
    Index row_at[Windows::planes][Windows::rows];
    STENCIL_UNROLL
    for (int k = 0; k < Windows::planes; ++k) {
      STENCIL_UNROLL
      for (int j = 0; j < Windows::rows; ++j) {
        int const y = Kokkos::min(y0 - ry + j, layout.ny - 1 + ry);
        row_at[k][j] = layout.offset<Index>(z - rz + k, y, 0) - layout.halo;
      }
    }
    int vector[2 * side + 1];
    STENCIL_UNROLL
    for (int s = 0; s < 2 * side + 1; ++s) {
      vector[s] = Kokkos::max(0, Kokkos::min(m - side + s, last_vector));
    }

    Windows w;
    for_each_constant<Fields::count>([&](auto field) {
      constexpr int f = decltype(field)::value;
      constexpr int levels = Fields::levels[f];
      T const* const current = buffers.level[f][0];
      STENCIL_UNROLL
      for (int s = 0; s < 2 * side + 1; ++s) {
        STENCIL_UNROLL
        for (int k = 0; k < Windows::planes; ++k) {
          STENCIL_UNROLL
          for (int j = 0; j < Windows::rows; ++j) {
            load_window_vector<V>(&w.current[f][k][j][s * V],
                                  current + row_at[k][j] + V * vector[s],
                                  s == side);
          }
        }
      }
      STENCIL_UNROLL
      for (int e = 1; e < levels; ++e) {
        T const* const earlier = buffers.level[f][e];
        STENCIL_UNROLL
        for (int i = 0; i < rows_per_thread; ++i) {
          load_window_vector<V>(&w.earlier[f][e - 1][0][i][0],
                                earlier + row_at[rz][ry + i] + V * vector[side],
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
      store_window_vectors<Index>(buffers.out[s], layout, result[s], m, y0, z);
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
