// SPDX-License-Identifier: Apache-2.0
// A test stencil with one field of every kind: the tests of the kernels
// that treat fields by radius and level (SpatialBlocking's staging, the
// native stream, the Naive window kernel) run it next to the suite.
#pragma once

#include "fields_reference.hpp"

#include <stencil/fields/declare.hpp>

#include <Kokkos_Core.hpp>

namespace stencil_test::fields {

/// A field of radius 2 (u), a radius-0 field of two levels (w) and a
/// radius-1 coefficient (k): SpatialBlocking stages u and k in scratch and
/// reads w (both levels) from global memory. Reads position and time too.
template <int Rank>
struct MixedRadii {
  static constexpr int rank = Rank;
  static constexpr auto shape = stencil::Shape::star;
  using fields = stencil::fields<stencil::field<2>, stencil::field<0, 2>,
                                 stencil::coefficient<1>>;

  /// a at offset d along axis `axis` (0 = slowest).
  template <class A>
  KOKKOS_FUNCTION static auto along(A const& a, int axis, int d) {
    if constexpr (Rank == 1) {
      return a(d);
    } else if constexpr (Rank == 2) {
      return a(axis == 0 ? d : 0, axis == 1 ? d : 0);
    } else {
      return a(axis == 0 ? d : 0, axis == 1 ? d : 0, axis == 2 ? d : 0);
    }
  }

  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    auto const u = stencil::read<0>(in);
    auto const w = stencil::read<1>(in);
    auto const w_old = stencil::read<1, -1>(in);
    auto const k = stencil::read<2>(in);
    T const uc = along(u, 0, 0);
    T const wc = along(w, 0, 0);
    T lap = 0, dk = 0;
    for (int a = 0; a < Rank; ++a) {
      lap += along(u, a, -2) + along(u, a, -1) + along(u, a, 1) +
             along(u, a, 2) - 4 * uc;
      dk += along(k, a, 1) - along(k, a, -1);
    }
    T const source =
        static_cast<T>(0.001 * in.time() + 0.0001 * in.position()[Rank - 1]);
    return stencil::values{
        uc + static_cast<T>(0.04) * lap + static_cast<T>(0.1) * dk +
            static_cast<T>(0.05) * wc + source,
        static_cast<T>(0.5) * wc + static_cast<T>(0.25) * along(w_old, 0, 0) +
            static_cast<T>(0.1) * uc};
  }
};

/// Fills a MixedRadii state: u, both levels of w, and k.
template <class State>
void fill_mixed(State& s) {
  fill_pattern(s, 0, 11, -1.0, 1.0);
  fill_pattern(s, 1, 12, -0.5, 0.5, 0);
  fill_pattern(s, 1, 13, -0.5, 0.5, -1);
  fill_pattern(s, 2, 14, 0.5, 1.5);
}

}  // namespace stencil_test::fields
