// SPDX-License-Identifier: Apache-2.0
// Must not compile: a stencil reads field 1 but declares one field.
#include <stencil/stencil.hpp>

struct ReadsTwo {
  static constexpr int rank = 2;
  static constexpr auto shape = stencil::Shape::star;
  using fields = stencil::fields<stencil::field<1>>;
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    return stencil::read<0>(in)(0, 0) + stencil::read<1>(in)(0, 0);
  }
};

void run(stencil::State<double, 2>& s) { stencil::iterate(s, ReadsTwo{}, 1); }
