// SPDX-License-Identifier: Apache-2.0
// Right-hand sides the stencil::ode tests share.
#pragma once

#include <stencil/stencil.hpp>

#include <Kokkos_Core.hpp>

namespace stencil_test {

/// u' = scale * (5-point Laplacian of u), one field.
struct HeatRhs {
  static constexpr int rank = 2;
  static constexpr auto shape = stencil::Shape::star;
  using fields = stencil::fields<stencil::field<1>>;
  static constexpr char const* name = "heat-rhs";
  double scale = 1.0;
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    auto const u = stencil::read<0>(in);
    return static_cast<T>(scale) *
           (u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1) - 4 * u(0, 0));
  }
};

/// Reads 2 cells away along x and 1 along y (`within<1, 2>`), halo
/// included, as the interleaved BRUSS2D does: each axis's rims and halo
/// refresh at its own reach, and the native Fused plan gives its threads
/// two columns of the box.
struct WithinRhs {
  static constexpr int rank = 2;
  static constexpr auto shape = stencil::Shape::star;
  using fields = stencil::fields<stencil::field<2>>::within<1, 2>;
  static constexpr char const* name = "within-rhs";
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    auto const u = stencil::read<0>(in);
    return static_cast<T>(0.3) * (u(-1, 0) + u(1, 0)) +
           static_cast<T>(0.2) * (u(0, -2) + u(0, 2)) +
           static_cast<T>(0.1) * (u(0, -1) + u(0, 1)) - 2 * u(0, 0);
  }
};

/// HeatRhs that records, in `outside`, whether it was ever evaluated at a
/// position past the domain: a right-hand side may index arrays of its own
/// by position, so no plan may show it one, even for a value it drops.
template <class Memory = Kokkos::DefaultExecutionSpace::memory_space>
struct PositionProbeRhs : HeatRhs {
  Kokkos::View<int, Memory> outside;
  int ny = 0, nx = 0;
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    auto const at = in.position();
    if (at[0] < 0 || at[0] >= ny || at[1] < 0 || at[1] >= nx) outside() = 1;
    return HeatRhs::operator()(in);
  }
};

/// u' = div(k grad u) + S(x, y, t) with k a coefficient field and S a
/// source of the cell's position and the stage's time: reads a second,
/// read-only field, position() and time().
struct VarCoefSourceRhs {
  static constexpr int rank = 2;
  static constexpr auto shape = stencil::Shape::star;
  using fields = stencil::fields<stencil::field<1>, stencil::coefficient<1>>;
  static constexpr char const* name = "varcoef-source-rhs";
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    auto const u = stencil::read<0>(in);
    auto const k = stencil::read<1>(in);
    T const uc = u(0, 0), kc = k(0, 0);
    T const half = static_cast<T>(0.5);
    T const flux = half * (kc + k(1, 0)) * (u(1, 0) - uc) -
                   half * (kc + k(-1, 0)) * (uc - u(-1, 0)) +
                   half * (kc + k(0, 1)) * (u(0, 1) - uc) -
                   half * (kc + k(0, -1)) * (uc - u(0, -1));
    auto const at = in.position();
    double const source =
        0.1 * Kokkos::sin(0.13 * at[1] + in.time()) * Kokkos::cos(0.2 * at[0]);
    return flux + static_cast<T>(source);
  }
};

}  // namespace stencil_test
