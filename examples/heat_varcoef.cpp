// SPDX-License-Identifier: Apache-2.0
// Heat with a diffusivity k(x, y) that varies in space: k is a read-only
// field beside u. Neumann (zero-flux) boundaries keep the total heat, which
// a hook prints every 100 steps with the norm of u.
// Usage: heat_varcoef [n] [steps]
#include <stencil/stencil.hpp>

#include <cmath>
#include <cstdlib>
#include <iostream>

struct HeatVarCoef {
  static constexpr int rank = 2;
  static constexpr auto shape = stencil::Shape::star;
  // u, written; k, read-only.
  using fields = stencil::fields<stencil::field<1>, stencil::coefficient<1>>;
  double lambda = 0.1;  // dt / h^2: stable below 1 / (4 max k)

  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    auto const u = stencil::read<0>(in);
    auto const k = stencil::read<1>(in);
    // Flux through each face with the face's mean diffusivity.
    auto face = [&](int dy, int dx) {
      return 0.5 * (k(0, 0) + k(dy, dx)) * (u(dy, dx) - u(0, 0));
    };
    return u(0, 0) +
           lambda * (face(-1, 0) + face(1, 0) + face(0, -1) + face(0, 1));
  }
};

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  int const n = argc > 1 ? std::atoi(argv[1]) : 512;
  int const steps = argc > 2 ? std::atoi(argv[2]) : 1000;
  try {
    stencil::State<double, 2> state(
        "heat", {n, n}, stencil::field_specs<HeatVarCoef>({"u", "k"}),
        {.boundary = stencil::Boundary::neumann});
    stencil::fill(state, "u", [n](int i, int j) {
      return i < n / 4 && j < n / 4 ? 1.0 : 0.0;  // a hot corner
    });
    stencil::fill(state, "k", [n](int i, int j) {
      return 1.0 + 0.5 * std::sin(6.0 * i / n) * std::cos(4.0 * j / n);
    });
    double const heat0 = stencil::summarize(state, 0).sum;
    double drift = 0;
    stencil::iterate(state, HeatVarCoef{}, steps, stencil::Auto{},
                     stencil::every(100, [&](int step) {
                       auto const u = stencil::summarize(state, 0);
                       drift = std::max(drift, std::abs(u.sum - heat0) / heat0);
                       std::cout << "step " << step << ": total heat " << u.sum
                                 << ", rms " << u.rms() << ", max "
                                 << u.max_abs << '\n';
                     }));
    // Zero flux through the boundary: the total heat stays (to rounding).
    if (!(drift < 1e-9)) {
      std::cerr << "total heat drifted by " << drift << '\n';
      return 1;
    }
  } catch (stencil::error const& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
  return 0;
}
