// SPDX-License-Identifier: Apache-2.0
// Must not compile: the functor declares radius 1 and reads a constant
// offset of 2 (GCC and Clang, optimising, on a host space).
#include <stencil/stencil.hpp>

struct ReadsTwoAway {
  static constexpr int rank = 2;
  static constexpr int radius = 1;
  static constexpr auto shape = stencil::Shape::star;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    return in(0, 0) + in(2, 0);
  }
};

void run(stencil::Grid<double, 2, Kokkos::HostSpace>& grid) {
  stencil::iterate(Kokkos::DefaultHostExecutionSpace{}, grid, ReadsTwoAway{}, 1,
                   stencil::Naive{});
}
