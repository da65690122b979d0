// SPDX-License-Identifier: Apache-2.0
// Test support: a plain host reference loop, random initial data, and the
// comparison of a grid against the reference. Written independently of the
// library's kernels (own accessor, own halo handling) so a shared bug cannot
// hide.
#pragma once

#include <stencil/stencil.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace stencil_test {

/// A padded host array in the grid's layout (halo on every side, last index
/// contiguous), with the interior cell (z, y, x) at index(z, y, x).
template <class T, int Rank>
struct HostField {
  std::array<int, 3> n{1, 1, 1};  // interior extents (z, y, x)
  int halo = 0;
  std::array<int, 3> p{1, 1, 1};  // padded extents
  std::vector<T> data;

  HostField(std::array<int, Rank> const& extents, int h) : halo(h) {
    for (int d = 0; d < Rank; ++d) n[3 - Rank + d] = extents[d];
    for (int a = 3 - Rank; a < 3; ++a) p[a] = n[a] + 2 * halo;
    data.assign(static_cast<std::size_t>(p[0]) * p[1] * p[2], T(0));
  }
  // Padded coordinates; unused dimensions are 0.
  std::size_t at(int pz, int py, int px) const {
    return (static_cast<std::size_t>(pz) * p[1] + py) * p[2] + px;
  }
  int hz() const { return Rank == 3 ? halo : 0; }
  int hy() const { return Rank >= 2 ? halo : 0; }
  std::size_t index(int z, int y, int x) const {
    return at(z + hz(), y + hy(), x + halo);
  }
};

template <class T, int Rank>
struct HostAccessor {
  using value_type = T;
  T const* centre;
  std::ptrdiff_t sy, sz;
  // Host-only in practice; marked host-device because the suite functors'
  // call operators are, and nvcc warns when they call a host-only function.
  KOKKOS_INLINE_FUNCTION T operator()(int dx) const { return centre[dx]; }
  KOKKOS_INLINE_FUNCTION T operator()(int dy, int dx) const {
    return centre[dy * sy + dx];
  }
  KOKKOS_INLINE_FUNCTION T operator()(int dz, int dy, int dx) const {
    return centre[dz * sz + dy * sy + dx];
  }
};

template <class T, int Rank>
void reference_periodic_halo(HostField<T, Rank>& f) {
  auto wrap = [](int padded, int halo, int n) {
    int i = padded - halo;
    i = ((i % n) + n) % n;
    return i + halo;
  };
  for (int z = 0; z < f.p[0]; ++z)
    for (int y = 0; y < f.p[1]; ++y)
      for (int x = 0; x < f.p[2]; ++x) {
        int const sz = Rank == 3 ? wrap(z, f.halo, f.n[0]) : z;
        int const sy = Rank >= 2 ? wrap(y, f.halo, f.n[1]) : y;
        int const sx = wrap(x, f.halo, f.n[2]);
        f.data[f.at(z, y, x)] = f.data[f.at(sz, sy, sx)];
      }
}

/// `steps` Jacobi steps of `op` on the interior; the halo stays as given
/// (fixed) or is refreshed from the interior before each step (periodic).
template <class T, int Rank, class Op>
HostField<T, Rank> reference(HostField<T, Rank> f, Op const& op, int steps,
                             stencil::Boundary boundary) {
  HostField<T, Rank> next = f;
  std::ptrdiff_t const sy = f.p[2];
  std::ptrdiff_t const sz = static_cast<std::ptrdiff_t>(f.p[1]) * f.p[2];
  for (int s = 0; s < steps; ++s) {
    if (boundary == stencil::Boundary::periodic) reference_periodic_halo(f);
    for (int z = 0; z < f.n[0]; ++z)
      for (int y = 0; y < f.n[1]; ++y)
        for (int x = 0; x < f.n[2]; ++x) {
          std::size_t const i = f.index(z, y, x);
          next.data[i] = static_cast<T>(
              op(HostAccessor<T, Rank>{f.data.data() + i, sy, sz}));
        }
    std::swap(f.data, next.data);
  }
  return f;
}

/// For a linear stencil, the sum of |coefficients| bounds how much one step
/// can amplify the largest value. Found by applying `op` to unit impulses.
template <class Op>
double amplification_bound(Op const& op) {
  constexpr int rank = Op::rank, r = Op::radius, w = 2 * r + 1;
  std::vector<double> box(static_cast<std::size_t>(std::pow(w, rank)), 0.0);
  double sum = 0;
  for (std::size_t k = 0; k < box.size(); ++k) {
    std::fill(box.begin(), box.end(), 0.0);
    box[k] = 1.0;
    std::size_t const centre = box.size() / 2;
    sum += std::abs(op(HostAccessor<double, rank>{box.data() + centre, w,
                                                  static_cast<std::ptrdiff_t>(w) * w}));
  }
  return sum;
}

/// Random initial data in [0, scale), halo included, from a fixed seed.
/// Unstable suite stencils (j3d7pt, poisson) grow by up to
/// amplification^steps; the scale keeps that inside the type's range so
/// that neither the reference nor the library overflows.
template <class T, int Rank, class Op>
HostField<T, Rank> random_field(std::array<int, Rank> const& extents, int halo,
                                Op const& op, int steps, unsigned seed) {
  HostField<T, Rank> f(extents, halo);
  double const limit = std::is_same_v<T, float> ? 1e30 : 1e290;
  double const growth = std::max(1.0, amplification_bound(op));
  double const scale =
      std::min(1.0, limit / std::pow(growth, std::max(steps, 1)));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  for (auto& v : f.data) v = static_cast<T>(dist(gen) * scale);
  return f;
}

template <class T, int Rank, class MemorySpace>
void load(stencil::Grid<T, Rank, MemorySpace>& grid,
          HostField<T, Rank> const& f) {
  stencil::fill(grid, [&](auto... i) {
    std::array<int, Rank> idx{i...};
    std::array<int, 3> c{0, 0, 0};
    for (int d = 0; d < Rank; ++d) c[3 - Rank + d] = idx[d];
    return f.data[f.index(c[0], c[1], c[2])];
  });
}

template <class T, int Rank, class MemorySpace>
HostField<T, Rank> read_back(stencil::Grid<T, Rank, MemorySpace> const& grid) {
  HostField<T, Rank> f(grid.extents(), grid.halo());
  auto host =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, grid.current());
  std::copy(host.data(), host.data() + host.size(), f.data.begin());
  return f;
}

/// Tolerance on max|result - reference| / max|reference| over the interior.
/// The library and the reference evaluate the same expression in the same
/// type; they differ only where a compiler contracts a*b+c into an FMA or
/// orders a sum differently: about one rounding per term per step, so
/// 32 eps per step covers stencils of up to 27 terms.
template <class T>
double tolerance(int steps) {
  return 32.0 * std::numeric_limits<T>::epsilon() * std::max(1, steps);
}

/// Compares the interior; for fixed boundaries also checks that the halo
/// still holds exactly the values it started with.
template <class T, int Rank>
::testing::AssertionResult matches(HostField<T, Rank> const& result,
                                   HostField<T, Rank> const& expected,
                                   HostField<T, Rank> const& initial,
                                   stencil::Boundary boundary, int steps) {
  double max_ref = 0, max_err = 0;
  std::array<int, 3> worst{0, 0, 0};
  for (int z = 0; z < expected.n[0]; ++z)
    for (int y = 0; y < expected.n[1]; ++y)
      for (int x = 0; x < expected.n[2]; ++x) {
        std::size_t const i = expected.index(z, y, x);
        double const ref = expected.data[i];
        double const err = std::abs(static_cast<double>(result.data[i]) - ref);
        if (!std::isfinite(ref)) {
          return ::testing::AssertionFailure()
                 << "the reference is not finite at (" << z << "," << y << ","
                 << x << "): the test's input scaling is wrong";
        }
        max_ref = std::max(max_ref, std::abs(ref));
        if (!(err <= max_err)) {  // also catches NaN results
          max_err = std::isnan(err) ? std::numeric_limits<double>::infinity()
                                    : err;
          worst = {z, y, x};
        }
      }
  double const rel = max_err / std::max(max_ref, 1e-300);
  if (!(rel <= tolerance<T>(steps))) {
    std::size_t const i = expected.index(worst[0], worst[1], worst[2]);
    return ::testing::AssertionFailure()
           << "relative error " << rel << " > tolerance " << tolerance<T>(steps)
           << "; worst cell (z,y,x)=(" << worst[0] << "," << worst[1] << ","
           << worst[2] << "): got " << result.data[i] << ", expected "
           << expected.data[i];
  }
  if (boundary == stencil::Boundary::fixed) {
    for (std::size_t i = 0; i < initial.data.size(); ++i) {
      int const x = static_cast<int>(i % initial.p[2]);
      int const y = static_cast<int>(i / initial.p[2] % initial.p[1]);
      int const z = static_cast<int>(i / initial.p[2] / initial.p[1]);
      bool const interior =
          x >= initial.halo && x < initial.halo + initial.n[2] &&
          (Rank < 2 || (y >= initial.halo && y < initial.halo + initial.n[1])) &&
          (Rank < 3 || (z >= initial.halo && z < initial.halo + initial.n[0]));
      if (!interior && result.data[i] != initial.data[i]) {
        return ::testing::AssertionFailure()
               << "fixed halo cell (padded z,y,x)=(" << z << "," << y << ","
               << x << ") changed from " << initial.data[i] << " to "
               << result.data[i];
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace stencil_test
