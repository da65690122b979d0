// SPDX-License-Identifier: Apache-2.0
// Must not compile: a stencil reads level n-1 of a field that keeps one.
#include <stencil/stencil.hpp>

struct ReadsOld {
  static constexpr int rank = 2;
  static constexpr auto shape = stencil::Shape::star;
  using fields = stencil::fields<stencil::field<1>>;
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    return stencil::read<0>(in)(0, 0) - stencil::read<0, -1>(in)(0, 0);
  }
};

void run(stencil::State<double, 2>& s) { stencil::iterate(s, ReadsOld{}, 1); }
