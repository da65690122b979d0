// SPDX-License-Identifier: Apache-2.0
// Must not compile: a functor cannot divide a negative number of times.
#include <stencil/stencil.hpp>

struct Backwards {
  static constexpr int rank = 1;
  static constexpr int radius = 1;
  static constexpr auto shape = stencil::Shape::star;
  static constexpr int divisions = -1;
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    return in(0);
  }
};

void run(stencil::Grid<double, 1>& g) { stencil::iterate(g, Backwards{}, 1); }
