// SPDX-License-Identifier: Apache-2.0
// Must not compile: the fields are read within 1 row and 2 columns, and the
// functor reads a constant offset of 2 rows (GCC and Clang, optimising, on a
// host space).
#include <stencil/stencil.hpp>

struct ReadsTwoRowsAway {
  static constexpr int rank = 2;
  static constexpr auto shape = stencil::Shape::star;
  using fields = stencil::fields<stencil::field<2>>::within<1, 2>;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    auto const u = stencil::read<0>(in);
    return u(0, 2) + u(2, 0);
  }
};

void run(stencil::State<double, 2, Kokkos::HostSpace>& s) {
  stencil::iterate(Kokkos::DefaultHostExecutionSpace{}, s, ReadsTwoRowsAway{},
                   1, stencil::Naive{});
}
