// SPDX-License-Identifier: Apache-2.0
#pragma once

// Vector loads and register windows shared by the device kernels of the
// Naive policy.

#include <stencil/detail/neighbourhood.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/unroll.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace stencil::detail {

/// The widest vector (elements per memory access) the device path uses for
/// T: 16 bytes of 4- or 8-byte values, else one element.
template <class T>
inline constexpr int max_vector_width_v = (std::is_arithmetic_v<T> &&
                                           (sizeof(T) == 4 || sizeof(T) == 8))
                                              ? static_cast<int>(16 / sizeof(T))
                                              : 1;

/// V consecutive elements, aligned to their size: loads and stores of it are
/// single 8- or 16-byte accesses.
template <class T, int V>
struct alignas(sizeof(T) * V) Vector {
  T v[V];
};

/// `p`, with the promise that it is aligned to `Bytes`, which lets the
/// compiler fuse element loads from it into one vector load.
template <std::size_t Bytes, class T>
KOKKOS_FORCEINLINE_FUNCTION T const* assume_aligned(T const* p) {
#if defined(__GNUC__) || defined(__clang__)
  return static_cast<T const*>(__builtin_assume_aligned(p, Bytes));
#else
  return p;
#endif
}

/// Length, in elements, that must be a multiple of V for every row of the
/// padded array to start on a V-element boundary: the padded row (rank 2 and
/// 3; a plane is a whole number of rows), or the whole padded array in rank
/// 1 (so that its last vector does not run past the allocation).
template <int Rank>
KOKKOS_INLINE_FUNCTION constexpr int padded_row_length(
    PaddedLayout const& layout) {
  return Rank == 1 ? layout.nx + 2 * layout.halo : layout.stride_y;
}

/// The vector width of the device path for this step: the widest V (up to
/// max_vector_width_v<T>, halving) such that both buffers are aligned to
/// V * sizeof(T) bytes and every padded row (and plane) is a whole number of
/// vectors. 1 selects the scalar kernel. Exact: a width is returned only when
/// every vector access of NaiveVectorSweep<.., V> is aligned and inside the
/// buffer.
template <class T, int Rank>
int naive_vector_width(T const* in, T const* out, PaddedLayout const& layout) {
  int const row = padded_row_length<Rank>(layout);
  for (int v = max_vector_width_v<T>; v > 1; v /= 2) {
    auto const bytes = static_cast<std::uintptr_t>(v) * sizeof(T);
    bool const aligned = reinterpret_cast<std::uintptr_t>(in) % bytes == 0 &&
                         reinterpret_cast<std::uintptr_t>(out) % bytes == 0;
    bool const whole_rows = row % v == 0 &&
                            (Rank < 2 || layout.stride_y % v == 0) &&
                            (Rank < 3 || layout.stride_z % v == 0);
    if (aligned && whole_rows) return v;
  }
  return 1;
}

/// Vectors of a padded row, as the vector kernels index them: the first that
/// holds an interior column, and how many from it on hold interior columns.
template <int V>
KOKKOS_INLINE_FUNCTION constexpr int first_interior_vector(
    PaddedLayout const& layout) {
  return layout.halo / V;
}
template <int V>
KOKKOS_INLINE_FUNCTION constexpr int interior_vectors(
    PaddedLayout const& layout) {
  return (layout.halo + layout.nx - 1) / V - first_interior_vector<V>(layout) +
         1;
}

/// Loads the V values at `at` (aligned to V elements) into `to`. The centre
/// vector of a window is read in all its lanes: one vector load. A side
/// vector is often only partly read: element loads from an address the
/// compiler knows to be aligned, which it fuses into one vector load where
/// all lanes are read. (Copied as a whole Vector, a partly read vector is
/// split into scalar loads placed at their first use, between the functor's
/// divisions and other arithmetic, which serialises the loads.) `centre` is a
/// constant once the callers' loops unroll.
template <int V, class T>
KOKKOS_FORCEINLINE_FUNCTION void load_window_vector(T* to, T const* at,
                                                    bool centre) {
  using Vec = Vector<T, V>;
  if (centre) {
    Vec const whole = *reinterpret_cast<Vec const*>(at);
    STENCIL_UNROLL
    for (int l = 0; l < V; ++l) to[l] = whole.v[l];
  } else {
    T const* const lanes = assume_aligned<sizeof(Vec)>(at);
    STENCIL_UNROLL
    for (int l = 0; l < V; ++l) to[l] = lanes[l];
  }
}

/// Stores the results of vector m (padded columns [V*m, V*m+V)) in rows
/// y0 .. y0+Rows-1 of plane z: one vector store per row where all V columns
/// are interior, element stores at the ends of a row, so halo columns and
/// rows past ny are never written.
template <class Index, class T, int Rows, int V>
KOKKOS_FORCEINLINE_FUNCTION void store_window_vectors(
    T* out, PaddedLayout const& layout, T const (&result)[Rows][V], int m,
    int y0, int z) {
  int const x = V * m - layout.halo;  // interior column of lane 0
  bool const whole = x >= 0 && x + V <= layout.nx;
  STENCIL_UNROLL
  for (int i = 0; i < Rows; ++i) {
    if (y0 + i >= layout.ny) continue;
    T* const row = out + (layout.offset<Index>(z, y0 + i, 0) - layout.halo);
    if (whole) {
      Vector<T, V> v;
      STENCIL_UNROLL
      for (int l = 0; l < V; ++l) v.v[l] = result[i][l];
      reinterpret_cast<Vector<T, V>*>(row)[m] = v;
    } else {
      STENCIL_UNROLL
      for (int l = 0; l < V; ++l) {
        if (x + l >= 0 && x + l < layout.nx) row[V * m + l] = result[i][l];
      }
    }
  }
}

/// The accessor a stencil functor receives in the vector kernel: a register
/// window of Planes x Rows x Cols values and the position of the centre cell
/// in it. With the loops of NaiveVectorSweep unrolled, the centre and the
/// functor's literal offsets are constants, so every read is a fixed
/// register.
template <class T, int Rank, int Radius, int Planes, int Rows, int Cols>
struct WindowNeighbourhood {
  using value_type = T;
  T const (&window)[Planes][Rows][Cols];
  int z, y, x;  // centre position in the window

  template <class... Offsets>
  KOKKOS_FORCEINLINE_FUNCTION T operator()(Offsets... offsets) const {
    check_offset_count<Rank, sizeof...(Offsets)>();
    check_offsets<Radius>(static_cast<int>(offsets)...);
    return at(static_cast<int>(offsets)...);
  }

 private:
  KOKKOS_FORCEINLINE_FUNCTION T at(int dx) const { return at(0, 0, dx); }
  KOKKOS_FORCEINLINE_FUNCTION T at(int dy, int dx) const {
    return at(0, dy, dx);
  }
  KOKKOS_FORCEINLINE_FUNCTION T at(int dz, int dy, int dx) const {
    // Offsets beyond the stencil's declared radius are outside the window.
    KOKKOS_ASSERT(z + dz >= 0 && z + dz < Planes && y + dy >= 0 &&
                  y + dy < Rows && x + dx >= 0 && x + dx < Cols);
    return window[z + dz][y + dy][x + dx];
  }
};

}  // namespace stencil::detail
