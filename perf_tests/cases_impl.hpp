// SPDX-License-Identifier: Apache-2.0
// How one benchmark is set up, timed and reported, and the registration of
// one stencil's benchmarks (a solver's: solver_cases.hpp). Included only by
// the translation units generated from cases.cpp.in, each of which
// instantiates register_stencil_cases for one stencil.
#pragma once

#include "benchmarks.hpp"
#include "cases.hpp"

#include <stencil/stencil.hpp>

#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numbers>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace stencil_perf {
namespace detail {

// Random values in [0, 1) that depend only on the cell's coordinates (halo
// included), so every run, policy and precision starts from the same state
// and the fill is cheap enough for the 3D paper domain.
inline std::uint64_t mix(std::uint64_t x) {  // the splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

template <class T>
T unit_random(std::uint64_t key) {
  constexpr std::uint64_t seed = 20240607;
  std::uint64_t const bits = mix(key ^ mix(seed));
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(bits >> 40) * 0x1p-24f;
  } else {
    return static_cast<T>(static_cast<double>(bits >> 11) * 0x1p-53);
  }
}

// Coordinates start at -halo >= -64; extents are limited by check_selection
// so that the shifted coordinates fit their bit fields.
constexpr std::uint64_t shifted(int i) {
  return static_cast<std::uint64_t>(i + 64);
}

template <class T, int Rank>
void fill_random(stencil::Grid<T, Rank>& grid) {
  if constexpr (Rank == 1) {
    stencil::fill(grid, [](int i) { return unit_random<T>(shifted(i)); });
  } else if constexpr (Rank == 2) {
    stencil::fill(grid, [](int i, int j) {
      return unit_random<T>(shifted(i) << 32 | shifted(j));
    });
  } else {
    stencil::fill(grid, [](int i, int j, int k) {
      return unit_random<T>(shifted(i) << 42 | shifted(j) << 21 | shifted(k));
    });
  }
}

// The grid of one benchmark and its initial state, kept across the
// repetitions of that benchmark: allocating and filling a paper-sized 3D grid
// takes longer than running it.
template <class T, int Rank>
struct Fixture : FixtureBase {
  using GridType = stencil::Grid<T, Rank>;
  GridType grid;
  typename GridType::view_type initial;
  stencil::Plan plan;
  std::string label;
  int refill_every = 0;  ///< steps timed between two resets (chunk_steps)

  Fixture(std::string const& name, std::array<int, Rank> const& extents,
          int halo)
      : grid(name, extents,
             {.halo = halo, .boundary = stencil::Boundary::fixed}) {}

  // Every timed run starts from the same values. Without this the 2D
  // stencils, whose weights sum to less than one, decay towards zero through
  // denormal numbers, which are slow on CPUs.
  void reset(Space const& space) {
    Kokkos::deep_copy(space, grid.current(), initial);
    Kokkos::deep_copy(space, grid.next(), initial);
    space.fence("stencil_perf::reset");
  }
};

/// The ceiling a plan is measured against and its name for the label.
struct Bound {
  double gcells;
  std::string name;
};

// A register-resident run touches DRAM once per call: its ceiling is paper
// 004's, the FMA rate over the 2r+1 FMAs a star update of radius r needs
// at least (the measured rate of the calibration where there is one, else
// the device's peak). Named fma32 or fma64.
inline Bound resident_ceiling(stencil::Plan const& plan, Ceilings const& c) {
  std::size_t const size = static_cast<std::size_t>(plan.value_size);
  double gflops = c.fp_gflops(size);
  if (c.model_device) {
    double const measured = size == sizeof(float)
                                ? c.model_device->fp32_measured_gflops
                                : c.model_device->fp64_measured_gflops;
    if (measured > 0) gflops = measured;
  }
  return {gflops / 2 / (2 * plan.radius + 1), size == 4 ? "fma32" : "fma64"};
}

// A sweep that keeps `depth` steps on chip between DRAM round trips moves
// the grid through DRAM once per `depth` steps, so its DRAM-bound ceiling
// is `depth` times that of one kernel per step; it cannot beat the FP peak.
inline Bound ceiling_for(stencil::Plan const& plan, Ceilings const& c,
                         int flops) {
  if (plan.policy == stencil::PolicyKind::register_resident) {
    return resident_ceiling(plan, c);
  }
  std::size_t const size = static_cast<std::size_t>(plan.value_size);
  Bound b{c.dram_gcells(size) * plan.depth, "dram"};
  if (plan.depth > 1) b.name += "*" + std::to_string(plan.depth);
  double const fp = c.fp_gflops(size) / flops;
  if (fp > 0 && fp < b.gcells) b = {fp, size == 4 ? "fp32" : "fp64"};
  return b;
}

struct Case {
  std::string name;  // the benchmark's name, also the fixture key
  std::vector<int> extents;
  int steps;
};

/// A neighbourhood that is 1 at one offset and 0 elsewhere: the functor's
/// update of it is that point's weight (exact for linear stencils, which
/// the suite's are).
template <class T, int Rank>
struct Impulse {
  using value_type = T;
  int at[Rank];
  // Host and device, like the functors that call it (only on the host).
  template <class... Offsets>
  KOKKOS_INLINE_FUNCTION T operator()(Offsets... offsets) const {
    int const offset[] = {offsets...};
    for (int d = 0; d < Rank; ++d) {
      if (offset[d] != at[d]) return T(0);
    }
    return T(1);
  }
};

/// Steps a grid filled with values in [0, 1) can take with every value
/// staying normal. One step multiplies each Fourier mode of the field by
/// the stencil's symbol, sum over points o of w_o exp(i o.theta); the
/// largest magnitude over the modes (sampled, 16 per axis) is how fast the
/// slowest-decaying mode decays or the fastest-growing one grows. A margin
/// of a thousand on either side of T's normal range.
template <class Op, class T>
int steps_in_normal_range() {
  constexpr int rank = Op::rank, r = Op::radius;
  struct Point {
    int offset[rank];
    double weight;
  };
  std::vector<Point> points;
  Impulse<T, rank> impulse{};
  auto visit = [&](auto&& self, int d) -> void {
    if (d == rank) {
      Point p{};
      std::copy(impulse.at, impulse.at + rank, p.offset);
      p.weight = static_cast<double>(Op{}(impulse));
      if (p.weight != 0) points.push_back(p);
      return;
    }
    for (impulse.at[d] = -r; impulse.at[d] <= r; ++impulse.at[d]) {
      self(self, d + 1);
    }
  };
  visit(visit, 0);
  constexpr int samples = 16;
  int modes = 1;
  for (int d = 0; d < rank; ++d) modes *= samples;
  double largest_gain = 0;
  for (int mode = 0; mode < modes; ++mode) {
    double re = 0, im = 0;
    for (Point const& p : points) {
      double phase = 0;
      for (int d = 0, m = mode; d < rank; ++d, m /= samples) {
        phase += p.offset[d] * (2 * std::numbers::pi * (m % samples) / samples);
      }
      re += p.weight * std::cos(phase);
      im += p.weight * std::sin(phase);
    }
    largest_gain = std::max(largest_gain, std::hypot(re, im));
  }
  double steps = 1e6;
  if (largest_gain < 1) {
    double const smallest = 2 * 1e3 * std::numeric_limits<T>::min();
    steps = std::log(smallest) / std::log(largest_gain);
  } else if (largest_gain > 1) {
    double const largest = std::numeric_limits<T>::max() / 1e3;
    steps = std::log(largest) / std::log(largest_gain);
  }
  return static_cast<int>(std::min(steps, 1e6));
}

/// Steps timed between two refills of the grid (untimed). The suite's
/// stencils are not normalised: j2d5pt's weights sum to 49/118, so its
/// values shrink by up to 0.415 per step, j3d17pt's to 0.077, and
/// j2d25pt's to 226/118, so they grow. Left alone they underflow to
/// denormals and zero (float j3d17pt after ~34 steps, j2d5pt after ~100,
/// double after ~800) or overflow to infinity, and the FP division in every
/// suite stencil then takes its slow path, which times IEEE special-case
/// handling instead of the stencil (measured on an H200, float j2d5pt
/// temporal blocking at depth 8 on 10208^2: 173 GCells/s over 240 steps
/// without refills, 714 over 1000 steps with them; float j3d17pt Naive 153
/// with refills every 64 steps, 250 when Auto's tuning timed its first 6).
/// At most 64 steps, and at most steps_in_normal_range (`in_range`); whole
/// launches of the plan's depth.
inline int chunk_steps(stencil::Plan const& plan, int steps, int in_range) {
  int const depth = std::max(1, plan.depth);
  int const most = std::min(64, in_range);
  int const chunk = std::max(depth, most / depth * depth);
  return std::min(chunk, steps);
}

template <class Op, class T, class Policy>
void run_case(benchmark::State& state, Case const& c, Policy const& policy,
              Ceilings const& ceilings) {
  constexpr int rank = Op::rank;
  using F = Fixture<T, rank>;
  Space const space;
  Op const op{};
  std::string error;
  F* const f = fixture_cache().template get<F>(
      c.name,
      [&] {
        std::array<int, rank> extents{};
        std::copy(c.extents.begin(), c.extents.end(), extents.begin());
        auto fx = std::make_unique<F>(c.name, extents, Op::radius);
        // Planning first: a refused plan fails before the slow fill.
        fx->plan = plan_or_not_applicable(
            policy, [&] { return stencil::plan(space, fx->grid, op, policy); });
        fill_random(fx->grid);
        fx->initial = typename F::GridType::view_type(
            Kokkos::view_alloc(Kokkos::WithoutInitializing,
                               c.name + ":initial"),
            fx->grid.current().layout());
        Kokkos::deep_copy(fx->initial, fx->grid.current());
        Bound const bound = ceiling_for(fx->plan, ceilings, Op::flops);
        fx->refill_every =
            chunk_steps(fx->plan, c.steps, steps_in_normal_range<Op, T>());
        std::ostringstream label;
        label << "domain=" << join_extents(c.extents) << " steps=" << c.steps
              << " refill_every=" << fx->refill_every
              << " ceiling=" << bound.name << " | " << fx->plan;
        fx->label = label.str();
        TableRow& row = table_rows()[c.name];
        row.plan = short_plan(fx->plan);
        row.ceiling = bound.name;
        // Warm-up: first launches, page mapping, clocks ramping up.
        stencil::iterate(space, fx->grid, op, c.steps, fx->plan);
        space.fence("stencil_perf::warm-up");
        return fx;
      },
      error);
  if (f == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }

  double seconds = 0;
  std::int64_t runs = 0;
  int const chunk = f->refill_every;
  try {
    for (auto _ : state) {
      double run_seconds = 0;
      for (int done = 0; done < c.steps; done += chunk) {
        f->reset(space);
        auto const start = std::chrono::steady_clock::now();
        stencil::iterate(space, f->grid, op, std::min(chunk, c.steps - done),
                         f->plan);
        space.fence("stencil_perf::timed");
        std::chrono::duration<double> const t =
            std::chrono::steady_clock::now() - start;
        run_seconds += t.count();
      }
      state.SetIterationTime(run_seconds);
      seconds += run_seconds;
      ++runs;
    }
  } catch (std::exception const& e) {
    // The warm-up ran the same plan, so this is not expected; report it
    // like a setup failure rather than abandon the remaining benchmarks.
    failure_list().push_back(c.name + ": " + e.what());
    state.SkipWithError(e.what());
    return;
  }

  double const cells = static_cast<double>(f->grid.interior_cells());
  double const gcells =
      cells * c.steps * static_cast<double>(runs) / seconds / 1e9;
  Bound const bound = ceiling_for(f->plan, ceilings, Op::flops);
  state.counters["GCells/s"] = gcells;
  // One read and one write per cell and step: what a DRAM-bound sweep moves.
  state.counters["GB/s"] = gcells * 2.0 * sizeof(T);
  state.counters["GFLOP/s"] = gcells * Op::flops;
  state.counters["ceiling_GCells/s"] = bound.gcells;
  state.counters["frac_of_ceiling"] = gcells / bound.gcells;
  state.counters["cells"] = cells;
  state.counters["steps"] = c.steps;
  if (f->plan.prediction) {
    state.counters["model_GCells/s"] = f->plan.prediction->gcells;
    state.counters["measured/model"] = gcells / f->plan.prediction->gcells;
  }
  state.SetLabel(f->label);
}

/// The settings every timed benchmark of the suite shares.
inline void time_manually(benchmark::internal::Benchmark* b, Options const& o) {
  b->UseManualTime()
      ->Iterations(1)
      ->Repetitions(o.repetitions)
      // JSON gets every repetition; the console (make_table_reporter)
      // only the statistics, of which it shows the median and the spread.
      ->DisplayAggregatesOnly(true)
      // The best repetition: the shortest time, and the highest rate.
      ->ComputeStatistics("min",
                          [](std::vector<double> const& v) {
                            return *std::min_element(v.begin(), v.end());
                          })
      ->ComputeStatistics("max",
                          [](std::vector<double> const& v) {
                            return *std::max_element(v.begin(), v.end());
                          })
      ->Unit(benchmark::kMillisecond);
}

}  // namespace detail
}  // namespace stencil_perf

// The solvers' benchmarks, which share the pieces above.
#include "solver_cases.hpp"

namespace stencil_perf {
namespace detail {

template <class Op, class T, class P>
void register_case(Options const& o, std::string const& policy_name,
                   P const& policy, char const* precision, Size const& size,
                   Ceilings const& ceilings) {
  Case c{std::string(Op::name) + "/" + precision + "/" + policy_name + "/" +
             size.label,
         size.extents, size.steps};
  table_rows()[c.name] = {Op::name, precision, policy_name,
                          join_extents(size.extents), size.steps};
  time_manually(benchmark::RegisterBenchmark(
                    c.name.c_str(),
                    [c, policy, ceilings](benchmark::State& state) {
                      if constexpr (stencil::MultiFieldOperator<Op>) {
                        run_solver_case<Op, T>(state, c, policy, ceilings);
                      } else {
                        run_case<Op, T>(state, c, policy, ceilings);
                      }
                    }),
                o);
}

}  // namespace detail

template <std::size_t I>
int register_stencil_cases(Options const& o, Size const& size,
                           Ceilings const& ceilings) {
  using Op =
      typename std::tuple_element_t<I, decltype(stencil_table())>::op_type;
  int count = 0;
  for_each_entry(precision_table(), [&](auto const& prec) {
    using T = typename std::decay_t<decltype(prec)>::type;
    if (!contains(o.precisions, prec.name)) return;
    for_each_entry(policy_table(), [&](auto const& pol) {
      using Entry = std::decay_t<decltype(pol)>;
      if constexpr (Op::rank >= Entry::min_rank &&
                    Op::rank <= Entry::max_rank) {
        if (!contains(o.policies, pol.name)) return;
        using P = std::decay_t<decltype(pol.policy)>;
        if constexpr (stencil::MultiFieldOperator<Op>) {
          // A policy that cannot run several fields: one row that says so.
          std::string const why = detail::solver_refusal<Op>(pol.policy);
          if (!why.empty()) {
            detail::register_not_applicable<Op>(pol.name, prec.name, size, why);
            ++count;
            return;
          }
        }
        // One row per depth of --depth, per stages of --prefetch and per
        // tiles of --tiles (each list, where given, replaces the plan's
        // choice), named Policy.dD.pS.warps.
        std::vector<int> depths{-1}, stages{-1};
        std::vector<std::optional<stencil::Tiles2D>> tiles{std::nullopt};
        if constexpr (std::is_same_v<P, stencil::TemporalBlocking>) {
          if (Op::rank == 2 && !stencil::MultiFieldOperator<Op> &&
              !o.tiles.empty()) {
            tiles.assign(o.tiles.begin(), o.tiles.end());
          }
        }
        if constexpr (has_depth_v<P>) {
          if (!o.depths.empty()) depths = o.depths;
        }
        if constexpr (has_prefetch_v<P>) {
          if (!o.prefetch.empty()) stages = o.prefetch;
        }
        for (int depth : depths) {
          for (int prefetch : stages) {
            for (auto const tile : tiles) {
              P policy = pol.policy;
              std::string name = pol.name;
              if constexpr (has_depth_v<P>) {
                if (depth >= 0) {
                  policy.depth = depth;
                  name += ".d" + std::to_string(depth);
                }
              }
              if constexpr (has_prefetch_v<P>) {
                if (prefetch >= 0) {
                  policy.prefetch = prefetch;
                  name += ".p" + std::to_string(prefetch);
                }
              }
              if constexpr (std::is_same_v<P, stencil::TemporalBlocking>) {
                if (tile) {
                  policy.tiles = *tile;
                  name += *tile == stencil::Tiles2D::warp_registers ? ".warps"
                                                                    : ".shared";
                }
              }
              detail::register_case<Op, T>(o, name, policy, prec.name, size,
                                           ceilings);
              ++count;
            }
          }
        }
      }
    });
  });
  return count;
}

}  // namespace stencil_perf
