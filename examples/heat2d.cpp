// SPDX-License-Identifier: Apache-2.0
// The README's usage example: a 2D heat equation with fixed boundaries.
// Usage: heat2d [n] [steps]
#include <stencil/stencil.hpp>

#include <cstdlib>
#include <iostream>

struct Heat2D {  // any stencil: a functor with traits
  static constexpr int rank = 2;
  static constexpr int radius = 1;
  static constexpr auto shape = stencil::Shape::star;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    return (5 * in(-1, 0) + 12 * in(0, -1) + 15 * in(0, 0) + 12 * in(0, 1) +
            5 * in(1, 0)) /
           118;
  }
};

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  int const n = argc > 1 ? std::atoi(argv[1]) : 1024;
  int const steps = argc > 2 ? std::atoi(argv[2]) : 100;
  try {
    // Interior n x n; the halo (1 cell) holds the boundary: hot on the left.
    stencil::Grid<double, 2> u("u", {n, n});
    stencil::fill(u, [](int, int j) { return j < 0 ? 1.0 : 0.0; });

    auto p = stencil::plan(Kokkos::DefaultExecutionSpace{}, u, Heat2D{},
                           stencil::Auto{});
    std::cout << p << '\n';  // which backend, policy and parameters run
    stencil::iterate(u, Heat2D{}, steps, p);

    // Heat flows in from the left edge: the first column warms up.
    double edge = 0;
    auto interior = u.interior();
    Kokkos::parallel_reduce(
        "edge_mean", n,
        KOKKOS_LAMBDA(int i, double& sum) { sum += interior(i, 0); }, edge);
    edge /= n;
    std::cout << "mean of the first column after " << steps
              << " steps: " << edge << '\n';
    if (!(edge > 0.0 && edge < 1.0)) {
      std::cerr << "unexpected result\n";
      return 1;
    }
  } catch (stencil::error const& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
  return 0;
}
