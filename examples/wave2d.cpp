// SPDX-License-Identifier: Apache-2.0
// A 2D wave equation by leapfrog: u at n+1 from u at n and n-1. The state
// keeps two buffers, the new level overwriting n-1. Writes wave2d_<step>.vti
// every `every` steps (ParaView opens the series) from a hook inside the
// one iterate call.
// Usage: wave2d [n] [steps] [every]
#include <stencil/io/state.hpp>
#include <stencil/stencil.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

struct Wave2D {
  static constexpr int rank = 2;
  static constexpr auto shape = stencil::Shape::star;
  // One field, read within radius 1 at level n and at its own cell at n-1.
  using fields = stencil::fields<stencil::field<1, 2>>;
  double c2 = 0.09;  // (c dt / h)^2: stable below 0.5 in 2D

  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    auto const u = stencil::read<0>(in);          // level n
    auto const u_old = stencil::read<0, -1>(in);  // level n-1
    return 2 * u(0, 0) - u_old(0, 0) +
           c2 * (u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1) - 4 * u(0, 0));
  }
};

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  int const n = argc > 1 ? std::atoi(argv[1]) : 512;
  int const steps = argc > 2 ? std::atoi(argv[2]) : 600;
  int const every = argc > 3 ? std::atoi(argv[3]) : 200;
  try {
    // u = 0 on the fixed boundary (the halo); a Gaussian pulse at rest.
    stencil::State<double, 2> state("wave", {n, n},
                                     stencil::field_specs<Wave2D>({"u"}));
    stencil::fill(state, "u", [n](int i, int j) {
      if (i < 0 || j < 0 || i >= n || j >= n) return 0.0;
      double const y = (i - 0.4 * n) / (0.05 * n), x = (j - 0.5 * n) / (0.05 * n);
      return std::exp(-(x * x + y * y));
    });
    double const energy0 = stencil::summarize(state, 0).sum_sq;

    std::cout << stencil::plan(Kokkos::DefaultExecutionSpace{}, state,
                               Wave2D{}, stencil::Auto{})
              << '\n';
    stencil::iterate(state, Wave2D{}, steps, stencil::Auto{},
                     stencil::every(every, [&](int step) {
                       char name[64];
                       std::snprintf(name, sizeof name, "wave2d_%06d.vti",
                                     step);
                       stencil::write_vti(name, state);
                       auto const s = stencil::summarize(state, 0);
                       std::cout << "step " << step << ": max |u| "
                                 << s.max_abs << ", wrote " << name << '\n';
                     }));
    auto const final_state = stencil::summarize(state, 0);
    // The pulse spreads: its peak falls, and nothing blows up.
    if (final_state.nans != 0 || !(final_state.max_abs < 1.0) ||
        !(final_state.sum_sq < 10 * energy0)) {
      std::cerr << "unexpected result\n";
      return 1;
    }
  } catch (stencil::error const& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
  return 0;
}
