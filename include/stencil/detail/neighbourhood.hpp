// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/config.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

// A read beyond the declared radius is caught two ways:
// - at compile time where the offset is a constant after inlining (GCC and
//   Clang, optimising, host code): a call to a function with an error
//   attribute survives only on that path, and the build fails with its
//   message;
// - at run time in a checking build (STENCIL_ENABLE_CHECKS, or Kokkos'
//   debug bounds check): every read compares its offsets with the radius and
//   aborts the kernel with a message naming both.
#if defined(__GNUC__) && defined(__OPTIMIZE__) && !defined(__CUDACC__) && \
    !defined(__HIPCC__) && !defined(SYCL_LANGUAGE_VERSION)
#define STENCIL_IMPL_STATIC_OFFSET_CHECK 1
#else
#define STENCIL_IMPL_STATIC_OFFSET_CHECK 0
#endif
#if STENCIL_ENABLE_CHECKS || defined(KOKKOS_ENABLE_DEBUG_BOUNDS_CHECK)
#define STENCIL_IMPL_RUNTIME_OFFSET_CHECK 1
#else
#define STENCIL_IMPL_RUNTIME_OFFSET_CHECK 0
#endif

namespace stencil::detail {

#if STENCIL_IMPL_STATIC_OFFSET_CHECK
/// Declared, never defined: only a path that reads a constant offset beyond
/// the radius keeps a call to it.
__attribute__((error(
    "stencil::in: a constant offset is beyond the stencil's declared radius; "
    "read within the radius, or declare a larger one (static constexpr int "
    "radius)"))) void
offset_beyond_declared_radius();
__attribute__((error(
    "stencil::in: a constant offset is beyond the radius its axis is read "
    "within; read within it, or widen stencil::fields<...>::within<...>"))) void
offset_beyond_declared_axis_radius();
#endif

/// Aborts with "stencil::in: in(offsets) reads beyond the stencil's
/// declared radius ..." on stderr (src/error.cpp).
[[noreturn]] void abort_offset_beyond_radius(int radius, int const* offsets,
                                             int count);

/// Prints the offsets (a device kernel has no stderr) and traps.
KOKKOS_INLINE_FUNCTION void trap_offset_beyond_radius(int radius, int const* o,
                                                      int n) {
  if (n == 1) {
    Kokkos::printf(
        "stencil::in: in(%d) reads beyond the stencil's declared "
        "radius %d\n",
        o[0], radius);
  } else if (n == 2) {
    Kokkos::printf(
        "stencil::in: in(%d, %d) reads beyond the stencil's "
        "declared radius %d\n",
        o[0], o[1], radius);
  } else {
    Kokkos::printf(
        "stencil::in: in(%d, %d, %d) reads beyond the stencil's "
        "declared radius %d\n",
        o[0], o[1], o[2], radius);
  }
  Kokkos::abort("stencil::in: a read beyond the stencil's declared radius");
}

/// Stops the kernel: `offsets` (one per dimension, slowest first) reach
/// beyond `radius`. Out of line so that the checked reads stay small.
template <class... Offsets>
KOKKOS_FUNCTION void report_offset_beyond_radius(int radius,
                                                 Offsets... offsets) {
  int const o[] = {static_cast<int>(offsets)...};
  constexpr int n = sizeof...(Offsets);
  KOKKOS_IF_ON_HOST((abort_offset_beyond_radius(radius, o, n);))
  KOKKOS_IF_ON_DEVICE((trap_offset_beyond_radius(radius, o, n);))
}

/// The check every accessor's in(...) makes (see the top of this file):
/// each offset against the radius of its axis (`Radius...` and the offsets
/// both slowest first); nothing at all in an unchecked build whose offsets
/// are not constants. `Within` names fields::within in the compile-time
/// message, for radii narrowed per axis.
template <bool Within, int... Radius, class... Offsets>
KOKKOS_FORCEINLINE_FUNCTION void check_offsets_per_axis(Offsets... offsets) {
  static_assert(sizeof...(Radius) == sizeof...(Offsets));
#if STENCIL_IMPL_STATIC_OFFSET_CHECK
  if (((__builtin_constant_p(offsets) &&
        (offsets > Radius || offsets < -Radius)) ||
       ...)) {
    if constexpr (Within) {
      offset_beyond_declared_axis_radius();
    } else {
      offset_beyond_declared_radius();
    }
  }
#endif
#if STENCIL_IMPL_RUNTIME_OFFSET_CHECK
  int beyond = -1;  // the radius of the first axis read beyond it
  ((beyond < 0 && (offsets > Radius || offsets < -Radius) ? beyond = Radius
                                                          : 0),
   ...);
  if (beyond >= 0) report_offset_beyond_radius(beyond, offsets...);
#else
  ((void)offsets, ...);
#endif
}

/// The same radius on every axis: a stencil's declared radius.
template <int Radius, class... Offsets>
KOKKOS_FORCEINLINE_FUNCTION void check_offsets(Offsets... offsets) {
  check_offsets_per_axis<false, (0 * sizeof(Offsets) + Radius)...>(offsets...);
}

/// Every accessor's in(...) takes one offset per grid dimension; this keeps
/// the message the same whichever kernel the functor runs in.
template <int Rank, int Count>
KOKKOS_FORCEINLINE_FUNCTION constexpr void check_offset_count() {
  static_assert(Count == Rank,
                "stencil::in: in(...) takes one offset per grid dimension: "
                "in(dx) for rank 1, in(dy, dx) for rank 2, in(dz, dy, dx) "
                "for rank 3");
}

/// The accessor a stencil functor receives as `in`: a pointer to the centre
/// cell and the strides of the slower dimensions. The same type serves a
/// global-memory View and a scratch tile, so one functor body runs on both.
/// Offsets are literals in practice; after inlining they fold into fixed
/// address offsets. `Radius` is the stencil's, for check_offsets, and
/// `AxisRadius...`, where given (one per dimension, slowest first), each
/// axis's, for check_offsets_per_axis.
template <class T, int Rank, int Radius, int... AxisRadius>
struct Neighbourhood {
  using value_type = T;
  T const* centre;
  int stride_y = 0;  // elements between consecutive rows (Rank >= 2)
  int stride_z = 0;  // elements between consecutive planes (Rank == 3)

  template <class... Offsets>
  KOKKOS_FORCEINLINE_FUNCTION T operator()(Offsets... offsets) const {
    check_offset_count<Rank, sizeof...(Offsets)>();
    if constexpr (sizeof...(AxisRadius) == sizeof...(Offsets)) {
      check_offsets_per_axis<true, AxisRadius...>(static_cast<int>(offsets)...);
    } else {
      check_offsets<Radius>(static_cast<int>(offsets)...);
    }
    return centre[linear_offset(static_cast<int>(offsets)...)];
  }

 private:
  KOKKOS_FORCEINLINE_FUNCTION int linear_offset(int dx) const { return dx; }
  KOKKOS_FORCEINLINE_FUNCTION int linear_offset(int dy, int dx) const {
    return dy * stride_y + dx;
  }
  KOKKOS_FORCEINLINE_FUNCTION int linear_offset(int dz, int dy, int dx) const {
    return dz * stride_z + dy * stride_y + dx;
  }
};

/// A 3D accessor over a ring of planes that need not be contiguous or in
/// order (a z-streaming kernel keeps 2r+1 planes in a circular buffer):
/// plane[dz + Radius] points at the centre column of plane dz.
template <class T, int Radius>
struct PlaneRingNeighbourhood {
  using value_type = T;
  T const* plane[2 * Radius + 1];
  int centre = 0;  // offset of the centre cell within each plane
  int stride_y = 0;

  KOKKOS_FORCEINLINE_FUNCTION T operator()(int dz, int dy, int dx) const {
    check_offsets<Radius>(dz, dy, dx);
    return plane[dz + Radius][centre + dy * stride_y + dx];
  }
};

/// The 2D counterpart: a ring of lines (a y-streaming kernel keeps 2r+1
/// lines in a circular buffer); line[dy + Radius] points at the centre
/// column of line dy.
template <class T, int Radius>
struct LineRingNeighbourhood {
  using value_type = T;
  T const* line[2 * Radius + 1];
  int centre = 0;  // offset of the centre cell within each line

  KOKKOS_FORCEINLINE_FUNCTION T operator()(int dy, int dx) const {
    check_offsets<Radius>(dy, dx);
    return line[dy + Radius][centre + dx];
  }
};

}  // namespace stencil::detail
