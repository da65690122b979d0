// SPDX-License-Identifier: Apache-2.0
#include "benchmarks.hpp"

#include "cases.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#ifndef STENCIL_PERF_STENCIL_COUNT
#error "perf_tests/CMakeLists.txt defines STENCIL_PERF_STENCIL_COUNT"
#endif
static_assert(STENCIL_PERF_STENCIL_COUNT == stencil_perf::stencil_count,
              "perf_tests/CMakeLists.txt generated a different number of "
              "per-stencil translation units than stencil_table() has "
              "entries: each entry must start a line with StencilEntry<");

namespace stencil_perf {

namespace {

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

// ---------------------------------------------------------------------------
// Selection: which stencils run at which size.

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

template <std::size_t... I>
int register_selected(Options const& o, Ceilings const& ceilings,
                      std::index_sequence<I...>) {
  auto const table = stencil_table();
  int count = 0;
  auto const one = [&](auto const& e, auto index) {
    using Op = typename std::decay_t<decltype(e)>::op_type;
    if (!contains(o.stencils, Op::name)) return;
    Size const size = size_for(e, o);
    if (!size.applies) return;
    count += register_stencil_cases<decltype(index)::value>(o, size, ceilings);
  };
  (one(std::get<I>(table), std::integral_constant<std::size_t, I>{}), ...);
  return count;
}

}  // namespace

std::vector<std::string>& failure_list() {
  static std::vector<std::string> list;
  return list;
}

FixtureCache& fixture_cache() {
  static FixtureCache cache;
  return cache;
}

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

  std::vector<std::string> policies, by_default;
  for_each_entry(policy_table(), [&](auto const& p) {
    policies.push_back(p.name);
    if (!p.only_when_named) by_default.push_back(p.name);
  });
  o.policies = o.policies.empty() ? by_default
                                  : resolve("--policy", o.policies, policies);

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
  return register_selected(o, ceilings,
                           std::make_index_sequence<stencil_count>{});
}

std::vector<std::string> const& failures() { return failure_list(); }

void release_fixtures() { fixture_cache().clear(); }

}  // namespace stencil_perf
