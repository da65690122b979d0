// SPDX-License-Identifier: Apache-2.0
// Must not compile: the radius exceeds stencil::max_radius.
#include <stencil/stencil.hpp>

struct Wide {
  static constexpr int rank = 1;
  static constexpr int radius = stencil::max_radius + 1;
  static constexpr auto shape = stencil::Shape::star;
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    return in(0);
  }
};

void run(stencil::Grid<double, 1>& g) { stencil::iterate(g, Wide{}, 1); }
