// SPDX-License-Identifier: Apache-2.0
// Plain host loops for the suite's multi-field solvers, written from their
// formulas (docs/suite.md), not from the functors: the reference every
// backend's State run is compared with.
#pragma once

#include <stencil/fields/state.hpp>
#include <stencil/fields/iterate.hpp>

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace stencil_test::fields {

/// A padded host copy of one field, rank 1 to 3 as (nz, ny, nx) with unused
/// dimensions of extent 1 and no halo.
struct HostField {
  int rank = 2;
  int n[3] = {1, 1, 1};
  int halo = 0;
  std::vector<double> v;

  int padded(int a) const { return n[a] + (used(a) ? 2 * halo : 0); }
  bool used(int a) const { return a >= 3 - rank; }
  double& operator()(int z, int y, int x) { return v[index(z, y, x)]; }
  double operator()(int z, int y, int x) const { return v[index(z, y, x)]; }
  /// Interior coordinates; the halo is -halo..-1 and n..n+halo-1.
  std::size_t index(int z, int y, int x) const {
    int const c[3] = {z, y, x};
    std::size_t i = 0;
    for (int a = 0; a < 3; ++a) {
      int const p = c[a] + (used(a) ? halo : 0);
      i = i * static_cast<std::size_t>(padded(a)) + static_cast<std::size_t>(p);
    }
    return i;
  }
};

/// The current level `level` of field `f` of a state, on the host.
template <class T, int Rank, class MemorySpace>
HostField to_host(stencil::State<T, Rank, MemorySpace> const& s, int f,
                  int level = 0) {
  HostField h;
  h.rank = Rank;
  h.halo = s.halo();
  for (int d = 0; d < Rank; ++d) h.n[3 - Rank + d] = s.extent(d);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{},
                                                  s.level(f, level));
  h.v.assign(host.data(), host.data() + host.size());
  return h;
}

/// Every interior cell (z, y, x) of a field.
template <class F>
void for_interior(HostField const& h, F&& f) {
  for (int z = 0; z < h.n[0]; ++z)
    for (int y = 0; y < h.n[1]; ++y)
      for (int x = 0; x < h.n[2]; ++x) f(z, y, x);
}

/// Periodic halo: every halo cell takes the interior cell its coordinates
/// wrap to (each coordinate independently, so edges and corners too).
inline void wrap_halo(HostField& h) {
  int const lo[3] = {h.used(0) ? -h.halo : 0, h.used(1) ? -h.halo : 0,
                     -h.halo};
  for (int z = lo[0]; z < h.n[0] - lo[0]; ++z)
    for (int y = lo[1]; y < h.n[1] - lo[1]; ++y)
      for (int x = lo[2]; x < h.n[2] - lo[2]; ++x) {
        auto wrap = [](int c, int n) { return ((c % n) + n) % n; };
        h(z, y, x) = h(wrap(z, h.n[0]), wrap(y, h.n[1]), wrap(x, h.n[2]));
      }
}

/// The kind of each side of each used axis, (z, y, x) low side first, and
/// the dirichlet function (of the cell, slowest first over the used axes,
/// and the time).
struct HostSides {
  stencil::Boundary kind[3][2] = {};
  std::function<double(std::vector<int> const&, double)> dirichlet;
};

/// The halo rule of every side, applied axis by axis from x to the slowest,
/// each over the other axes' whole padded range (so corners compose as the
/// library documents): periodic wraps, neumann mirrors across the face
/// (-1-k takes k), reflecting across the boundary cell (-k takes k),
/// dirichlet takes the function, fixed keeps the halo.
inline void apply_sides(HostField& h, HostSides const& sides, double time) {
  using stencil::Boundary;
  for (int a = 2; a >= 3 - h.rank; --a) {
    int lo[3], hi[3];
    for (int b = 0; b < 3; ++b) {
      lo[b] = h.used(b) ? -h.halo : 0;
      hi[b] = h.n[b] + (h.used(b) ? h.halo : 0);
    }
    for (int z = lo[0]; z < hi[0]; ++z)
      for (int y = lo[1]; y < hi[1]; ++y)
        for (int x = lo[2]; x < hi[2]; ++x) {
          int c[3] = {z, y, x};
          int const n = h.n[a];
          if (c[a] >= 0 && c[a] < n) continue;
          int const side = c[a] < 0 ? 0 : 1;
          int src = c[a];
          switch (sides.kind[a][side]) {
            case Boundary::fixed: continue;
            case Boundary::periodic: src = ((c[a] % n) + n) % n; break;
            case Boundary::neumann:
              src = side == 0 ? -1 - c[a] : 2 * n - 1 - c[a];
              break;
            case Boundary::reflecting:
              src = side == 0 ? -c[a] : 2 * (n - 1) - c[a];
              break;
            case Boundary::dirichlet: {
              std::vector<int> cell;
              for (int b = 3 - h.rank; b < 3; ++b) cell.push_back(c[b]);
              h(z, y, x) = sides.dirichlet(cell, time);
              continue;
            }
          }
          int s[3] = {z, y, x};
          s[a] = src;
          h(z, y, x) = h(s[0], s[1], s[2]);
        }
  }
}

/// Neighbour (dz, dy, dx) of a cell.
inline double nb(HostField const& h, int z, int y, int x, int dz, int dy,
                 int dx) {
  return h(z + dz, y + dy, x + dx);
}

/// Sum over the used axes of the second difference with weights `w`
/// (centre first, then distances 1..r).
inline double laplacian(HostField const& h, int z, int y, int x,
                        std::vector<double> const& w) {
  double sum = 0;
  for (int a = 3 - h.rank; a < 3; ++a) {
    sum += w[0] * h(z, y, x);
    for (int d = 1; d < static_cast<int>(w.size()); ++d) {
      int o[3] = {0, 0, 0};
      o[a] = d;
      double const plus = nb(h, z, y, x, o[0], o[1], o[2]);
      double const minus = nb(h, z, y, x, -o[0], -o[1], -o[2]);
      sum += w[d] * (plus + minus);
    }
  }
  return sum;
}

inline std::vector<double> second_difference(int r) {
  switch (r) {
    case 1: return {-2.0, 1.0};
    case 2: return {-2.5, 4.0 / 3.0, -1.0 / 12.0};
    case 3: return {-49.0 / 18.0, 1.5, -0.15, 1.0 / 90.0};
    default: return {-205.0 / 72.0, 1.6, -0.2, 8.0 / 315.0, -1.0 / 560.0};
  }
}

/// A smooth, cell-dependent value in [lo, hi] (halo cells included).
inline double pattern(int seed, int z, int y, int x, double lo = 0.0,
               double hi = 1.0) {
  double const s = std::sin(0.37 * x + 0.91 * y + 1.31 * z + 0.73 * seed);
  return lo + (hi - lo) * 0.5 * (1.0 + s);
}

/// Fills level `level` of field `f` (or every buffer, level = 1) with
/// pattern(seed).
template <class State>
void fill_pattern(State& s, int f, int seed, double lo = 0.0, double hi = 1.0,
                  int level = 1) {
  constexpr int rank = State::rank;
  auto value = [&](auto... c) {
    int const cs[] = {c...};
    int zyx[3] = {0, 0, 0};
    for (int d = 0; d < rank; ++d) zyx[3 - rank + d] = cs[d];
    return pattern(seed, zyx[0], zyx[1], zyx[2], lo, hi);
  };
  if (level == 1) {
    stencil::fill(s, f, value);
  } else {
    stencil::fill_level(s, f, level, value);
  }
}

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 2e-5 : 1e-12;
}

/// Expects field `f` of `s` to equal `expected` on the interior.
template <class State>
void expect_field(State const& s, int f, HostField const& expected,
                  std::string const& what) {
  using T = typename State::value_type;
  HostField const got = to_host(s, f);
  int bad = 0;
  stencil_test::fields::for_interior(expected, [&](int z, int y, int x) {
    double const e = expected(z, y, x);
    double const g = got(z, y, x);
    if (!(std::abs(g - e) <= tolerance<T>() * (1.0 + std::abs(e)))) {
      if (++bad <= 3) {
        ADD_FAILURE() << what << ": field " << f << " cell (" << z << ", " << y
                      << ", " << x << ") is " << g << ", reference " << e;
      }
    }
  });
  EXPECT_EQ(bad, 0) << what;
}

}  // namespace stencil_test::fields
