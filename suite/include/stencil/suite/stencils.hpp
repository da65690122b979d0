// SPDX-License-Identifier: Apache-2.0
#pragma once

// The benchmark stencils of the published GPU temporal-blocking work
// (STENCILGEN, AN5D, EBISU), with the coefficients those papers use, so that
// results can be compared with theirs line by line. Each functor also
// declares `name` and `flops` (floating-point operations per cell), the
// boxes that read part of their cube `taps` (the points they read), which
// stencil::model and the benchmarks use, and the divided forms (below)
// `divisions`, which the native planner reads (see stencil/traits.hpp); the
// library itself needs only rank, radius and shape.
// Coefficients are converted to the grid's value type, so float grids
// compute in float. The stencils whose update ends in a division (by 118 or
// 159) come in two forms (`Division`): as the papers write them, exact
// through stencil::Divisor, and with the weights divided beforehand, as the
// EBISU reference code computes them. Stencils, domains and forms:
// docs/suite.md.

#include <stencil/divisor.hpp>
#include <stencil/traits.hpp>

#include <Kokkos_Core.hpp>

namespace stencil::suite {

/// How a stencil whose update ends in a division by a constant (118 for the
/// 2D stencils, 159 for j3d17pt and j3d27pt) applies it.
enum class Division {
  /// `(sum of w * in) / 118`, as the papers write the update: exact, the
  /// plain division's bits on every backend (through stencil::Divisor).
  divided,
  /// `sum of (w / 118) * in`: the weights divided beforehand, as the EBISU
  /// reference code computes these stencils. The same stencil up to
  /// rounding, without the division; the form its published figures (and
  /// the temporal-blocking issue's targets) measure. Named `<name>-prescaled`.
  prescaled
};

namespace detail {
/// The weights and the final division of a stencil in form `D`: weights
/// are written as the papers give them and divided here when prescaled.
/// Make it a constexpr local of the functor, so that both fold into
/// constants. The divisor must be exact in T (118 and 159 are): prescaled
/// weights are divided in double, then rounded once to T.
template <class T, Division D>
class Normalisation {
 public:
  KOKKOS_FUNCTION constexpr explicit Normalisation(T divisor) : m_by(divisor) {}
  KOKKOS_FUNCTION constexpr T weight(double w) const {
    return D == Division::prescaled ? T(w / double(m_by.value())) : T(w);
  }
  KOKKOS_FORCEINLINE_FUNCTION T finish(T sum) const {
    if constexpr (D == Division::prescaled) {
      return sum;
    } else {
      return sum / m_by;
    }
  }

 private:
  Divisor<T> m_by;
};

template <Division D>
constexpr char const* form_name(char const* divided, char const* prescaled) {
  return D == Division::divided ? divided : prescaled;
}
}  // namespace detail

template <Division D>
struct J2d5ptForm {
  static constexpr char const* name =
      detail::form_name<D>("j2d5pt", "j2d5pt-prescaled");
  static constexpr int rank = 2, radius = 1, flops = 10;
  static constexpr int divisions = D == Division::divided ? 1 : 0;
  static constexpr bool linear = D == Division::prescaled;
  static constexpr Shape shape = Shape::star;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    constexpr detail::Normalisation<T, D> n(118);
    return n.finish(n.weight(5) * in(-1, 0) + n.weight(12) * in(0, -1) +
                    n.weight(15) * in(0, 0) + n.weight(12) * in(0, 1) +
                    n.weight(5) * in(1, 0));
  }
};
using J2d5pt = J2d5ptForm<Division::divided>;
using J2d5ptPrescaled = J2d5ptForm<Division::prescaled>;

template <Division D>
struct J2d9ptForm {
  static constexpr char const* name =
      detail::form_name<D>("j2d9pt", "j2d9pt-prescaled");
  static constexpr int rank = 2, radius = 2, flops = 18;
  static constexpr int divisions = D == Division::divided ? 1 : 0;
  static constexpr bool linear = D == Division::prescaled;
  static constexpr Shape shape = Shape::star;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    constexpr detail::Normalisation<T, D> n(118);
    return n.finish(n.weight(7) * in(-2, 0) + n.weight(5) * in(-1, 0) +
                    n.weight(9) * in(0, -2) + n.weight(12) * in(0, -1) +
                    n.weight(15) * in(0, 0) + n.weight(12) * in(0, 1) +
                    n.weight(9) * in(0, 2) + n.weight(5) * in(1, 0) +
                    n.weight(7) * in(2, 0));
  }
};
using J2d9pt = J2d9ptForm<Division::divided>;
using J2d9ptPrescaled = J2d9ptForm<Division::prescaled>;

template <Division D>
struct J2d9ptGolForm {
  static constexpr char const* name =
      detail::form_name<D>("j2d9pt-gol", "j2d9pt-gol-prescaled");
  static constexpr int rank = 2, radius = 1, flops = 18;
  static constexpr int divisions = D == Division::divided ? 1 : 0;
  static constexpr bool linear = D == Division::prescaled;
  static constexpr Shape shape = Shape::box;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    constexpr detail::Normalisation<T, D> n(118);
    return n.finish(n.weight(7) * in(-1, -1) + n.weight(5) * in(-1, 0) +
                    n.weight(9) * in(-1, 1) + n.weight(12) * in(0, -1) +
                    n.weight(15) * in(0, 0) + n.weight(12) * in(0, 1) +
                    n.weight(9) * in(1, -1) + n.weight(5) * in(1, 0) +
                    n.weight(7) * in(1, 1));
  }
};
using J2d9ptGol = J2d9ptGolForm<Division::divided>;
using J2d9ptGolPrescaled = J2d9ptGolForm<Division::prescaled>;

template <Division D>
struct J2d25ptForm {
  static constexpr char const* name =
      detail::form_name<D>("j2d25pt", "j2d25pt-prescaled");
  static constexpr int rank = 2, radius = 2, flops = 25;
  static constexpr int divisions = D == Division::divided ? 1 : 0;
  static constexpr bool linear = D == Division::prescaled;
  static constexpr Shape shape = Shape::box;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    constexpr detail::Normalisation<T, D> n(118);
    return n.finish(n.weight(1) * in(-2, -2) + n.weight(2) * in(-2, -1) +
                    n.weight(3) * in(-2, 0) + n.weight(4) * in(-2, 1) +
                    n.weight(5) * in(-2, 2) +  //
                    n.weight(7) * in(-1, -2) + n.weight(7) * in(-1, -1) +
                    n.weight(5) * in(-1, 0) + n.weight(7) * in(-1, 1) +
                    n.weight(6) * in(-1, 2) +  //
                    n.weight(8) * in(0, -2) + n.weight(12) * in(0, -1) +
                    n.weight(15) * in(0, 0) + n.weight(12) * in(0, 1) +
                    n.weight(12) * in(0, 2) +  //
                    n.weight(9) * in(1, -2) + n.weight(9) * in(1, -1) +
                    n.weight(5) * in(1, 0) + n.weight(7) * in(1, 1) +
                    n.weight(15) * in(1, 2) +  //
                    n.weight(10) * in(2, -2) + n.weight(11) * in(2, -1) +
                    n.weight(12) * in(2, 0) + n.weight(13) * in(2, 1) +
                    n.weight(14) * in(2, 2));
  }
};
using J2d25pt = J2d25ptForm<Division::divided>;
using J2d25ptPrescaled = J2d25ptForm<Division::prescaled>;

struct J3d7pt {
  static constexpr char const* name = "j3d7pt";
  static constexpr int rank = 3, radius = 1, flops = 14;
  static constexpr bool linear = true;
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
  static constexpr bool linear = true;
  static constexpr Shape shape = Shape::star;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    return T(0.083) *
               (in(0, 0, -2) + in(0, 0, -1) + in(0, 0, 1) + in(0, 0, 2) +
                in(0, -2, 0) + in(0, -1, 0) + in(0, 1, 0) + in(0, 2, 0) +
                in(-2, 0, 0) + in(-1, 0, 0) + in(1, 0, 0) + in(2, 0, 0)) -
           T(0.996) * in(0, 0, 0);
  }
};

template <Division D>
struct J3d17ptForm {
  static constexpr char const* name =
      detail::form_name<D>("j3d17pt", "j3d17pt-prescaled");
  static constexpr int rank = 3, radius = 1, flops = 34, taps = 17;
  static constexpr int divisions = D == Division::divided ? 1 : 0;
  static constexpr bool linear = D == Division::prescaled;
  static constexpr Shape shape = Shape::box;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    constexpr detail::Normalisation<T, D> n(159);
    return n.finish(
        n.weight(0.50) *
            (in(-1, -1, -1) + in(-1, -1, 1) + in(-1, 1, -1) + in(-1, 1, 1)) +
        n.weight(0.51) * in(0, -1, -1) + n.weight(0.71) * in(0, -1, 0) +
        n.weight(0.91) * in(0, -1, 1) + n.weight(1.21) * in(0, 0, -1) +
        n.weight(1.51) * in(0, 0, 0) + n.weight(1.21) * in(0, 0, 1) +
        n.weight(0.91) * in(0, 1, -1) + n.weight(0.71) * in(0, 1, 0) +
        n.weight(0.51) * in(0, 1, 1) +
        n.weight(0.52) *
            (in(1, -1, -1) + in(1, -1, 1) + in(1, 1, -1) + in(1, 1, 1)));
  }
};
using J3d17pt = J3d17ptForm<Division::divided>;
using J3d17ptPrescaled = J3d17ptForm<Division::prescaled>;

template <Division D>
struct J3d27ptForm {
  static constexpr char const* name =
      detail::form_name<D>("j3d27pt", "j3d27pt-prescaled");
  static constexpr int rank = 3, radius = 1, flops = 54;
  static constexpr int divisions = D == Division::divided ? 1 : 0;
  static constexpr bool linear = D == Division::prescaled;
  static constexpr Shape shape = Shape::box;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    constexpr detail::Normalisation<T, D> n(159);
    return n.finish(
        n.weight(0.5) * in(-1, -1, -1) + n.weight(0.7) * in(-1, -1, 0) +
        n.weight(0.9) * in(-1, -1, 1) + n.weight(1.2) * in(-1, 0, -1) +
        n.weight(1.5) * in(-1, 0, 0) + n.weight(1.2) * in(-1, 0, 1) +
        n.weight(0.9) * in(-1, 1, -1) + n.weight(0.7) * in(-1, 1, 0) +
        n.weight(0.5) * in(-1, 1, 1) +  //
        n.weight(0.51) * in(0, -1, -1) + n.weight(0.71) * in(0, -1, 0) +
        n.weight(0.91) * in(0, -1, 1) + n.weight(1.21) * in(0, 0, -1) +
        n.weight(1.51) * in(0, 0, 0) + n.weight(1.21) * in(0, 0, 1) +
        n.weight(0.91) * in(0, 1, -1) + n.weight(0.71) * in(0, 1, 0) +
        n.weight(0.51) * in(0, 1, 1) +  //
        n.weight(0.52) * in(1, -1, -1) + n.weight(0.72) * in(1, -1, 0) +
        n.weight(0.92) * in(1, -1, 1) + n.weight(1.22) * in(1, 0, -1) +
        n.weight(1.52) * in(1, 0, 0) + n.weight(1.22) * in(1, 0, 1) +
        n.weight(0.92) * in(1, 1, -1) + n.weight(0.72) * in(1, 1, 0) +
        n.weight(0.52) * in(1, 1, 1));
  }
};
using J3d27pt = J3d27ptForm<Division::divided>;
using J3d27ptPrescaled = J3d27ptForm<Division::prescaled>;

struct Poisson19pt {
  static constexpr char const* name = "poisson";
  static constexpr int rank = 3, radius = 1, flops = 38, taps = 19;
  static constexpr bool linear = true;
  static constexpr Shape shape = Shape::box;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    return T(2.666) * in(0, 0, 0) -
           T(0.166) * (in(-1, 0, 0) + in(1, 0, 0) + in(0, -1, 0) + in(0, 1, 0) +
                       in(0, 0, -1) + in(0, 0, 1)) -
           T(0.0833) *
               (in(-1, -1, 0) + in(-1, 1, 0) + in(1, -1, 0) + in(1, 1, 0) +
                in(-1, 0, -1) + in(-1, 0, 1) + in(1, 0, -1) + in(1, 0, 1) +
                in(0, -1, -1) + in(0, -1, 1) + in(0, 1, -1) + in(0, 1, 1));
  }
};

/// 1D explicit diffusion u += (1/4) * (central second difference of order
/// 2*Radius), with the central-difference weights of the published 1D
/// wave-equation study.
/// A single-level stand-in for the leapfrog wave stencil until grids with
/// several time levels exist.
template <int Radius>
struct Heat1D {
  static_assert(Radius >= 1 && Radius <= 3,
                "stencil::suite::Heat1D: Radius must be 1, 2 or 3");
  static constexpr char const* name =
      Radius == 1 ? "heat1d-r1" : (Radius == 2 ? "heat1d-r2" : "heat1d-r3");
  static constexpr int rank = 1, radius = Radius,
                       flops = 2 * (2 * Radius + 1) + 1;
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
