// SPDX-License-Identifier: Apache-2.0
// The benchmark suite's tables: which stencils (with their domains),
// precisions and policies stencil_perf measures. Adding a stencil, a
// precision or a policy is one entry here.
#pragma once

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace stencil_perf {

using Space = Kokkos::DefaultExecutionSpace;

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

inline auto stencil_table() {
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

inline auto precision_table() {
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
  /// Left out of the default --policy list: run only when named.
  bool only_when_named = false;
};
template <class P>
PolicyEntry(char const*, P) -> PolicyEntry<P>;
template <class P, int MinRank, int MaxRank>
PolicyEntry(char const*, P, RankRange<MinRank, MaxRank>)
    -> PolicyEntry<P, MinRank, MaxRank>;
template <class P, int MinRank, int MaxRank>
PolicyEntry(char const*, P, RankRange<MinRank, MaxRank>, bool)
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
        // The same with the exchange buffer kept in L2 as persisting lines,
        // to measure the default (off) against it. Only when named.
        PolicyEntry{"DeviceTilingL2Window",
                    stencil::DeviceTiling{.l2_window = true}, ranks<3, 3>,
                    true},
        // One kernel per step through shared memory, measured against the
        // DRAM-bound ceiling and Naive; its plan chooses the copies (bulk
        // copies on rank 2 where they can run, cp.async elsewhere).
        PolicyEntry{"StreamingSweep", stencil::StreamingSweep{}, ranks<2, 3>},
        // The same with each kind of copy forced, to measure the plan's
        // choice against the other. Only when named. Bulk copies: the plan
        // refuses prefetch 0 and padded rows that are not whole 16-byte
        // items (the suite's float radius-1 rows), which would fail a run of
        // every policy.
        PolicyEntry{"StreamingSweepBulk",
                    stencil::StreamingSweep{.prefetch = -1, .bulk_copy = true},
                    ranks<2, 3>, true},
        PolicyEntry{"StreamingSweepAsync",
                    stencil::StreamingSweep{.prefetch = -1, .bulk_copy = false},
                    ranks<2, 3>, true},
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
inline auto policy_table() {
  return std::tuple_cat(
      std::tuple{
          PolicyEntry{"Naive", stencil::Naive{}},
          PolicyEntry{"SpatialBlocking", stencil::SpatialBlocking{}},
          PolicyEntry{"Auto", stencil::Auto{}},
          // Times Auto's candidates on the grid before the warm-up; the
          // search is not part of the timed runs. Its plan lists them all.
          PolicyEntry{"AutoTuned", stencil::Auto{.tune = true}},
      },
      native_policy_table<Space>());
}

/// How many stencils stencil_table() holds. perf_tests/CMakeLists.txt
/// compiles the benchmarks of each in a translation unit of its own and
/// counts the entries above to know how many; benchmarks.cpp checks that the
/// two agree.
inline constexpr std::size_t stencil_count =
    std::tuple_size_v<decltype(stencil_table())>;

template <class Tuple, class F>
void for_each_entry(Tuple const& table, F&& f) {
  std::apply([&](auto const&... entry) { (f(entry), ...); }, table);
}

/// The domain and step count one stencil runs at.
struct Size {
  bool applies = false;  // false: this size does not fit the stencil's rank
  std::vector<int> extents;
  int steps = 0;
  std::string label;
};

inline std::string join_extents(std::vector<int> const& extents) {
  std::string s;
  for (int e : extents) {
    if (!s.empty()) s += 'x';
    s += std::to_string(e);
  }
  return s;
}

/// True if `name` is in `list` or the list is empty (nothing was selected).
inline bool contains(std::vector<std::string> const& list,
                     std::string const& name) {
  return list.empty() ||
         std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace stencil_perf
