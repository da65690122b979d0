// SPDX-License-Identifier: Apache-2.0
// The benchmarks of the suite's solvers (stencil/suite/solvers.hpp): several
// fields and time levels on a stencil::State (docs/suite.md, "Solvers").
// Included by cases_impl.hpp after the pieces it shares with the
// single-field benchmarks (Case, Bound, the registration's statistics);
// only the units of solver entries instantiate it.
#pragma once

#include "benchmarks.hpp"
#include "cases.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite/solvers.hpp>

#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numbers>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace stencil_perf {
namespace detail {

/// Cell `i` of `n` as a coordinate in (-0.5, 0.5), centred on the domain.
inline double centred(int i, int n) { return (i + 0.5) / n - 0.5; }

/// How a solver of the suite starts: its fields' names, the boundary of
/// every side, its functor for a domain and its initial data (docs/suite.md,
/// "Solvers"). Fills run on the host over every cell, halo included (the
/// halo of a fixed side keeps what the fill wrote).
template <class Op>
struct Solver;

/// wave: u = 1 + a Gaussian bump (width 0.05 of the domain) in the middle,
/// at rest (u at n-1 equals u at n). The background of 1 keeps the bump's
/// tails, and the numerical front running ahead of the wave, out of the
/// denormal range, which CPUs compute slowly.
template <int Rank, int R>
struct Solver<stencil::suite::Wave<Rank, R>> {
  using Op = stencil::suite::Wave<Rank, R>;
  static constexpr stencil::Boundary boundary = stencil::Boundary::fixed;
  static std::vector<std::string> names() { return {"u"}; }
  static Op op(std::array<int, Rank> const&) { return {}; }
  template <class State>
  static void fill(State& s) {
    auto const e = s.extents();
    stencil::fill(s, 0, [e](auto... c) {
      int const cs[] = {c...};
      double r2 = 0;
      for (int d = 0; d < Rank; ++d) {
        double const x = centred(cs[d], e[d]);
        r2 += x * x;
      }
      constexpr double width = 0.05;
      return 1.0 + 0.5 * std::exp(-r2 / (2 * width * width));
    });
  }
};

/// heat-varcoef: u = 0.5 + 0.25 prod_d sin(2 pi x_d) in [0.25, 0.75], and
/// k = 1 + 0.5 sin(2 pi sum_d (d + 1) x_d) in [0.5, 1.5]; the update keeps
/// u within its initial range (lambda sum k < 1).
template <int Rank>
struct Solver<stencil::suite::HeatVarCoef<Rank>> {
  using Op = stencil::suite::HeatVarCoef<Rank>;
  static constexpr stencil::Boundary boundary = stencil::Boundary::fixed;
  static std::vector<std::string> names() { return {"u", "k"}; }
  static Op op(std::array<int, Rank> const&) { return {}; }
  template <class State>
  static void fill(State& s) {
    auto const e = s.extents();
    constexpr double two_pi = 2 * std::numbers::pi;
    stencil::fill(s, 0, [e](auto... c) {
      int const cs[] = {c...};
      double p = 1;
      for (int d = 0; d < Rank; ++d)
        p *= std::sin(two_pi * centred(cs[d], e[d]));
      return 0.5 + 0.25 * p;
    });
    stencil::fill(s, 1, [e](auto... c) {
      int const cs[] = {c...};
      double phase = 0;
      for (int d = 0; d < Rank; ++d) phase += (d + 1) * centred(cs[d], e[d]);
      return 1.0 + 0.5 * std::sin(two_pi * phase);
    });
  }
};

/// Values in [-1, 1) that depend only on the cell: the perturbation of the
/// two-species starts (unit_random of cases_impl.hpp, in double).
inline double cell_noise(int i, int j, int seed) {
  return 2 * unit_random<double>(shifted(i) << 32 | shifted(j) << 8 |
                                 static_cast<std::uint64_t>(seed)) -
         1;
}

/// grayscott2d: u = 1, v = 0, except in a centred square of a tenth of
/// each extent: u = 0.5, v = 0.25, each perturbed by up to 1% (Pearson's
/// start). Periodic.
template <>
struct Solver<stencil::suite::GrayScott> {
  using Op = stencil::suite::GrayScott;
  static constexpr stencil::Boundary boundary = stencil::Boundary::periodic;
  static std::vector<std::string> names() { return {"u", "v"}; }
  static Op op(std::array<int, 2> const&) { return {}; }
  template <class State>
  static void fill(State& s) {
    auto const e = s.extents();
    auto inside = [e](int i, int j) {
      return std::abs(centred(i, e[0])) < 0.05 &&
             std::abs(centred(j, e[1])) < 0.05;
    };
    stencil::fill(s, 0, [inside](int i, int j) {
      return inside(i, j) ? 0.5 * (1 + 0.01 * cell_noise(i, j, 1)) : 1.0;
    });
    stencil::fill(s, 1, [inside](int i, int j) {
      return inside(i, j) ? 0.25 * (1 + 0.01 * cell_noise(i, j, 2)) : 0.0;
    });
  }
};

/// bruss2d: N x N points on the unit square, h = 1/(N-1) with N the x
/// extent (Bruss::for_points); u = 0.5 + y, v = 1 + 5x; reflecting sides
/// (the vertex-centred Neumann condition: the boundary points are interior
/// cells and the halo mirrors across them).
template <>
struct Solver<stencil::suite::Bruss> {
  using Op = stencil::suite::Bruss;
  static constexpr stencil::Boundary boundary = stencil::Boundary::reflecting;
  static std::vector<std::string> names() { return {"u", "v"}; }
  static Op op(std::array<int, 2> const& extents) {
    return Op::for_points(extents[1]);
  }
  template <class State>
  static void fill(State& s) {
    double const h = 1.0 / (s.extent(1) - 1);
    stencil::fill(s, 0, [h](int i, int) { return 0.5 + i * h; });
    stencil::fill(s, 1, [h](int, int j) { return 1.0 + 5 * j * h; });
  }
};

/// Why `policy` cannot run solver `Op` on Space, or "" when it can. The
/// library's plan refuses these with stencil::unsupported: a policy whose
/// kernels read one field, and Auto{.tune = true}, which does not time
/// multi-field stencils yet. The rows of such policies are listed as not
/// applicable, with this reason, rather than failed.
template <class Op, class P>
std::string solver_refusal(P const& policy) {
  if constexpr (std::is_same_v<P, stencil::Auto>) {
    return stencil::detail::tuning_requested(policy)
               ? "Auto{.tune = true} (or STENCIL_AUTO_TUNE=1) does not time "
                 "multi-field stencils yet; Auto{} runs them"
               : "";
  } else if constexpr (stencil::detail::runs_fields<P, Space>()) {
    (void)policy;
    return "";
  } else {
    (void)policy;
    return stencil::to_string(stencil::policy_traits<P>::kind) +
           " does not run multi-field stencils on " + Space::name() +
           " (its kernels read one field)";
  }
}

/// The state of one solver benchmark and its initial values, kept across
/// the repetitions of that benchmark.
template <class Op, class T>
struct SolverFixture : FixtureBase {
  static constexpr int rank = Op::rank;
  using StateType = stencil::State<T, rank>;
  using view_type = typename StateType::view_type;
  StateType state;
  Op op;
  stencil::Plan plan;
  std::string label;
  struct Saved {
    int field;
    int level;
    view_type values;
  };
  std::vector<Saved> initial;  ///< every level of every written field

  SolverFixture(std::string const& name, std::array<int, rank> const& extents)
      : state(name, extents, stencil::field_specs<Op>(Solver<Op>::names()),
              {.halo = radius_of<Op>(), .boundary = Solver<Op>::boundary}),
        op(Solver<Op>::op(extents)) {}

  /// Keeps the levels a step reads; coefficients never change.
  void save() {
    for (int f = 0; f < state.field_count(); ++f) {
      if (state.spec(f).read_only) continue;
      for (int level = 0; level > -state.spec(f).levels; --level) {
        view_type const& v = state.level(f, level);
        view_type copy(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                          v.label() + ":initial"),
                       v.layout());
        Kokkos::deep_copy(copy, v);
        initial.push_back({f, level, copy});
      }
    }
  }

  /// Every timed run starts from the initial state. A fixed side's halo is
  /// never written and the others are refreshed before every step, so the
  /// levels a step reads are all there is to restore.
  void reset(Space const& space) {
    for (Saved const& s : initial) {
      Kokkos::deep_copy(space, state.level(s.field, s.level), s.values);
    }
    state.set_time(0);
    space.fence("stencil_perf::reset");
  }
};

/// The DRAM-bound ceiling of a solver's plan: the copy bandwidth over the
/// bytes one step moves per cell (Op::values_per_cell values of T: every
/// field level read once and every written field stored once), times the
/// plan's depth. Named dram<N>v (dram3v, dram4v). No FP ceiling: the
/// solvers declare no flop count. A register-resident plan has the FMA
/// ceiling (resident_ceiling).
template <class Op>
Bound solver_ceiling(stencil::Plan const& plan, Ceilings const& c) {
  if (plan.policy == stencil::PolicyKind::register_resident) {
    return resident_ceiling(plan, c);
  }
  std::size_t const size = static_cast<std::size_t>(plan.value_size);
  int const depth = std::max(1, plan.depth);
  Bound b{c.dram_gcells(size, Op::values_per_cell) * depth,
          "dram" + std::to_string(Op::values_per_cell) + "v"};
  if (depth > 1) b.name += "*" + std::to_string(depth);
  return b;
}

/// The plan of `policy` for a fixture. SpatialBlocking's default tile
/// stages every field of radius > 0 in scratch, which for the deep 3D waves
/// exceeds what a host team may hold: the benchmark halves the tile's y,
/// then x, until the plan fits, and the row's plan prints the tile it ran.
template <class Fixture, class Policy>
stencil::Plan plan_solver(Space const& space, Fixture const& fx,
                          Policy const& policy) {
  if constexpr (std::is_same_v<Policy, stencil::SpatialBlocking>) {
    stencil::SpatialBlocking fitted = policy;
    for (;;) {
      try {
        return stencil::plan(space, fx.state, fx.op, fitted);
      } catch (stencil::unsupported const&) {
        if (fitted.tile.y > 1) {
          fitted.tile.y /= 2;
        } else if (fitted.tile.x > 8) {
          fitted.tile.x /= 2;
        } else {
          throw;
        }
      }
    }
  } else {
    return stencil::plan(space, fx.state, fx.op, policy);
  }
}

template <class Op, class T, class Policy>
void run_solver_case(benchmark::State& bench, Case const& c,
                     Policy const& policy, Ceilings const& ceilings) {
  constexpr int rank = Op::rank;
  using F = SolverFixture<Op, T>;
  Space const space;
  std::string error;
  F* const f = fixture_cache().template get<F>(
      c.name,
      [&] {
        std::array<int, rank> extents{};
        std::copy(c.extents.begin(), c.extents.end(), extents.begin());
        auto fx = std::make_unique<F>(c.name, extents);
        // Planning first: a refused plan fails before the slow fill.
        fx->plan = plan_or_not_applicable(
            policy, [&] { return plan_solver(space, *fx, policy); });
        Solver<Op>::fill(fx->state);
        fx->save();
        Bound const bound = solver_ceiling<Op>(fx->plan, ceilings);
        std::ostringstream label;
        label << "domain=" << join_extents(c.extents) << " steps=" << c.steps
              << " refill_every=" << c.steps << " ceiling=" << bound.name
              << " | " << fx->plan;
        fx->label = label.str();
        TableRow& row = table_rows()[c.name];
        row.plan = short_plan(fx->plan);
        row.ceiling = bound.name;
        // Warm-up: first launches, page mapping, clocks ramping up.
        stencil::iterate(space, fx->state, fx->op, c.steps, fx->plan);
        space.fence("stencil_perf::warm-up");
        // A solver that blew up would time NaN arithmetic: refuse the row.
        for (int field = 0; field < fx->state.field_count(); ++field) {
          stencil::FieldSummary const sum =
              stencil::summarize(space, fx->state, field);
          if (sum.nans > 0) {
            throw std::runtime_error(
                "after the warm-up's " + std::to_string(c.steps) +
                " steps, field '" + fx->state.name(field) + "' holds " +
                std::to_string(sum.nans) +
                " values that are not finite; the solver is unstable "
                "on this domain");
          }
        }
        return fx;
      },
      error);
  if (f == nullptr) {
    bench.SkipWithError(error.c_str());
    return;
  }

  double seconds = 0;
  std::int64_t runs = 0;
  try {
    for (auto _ : bench) {
      f->reset(space);
      auto const start = std::chrono::steady_clock::now();
      stencil::iterate(space, f->state, f->op, c.steps, f->plan);
      space.fence("stencil_perf::timed");
      std::chrono::duration<double> const t =
          std::chrono::steady_clock::now() - start;
      bench.SetIterationTime(t.count());
      seconds += t.count();
      ++runs;
    }
  } catch (std::exception const& e) {
    failure_list().push_back(c.name + ": " + e.what());
    bench.SkipWithError(e.what());
    return;
  }

  // Cells once per cell, whatever the number of fields.
  double const cells = static_cast<double>(f->state.interior_cells());
  double const gcells =
      cells * c.steps * static_cast<double>(runs) / seconds / 1e9;
  Bound const bound = solver_ceiling<Op>(f->plan, ceilings);
  bench.counters["GCells/s"] = gcells;
  bench.counters["GB/s"] = gcells * Op::values_per_cell * sizeof(T);
  bench.counters["ceiling_GCells/s"] = bound.gcells;
  bench.counters["frac_of_ceiling"] = gcells / bound.gcells;
  bench.counters["cells"] = cells;
  bench.counters["steps"] = c.steps;
  bench.counters["values_per_cell"] = Op::values_per_cell;
  bench.SetLabel(f->label);
}

/// A row of a policy that cannot run the solver: one repetition that
/// reports "not applicable: <why>". The console prints n/a and the reason,
/// the JSON keeps it as the run's error message, and it is not a failure
/// (the exit status stays 0).
template <class Op>
void register_not_applicable(std::string const& policy_name,
                             char const* precision, Size const& size,
                             std::string const& why) {
  std::string const name = std::string(Op::name) + "/" + precision + "/" +
                           policy_name + "/" + size.label;
  table_rows()[name] = {Op::name, precision, policy_name,
                        join_extents(size.extents), size.steps};
  std::string const message = not_applicable_prefix + why;
  benchmark::RegisterBenchmark(name.c_str(),
                               [message](benchmark::State& state) {
                                 state.SkipWithError(message.c_str());
                               })
      ->Iterations(1)
      ->Repetitions(1);
}

}  // namespace detail
}  // namespace stencil_perf
