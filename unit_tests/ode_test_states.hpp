// SPDX-License-Identifier: Apache-2.0
// The states the stencil::ode plan tests integrate, and how far two of
// them differ.
#pragma once

#include <stencil/stencil.hpp>

#include <Kokkos_Core.hpp>
#include "test_support.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace stencil_test {

using stencil::Boundary;

/// The sides of a state: axis by axis, slowest first, low then high.
template <int Rank>
using Sides = std::array<Boundary, 2 * Rank>;

template <int Rank>
Sides<Rank> all(Boundary kind) {
  Sides<Rank> s;
  s.fill(kind);
  return s;
}

/// A state of `Rhs`'s fields on `extents` with `sides` (a dirichlet side
/// takes a smooth function of the halo cell and the time), every cell, halo
/// included, set to smooth values that differ per field and cell.
template <class T, int Rank, class Rhs, class Memory>
stencil::State<T, Rank, Memory> make_ode_state(std::array<int, Rank> extents,
                                               Sides<Rank> const& sides,
                                               int halo) {
  std::vector<std::string> names;
  for (int f = 0; f < Rhs::fields::count; ++f) {
    names.push_back("f" + std::to_string(f));
  }
  stencil::State<T, Rank, Memory> s(
      "tiled", extents, stencil::field_specs<Rhs>(names), {.halo = halo});
  for (int axis = 0; axis < Rank; ++axis) {
    Boundary const low = sides[2 * axis], high = sides[2 * axis + 1];
    if (low == Boundary::dirichlet || high == Boundary::dirichlet) {
      for (int side = 0; side < 2; ++side) {
        auto const where = side == 0 ? stencil::Side::low : stencil::Side::high;
        if (sides[2 * axis + side] != Boundary::dirichlet) {
          s.set_boundary(axis, where, sides[2 * axis + side]);
          continue;
        }
        // A value of the halo cell and the time, other on each side.
        s.set_dirichlet(
            axis, where,
            [axis, side](std::array<int, Rank> const& cell, double t) {
              double sum = 0.3 * side + 0.1 * axis;
              for (int d = 0; d < Rank; ++d) {
                sum += 0.17 * (d + 1) * cell[d];
              }
              return 0.5 + 0.2 * std::sin(sum) + 0.3 * t;
            });
      }
    } else if (low == high) {
      s.set_boundary(axis, stencil::Side::both, low);
    } else {
      s.set_boundary(axis, stencil::Side::low, low);
      s.set_boundary(axis, stencil::Side::high, high);
    }
  }
  for (int f = 0; f < Rhs::fields::count; ++f) {
    auto value = [f](double a, double b, double c) {
      return static_cast<T>(
          0.6 + 0.3 * std::sin(0.37 * a + 0.23 * b + 0.31 * c + f) + 0.1 * f);
    };
    if constexpr (Rank == 1) {
      stencil::fill(s, f, [&](int i) { return value(i, 0, 0); });
    } else if constexpr (Rank == 2) {
      stencil::fill(s, f, [&](int i, int j) { return value(i, j, 0); });
    } else {
      stencil::fill(s, f, [&](int i, int j, int k) { return value(i, j, k); });
    }
  }
  return s;
}

/// The largest |a - b| / max(1, |b|) over the written fields' interiors.
template <class T, int Rank, class Rhs, class Memory>
double largest_ode_difference(stencil::State<T, Rank, Memory> const& a,
                              stencil::State<T, Rank, Memory> const& b) {
  double worst = 0.0;
  for (int f = 0; f < Rhs::fields::count; ++f) {
    if (!Rhs::fields::written[f]) continue;
    auto const x = stencil_test::host_copy(a.interior(f));
    auto const y = stencil_test::host_copy(b.interior(f));
    for (std::size_t i = 0; i < x.size(); ++i) {
      double const expected = y.data()[i];
      double const d = std::abs(static_cast<double>(x.data()[i]) - expected) /
                       std::max(1.0, std::abs(expected));
      worst = std::isnan(d) ? INFINITY : std::max(worst, d);
    }
  }
  return worst;
}

}  // namespace stencil_test
