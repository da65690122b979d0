// SPDX-License-Identifier: Apache-2.0
// The benchmark suite's tables: which stencils (with their domains),
// precisions and policies stencil_perf measures. Adding a stencil or a
// precision is one entry here; the policies come from the library's table
// of policy traits (policy_table below).
#pragma once

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>
#include <stencil/suite/solvers.hpp>

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

/// A stencil of the suite with its paper domain (docs/suite.md; extents
/// slowest first), the steps of the "sustained" size and the temporal depth
/// EBISU uses, which is the step count of the "paper" size (0: no paper
/// size), and the "larger" domain the issues' reference figures were
/// measured on (2D temporal blocking; 3D device tiling, 2560x352x384:
/// 11x12 tiles of 32x32, one per SM of an H100 or H200) (zeros: none).
/// `Op` is a single-field stencil or a solver of several fields and time
/// levels (stencil::MultiFieldOperator: solver_cases.hpp runs those).
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
  // The solvers' 2D domains: j2d5pt's.
  constexpr std::array<int, 2> d2s{8352, 8352};
  constexpr std::array<int, 2> d2s_larger{10208, 10208};
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
      // The solvers of several fields and time levels (docs/suite.md,
      // "Solvers"): the 2D suite's j2d5pt domains and, in 3D, the larger
      // domain of the 3D suite as both sizes; no paper size (no published
      // temporal depth). Appended last, so that the indices CI's CUDA
      // compile check passes (STENCIL_PERF_ENTRIES, .ci/run) keep naming
      // j2d5pt, j3d7pt and heat1d-r1.
      StencilEntry<Wave<2, 1>>{d2s, 1000, 0, d2s_larger},
      StencilEntry<Wave<2, 2>>{d2s, 1000, 0, d2s_larger},
      StencilEntry<Wave<2, 3>>{d2s, 1000, 0, d2s_larger},
      StencilEntry<Wave<2, 4>>{d2s, 1000, 0, d2s_larger},
      StencilEntry<Wave<3, 1>>{d3_larger, 256, 0, d3_larger},
      StencilEntry<Wave<3, 2>>{d3_larger, 256, 0, d3_larger},
      StencilEntry<Wave<3, 3>>{d3_larger, 256, 0, d3_larger},
      StencilEntry<Wave<3, 4>>{d3_larger, 256, 0, d3_larger},
      StencilEntry<HeatVarCoef<2>>{d2s, 1000, 0, d2s_larger},
      StencilEntry<HeatVarCoef<3>>{d3_larger, 256, 0, d3_larger},
      StencilEntry<GrayScott>{d2s, 1000, 0, d2s_larger},
      StencilEntry<Bruss>{d2s, 1000, 0, d2s_larger},
      // The 1D leapfrog at heat1d's size (paper 004 gives no depth).
      StencilEntry<Wave<1, 1>>{{1 << 26}, 1000, 0},
      StencilEntry<Wave<1, 2>>{{1 << 26}, 1000, 0},
      StencilEntry<Wave<1, 3>>{{1 << 26}, 1000, 0},
      StencilEntry<Wave<1, 4>>{{1 << 26}, 1000, 0},
  };
}

/// The largest radius `Op` reads: a single-field stencil's radius, or the
/// largest of a solver's fields.
template <class Op>
constexpr int radius_of() {
  if constexpr (stencil::MultiFieldOperator<Op>) {
    return Op::fields::radius;
  } else {
    return Op::radius;
  }
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

/// Policies with a number of prefetch stages, which --prefetch=LIST sweeps
/// (from the library's table of policy traits; Auto has none).
template <class P>
inline constexpr bool has_prefetch_v = [] {
  if constexpr (requires { stencil::policy_traits<P>::has_prefetch; }) {
    return stencil::policy_traits<P>::has_prefetch;
  } else {
    return false;
  }
}();

/// Policies with a temporal depth, which --depth=LIST sweeps.
template <class P>
inline constexpr bool has_depth_v = [] {
  if constexpr (requires { stencil::policy_traits<P>::has_depth; }) {
    return stencil::policy_traits<P>::has_depth;
  } else {
    return false;
  }
}();

/// The entry of policy `P` under its own name, for the ranks it runs.
template <class P>
auto entry_of(P policy,
              char const* name = stencil::policy_traits<P>::name.data(),
              bool only_when_named = false) {
  using Traits = stencil::policy_traits<P>;
  return PolicyEntry<P, Traits::min_rank, Traits::max_rank>{
      name, policy, {}, only_when_named};
}

/// Every policy of the library's table that has a mechanism on `ExecSpace`
/// (stencil::plan refuses the others at compile time, so they are not
/// listed), each with its default parameters.
template <class ExecSpace>
auto mechanism_policy_table() {
  return std::apply(
      [](auto... policy) {
        return std::tuple_cat([&] {
          using P = decltype(policy);
          if constexpr (stencil::policy_available_v<P, ExecSpace>) {
            return std::tuple{entry_of(P{})};
          } else {
            return std::tuple{};
          }
        }()...);
      },
      stencil::Policies{});
}

/// Variants of a policy's parameters, run only when named, to measure a
/// default against its alternative (docs/decisions/): the exchange buffer
/// kept in L2 as persisting lines (l2-window-off.md), and each kind of copy
/// of the single-step sweep forced (streaming-sweep-bulk-copy-rank-2.md;
/// bulk copies are refused for prefetch 0 and for padded rows that are not
/// whole 16-byte items, the suite's float radius-1 rows).
template <class ExecSpace>
auto variant_policy_table() {
  using stencil::DeviceTiling;
  using stencil::StreamingSweep;
  auto const device_tiling = [] {
    if constexpr (stencil::policy_available_v<DeviceTiling, ExecSpace>) {
      return std::tuple{entry_of(DeviceTiling{.l2_window = true},
                                 "DeviceTilingL2Window", true)};
    } else {
      return std::tuple{};
    }
  };
  auto const sweep = [] {
    if constexpr (stencil::policy_available_v<StreamingSweep, ExecSpace>) {
      return std::tuple{
          entry_of(StreamingSweep{.prefetch = -1, .bulk_copy = true},
                   "StreamingSweepBulk", true),
          entry_of(StreamingSweep{.prefetch = -1, .bulk_copy = false},
                   "StreamingSweepAsync", true)};
    } else {
      return std::tuple{};
    }
  };
  return std::tuple_cat(device_tiling(), sweep());
}

// Every policy is tried on every stencil of a rank it implements and on
// every precision; a plan the library refuses (stencil::error) becomes a
// failed row and a non-zero exit status, not a crash. A new policy needs no
// entry here: its traits and its mechanism put it in the table; its plan's
// depth sets the ceiling it is measured against.
inline auto policy_table() {
  return std::tuple_cat(
      mechanism_policy_table<Space>(),
      std::tuple{
          PolicyEntry{"Auto", stencil::Auto{}},
          // Times Auto's candidates on the grid before the warm-up; the
          // search is not part of the timed runs. Its plan lists them all.
          PolicyEntry{"AutoTuned", stencil::Auto{.tune = true}},
      },
      variant_policy_table<Space>());
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
