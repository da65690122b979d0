// SPDX-License-Identifier: Apache-2.0
// Gray-Scott reaction-diffusion: two species u and v that update together,
// periodic in both directions. Writes the final v as grayscott.vti (both
// fields) and grayscott.png (the README's picture).
// Usage: grayscott [n] [steps]
#include <stencil/io/state.hpp>
#include <stencil/stencil.hpp>

#include <cstdlib>
#include <iostream>

struct GrayScott {
  static constexpr int rank = 2;
  static constexpr auto shape = stencil::Shape::star;
  using fields = stencil::fields<stencil::field<1>, stencil::field<1>>;  // u, v
  double du = 0.16, dv = 0.08, feed = 0.035, kill = 0.065;

  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    auto const u = stencil::read<0>(in);
    auto const v = stencil::read<1>(in);
    double const uvv = u(0, 0) * v(0, 0) * v(0, 0);
    double const lap_u = u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1) - 4 * u(0, 0);
    double const lap_v = v(-1, 0) + v(1, 0) + v(0, -1) + v(0, 1) - 4 * v(0, 0);
    return stencil::values{u(0, 0) + du * lap_u - uvv + feed * (1 - u(0, 0)),
                           v(0, 0) + dv * lap_v + uvv - (feed + kill) * v(0, 0)};
  }
};

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  int const n = argc > 1 ? std::atoi(argv[1]) : 256;
  int const steps = argc > 2 ? std::atoi(argv[2]) : 8000;
  try {
    stencil::State<double, 2> state(
        "grayscott", {n, n}, stencil::field_specs<GrayScott>({"u", "v"}),
        {.boundary = stencil::Boundary::periodic});
    // u = 1, v = 0, with a perturbed square in the middle.
    auto in_square = [n](int i, int j) {
      return i >= n / 2 - n / 10 && i < n / 2 + n / 10 && j >= n / 2 - n / 10 &&
             j < n / 2 + n / 10;
    };
    auto noise = [](int i, int j) {
      return 0.01 * (((i * 7919 + j * 104729) % 101) / 100.0 - 0.5);
    };
    stencil::fill(state, "u", [&](int i, int j) {
      return (in_square(i, j) ? 0.5 : 1.0) + noise(i, j);
    });
    stencil::fill(state, "v", [&](int i, int j) {
      return in_square(i, j) ? 0.25 + noise(j, i) : 0.0;
    });
    stencil::iterate(state, GrayScott{}, steps);
    stencil::write_vti("grayscott.vti", state);
    stencil::write_png("grayscott.png", state, 1);
    auto const v = stencil::summarize(state, 1);
    std::cout << "after " << steps << " steps: mean v " << v.mean()
              << ", max v " << v.max_abs
              << "; wrote grayscott.vti and grayscott.png\n";
    if (v.nans != 0 || !(v.max_abs > 0.0 && v.max_abs < 1.0)) {
      std::cerr << "unexpected result\n";
      return 1;
    }
  } catch (stencil::error const& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
  return 0;
}
