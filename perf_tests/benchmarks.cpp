// SPDX-License-Identifier: Apache-2.0
#include "benchmarks.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <sstream>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace stencil_perf {

namespace {

using Space = Kokkos::DefaultExecutionSpace;

// ---------------------------------------------------------------------------
// The tables. Adding a stencil, a precision or a policy is one entry here.

/// A stencil of the suite with its paper domain (STENCILS.md; extents
/// slowest first), the steps of the "sustained" size and the temporal depth
/// EBISU uses, which is the step count of the "paper" size (0: no paper
/// size), and the "larger" domain the issues' reference figures were
/// measured on (2D temporal blocking; 3D device tiling, 2560x352x384:
/// 11x12 tiles of 32x32, one per SM of an H100 or H200) (zeros: none).
template <class Op>
struct StencilEntry {
  using op_type = Op;
  std::array<int, Op::rank> domain;
  int sustained_steps;
  int paper_depth;
  std::array<int, Op::rank> larger{};
};

auto stencil_table() {
  using namespace stencil::suite;
  constexpr std::array<int, 3> d3{2560, 288, 384};
  constexpr std::array<int, 3> d3_larger{2560, 352, 384};
  return std::tuple{
      StencilEntry<J2d5pt>{{8352, 8352}, 1000, 12, {10208, 10208}},
      StencilEntry<J2d9pt>{{8064, 8064}, 1000, 8, {9856, 9856}},
      StencilEntry<J2d9ptGol>{{8784, 8784}, 1000, 6, {10736, 10736}},
      StencilEntry<J2d25pt>{{8640, 8640}, 1000, 4, {10560, 10560}},
      // The form the EBISU reference code computes (weights divided by 118
      // beforehand): the rows to compare with its figures.
      StencilEntry<J2d5ptPrescaled>{{8352, 8352}, 1000, 12, {10208, 10208}},
      StencilEntry<J2d9ptPrescaled>{{8064, 8064}, 1000, 8, {9856, 9856}},
      StencilEntry<J2d9ptGolPrescaled>{{8784, 8784}, 1000, 6, {10736, 10736}},
      StencilEntry<J2d25ptPrescaled>{{8640, 8640}, 1000, 4, {10560, 10560}},
      StencilEntry<J3d7pt>{d3, 256, 8, d3_larger},
      StencilEntry<J3d13pt>{d3, 256, 5, d3_larger},
      StencilEntry<J3d17pt>{d3, 256, 6, d3_larger},
      StencilEntry<J3d27pt>{d3, 256, 5, d3_larger},
      StencilEntry<Poisson19pt>{d3, 256, 6, d3_larger},
      StencilEntry<J3d17ptPrescaled>{d3, 256, 6, d3_larger},
      StencilEntry<J3d27ptPrescaled>{d3, 256, 5, d3_larger},
      // The published 1D study has no per-launch depth to compare with.
      StencilEntry<Heat1D<1>>{{1 << 26}, 1000, 0},
      StencilEntry<Heat1D<2>>{{1 << 26}, 1000, 0},
      StencilEntry<Heat1D<3>>{{1 << 26}, 1000, 0},
  };
}

template <class T>
struct Precision {
  using type = T;
  char const* name;
};

auto precision_table() {
  return std::tuple{Precision<double>{"double"}, Precision<float>{"float"}};
}

/// The grid ranks a policy implements. A type, so that a rank the library
/// refuses at compile time (static_assert) is never instantiated.
template <int MinRank, int MaxRank>
struct RankRange {};
template <int MinRank, int MaxRank>
inline constexpr RankRange<MinRank, MaxRank> ranks{};

/// A policy as the benchmarks name and run it.
template <class P, int MinRank = 1, int MaxRank = 3>
struct PolicyEntry {
  static constexpr int min_rank = MinRank;
  static constexpr int max_rank = MaxRank;
  char const* name;
  P policy;
  RankRange<MinRank, MaxRank> rank_range{};
};
template <class P>
PolicyEntry(char const*, P) -> PolicyEntry<P>;
template <class P, int MinRank, int MaxRank>
PolicyEntry(char const*, P, RankRange<MinRank, MaxRank>)
    -> PolicyEntry<P, MinRank, MaxRank>;

/// Policies with a number of prefetch stages, which --prefetch=LIST sweeps.
template <class P>
inline constexpr bool has_prefetch_v =
    std::is_same_v<P, stencil::StreamingSweep> ||
    std::is_same_v<P, stencil::TemporalBlocking> ||
    std::is_same_v<P, stencil::DeviceTiling>;

/// Policies with a temporal depth, which --depth=LIST sweeps.
template <class P>
inline constexpr bool has_depth_v =
    std::is_same_v<P, stencil::TemporalBlocking> ||
    std::is_same_v<P, stencil::DeviceTiling>;

// Policies that only the native CUDA backend implements: stencil::plan
// refuses them at compile time for other spaces, so they are listed only
// where the backend exists. A template, so that the other branch is not
// compiled.
template <class ExecSpace>
auto native_policy_table() {
  if constexpr (stencil::native_available_v<ExecSpace>) {
    return std::tuple{
        // On rank-3 grids: SM tiling, beside device tiling.
        PolicyEntry{"TemporalBlocking", stencil::TemporalBlocking{},
                    ranks<1, 3>},
        PolicyEntry{"DeviceTiling", stencil::DeviceTiling{}, ranks<3, 3>},
        // One kernel per step through shared memory, measured against the
        // DRAM-bound ceiling and Naive.
        PolicyEntry{"StreamingSweep", stencil::StreamingSweep{}, ranks<2, 3>},
    };
  } else {
    return std::tuple{};
  }
}

// Every policy is tried on every stencil of a rank it implements and on
// every precision; a plan the library refuses (stencil::error) becomes a
// failed row and a non-zero exit status, not a crash. A new policy is one
// more entry here or above; its plan's depth sets the ceiling it is
// measured against.
auto policy_table() {
  return std::tuple_cat(
      std::tuple{
          PolicyEntry{"Naive", stencil::Naive{}},
          PolicyEntry{"SpatialBlocking", stencil::SpatialBlocking{}},
          PolicyEntry{"Auto", stencil::Auto{}},
      },
      native_policy_table<Space>());
}

/// Small sizes: at most a few tens of milliseconds per run on two CPU
/// cores, so that the whole suite takes well under a minute. The 2D and 3D
/// domains hold the same number of cells (2^18).
std::vector<int> quick_domain(int rank) {
  if (rank == 1) return {1 << 20};
  if (rank == 2) return {512, 512};
  return {64, 64, 64};
}
int quick_steps(int rank) { return rank == 2 ? 20 : 10; }

constexpr int kRepetitions = 5;
constexpr int kQuickRepetitions = 3;

template <class Tuple, class F>
void for_each_entry(Tuple const& table, F&& f) {
  std::apply([&](auto const&... entry) { (f(entry), ...); }, table);
}

// ---------------------------------------------------------------------------
// Selection: which stencils run at which size.

struct Size {
  bool applies = false;  // false: this size does not fit the stencil's rank
  std::vector<int> extents;
  int steps = 0;
  std::string label;
};

std::string join_extents(std::vector<int> const& extents) {
  std::string s;
  for (int e : extents) {
    if (!s.empty()) s += 'x';
    s += std::to_string(e);
  }
  return s;
}

template <class Entry>
Size size_for(Entry const& e, Options const& o) {
  constexpr int rank = Entry::op_type::rank;
  Size s;
  s.applies = true;
  if (o.size.empty()) {
    if (o.quick) {
      s.extents = quick_domain(rank);
      s.steps = quick_steps(rank);
      s.label = "quick";
    } else {
      s.extents.assign(e.domain.begin(), e.domain.end());
      s.steps = e.sustained_steps;
      s.label = "sustained";
    }
  } else if (o.size == "paper") {
    s.applies = e.paper_depth > 0;
    s.extents.assign(e.domain.begin(), e.domain.end());
    s.steps = e.paper_depth;
    s.label = "paper";
  } else if (o.size == "larger") {
    s.applies = e.larger[0] > 0;
    s.extents.assign(e.larger.begin(), e.larger.end());
    s.steps = e.sustained_steps;
    s.label = "larger";
  } else {
    if (o.extents.size() == 1) {
      s.extents.assign(rank, o.extents[0]);
    } else {
      s.applies = static_cast<int>(o.extents.size()) == rank;
      s.extents = o.extents;
    }
    s.steps = o.quick ? quick_steps(rank) : e.sustained_steps;
    s.label = join_extents(s.extents);
  }
  if (o.steps > 0) s.steps = o.steps;
  return s;
}

bool contains(std::vector<std::string> const& list, std::string const& name) {
  return list.empty() ||
         std::find(list.begin(), list.end(), name) != list.end();
}

std::string join(std::vector<std::string> const& names) {
  std::string s;
  for (auto const& n : names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

// Resolves hand-typed names to canonical ones, case-insensitively.
// `groups` maps a group name to the names it stands for.
std::vector<std::string> resolve(
    std::string const& flag, std::vector<std::string> const& given,
    std::vector<std::string> const& valid,
    std::vector<std::pair<std::string, std::vector<std::string>>> const&
        groups = {}) {
  if (given.empty()) return valid;
  std::vector<std::string> out;
  auto add = [&out](std::string const& n) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  for (auto const& g : given) {
    auto const v = std::find_if(valid.begin(), valid.end(),
                                [&](auto& n) { return iequals(n, g); });
    if (v != valid.end()) {
      add(*v);
      continue;
    }
    auto const grp = std::find_if(groups.begin(), groups.end(),
                                  [&](auto& p) { return iequals(p.first, g); });
    if (grp == groups.end()) {
      std::string msg =
          flag + ": unknown name '" + g + "'; valid: " + join(valid);
      if (!groups.empty()) {
        std::vector<std::string> names;
        for (auto const& p : groups) names.push_back(p.first);
        msg += "; groups: " + join(names);
      }
      throw UsageError(msg);
    }
    for (auto const& n : grp->second) add(n);
  }
  return out;
}

// ---------------------------------------------------------------------------
// One benchmark: grids, plan, timing, counters.

std::vector<std::string>& failure_list() {
  static std::vector<std::string> list;
  return list;
}

// Random values in [0, 1) that depend only on the cell's coordinates (halo
// included), so every run, policy and precision starts from the same state
// and the fill is cheap enough for the 3D paper domain.
std::uint64_t mix(std::uint64_t x) {  // the splitmix64 finaliser
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
struct FixtureBase {
  virtual ~FixtureBase() = default;
};

template <class T, int Rank>
struct Fixture : FixtureBase {
  using GridType = stencil::Grid<T, Rank>;
  GridType grid;
  typename GridType::view_type initial;
  stencil::Plan plan;
  std::string label;

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

class FixtureCache {
 public:
  // Google Benchmark runs the repetitions of a benchmark one after another,
  // so one cached fixture is enough; a failure is cached too, so a grid that
  // does not fit is not allocated again for every repetition.
  template <class F, class Make>
  F* get(std::string const& key, Make&& make, std::string& error) {
    if (key != key_) {
      fixture_.reset();  // free the old grids before allocating new ones
      error_.clear();
      key_ = key;
      try {
        fixture_ = make();
      } catch (stencil::error const& e) {
        error_ = e.what();
      } catch (std::exception const& e) {
        error_ = std::string("setup failed: ") + e.what();
      }
      if (!error_.empty()) failure_list().push_back(key + ": " + error_);
    }
    error = error_;
    return static_cast<F*>(fixture_.get());
  }
  void clear() {
    fixture_.reset();
    key_.clear();
    error_.clear();
  }

 private:
  std::string key_;
  std::unique_ptr<FixtureBase> fixture_;
  std::string error_;
};

FixtureCache& fixture_cache() {
  static FixtureCache cache;
  return cache;
}

/// The ceiling a plan is measured against and its name for the label.
struct Bound {
  double gcells;
  std::string name;
};

// A sweep that keeps `depth` steps on chip between DRAM round trips moves
// the grid through DRAM once per `depth` steps, so its DRAM-bound ceiling
// is `depth` times that of one kernel per step; it cannot beat the FP peak.
Bound ceiling_for(stencil::Plan const& plan, Ceilings const& c, int flops) {
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

/// Steps timed between two refills of the grid (untimed). The suite's
/// stencils are not normalised: j2d5pt's weights sum to 49/118, so its
/// values shrink by up to 0.415 per step, and j2d25pt's to 226/118, so they
/// grow. Left alone for 1000 steps they underflow to denormals and zero
/// (float after ~100 steps, double after ~800) or overflow to infinity, and
/// the FP division in every suite stencil then takes its slow path, which
/// times IEEE special-case handling instead of the stencil (measured on an
/// H200, float j2d5pt temporal blocking at depth 8 on 10208^2: 173 GCells/s
/// over 240 steps without refills, 714 over 1000 steps with them). 64 steps
/// keep every value normal; chunks are whole launches of the plan's depth.
int chunk_steps(stencil::Plan const& plan, int steps) {
  constexpr int max_chunk = 64;
  int const depth = std::max(1, plan.depth);
  int const chunk = std::max(depth, max_chunk / depth * depth);
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
        fx->plan = stencil::plan(space, fx->grid, op, policy);
        fill_random(fx->grid);
        fx->initial = typename F::GridType::view_type(
            Kokkos::view_alloc(Kokkos::WithoutInitializing,
                               c.name + ":initial"),
            fx->grid.current().layout());
        Kokkos::deep_copy(fx->initial, fx->grid.current());
        Bound const bound = ceiling_for(fx->plan, ceilings, Op::flops);
        std::ostringstream label;
        label << "domain=" << join_extents(c.extents) << " steps=" << c.steps
              << " refill_every=" << chunk_steps(fx->plan, c.steps)
              << " ceiling=" << bound.name << " | " << fx->plan;
        fx->label = label.str();
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
  int const chunk = chunk_steps(f->plan, c.steps);
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
  state.SetLabel(f->label);
}

template <class Op, class T, class P>
void register_case(Options const& o, std::string const& policy_name,
                   P const& policy, char const* precision, Size const& size,
                   Ceilings const& ceilings) {
  Case c{std::string(Op::name) + "/" + precision + "/" + policy_name + "/" +
             size.label,
         size.extents, size.steps};
  benchmark::RegisterBenchmark(c.name.c_str(),
                               [c, policy, ceilings](benchmark::State& state) {
                                 run_case<Op, T>(state, c, policy, ceilings);
                               })
      ->UseManualTime()
      ->Iterations(1)
      ->Repetitions(o.repetitions)
      // JSON gets every repetition; the console only the statistics.
      ->DisplayAggregatesOnly(true)
      // "best" of DESIGN.md: the shortest time, and the highest rate.
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

}  // namespace

// ---------------------------------------------------------------------------

void check_selection(Options& o) {
  std::vector<std::string> names;
  std::vector<std::pair<std::string, std::vector<std::string>>> groups{
      {"all", {}}, {"1d", {}}, {"2d", {}}, {"3d", {}}};
  for_each_entry(stencil_table(), [&](auto const& e) {
    using Op = typename std::decay_t<decltype(e)>::op_type;
    names.push_back(Op::name);
    groups[0].second.push_back(Op::name);
    groups[Op::rank].second.push_back(Op::name);
  });
  // Stencils named one by one must fit the size; those a group or the
  // default selected drop out when the size is of another rank.
  std::vector<std::string> named;
  for (auto const& given : o.stencils) {
    for (auto const& n : names) {
      if (iequals(n, given)) named.push_back(n);
    }
  }
  o.stencils = resolve("--stencil", o.stencils, names, groups);

  std::vector<std::string> precisions;
  for_each_entry(precision_table(),
                 [&](auto const& p) { precisions.push_back(p.name); });
  o.precisions = resolve("--precision", o.precisions, precisions);

  std::vector<std::string> policies;
  for_each_entry(policy_table(),
                 [&](auto const& p) { policies.push_back(p.name); });
  o.policies = resolve("--policy", o.policies, policies);

  if (!o.backend.empty()) {
    std::string const space = Space::name();
    if (!iequals(o.backend, space)) {
      std::vector<std::string> const known{"Serial", "OpenMP",  "Threads",
                                           "HPX",    "Cuda",    "HIP",
                                           "SYCL",   "OpenACC", "OpenMPTarget"};
      auto const k = std::find_if(
          known.begin(), known.end(),
          [&](auto const& name) { return iequals(name, o.backend); });
      throw UsageError(
          "--backend=" + o.backend + ": " +
          (k != known.end()
               ? "this build runs the benchmarks on Kokkos::" + space +
                     "; build against a Kokkos whose default execution "
                     "space is " +
                     *k
               : "unknown execution space; this build runs on " + space +
                     " (Kokkos names: " + join(known) + ")"));
    }
  }

  std::vector<std::string> kept;
  std::string why_none;
  for_each_entry(stencil_table(), [&](auto const& e) {
    using Op = typename std::decay_t<decltype(e)>::op_type;
    if (!contains(o.stencils, Op::name)) return;
    Size const s = size_for(e, o);
    if (!s.applies) {
      std::string const why =
          o.size == "paper"
              ? std::string("--size=paper: ") + Op::name +
                    " has no paper size (no published temporal depth)"
          : o.size == "larger"
              ? std::string("--size=larger: ") + Op::name +
                    " has no larger domain (2D and 3D stencils only)"
              : "--size=" + o.size + " has " +
                    std::to_string(o.extents.size()) + " extents but " +
                    Op::name + " is rank " + std::to_string(Op::rank) +
                    "; give " + std::to_string(Op::rank) +
                    " extents (slowest first) or one number";
      if (std::find(named.begin(), named.end(), Op::name) != named.end()) {
        throw UsageError(why);
      }
      why_none = why;
      return;
    }
    int const width = 2 * Op::radius + 1;
    for (std::size_t d = 0; d < s.extents.size(); ++d) {
      if (s.extents[d] < width) {
        throw UsageError(
            "size " + join_extents(s.extents) + " is too small for " +
            Op::name + " (radius " + std::to_string(Op::radius) + "): extent " +
            std::to_string(d) + " is " + std::to_string(s.extents[d]) +
            " cells; every extent must be at least 2*radius+1 = " +
            std::to_string(width));
      }
    }
    kept.push_back(Op::name);
  });
  if (kept.empty()) {
    throw UsageError(why_none.empty()
                         ? "no stencil selected; see --help"
                         : why_none + " (no selected stencil fits the size)");
  }
  o.stencils = kept;
  if (o.repetitions == 0) {
    o.repetitions = o.quick ? kQuickRepetitions : kRepetitions;
  }
}

int register_benchmarks(Options const& o, Ceilings const& ceilings) {
  int count = 0;
  for_each_entry(stencil_table(), [&](auto const& e) {
    using Op = typename std::decay_t<decltype(e)>::op_type;
    if (!contains(o.stencils, Op::name)) return;
    Size const size = size_for(e, o);
    if (!size.applies) return;
    for_each_entry(precision_table(), [&](auto const& prec) {
      using T = typename std::decay_t<decltype(prec)>::type;
      if (!contains(o.precisions, prec.name)) return;
      for_each_entry(policy_table(), [&](auto const& pol) {
        using Entry = std::decay_t<decltype(pol)>;
        if constexpr (Op::rank >= Entry::min_rank &&
                      Op::rank <= Entry::max_rank) {
          if (!contains(o.policies, pol.name)) return;
          using P = std::decay_t<decltype(pol.policy)>;
          // One row per depth of --depth and per stages of --prefetch
          // (each list, where given, replaces the plan's choice), named
          // Policy.dD.pS.
          std::vector<int> depths{-1}, stages{-1};
          if constexpr (has_depth_v<P>) {
            if (!o.depths.empty()) depths = o.depths;
          }
          if constexpr (has_prefetch_v<P>) {
            if (!o.prefetch.empty()) stages = o.prefetch;
          }
          for (int depth : depths) {
            for (int prefetch : stages) {
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
              register_case<Op, T>(o, name, policy, prec.name, size, ceilings);
              ++count;
            }
          }
        }
      });
    });
  });
  return count;
}

std::vector<std::string> const& failures() { return failure_list(); }

void release_fixtures() { fixture_cache().clear(); }

}  // namespace stencil_perf
