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

/// HeatRhs that records, in `outside`, whether it was ever evaluated at a
/// position past the domain: a right-hand side may index arrays of its own
/// by position, so no plan may show it one, even for a value it drops.
struct PositionProbeRhs : HeatRhs {
  Kokkos::View<int, Kokkos::DefaultExecutionSpace::memory_space> outside;
  int ny = 0, nx = 0;
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    auto const at = in.position();
    if (at[0] < 0 || at[0] >= ny || at[1] < 0 || at[1] >= nx) outside() = 1;
    return HeatRhs::operator()(in);
  }
};

}  // namespace stencil_test
