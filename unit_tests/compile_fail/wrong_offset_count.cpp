// SPDX-License-Identifier: Apache-2.0
// Must not compile: a rank-2 stencil reads in(dx) with one offset.
#include <stencil/stencil.hpp>

struct OneOffset {
  static constexpr int rank = 2;
  static constexpr int radius = 1;
  static constexpr auto shape = stencil::Shape::star;
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    return in(1);
  }
};

void run(stencil::Grid<double, 2>& g) {
  stencil::iterate(g, OneOffset{}, 1, stencil::Naive{});
}
