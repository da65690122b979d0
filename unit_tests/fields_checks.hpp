// SPDX-License-Identifier: Apache-2.0
// Checks of multi-field runs against plain host loops written from the
// solvers' formulas, shared by the tests of every policy (tst_fields.cpp)
// and of the native kernels (native_cuda/tst_fields_stream.cpp): each runs
// the policies a caller lists, in two calls.
#pragma once

#include "fields_reference.hpp"
#include "mixed_radii.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite/solvers.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <type_traits>

namespace stencil_test::fields {

using stencil::Boundary;

/// Runs `steps` steps in two calls, the first of steps / 2 (an odd count
/// leaves the levels' buffers rotated: a policy that keeps buffers with the
/// state must pick up where the first call stopped); every policy
/// a caller lists must run every multi-field stencil (a refusal fails the
/// test).
template <class Space, class State, class Op, class Policy>
bool run(State& s, Op const& op, int steps, Policy const& policy,
         std::string const& what) {
  try {
    stencil::iterate(Space{}, s, op, steps / 2, policy);
    stencil::iterate(Space{}, s, op, steps - steps / 2, policy);
  } catch (stencil::error const& e) {
    ADD_FAILURE() << what << ": " << e.what();
    return false;
  }
  Kokkos::fence();
  return true;
}

template <class Space, class T, int Rank, int R, class Policies>
void check_wave(Policies&& each_policy, std::array<int, Rank> extents, int halo,
                Boundary boundary, int steps) {
  using Op = stencil::suite::Wave<Rank, R>;
  each_policy(Rank, boundary, [&](auto policy, std::string const& name) {
    std::string const what =
        std::string(Op::name) + " " + name + " " +
        (boundary == Boundary::periodic ? "periodic" : "fixed") + " halo " +
        std::to_string(halo) + " steps " + std::to_string(steps) +
        (std::is_same_v<T, float> ? " float" : " double");
    stencil::State<T, Rank, typename Space::memory_space> s(
        "wave", extents, stencil::field_specs<Op>({"u"}),
        {.halo = halo, .boundary = boundary});
    fill_pattern(s, 0, 1, -1.0, 1.0, 0);
    fill_pattern(s, 0, 2, -1.0, 1.0, -1);
    HostField u = to_host(s, 0, 0), u_old = to_host(s, 0, -1);
    auto const w = stencil_test::fields::second_difference(R);
    for (int n = 0; n < steps; ++n) {
      if (boundary == Boundary::periodic) stencil_test::fields::wrap_halo(u);
      HostField next = u_old;  // the new level overwrites n-1 in place
      stencil_test::fields::for_interior(u, [&](int z, int y, int x) {
        next(z, y, x) = 2 * u(z, y, x) - u_old(z, y, x) +
                        0.09 * stencil_test::fields::laplacian(u, z, y, x, w);
      });
      u_old = u;
      u = next;
    }
    if (!run<Space>(s, Op{}, steps, policy, what)) return;
    expect_field(s, 0, u, what);
    // The level before is the reference's n-1 (two buffers, rotated).
    if (steps > 0) {
      HostField const got_old = to_host(s, 0, -1);
      double const e = u_old(0, 0, extents[Rank - 1] / 2);
      EXPECT_NEAR(got_old(0, 0, extents[Rank - 1] / 2), e,
                  tolerance<T>() * (1 + std::abs(e)))
          << what << ": level n-1";
    }
    EXPECT_EQ(s.buffers(0), 2) << "leapfrog keeps two buffers";
    EXPECT_DOUBLE_EQ(s.time(), steps * 1.0);
  });
}

template <class Space, class T, int Rank, class Policies>
void check_heat_varcoef(Policies&& each_policy, std::array<int, Rank> extents,
                        int halo, Boundary boundary, int steps) {
  using Op = stencil::suite::HeatVarCoef<Rank>;
  each_policy(Rank, boundary, [&](auto policy, std::string const& name) {
    std::string const what = std::string(Op::name) + " " + name + " steps " +
                             std::to_string(steps) +
                             (std::is_same_v<T, float> ? " float" : " double");
    stencil::State<T, Rank, typename Space::memory_space> s(
        "heat", extents, stencil::field_specs<Op>({"u", "k"}),
        {.halo = halo, .boundary = boundary});
    EXPECT_EQ(s.buffers(1), 1) << "a coefficient keeps one buffer";
    fill_pattern(s, 0, 3);
    fill_pattern(s, 1, 4, 0.5, 1.5);
    HostField u = to_host(s, 0), k = to_host(s, 1);
    if (boundary == Boundary::periodic) stencil_test::fields::wrap_halo(k);
    for (int n = 0; n < steps; ++n) {
      if (boundary == Boundary::periodic) stencil_test::fields::wrap_halo(u);
      HostField next = u;
      stencil_test::fields::for_interior(u, [&](int z, int y, int x) {
        double flux = 0;
        for (int a = 3 - Rank; a < 3; ++a) {
          int o[3] = {0, 0, 0};
          o[a] = 1;
          double const c = u(z, y, x), kc = k(z, y, x);
          double const up = u(z + o[0], y + o[1], x + o[2]);
          double const um = u(z - o[0], y - o[1], x - o[2]);
          double const kp = k(z + o[0], y + o[1], x + o[2]);
          double const km = k(z - o[0], y - o[1], x - o[2]);
          flux += 0.5 * (kc + kp) * (up - c) - 0.5 * (kc + km) * (c - um);
        }
        next(z, y, x) = u(z, y, x) + 0.1 * flux;
      });
      u = next;
    }
    if (!run<Space>(s, Op{}, steps, policy, what)) return;
    expect_field(s, 0, u, what);
  });
}

template <class Space, class T, int Rank, class Policy>
void check_mixed_radii(std::array<int, Rank> extents, int halo,
                       Boundary boundary, int steps, Policy const& policy,
                       std::string const& name) {
  using Op = MixedRadii<Rank>;
  std::string const what =
      "mixed radii rank " + std::to_string(Rank) + " " + name + " " +
      (boundary == Boundary::periodic ? "periodic" : "fixed") + " steps " +
      std::to_string(steps) + (std::is_same_v<T, float> ? " float" : " double");
  stencil::State<T, Rank, typename Space::memory_space> s(
      "mixed", extents, stencil::field_specs<Op>({"u", "w", "k"}),
      {.halo = halo, .boundary = boundary});
  fill_mixed(s);
  HostField u = to_host(s, 0), w = to_host(s, 1, 0), w_old = to_host(s, 1, -1),
            k = to_host(s, 2);
  if (boundary == Boundary::periodic) stencil_test::fields::wrap_halo(k);
  for (int n = 0; n < steps; ++n) {
    if (boundary == Boundary::periodic) stencil_test::fields::wrap_halo(u);
    HostField un = u, wn = w;
    stencil_test::fields::for_interior(u, [&](int z, int y, int x) {
      double lap = 0, dk = 0;
      for (int a = 3 - Rank; a < 3; ++a) {
        auto at = [&](HostField const& f, int d) {
          int o[3] = {0, 0, 0};
          o[a] = d;
          return f(z + o[0], y + o[1], x + o[2]);
        };
        lap += at(u, -2) + at(u, -1) + at(u, 1) + at(u, 2) - 4 * u(z, y, x);
        dk += at(k, 1) - at(k, -1);
      }
      un(z, y, x) = u(z, y, x) + 0.04 * lap + 0.1 * dk + 0.05 * w(z, y, x) +
                    0.001 * n + 0.0001 * x;
      wn(z, y, x) = 0.5 * w(z, y, x) + 0.25 * w_old(z, y, x) + 0.1 * u(z, y, x);
    });
    u = un;
    w_old = w;
    w = wn;
  }
  if (!run<Space>(s, Op{}, steps, policy, what)) return;
  expect_field(s, 0, u, what);
  expect_field(s, 1, w, what);
  HostField const got_old = to_host(s, 1, -1);
  int bad = 0;
  stencil_test::fields::for_interior(w_old, [&](int z, int y, int x) {
    double const e = w_old(z, y, x);
    bad += !(std::abs(got_old(z, y, x) - e) <=
             tolerance<T>() * (1.0 + std::abs(e)));
  });
  EXPECT_EQ(bad, 0) << what << ": level n-1 of w";
}

}  // namespace stencil_test::fields
