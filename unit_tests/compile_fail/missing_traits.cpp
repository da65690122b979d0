// SPDX-License-Identifier: Apache-2.0
// Must not compile: the functor declares no rank, radius or shape.
#include <stencil/stencil.hpp>

struct NoTraits {
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    return in(0);
  }
};

void run(stencil::Grid<double, 1>& g) { stencil::iterate(g, NoTraits{}, 1); }
