// SPDX-License-Identifier: Apache-2.0
// The suite's multi-field solvers under every boundary kind and mixes of
// them per axis and side, on every policy that runs several fields,
// against host loops that apply the halo rules themselves
// (fields_reference.hpp's apply_sides) before every step.
#include "fields_reference.hpp"
#include "stencil_test_spaces.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite/solvers.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using stencil::Boundary;
using stencil::Side;
using stencil_test::fields::apply_sides;
using stencil_test::fields::HostField;
using stencil_test::fields::HostSides;
using stencil_test::fields::to_host;

template <class Space>
class FieldsBoundaries : public ::testing::Test {};
TYPED_TEST_SUITE(FieldsBoundaries, stencil_test::ExecutionSpaces);

double dirichlet_value(std::vector<int> const& cell, double t) {
  double s = 0.25 * t;
  for (std::size_t d = 0; d < cell.size(); ++d) s += (d + 1.3) * cell[d];
  return 0.5 + 0.3 * std::sin(s);
}

/// Sides of a test, axes slowest first over the state's rank.
template <int Rank>
using Kinds = std::array<std::array<Boundary, 2>, Rank>;

template <int Rank>
HostSides host_sides(Kinds<Rank> const& kinds) {
  HostSides h;
  for (int d = 0; d < Rank; ++d) {
    h.kind[3 - Rank + d][0] = kinds[d][0];
    h.kind[3 - Rank + d][1] = kinds[d][1];
  }
  h.dirichlet = dirichlet_value;
  return h;
}

/// The coefficient's sides: dirichlet sides keep the filled halo.
inline HostSides coefficient_sides(HostSides h) {
  for (auto& axis : h.kind)
    for (auto& side : axis)
      if (side == Boundary::dirichlet) side = Boundary::fixed;
  return h;
}

template <int Rank, class State>
void set_sides(State& s, Kinds<Rank> const& kinds) {
  for (int d = 0; d < Rank; ++d) {
    if (kinds[d][0] == Boundary::periodic) {
      s.set_boundary(d, Side::both, Boundary::periodic);
      continue;
    }
    for (int side = 0; side < 2; ++side) {
      Side const which = side == 0 ? Side::low : Side::high;
      if (kinds[d][side] == Boundary::dirichlet) {
        s.set_dirichlet(d, which, [](std::array<int, Rank> const& c, double t) {
          return dirichlet_value(std::vector<int>(c.begin(), c.end()), t);
        });
      } else {
        s.set_boundary(d, which, kinds[d][side]);
      }
    }
  }
}

using stencil_test::fields::expect_field;
using stencil_test::fields::fill_pattern;

/// The policies that run every boundary; on a native space the native
/// sweep too, and temporal blocking where every side of `kinds` is fixed or
/// periodic (rank 1 and 2), at a depth that divides no test's step count.
template <class Space, int Rank, class F>
void for_each_policy(Kinds<Rank> const& kinds, F&& f) {
  f(stencil::Naive{}, "Naive");
  f(stencil::SpatialBlocking{{.x = 5, .y = 3, .z = 2}}, "SpatialBlocking");
  f(stencil::Auto{}, "Auto");
  if constexpr (stencil::native_available_v<Space>) {
    f(stencil::StreamingSweep{}, "StreamingSweep (native)");
    bool kept = Rank <= 2;
    for (auto const& axis : kinds) {
      for (Boundary b : axis) {
        kept = kept && (b == Boundary::fixed || b == Boundary::periodic);
      }
    }
    if (kept) f(stencil::TemporalBlocking{.depth = 4}, "TemporalBlocking");
  }
}

template <int Rank>
std::string describe(char const* name, char const* policy,
                     Kinds<Rank> const& kinds, bool is_float) {
  std::string t = std::string(name) + " " + policy + " [";
  for (auto const& k : kinds) {
    t += stencil::to_string(k[0]) + "/" + stencil::to_string(k[1]) + " ";
  }
  return t + "]" + (is_float ? " float" : " double");
}

/// Steps the reference of a one-written-field solver: `update(fields,
/// z, y, x)` gives the new value of field 0 from the host fields.
template <class Space, class T, class Op, int Rank, class Fill, class Update>
void check_solver(Op const& op, std::array<int, Rank> extents, int halo,
                  Kinds<Rank> const& kinds, int steps,
                  std::vector<std::string> names, Fill&& fill,
                  Update&& update) {
  using Fields = typename Op::fields;
  for_each_policy<Space, Rank>(
      kinds, [&](auto policy, char const* policy_name) {
        std::string const what = describe<Rank>(Op::name, policy_name, kinds,
                                                std::is_same_v<T, float>);
        stencil::State<T, Rank, typename Space::memory_space> s(
            "s", extents, stencil::field_specs<Op>(names),
            {.halo = halo, .t0 = 1.0, .dt = 0.5});
        set_sides<Rank>(s, kinds);
        fill(s);
        // The reference: every field's current level (and n-1 where kept).
        std::vector<HostField> now, before;
        for (int f = 0; f < Fields::count; ++f) {
          now.push_back(to_host(s, f, 0));
          before.push_back(Fields::levels[f] > 1 ? to_host(s, f, -1) : now[f]);
        }
        HostSides const sides = host_sides<Rank>(kinds);
        for (int f = 0; f < Fields::count; ++f) {
          if (!Fields::written[f])
            apply_sides(now[f], coefficient_sides(sides), 1.0);
        }
        double t = 1.0;
        for (int n = 0; n < steps; ++n, t += 0.5) {
          for (int f = 0; f < Fields::count; ++f) {
            if (Fields::written[f]) apply_sides(now[f], sides, t);
          }
          std::vector<HostField> next = now;
          for (int f = 0; f < Fields::count; ++f) {
            if (Fields::levels[f] > 1) next[f] = before[f];  // n-1's buffer
          }
          stencil_test::fields::for_interior(now[0], [&](int z, int y, int x) {
            update(now, before, next, z, y, x);
          });
          before = now;
          now = next;
        }
        stencil::iterate(Space{}, s, op, steps, policy);
        for (int f = 0; f < Fields::count; ++f) {
          if (Fields::written[f]) expect_field(s, f, now[f], what);
        }
      });
}

constexpr Boundary fixed = Boundary::fixed, periodic = Boundary::periodic,
                   neumann = Boundary::neumann,
                   reflecting = Boundary::reflecting,
                   dirichlet = Boundary::dirichlet;

TYPED_TEST(FieldsBoundaries, HeatVarCoefUnderNeumannAndMixedSides) {
  using Space = TypeParam;
  auto const run = [](auto value, auto extents, auto kinds, int steps) {
    using T = decltype(value);
    constexpr int rank = std::tuple_size_v<decltype(extents)>;
    using Op = stencil::suite::HeatVarCoef<rank>;
    check_solver<Space, T, Op, rank>(
        Op{}, extents, 1, kinds, steps, {"u", "k"},
        [](auto& s) {
          fill_pattern(s, 0, 1, 0.0, 1.0);
          fill_pattern(s, 1, 2, 0.5, 1.5);
        },
        [](auto const& now, auto const&, auto& next, int z, int y, int x) {
          HostField const &u = now[0], &k = now[1];
          double flux = 0;
          for (int a = 3 - rank; a < 3; ++a) {
            int o[3] = {0, 0, 0};
            o[a] = 1;
            double const c = u(z, y, x), kc = k(z, y, x);
            flux += 0.5 * (kc + k(z + o[0], y + o[1], x + o[2])) *
                        (u(z + o[0], y + o[1], x + o[2]) - c) -
                    0.5 * (kc + k(z - o[0], y - o[1], x - o[2])) *
                        (c - u(z - o[0], y - o[1], x - o[2]));
          }
          next[0](z, y, x) = u(z, y, x) + 0.1 * flux;
        });
  };
  run(0.0, std::array<int, 2>{9, 11},
      Kinds<2>{{{neumann, neumann}, {neumann, neumann}}}, 7);
  run(0.0f, std::array<int, 2>{8, 13},
      Kinds<2>{{{dirichlet, reflecting}, {periodic, periodic}}}, 5);
  run(0.0, std::array<int, 3>{5, 6, 7},
      Kinds<3>{
          {{neumann, dirichlet}, {periodic, periodic}, {reflecting, fixed}}},
      4);
  // Fixed and periodic axes together, several native tiles: temporal
  // blocking wraps one axis and keeps the other's halo.
  run(0.0, std::array<int, 2>{67, 263},
      Kinds<2>{{{fixed, fixed}, {periodic, periodic}}}, 9);
  run(0.0f, std::array<int, 2>{131, 37},
      Kinds<2>{{{periodic, periodic}, {fixed, fixed}}}, 6);
}

TYPED_TEST(FieldsBoundaries, LeapfrogWaveUnderMixedSides) {
  using Space = TypeParam;
  auto const run = [](auto value, auto extents, auto kinds, int steps,
                      auto radius) {
    using T = decltype(value);
    constexpr int rank = std::tuple_size_v<decltype(extents)>;
    constexpr int r = decltype(radius)::value;
    using Op = stencil::suite::Wave<rank, r>;
    auto const w = stencil_test::fields::second_difference(r);
    check_solver<Space, T, Op, rank>(
        Op{}, extents, r + 1, kinds, steps, {"u"},
        [](auto& s) {
          fill_pattern(s, 0, 3, -1.0, 1.0, 0);
          fill_pattern(s, 0, 4, -1.0, 1.0, -1);
        },
        [&](auto const& now, auto const& before, auto& next, int z, int y,
            int x) {
          next[0](z, y, x) =
              2 * now[0](z, y, x) - before[0](z, y, x) +
              0.09 * stencil_test::fields::laplacian(now[0], z, y, x, w);
        });
  };
  run(0.0, std::array<int, 2>{11, 9},
      Kinds<2>{{{reflecting, dirichlet}, {periodic, periodic}}}, 6,
      std::integral_constant<int, 2>{});
  run(0.0f, std::array<int, 2>{7, 10},
      Kinds<2>{{{neumann, neumann}, {reflecting, reflecting}}}, 5,
      std::integral_constant<int, 1>{});
  run(0.0, std::array<int, 3>{5, 7, 6},
      Kinds<3>{
          {{neumann, reflecting}, {dirichlet, fixed}, {periodic, periodic}}},
      3, std::integral_constant<int, 1>{});
  run(0.0, std::array<int, 2>{71, 259},
      Kinds<2>{{{periodic, periodic}, {fixed, fixed}}}, 7,
      std::integral_constant<int, 3>{});
  run(0.0f, std::array<int, 2>{9, 13},
      Kinds<2>{{{fixed, fixed}, {periodic, periodic}}}, 5,
      std::integral_constant<int, 1>{});
}

TYPED_TEST(FieldsBoundaries, TwoSpeciesUnderReflectingAndMixedSides) {
  using Space = TypeParam;
  auto const op = stencil::suite::Bruss::for_points(11);
  double const dt = op.dt, diffusion = 2e-3 * op.inv_h2 * op.dt;
  auto const run = [&](auto value, Kinds<2> kinds, int steps) {
    using T = decltype(value);
    check_solver<Space, T, stencil::suite::Bruss, 2>(
        op, {11, 11}, 1, kinds, steps, {"u", "v"},
        [](auto& s) {
          fill_pattern(s, 0, 5, 0.2, 1.5);
          fill_pattern(s, 1, 6, 1.0, 6.0);
        },
        [&](auto const& now, auto const&, auto& next, int z, int y, int x) {
          auto const w = stencil_test::fields::second_difference(1);
          double const u = now[0](z, y, x), v = now[1](z, y, x);
          next[0](z, y, x) =
              u + dt * (1 + u * u * v - 4.4 * u) +
              diffusion * stencil_test::fields::laplacian(now[0], z, y, x, w);
          next[1](z, y, x) =
              v + dt * (3.4 * u - u * u * v) +
              diffusion * stencil_test::fields::laplacian(now[1], z, y, x, w);
        });
  };
  run(0.0, Kinds<2>{{{reflecting, reflecting}, {reflecting, reflecting}}}, 9);
  run(0.0f, Kinds<2>{{{neumann, dirichlet}, {periodic, periodic}}}, 4);
}

}  // namespace
