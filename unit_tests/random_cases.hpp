// SPDX-License-Identifier: Apache-2.0
// The randomized check against the reference loop (tst_randomized.cpp): how
// a case is drawn from (seed, index), the random linear stencils, and the
// run of one case on every policy of every execution space under test.
//
// A case is drawn on the host from its own seed alone (and the build's
// deepest native depth), the same on every space, so that a failing case
// is replayed by its index. The kernels are compiled in four units
// (run_case below), which keeps each unit's CUDA compile small enough to
// build in parallel.
#pragma once

#include "reference.hpp"
#include "stencil_test_spaces.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace stencil_test::randomized {

using stencil::Shape;

// ---------------------------------------------------------------------------
// Random linear stencils: one coefficient per point of a star or box
// footprint, drawn per case. A small fixed set of (rank, shape, radius)
// types: every type here is compiled into every native CUDA kernel.

constexpr char const* random_name(int rank, Shape shape, int radius) {
  constexpr char const* names[3][2][2] = {
      {{"random-1d-star-r1", "random-1d-star-r2"},
       {"random-1d-box-r1", "random-1d-box-r2"}},
      {{"random-2d-star-r1", "random-2d-star-r2"},
       {"random-2d-box-r1", "random-2d-box-r2"}},
      {{"random-3d-star-r1", "random-3d-star-r2"},
       {"random-3d-box-r1", "random-3d-box-r2"}}};
  return names[rank - 1][shape == Shape::box][radius - 1];
}

template <int Rank, Shape S, int Radius>
struct RandomLinear {
  static constexpr int rank = Rank, radius = Radius;
  static constexpr Shape shape = S;
  /// A sum of constant multiples of the taps: the native device-tiling
  /// kernel may add it up plane by plane (stencil/traits.hpp).
  static constexpr bool linear = true;
  static constexpr int points =
      stencil::detail::linear_table_size(Rank, S, Radius);
  static constexpr int flops = 2 * points - 1;
  static constexpr char const* name = random_name(Rank, S, Radius);
  static_assert(Radius == 1 || Radius == 2);

  /// The coefficients in each value type, so that a float grid computes in
  /// float without converting them per cell. Points in the order of
  /// stencil::Linear's table (lexicographic in the offsets).
  Kokkos::Array<double, points> c64{};
  Kokkos::Array<float, points> c32{};

  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    return sum<T>(in, std::make_index_sequence<points>{});
  }

 private:
  template <class T, int Index, class In>
  KOKKOS_FORCEINLINE_FUNCTION T tap(In const& in) const {
    constexpr stencil::detail::Offset3 o =
        stencil::detail::linear_table_offset(Rank, S, Radius, Index);
    T c;
    if constexpr (std::is_same_v<T, float>) {
      c = c32[Index];
    } else {
      c = static_cast<T>(c64[Index]);
    }
    if constexpr (Rank == 1) {
      return c * in(o.d[2]);
    } else if constexpr (Rank == 2) {
      return c * in(o.d[1], o.d[2]);
    } else {
      return c * in(o.d[0], o.d[1], o.d[2]);
    }
  }
  template <class T, class In, std::size_t... Index>
  KOKKOS_FORCEINLINE_FUNCTION T sum(In const& in,
                                    std::index_sequence<Index...>) const {
    T total = T(0);
    ((total += tap<T, static_cast<int>(Index)>(in)), ...);
    return total;
  }
};

template <class Op>
inline constexpr bool is_random_v = false;
template <int Rank, Shape S, int Radius>
inline constexpr bool is_random_v<RandomLinear<Rank, S, Radius>> = true;

// ---------------------------------------------------------------------------
// The stencils of each rank: the suite's, then the random linear ones.

template <class... Op>
struct OpList {
  static constexpr int size = sizeof...(Op);
};

template <class... A, class... B>
OpList<A..., B...> concat(OpList<A...>, OpList<B...>);

// Every suite stencil has typed tests of its own against reference loops
// (tst_stencils_{1,2,3}d, every policy), so the random cases take only the
// suite stencils whose traits the random ones lack: radius 3, the headline
// j2d5pt, divisions (prescaled) at radius 2 and in a 3D box, and the
// 19-point shape. Each stencil listed here is compiled for every policy and
// both precisions once more, which CI's sanitizer build pays for.
using Suite1Ops = OpList<stencil::suite::Heat1D<3>>;
using Random1Ops =
    OpList<RandomLinear<1, Shape::star, 1>, RandomLinear<1, Shape::star, 2>>;
using Suite2Ops =
    OpList<stencil::suite::J2d5pt, stencil::suite::J2d25ptPrescaled>;
using Random2Ops =
    OpList<RandomLinear<2, Shape::star, 1>, RandomLinear<2, Shape::box, 2>>;
using Suite3Ops =
    OpList<stencil::suite::J3d27ptPrescaled, stencil::suite::Poisson19pt>;
using Random3Ops =
    OpList<RandomLinear<3, Shape::star, 2>, RandomLinear<3, Shape::box, 1>>;

/// A case names its stencil by its index in its rank's list: the suite's
/// stencils, then the random ones.
using Rank1Ops = decltype(concat(Suite1Ops{}, Random1Ops{}));
using Rank2Ops = decltype(concat(Suite2Ops{}, Random2Ops{}));
using Rank3Ops = decltype(concat(Suite3Ops{}, Random3Ops{}));

/// What the case generator needs to know of a stencil.
struct StencilInfo {
  char const* name;
  int radius;
  Shape shape;
  bool random;
  int points;  ///< coefficients of a random stencil, else 0
};

template <class Op>
constexpr StencilInfo info_of() {
  if constexpr (is_random_v<Op>) {
    return {Op::name, Op::radius, Op::shape, true, Op::points};
  } else {
    return {Op::name, Op::radius, Op::shape, false, 0};
  }
}

template <class... Op>
constexpr std::array<StencilInfo, sizeof...(Op)> infos(OpList<Op...>) {
  return {info_of<Op>()...};
}

inline constexpr auto rank1_infos = infos(Rank1Ops{});
inline constexpr auto rank2_infos = infos(Rank2Ops{});
inline constexpr auto rank3_infos = infos(Rank3Ops{});

/// The sum of a stencil's weights (a random one's are drawn summing to 1):
/// on a periodic grid the mean decays by this factor per step.
template <class Op>
double weight_sum() {
  if constexpr (is_random_v<Op>) {
    return 1.0;
  } else {
    constexpr int w = 2 * Op::radius + 1;
    std::vector<double> ones(static_cast<std::size_t>(std::pow(w, Op::rank)),
                             1.0);
    return Op{}(HostAccessor<double, Op::rank>{ones.data() + ones.size() / 2, w,
                                               std::ptrdiff_t{w} * w});
  }
}

template <class... Op>
double weight_sum(OpList<Op...>, int stencil) {
  double sum = 1.0;
  int i = 0;
  ((i++ == stencil ? (void)(sum = weight_sum<Op>()) : void()), ...);
  return sum;
}

inline std::vector<StencilInfo> stencils_of_rank(int rank) {
  if (rank == 1) return {rank1_infos.begin(), rank1_infos.end()};
  if (rank == 2) return {rank2_infos.begin(), rank2_infos.end()};
  return {rank3_infos.begin(), rank3_infos.end()};
}

// ---------------------------------------------------------------------------
// A case.

/// The deepest temporal depth a case asks for: the native kernels' compiled
/// maximum (STENCIL_NATIVE_MAX_DEPTH, 0 for 12), and no more than 8, deeper
/// than most grids of a case hold.
inline constexpr int max_case_depth = [] {
  constexpr int compiled =
      STENCIL_NATIVE_MAX_DEPTH > 0 && STENCIL_NATIVE_MAX_DEPTH < 12
          ? STENCIL_NATIVE_MAX_DEPTH
          : 12;
  return std::min(compiled, 8);
}();

/// Policy parameters, drawn for every case; each policy takes its own.
struct PolicyParams {
  bool default_tile = true;
  stencil::Tile tile{};
  int tb_depth = 0, tb_prefetch = -1;  // TemporalBlocking
  int dt_depth = 0, dt_prefetch = -1;  // DeviceTiling
  bool l2_window = false;
  int ss_prefetch = -1;  // StreamingSweep
  std::optional<bool> bulk_copy;
};

struct Case {
  std::uint64_t seed = 0;  ///< STENCIL_RANDOM_SEED
  int index = 0;
  std::uint64_t case_seed = 0;  ///< derived from (seed, index)
  int rank = 1;
  int stencil = 0;  ///< index into the rank's OpList
  StencilInfo info{};
  bool is_double = true;
  std::array<int, 3> extents{1, 1, 1};  ///< the first `rank` are used
  int halo = 1;
  stencil::Boundary boundary = stencil::Boundary::fixed;
  int depth = 1;  ///< the depth the step count is drawn against
  int steps = 1;
  std::vector<double> coefficients;  ///< random stencils only
  PolicyParams params;
  unsigned field_seed = 0;  ///< the initial data's

  long long cells() const {
    long long n = 1;
    for (int d = 0; d < rank; ++d) n *= extents[d];
    return n;
  }
};

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Each case's own seed: a hash of the run's seed and the case's index, so
/// that a case is the same whichever cases run before it.
inline std::uint64_t case_seed(std::uint64_t seed, int index) {
  return splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(index));
}

/// The largest extent per axis and the most cells per rank; cells times
/// steps is capped at `max_cell_steps`. The reference loop runs on one host
/// core, so the same sizes serve CPUs and GPUs: a case costs the reference
/// at most a few tens of milliseconds.
inline constexpr int max_extent[4] = {0, 5001, 500, 70};
inline constexpr long long max_cells[4] = {0, 5001, 150'000, 200'000};
inline constexpr long long max_cell_steps = 3'000'000;
inline constexpr int max_steps = 64;

/// An extent from `lo` (the smallest the stencil allows) to `hi`: the
/// smallest itself, one next to a power of two, or uniform or log-uniform
/// (small sizes more often), mostly odd.
template <class Gen>
int draw_extent(Gen& gen, int lo, int hi) {
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  double const kind = u01(gen);
  if (kind < 0.06) return lo;
  if (kind < 0.2) {
    std::vector<int> near;
    for (int p = 4; p <= hi + 1; p *= 2) {
      for (int e : {p - 1, p, p + 1}) {
        if (e >= lo && e <= hi) near.push_back(e);
      }
    }
    if (!near.empty()) {
      return near[std::uniform_int_distribution<std::size_t>(
          0, near.size() - 1)(gen)];
    }
  }
  double const x =
      kind < 0.7 ? std::uniform_real_distribution<double>(lo, hi + 1.0)(gen)
                 : std::exp(std::uniform_real_distribution<double>(
                       std::log(double(lo)), std::log(double(hi) + 1.0))(gen));
  int e = std::clamp(static_cast<int>(x), lo, hi);
  if (e % 2 == 0 && u01(gen) < 0.8) e = e + 1 <= hi ? e + 1 : e - 1;
  return std::max(e, lo);
}

/// Coefficients mostly positive, a few negative, summing to 1: a smoothing
/// stencil that may amplify some modes a little (random_field scales the
/// initial data for the largest growth).
template <class Gen>
std::vector<double> draw_coefficients(Gen& gen, int points) {
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  for (;;) {
    std::vector<double> c(static_cast<std::size_t>(points));
    double sum = 0;
    for (double& v : c) {
      v = u01(gen) < 0.15 ? -(0.05 + 0.35 * u01(gen)) : 0.05 + 0.95 * u01(gen);
      sum += v;
    }
    if (sum < 0.5) continue;
    for (double& v : c) v /= sum;
    return c;
  }
}

/// Case `index` of the run with `seed`.
inline Case draw_case(std::uint64_t seed, int index) {
  Case c;
  c.seed = seed;
  c.index = index;
  c.case_seed = case_seed(seed, index);
  std::mt19937_64 gen(c.case_seed);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(gen);
  };
  auto chance = [&](double p) { return u01(gen) < p; };

  c.rank = uniform(1, 3);
  auto const stencils = stencils_of_rank(c.rank);
  // Half the cases the suite's stencils, half the random ones.
  std::vector<int> suite, random;
  for (int i = 0; i < static_cast<int>(stencils.size()); ++i) {
    (stencils[i].random ? random : suite).push_back(i);
  }
  auto const& pool = chance(0.5) ? random : suite;
  c.stencil = pool[uniform(0, static_cast<int>(pool.size()) - 1)];
  c.info = stencils[c.stencil];
  c.is_double = chance(0.5);
  int const r = c.info.radius;
  c.halo = r + uniform(0, 3);
  c.boundary =
      chance(0.6) ? stencil::Boundary::fixed : stencil::Boundary::periodic;

  int const lo = 2 * r + 1;  // validate_grid's smallest extent
  for (int d = 0; d < c.rank; ++d) {
    c.extents[d] = draw_extent(gen, lo, max_extent[c.rank]);
  }
  // Too many cells: shrink the largest axis.
  while (c.cells() > max_cells[c.rank]) {
    int* largest =
        std::max_element(c.extents.begin(), c.extents.begin() + c.rank);
    *largest = std::max(lo, *largest * 3 / 4);
  }
  // Padded rows of a multiple of 4 values now and then: the full-width
  // vector path of Naive on devices, and bulk copies of the native sweep.
  bool const rows_of_4 = chance(0.2);
  if (rows_of_4) {
    int& x = c.extents[c.rank - 1];
    while ((x + 2 * c.halo) % 4 != 0) ++x;
  }

  // Steps: a multiple of the depth or not. On a periodic grid a stencil
  // whose weights sum to less than 1 decays towards zero; the steps stop
  // before the values reach float's subnormals (1e-38), where a different
  // order of the same sum differs by more than the tolerance.
  int steps_cap = max_steps;
  double const decay =
      std::abs(c.rank == 1   ? weight_sum(Rank1Ops{}, c.stencil)
               : c.rank == 2 ? weight_sum(Rank2Ops{}, c.stencil)
                             : weight_sum(Rank3Ops{}, c.stencil));
  if (c.boundary == stencil::Boundary::periodic && decay < 1) {
    steps_cap = std::clamp(static_cast<int>(std::log(1e-25) / std::log(decay)),
                           1, max_steps);
  }
  c.depth = std::min(uniform(1, max_case_depth), steps_cap);
  bool const multiple = c.depth == 1 || chance(0.5);
  int k = chance(0.6) ? uniform(1, 3) : uniform(4, 16);
  int const rest = multiple ? 0 : uniform(1, c.depth - 1);
  while (k > 1 && (static_cast<long long>(c.depth * k + rest) * c.cells() >
                       max_cell_steps ||
                   c.depth * k + rest > steps_cap)) {
    --k;
  }
  c.steps = c.depth * k + rest;

  if (c.info.random) c.coefficients = draw_coefficients(gen, c.info.points);

  PolicyParams& p = c.params;
  p.default_tile = chance(0.25);
  if (!p.default_tile) {
    p.tile.x = chance(0.3) ? uniform(1, 8) : uniform(8, 96);
    p.tile.y = c.rank >= 2 ? uniform(1, 24) : 1;
    p.tile.z = c.rank == 3 ? uniform(1, 40) : 1;
  }
  // Native depths: mostly the case's depth, else the plan's choice (0).
  p.tb_depth = chance(0.8) ? c.depth : 0;
  p.tb_prefetch = c.rank == 1 ? uniform(-1, 0) : uniform(-1, 4);
  p.dt_depth = chance(0.8) ? c.depth : 0;
  p.dt_prefetch = uniform(-1, 4);
  p.l2_window = p.dt_depth > 1 && chance(0.2);
  double const bulk = u01(gen);
  if (bulk < 0.2 && rows_of_4) {
    p.bulk_copy = true;
    p.ss_prefetch = chance(0.3) ? -1 : uniform(1, 4);
  } else {
    if (bulk < 0.45) p.bulk_copy = false;
    p.ss_prefetch = uniform(-1, 4);
  }
  c.field_seed = static_cast<unsigned>(gen());
  return c;
}

inline std::string describe(Case const& c) {
  std::ostringstream out;
  out << "case " << c.index << " (STENCIL_RANDOM_SEED=" << c.seed
      << ", case seed " << c.case_seed << "): " << c.info.name << ' '
      << (c.is_double ? "double" : "float") << " extents=";
  for (int d = 0; d < c.rank; ++d) out << (d ? "x" : "") << c.extents[d];
  out << " halo=" << c.halo << ' ' << stencil::to_string(c.boundary)
      << " steps=" << c.steps << " (depth " << c.depth << ", "
      << (c.steps % c.depth == 0 ? "a multiple" : "not a multiple") << ")";
  PolicyParams const& p = c.params;
  out << " SpatialBlocking{";
  if (p.default_tile) {
    out << "default tile}";
  } else {
    out << p.tile.x << 'x' << p.tile.y << 'x' << p.tile.z << '}';
  }
  out << " TemporalBlocking{depth=" << p.tb_depth
      << ",prefetch=" << p.tb_prefetch << "} DeviceTiling{depth=" << p.dt_depth
      << ",prefetch=" << p.dt_prefetch
      << ",l2_window=" << (p.l2_window ? "true" : "false")
      << "} StreamingSweep{prefetch=" << p.ss_prefetch << ",bulk_copy="
      << (p.bulk_copy ? (*p.bulk_copy ? "true" : "false") : "default") << '}'
      << " field seed " << c.field_seed;
  if (!c.coefficients.empty()) {
    out << " coefficients={";
    for (std::size_t i = 0; i < c.coefficients.size(); ++i) {
      out << (i ? "," : "") << c.coefficients[i];
    }
    out << '}';
  }
  return out.str();
}

// ---------------------------------------------------------------------------
// Counting what ran.

struct Count {
  long run = 0, skipped = 0, failed = 0;
  std::map<std::string, long> reasons;  ///< refusals, digits as '#'
};

/// Counts per "space policy", in the order first seen.
class Tally {
 public:
  Count& at(std::string const& label) {
    for (auto& [name, count] : m_rows) {
      if (name == label) return count;
    }
    m_rows.emplace_back(label, Count{});
    return m_rows.back().second;
  }
  void skipped(std::string const& label, std::string const& why) {
    Count& count = at(label);
    ++count.skipped;
    std::string key;
    for (char ch : why.substr(0, 110)) {
      bool const digit = ch >= '0' && ch <= '9';
      if (!(digit && !key.empty() && key.back() == '#')) {
        key += digit ? '#' : ch;
      }
    }
    ++count.reasons[key];
  }
  std::vector<std::pair<std::string, Count>> const& rows() const {
    return m_rows;
  }

 private:
  std::vector<std::pair<std::string, Count>> m_rows;
};

/// What one case found: one entry per policy that did not match.
struct Outcome {
  std::vector<std::string> failures;
};

// ---------------------------------------------------------------------------
// Running a case.

template <class Policy>
Policy policy_for(Case const&) {
  return Policy{};  // a policy added to the table: its defaults
}
template <>
inline stencil::SpatialBlocking policy_for(Case const& c) {
  return c.params.default_tile ? stencil::SpatialBlocking{}
                               : stencil::SpatialBlocking{c.params.tile};
}
template <>
inline stencil::TemporalBlocking policy_for(Case const& c) {
  return {c.params.tb_depth, c.params.tb_prefetch};
}
template <>
inline stencil::DeviceTiling policy_for(Case const& c) {
  return {c.params.dt_depth, c.params.dt_prefetch, c.params.l2_window};
}
template <>
inline stencil::StreamingSweep policy_for(Case const& c) {
  return {c.params.ss_prefetch, c.params.bulk_copy};
}

template <class Op>
Op make_op(Case const& c) {
  Op op{};
  if constexpr (is_random_v<Op>) {
    for (int i = 0; i < Op::points; ++i) {
      op.c64[i] = c.coefficients[static_cast<std::size_t>(i)];
      op.c32[i] = static_cast<float>(op.c64[i]);
    }
  }
  return op;
}

/// Runs `policy` on `Space` from `initial` and compares with `expected`.
/// A refusal by the plan is a skip; anything after it that does not match
/// (or throws) is a failure.
template <class Space, class T, class Op, class Policy>
void run_policy(Op const& op, Case const& c, Policy const& policy,
                std::string const& label, HostField<T, Op::rank> const& initial,
                HostField<T, Op::rank> const& expected, Tally& tally,
                Outcome& outcome) {
  constexpr int Rank = Op::rank;
  using Memory = typename Space::memory_space;
  std::array<int, Rank> extents{};
  for (int d = 0; d < Rank; ++d) extents[d] = c.extents[d];
  Space space{};
  stencil::Grid<T, Rank, Memory> grid("u", extents,
                                      {.halo = c.halo, .boundary = c.boundary});
  stencil::Plan plan;
  try {
    plan = stencil::plan(space, grid, op, policy);
  } catch (stencil::error const& e) {
    // Naive runs every legal grid: its refusal means the case is illegal.
    if constexpr (std::is_same_v<Policy, stencil::Naive>) {
      ++tally.at(label).failed;
      outcome.failures.push_back(label + ": refused a legal case: " + e.what());
    } else {
      tally.skipped(label, e.what());
    }
    return;
  }
  load(grid, initial);
  try {
    stencil::iterate(space, grid, op, c.steps, policy);
    space.fence();
  } catch (std::exception const& e) {
    ++tally.at(label).failed;
    outcome.failures.push_back(label + ": planned, then threw: " + e.what());
    return;
  }
  auto const result =
      matches(read_back(grid), expected, initial, c.boundary, c.steps);
  if (result) {
    ++tally.at(label).run;
  } else {
    ++tally.at(label).failed;
    std::ostringstream out;
    out << label << ": " << result.message() << "\n      plan: " << plan;
    outcome.failures.push_back(out.str());
  }
}

/// Every policy of the table that `Space` has for the rank, with the case's
/// parameters, then Auto.
template <class Space, class T, class Op>
void run_space(Op const& op, Case const& c,
               HostField<T, Op::rank> const& initial,
               HostField<T, Op::rank> const& expected, Tally& tally,
               Outcome& outcome) {
  std::string const space = Space::name();
  stencil::detail::for_each_policy([&](auto table_entry) {
    using Policy = decltype(table_entry);
    if constexpr (stencil::policy_available_v<Policy, Space> &&
                  stencil::runs_rank_v<Policy, Op::rank>) {
      run_policy<Space, T>(
          op, c, policy_for<Policy>(c),
          space + " " + std::string(stencil::policy_traits<Policy>::name),
          initial, expected, tally, outcome);
    }
  });
  run_policy<Space, T>(op, c, stencil::Auto{}, space + " Auto", initial,
                       expected, tally, outcome);
}

/// The case on every space under test, against one reference run.
template <class T, class Op, class... Space>
void run_typed(::testing::Types<Space...>, Case const& c, Tally& tally,
               Outcome& outcome) {
  constexpr int Rank = Op::rank;
  Op const op = make_op<Op>(c);
  std::array<int, Rank> extents{};
  for (int d = 0; d < Rank; ++d) extents[d] = c.extents[d];
  auto const initial =
      random_field<T, Rank>(extents, c.halo, op, c.steps, c.field_seed);
  auto const expected = reference(initial, op, c.steps, c.boundary);
  (run_space<Space, T>(op, c, initial, expected, tally, outcome), ...);
}

/// Runs case `c` if its stencil is one of `Op...`, the stencils from index
/// `first` of its rank's list.
template <class... Op>
void run_in(OpList<Op...>, int first, Case const& c, Tally& tally,
            Outcome& outcome) {
  int i = first;
  auto one = [&](auto tag) {
    using O = typename decltype(tag)::type;
    if (i++ != c.stencil) return;
    if (c.is_double) {
      run_typed<double, O>(ExecutionSpaces{}, c, tally, outcome);
    } else {
      run_typed<float, O>(ExecutionSpaces{}, c, tally, outcome);
    }
  };
  (one(std::type_identity<Op>{}), ...);
}

/// The units that compile the kernels, one per rank (randomized_<rank>d.cpp)
/// but two for rank 3, the heaviest: the suite's stencils
/// (randomized_3d.cpp) and the random ones (randomized_3d_random.cpp).
void run_rank1(Case const& c, Tally& tally, Outcome& outcome);
void run_rank2(Case const& c, Tally& tally, Outcome& outcome);
void run_rank3_suite(Case const& c, Tally& tally, Outcome& outcome);
void run_rank3_random(Case const& c, Tally& tally, Outcome& outcome);

inline void run_case(Case const& c, Tally& tally, Outcome& outcome) {
  if (c.rank == 1) {
    run_rank1(c, tally, outcome);
  } else if (c.rank == 2) {
    run_rank2(c, tally, outcome);
  } else if (c.info.random) {
    run_rank3_random(c, tally, outcome);
  } else {
    run_rank3_suite(c, tally, outcome);
  }
}

}  // namespace stencil_test::randomized
