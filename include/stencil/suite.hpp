// SPDX-License-Identifier: Apache-2.0
#pragma once

// The benchmark stencils of the published GPU temporal-blocking work
// (STENCILGEN, AN5D, EBISU), with the coefficients those papers use, so that
// results can be compared with theirs line by line. Each functor also
// declares `name` and `flops` (floating-point operations per cell), which
// the benchmarks use; the library itself needs only rank, radius and shape.
// Coefficients are converted to the grid's value type, so float grids
// compute in float. The divisions by 118 and 159 go through
// stencil::Divisor, which returns the plain division's bits for less work
// on a GPU.

#include <stencil/divisor.hpp>
#include <stencil/traits.hpp>

#include <Kokkos_Core.hpp>

namespace stencil::suite {

struct J2d5pt {
  static constexpr char const* name = "j2d5pt";
  static constexpr int rank = 2, radius = 1, flops = 10;
  static constexpr Shape shape = Shape::star;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    constexpr Divisor<T> by_118(T(118));
    return (T(5) * in(-1, 0) + T(12) * in(0, -1) + T(15) * in(0, 0) +
            T(12) * in(0, 1) + T(5) * in(1, 0)) /
           by_118;
  }
};

struct J2d9pt {
  static constexpr char const* name = "j2d9pt";
  static constexpr int rank = 2, radius = 2, flops = 18;
  static constexpr Shape shape = Shape::star;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    constexpr Divisor<T> by_118(T(118));
    return (T(7) * in(-2, 0) + T(5) * in(-1, 0) + T(9) * in(0, -2) +
            T(12) * in(0, -1) + T(15) * in(0, 0) + T(12) * in(0, 1) +
            T(9) * in(0, 2) + T(5) * in(1, 0) + T(7) * in(2, 0)) /
           by_118;
  }
};

struct J2d9ptGol {
  static constexpr char const* name = "j2d9pt-gol";
  static constexpr int rank = 2, radius = 1, flops = 18;
  static constexpr Shape shape = Shape::box;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    constexpr Divisor<T> by_118(T(118));
    return (T(7) * in(-1, -1) + T(5) * in(-1, 0) + T(9) * in(-1, 1) +
            T(12) * in(0, -1) + T(15) * in(0, 0) + T(12) * in(0, 1) +
            T(9) * in(1, -1) + T(5) * in(1, 0) + T(7) * in(1, 1)) /
           by_118;
  }
};

struct J2d25pt {
  static constexpr char const* name = "j2d25pt";
  static constexpr int rank = 2, radius = 2, flops = 25;
  static constexpr Shape shape = Shape::box;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    constexpr Divisor<T> by_118(T(118));
    return (T(1) * in(-2, -2) + T(2) * in(-2, -1) + T(3) * in(-2, 0) +
            T(4) * in(-2, 1) + T(5) * in(-2, 2) +  //
            T(7) * in(-1, -2) + T(7) * in(-1, -1) + T(5) * in(-1, 0) +
            T(7) * in(-1, 1) + T(6) * in(-1, 2) +  //
            T(8) * in(0, -2) + T(12) * in(0, -1) + T(15) * in(0, 0) +
            T(12) * in(0, 1) + T(12) * in(0, 2) +  //
            T(9) * in(1, -2) + T(9) * in(1, -1) + T(5) * in(1, 0) +
            T(7) * in(1, 1) + T(15) * in(1, 2) +  //
            T(10) * in(2, -2) + T(11) * in(2, -1) + T(12) * in(2, 0) +
            T(13) * in(2, 1) + T(14) * in(2, 2)) /
           by_118;
  }
};

struct J3d7pt {
  static constexpr char const* name = "j3d7pt";
  static constexpr int rank = 3, radius = 1, flops = 14;
  static constexpr Shape shape = Shape::star;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    return T(0.161) * in(0, 0, 1) + T(0.162) * in(0, 0, -1) +
           T(0.163) * in(0, 1, 0) + T(0.164) * in(0, -1, 0) +
           T(0.165) * in(1, 0, 0) + T(0.166) * in(-1, 0, 0) -
           T(1.67) * in(0, 0, 0);
  }
};

struct J3d13pt {
  static constexpr char const* name = "j3d13pt";
  static constexpr int rank = 3, radius = 2, flops = 26;
  static constexpr Shape shape = Shape::star;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    return T(0.083) * (in(0, 0, -2) + in(0, 0, -1) + in(0, 0, 1) +
                       in(0, 0, 2) + in(0, -2, 0) + in(0, -1, 0) +
                       in(0, 1, 0) + in(0, 2, 0) + in(-2, 0, 0) +
                       in(-1, 0, 0) + in(1, 0, 0) + in(2, 0, 0)) -
           T(0.996) * in(0, 0, 0);
  }
};

struct J3d17pt {
  static constexpr char const* name = "j3d17pt";
  static constexpr int rank = 3, radius = 1, flops = 34;
  static constexpr Shape shape = Shape::box;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    constexpr Divisor<T> by_159(T(159));
    return (T(0.50) * (in(-1, -1, -1) + in(-1, -1, 1) + in(-1, 1, -1) +
                       in(-1, 1, 1)) +
            T(0.51) * in(0, -1, -1) + T(0.71) * in(0, -1, 0) +
            T(0.91) * in(0, -1, 1) + T(1.21) * in(0, 0, -1) +
            T(1.51) * in(0, 0, 0) + T(1.21) * in(0, 0, 1) +
            T(0.91) * in(0, 1, -1) + T(0.71) * in(0, 1, 0) +
            T(0.51) * in(0, 1, 1) +
            T(0.52) * (in(1, -1, -1) + in(1, -1, 1) + in(1, 1, -1) +
                       in(1, 1, 1))) /
           by_159;
  }
};

struct J3d27pt {
  static constexpr char const* name = "j3d27pt";
  static constexpr int rank = 3, radius = 1, flops = 54;
  static constexpr Shape shape = Shape::box;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    constexpr Divisor<T> by_159(T(159));
    return (T(0.5) * in(-1, -1, -1) + T(0.7) * in(-1, -1, 0) +
            T(0.9) * in(-1, -1, 1) + T(1.2) * in(-1, 0, -1) +
            T(1.5) * in(-1, 0, 0) + T(1.2) * in(-1, 0, 1) +
            T(0.9) * in(-1, 1, -1) + T(0.7) * in(-1, 1, 0) +
            T(0.5) * in(-1, 1, 1) +  //
            T(0.51) * in(0, -1, -1) + T(0.71) * in(0, -1, 0) +
            T(0.91) * in(0, -1, 1) + T(1.21) * in(0, 0, -1) +
            T(1.51) * in(0, 0, 0) + T(1.21) * in(0, 0, 1) +
            T(0.91) * in(0, 1, -1) + T(0.71) * in(0, 1, 0) +
            T(0.51) * in(0, 1, 1) +  //
            T(0.52) * in(1, -1, -1) + T(0.72) * in(1, -1, 0) +
            T(0.92) * in(1, -1, 1) + T(1.22) * in(1, 0, -1) +
            T(1.52) * in(1, 0, 0) + T(1.22) * in(1, 0, 1) +
            T(0.92) * in(1, 1, -1) + T(0.72) * in(1, 1, 0) +
            T(0.52) * in(1, 1, 1)) /
           by_159;
  }
};

struct Poisson19pt {
  static constexpr char const* name = "poisson";
  static constexpr int rank = 3, radius = 1, flops = 38;
  static constexpr Shape shape = Shape::box;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    return T(2.666) * in(0, 0, 0) -
           T(0.166) * (in(-1, 0, 0) + in(1, 0, 0) + in(0, -1, 0) +
                       in(0, 1, 0) + in(0, 0, -1) + in(0, 0, 1)) -
           T(0.0833) * (in(-1, -1, 0) + in(-1, 1, 0) + in(1, -1, 0) +
                        in(1, 1, 0) + in(-1, 0, -1) + in(-1, 0, 1) +
                        in(1, 0, -1) + in(1, 0, 1) + in(0, -1, -1) +
                        in(0, -1, 1) + in(0, 1, -1) + in(0, 1, 1));
  }
};

/// 1D explicit diffusion u += (1/4) * (central second difference of order
/// 2*Radius), with the weights STENCILS.md gives for the 1D wave equation.
/// A single-level stand-in for the leapfrog wave stencil until grids with
/// several time levels exist.
template <int Radius>
struct Heat1D {
  static_assert(Radius >= 1 && Radius <= 3,
                "stencil::suite::Heat1D: Radius must be 1, 2 or 3");
  static constexpr char const* name =
      Radius == 1 ? "heat1d-r1" : (Radius == 2 ? "heat1d-r2" : "heat1d-r3");
  static constexpr int rank = 1, radius = Radius, flops = 2 * (2 * Radius + 1) + 1;
  static constexpr Shape shape = Shape::star;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    T laplacian;
    if constexpr (Radius == 1) {
      laplacian = in(-1) - T(2) * in(0) + in(1);
    } else if constexpr (Radius == 2) {
      laplacian = T(-1.0 / 12) * (in(-2) + in(2)) +
                  T(4.0 / 3) * (in(-1) + in(1)) - T(5.0 / 2) * in(0);
    } else {
      laplacian = T(1.0 / 90) * (in(-3) + in(3)) -
                  T(3.0 / 20) * (in(-2) + in(2)) +
                  T(3.0 / 2) * (in(-1) + in(1)) - T(49.0 / 18) * in(0);
    }
    return in(0) + T(0.25) * laplacian;
  }
};

}  // namespace stencil::suite
