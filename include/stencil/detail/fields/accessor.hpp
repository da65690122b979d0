// SPDX-License-Identifier: Apache-2.0
// The `in` a multi-field functor receives: every field's levels around one
// cell, the cell's position and the time. stencil::read<I, Level>(in)
// returns a single-field accessor (Neighbourhood) into one of them, so a
// field is read exactly as a single-field stencil reads its grid.
#pragma once

#include <stencil/detail/fields/position_map.hpp>
#include <stencil/detail/neighbourhood.hpp>
#include <stencil/fields/declare.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace stencil::detail {

/// Where a kernel reads and writes: for field f, `level[f][k]` is the padded
/// buffer of time level -k (k < the field's levels), and for written slot s
/// `out[s]` the buffer its new level goes to. All fields of a State share
/// one padded layout, so one cell offset serves every buffer.
template <class T, class Fields>
struct FieldBuffers {
  T const* level[Fields::count][Fields::most_levels] = {};
  T* out[Fields::written_count] = {};
};

/// The accessor of level `Level` of field `I` (a Neighbourhood): within
/// the field's radius, and within each axis's where the fields declare
/// `within`; earlier levels at the cell itself.
template <class T, int Rank, class Fields, int I, int Level,
          class Axes = std::make_integer_sequence<int, Rank>>
struct FieldAccessor;
template <class T, int Rank, class Fields, int I, int Level, int... Axis>
struct FieldAccessor<T, Rank, Fields, I, Level,
                     std::integer_sequence<int, Axis...>> {
  static constexpr int radius = Level == 0 ? Fields::radii[I] : 0;
  using type = std::conditional_t<
      Fields::within_count == 0, Neighbourhood<T, Rank, radius>,
      Neighbourhood<T, Rank, radius,
                    (Level == 0 ? radius_along<Fields, I>(Rank - 1 - Axis)
                                : 0)...>>;
};

/// The accessor of cell `at` (an offset into every padded buffer).
/// `position` is the cell's interior index, slowest dimension first.
template <class T, int Rank, class Fields>
struct FieldsNeighbourhood {
  using fields_type = Fields;
  using value_type = T;

  FieldBuffers<T, Fields> const& buffers;
  std::int64_t at;
  int stride_y;
  int stride_z;
  int z, y, x;
  double t;
  PositionMap map = {};

  /// stencil::read<I, Level>(in): level 0 within the field's radius,
  /// earlier levels at the cell itself (radius 0: check_offsets catches
  /// any other offset).
  template <int I, int Level>
  KOKKOS_FORCEINLINE_FUNCTION
      typename FieldAccessor<T, Rank, Fields, I, Level>::type
      level() const {
    return {buffers.level[I][-Level] + at, stride_y, stride_z};
  }

  /// The cell's interior index, slowest dimension first: {x} for rank 1,
  /// {y, x} for rank 2, {z, y, x} for rank 3 (0 .. extent-1).
  KOKKOS_FORCEINLINE_FUNCTION Kokkos::Array<int, Rank> position() const {
    return map.template position<Rank>(z, y, x);
  }

  /// The time of the level being read: the state's time at this step.
  KOKKOS_FORCEINLINE_FUNCTION double time() const { return t; }
};

/// Where a tiled kernel's team keeps the current level of the fields it
/// stages in scratch (those read at level 0 with a radius > 0): `origin[f]`
/// is tile cell (0, 0) of field f, its halo of radii[f] cells before it,
/// and `row[f]` the elements between its rows. Rank 3 keeps a ring of
/// 2 radii[f] + 1 planes per field: `origin[f]` is that cell in ring slot
/// 0, `plane[f]` the elements between slots and `first_slot[f]` the slot of
/// plane z - radii[f]. Unstaged fields leave their entries unused.
template <class T, class Fields>
struct FieldTiles {
  T const* origin[Fields::count] = {};
  int row[Fields::count] = {};
  int plane[Fields::count] = {};
  int first_slot[Fields::count] = {};

  /// True for a field whose current level the tiled kernels stage.
  KOKKOS_INLINE_FUNCTION static constexpr bool staged(int f) {
    return Fields::radii[f] > 0;
  }
};

/// The `in` of a tiled kernel (the portable SpatialBlocking): as
/// FieldsNeighbourhood, but the current level of a staged field is read
/// from the team's scratch tile (a Neighbourhood, or for rank 3 a ring of
/// planes) and the rest (radius-0 fields, earlier levels) from the global
/// buffers at `at`. (`yy`, `xx`) is the cell within the tile.
template <class T, int Rank, class Fields>
struct TiledFieldsNeighbourhood {
  using fields_type = Fields;
  using value_type = T;

  FieldBuffers<T, Fields> const& buffers;
  FieldTiles<T, Fields> const& tiles;
  std::int64_t at;
  int stride_y;
  int stride_z;
  int yy, xx;
  int z, y, x;
  double t;
  PositionMap map = {};

  template <int I, int Level>
  KOKKOS_FORCEINLINE_FUNCTION auto level() const {
    constexpr int r = Level == 0 ? Fields::radii[I] : 0;
    if constexpr (Level == 0 && FieldTiles<T, Fields>::staged(I)) {
      int const centre = yy * tiles.row[I] + xx;
      if constexpr (Rank < 3) {
        return typename FieldAccessor<T, Rank, Fields, I, Level>::type{
            tiles.origin[I] + centre, tiles.row[I], 0};
      } else {
        constexpr int ring = 2 * r + 1;
        PlaneRingNeighbourhood<T, r> nb;
        nb.centre = centre;
        nb.stride_y = tiles.row[I];
        int slot = tiles.first_slot[I];
        for (int j = 0; j < ring; ++j) {
          nb.plane[j] = tiles.origin[I] + slot * tiles.plane[I];
          slot = slot + 1 == ring ? 0 : slot + 1;
        }
        return nb;
      }
    } else {
      return typename FieldAccessor<T, Rank, Fields, I, Level>::type{
          buffers.level[I][-Level] + at, stride_y, stride_z};
    }
  }

  /// As FieldsNeighbourhood::position().
  KOKKOS_FORCEINLINE_FUNCTION Kokkos::Array<int, Rank> position() const {
    return map.template position<Rank>(z, y, x);
  }

  KOKKOS_FORCEINLINE_FUNCTION double time() const { return t; }
};

/// Checks that a functor's result gives one value per written field of
/// `Fields`: `stencil::values{...}` of that many, or for one written field
/// a scalar.
template <class Fields, class Result>
KOKKOS_FORCEINLINE_FUNCTION constexpr void check_functor_values() {
  constexpr int n = Fields::written_count;
  if constexpr (requires(Result const& r) { r.value[0]; }) {
    static_assert(sizeof(Result::value) / sizeof(Result::value[0]) == n,
                  "stencil::values: the functor returns a different number "
                  "of values than the fields it declares written "
                  "(stencil::field; stencil::coefficient is not written)");
  } else {
    static_assert(n == 1,
                  "stencil::values: a stencil that writes several fields "
                  "returns stencil::values{...}, one value per written "
                  "field in declaration order");
  }
}

/// The value a functor's result gives written field `S` (after
/// check_functor_values).
template <int S, class Result>
KOKKOS_FORCEINLINE_FUNCTION auto functor_value(Result const& result) {
  if constexpr (requires { result.value[0]; }) {
    return result.value[S];
  } else {
    return result;
  }
}

/// A functor's result as one value per written field (`Fields` declares
/// them): `stencil::values{...}` or, for one written field, a scalar.
template <class T, class Fields, class Result>
KOKKOS_FORCEINLINE_FUNCTION void functor_values(
    Result const& result, T (&values)[Fields::written_count]) {
  check_functor_values<Fields, Result>();
  if constexpr (requires { result.value[0]; }) {
    for (int s = 0; s < Fields::written_count; ++s) {
      values[s] = static_cast<T>(result.value[s]);
    }
  } else {
    values[0] = static_cast<T>(result);
  }
}

/// Stores a functor's result for the cell at `at` into each written field.
template <class T, class Fields, class Result>
KOKKOS_FORCEINLINE_FUNCTION void store_fields(
    FieldBuffers<T, Fields> const& buffers, std::int64_t at,
    Result const& result) {
  T values[Fields::written_count];
  functor_values<T, Fields>(result, values);
  for (int s = 0; s < Fields::written_count; ++s) {
    buffers.out[s][at] = values[s];
  }
}

}  // namespace stencil::detail
