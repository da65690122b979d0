// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/backend.hpp>
#include <stencil/detail/mechanism.hpp>
#include <stencil/detail/native_dispatch.hpp>
#include <stencil/detail/planning.hpp>
#include <stencil/detail/run.hpp>
#include <stencil/detail/tuning_cache.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>
#include <stencil/plan_type.hpp>
#include <stencil/policy.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

namespace stencil::detail {

/// Names the device a tuning is valid for: a GPU's UUID where the native
/// backend can read it, else the space and its concurrency (the host's
/// thread count), which is what changes the host spaces' rates.
template <class ExecSpace>
std::string tuning_device(ExecSpace const& space) {
  if constexpr (native_available_v<ExecSpace>) {
    return Native<ExecSpace>::device_key();
  } else {
    return std::string(ExecSpace::name()) + "-" +
           std::to_string(space.concurrency()) + "-threads";
  }
}

/// The plan for `choice` on a grid `described`, through the same checks as
/// stencil::plan, by the mechanism of the choice's policy with Auto's
/// kernels; throws stencil::error where it cannot run (a depth that no
/// longer fits, a policy Auto does not compile for this rank or space).
template <class ExecSpace, class T, class Op>
Plan plan_for_choice(Plan const& described, TunedChoice const& choice) {
  constexpr int rank = Op::rank;
  constexpr PolicyKinds kinds = auto_kinds<rank>;
  Plan p = described;
  bool planned = false;
  for_each_policy([&](auto policy) {
    using Policy = decltype(policy);
    if constexpr (mechanism_available_v<Policy, ExecSpace> &&
                  runs_rank_v<Policy, rank> &&
                  (kinds & kind_bit(policy_traits<Policy>::kind)) != 0) {
      if (planned || choice.policy != policy_traits<Policy>::kind) return;
      if constexpr (requires { policy.tile; }) policy.tile = choice.tile;
      if constexpr (policy_traits<Policy>::has_depth) {
        policy.depth = choice.depth;
      }
      if constexpr (policy_traits<Policy>::has_prefetch) {
        policy.prefetch = choice.prefetch;
      }
      if constexpr (requires { policy.tiles; }) policy.tiles = choice.tiles;
      plan_with<ExecSpace, T, Op, kinds>(p, policy);
      planned = true;
    }
  });
  STENCIL_EXPECT_SUPPORTED(
      planned, "Auto does not run ", to_string(choice.policy), " on a rank-",
      rank, " grid on ", described.execution_space,
      " in this build (no mechanism for it that Auto compiles)");
  return p;
}

/// Rank-2 TemporalBlocking's tiles as plan `p` runs them; automatic for
/// other plans.
inline Tiles2D tiles_of(Plan const& p) {
  if (p.policy != PolicyKind::temporal_blocking || p.rank != 2) {
    return Tiles2D::automatic;
  }
  return p.native_cuda.warp_tiles ? Tiles2D::warp_registers
                                  : Tiles2D::shared_memory;
}

inline TunedChoice choice_of(Plan const& p) {
  return {p.policy, p.depth, p.prefetch, p.tile, 0.0, tiles_of(p)};
}

/// True where the policy of `kind` takes a depth and a prefetch: the
/// second round times the leader's prefetch depths at its depth.
inline bool has_depth_and_prefetch(PolicyKind kind) {
  bool result = false;
  for_each_policy([&](auto policy) {
    using Traits = policy_traits<decltype(policy)>;
    if (Traits::kind == kind)
      result = Traits::has_depth && Traits::has_prefetch;
  });
  return result;
}

inline std::string candidate_label(Plan const& p) {
  std::ostringstream out;
  out << to_string(p.policy);
  if (p.policy == PolicyKind::spatial_blocking) {
    out << ' ' << p.tile.x;
    if (p.rank >= 2) out << 'x' << p.tile.y;
    if (p.rank == 3) out << 'x' << p.tile.z;
  }
  if (has_depth_and_prefetch(p.policy)) {
    out << " depth " << p.depth;
  }
  if (p.backend == Backend::native_cuda) out << " prefetch " << p.prefetch;
  if (p.native_cuda.warp_tiles) out << " warp tiles";
  return out.str();
}

/// The first round of candidates: what each mechanism Auto compiles for
/// this rank and space proposes (the temporal ones at every depth Auto
/// runs). Refused ones are left out by the caller.
template <class ExecSpace, class T, class Op>
std::vector<TunedChoice> first_round_choices() {
  constexpr int rank = Op::rank;
  std::vector<TunedChoice> choices;
  for_each_policy([&](auto policy) {
    using Policy = decltype(policy);
    if constexpr (mechanism_available_v<Policy, ExecSpace> &&
                  runs_rank_v<Policy, rank> &&
                  policy_traits<Policy>::auto_candidate(rank)) {
      for (TunedChoice const& c :
           Mechanism<Policy, ExecSpace>::template tuning_candidates<T, Op>()) {
        choices.push_back(c);
      }
    }
  });
  return choices;
}

/// GCells/s of plan `c` on `scratch`, a grid shaped like `grid`: whole
/// launches in chunks of at most 64 steps (at least one launch), each
/// started from `grid`'s values, until `seconds` are timed; the faster of
/// two such measurements. The refills are what perf_tests does: the
/// suite's stencils decay into denormals, or grow into infinities, over
/// longer runs, and would time their slow paths.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Op>
double time_candidate(ExecSpace const& space,
                      Grid<T, Rank, MemorySpace> const& grid,
                      Grid<T, Rank, MemorySpace>& scratch, Op const& op,
                      Plan const& c, double seconds) {
  constexpr PolicyKinds kinds = auto_kinds<Rank>;
  auto const reset = [&] {
    Kokkos::deep_copy(space, scratch.current(), grid.current());
    Kokkos::deep_copy(space, scratch.next(), grid.next());
    space.fence("stencil::Auto::tune::reset");
  };
  int const launch = std::max(1, c.depth);
  // Untimed: the first launch loads the kernel and maps pages.
  reset();
  run_plan<kinds>(space, scratch, op, launch, c);
  space.fence("stencil::Auto::tune::warm-up");
  // The second sizes the chunks: as many launches as `seconds` needs, at
  // most 64 steps, at least one launch (a large grid on a host space, where
  // 64 steps of one candidate would take a minute, is timed a launch at a
  // time).
  reset();
  Kokkos::Timer sizing;
  run_plan<kinds>(space, scratch, op, launch, c);
  space.fence("stencil::Auto::tune::sizing");
  double const per_launch = std::max(sizing.seconds(), 1e-9);
  int const most = std::max(1, 64 / launch);
  int const launches = static_cast<int>(
      std::min<double>(most, std::max(1.0, std::ceil(seconds / per_launch))));
  int const chunk = launch * launches;
  double fastest_step = std::numeric_limits<double>::infinity();
  for (int measurement = 0; measurement < 2; ++measurement) {
    double timed = 0;
    long steps = 0;
    while (timed < seconds) {
      reset();
      Kokkos::Timer timer;
      run_plan<kinds>(space, scratch, op, chunk, c);
      space.fence("stencil::Auto::tune::timed");
      timed += timer.seconds();
      steps += chunk;
    }
    fastest_step = std::min(fastest_step, timed / static_cast<double>(steps));
  }
  return static_cast<double>(grid.interior_cells()) / fastest_step * 1e-9;
}

/// Auto{.tune = true}: replaces `p`, Auto's untimed choice, by the fastest
/// plan Auto can run for this grid, timed on a scratch copy of it (the grid
/// itself is not touched), or by the one cached for this device, functor
/// and grid. A first round times every policy (the temporal ones at every
/// depth that fits); a second the prefetch depths of the winner where it
/// has them. The winner is written to tuning_cache_file(); where that
/// fails the plan says why and the choice serves this call only.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Op>
void tune(ExecSpace const& space, Grid<T, Rank, MemorySpace> const& grid,
          Op const& op, Plan& p) {
  Plan described = describe<Op>(ExecSpace::name(), grid);
  described.space_backend = p.space_backend;
  std::string const device = tuning_device(space);
  std::string const key = tuning_key(device, typeid(Op).name(), described);

  std::optional<std::filesystem::path> file;
  std::string cache_note;
  try {
    file = tuning_cache_file();
  } catch (stencil::error const& e) {
    cache_note = std::string("not cached: ") + e.what();
  }
  auto const finish = [&](Plan chosen, std::string reason, std::string tuning) {
    chosen.chosen_by_auto = true;
    chosen.reason = std::move(reason);
    chosen.tuning = std::move(tuning);
    add_prediction<ExecSpace, T, Op>(chosen);
    p = std::move(chosen);
  };
  if (file) {
    // A file this library did not write is an error (read_tuned_choice
    // says which line); a cached plan that no longer plans is tuned again.
    if (std::optional<TunedChoice> const cached =
            read_tuned_choice(*file, key)) {
      try {
        Plan chosen = plan_for_choice<ExecSpace, T, Op>(described, *cached);
        std::ostringstream tuning;
        tuning << "read from " << file->string() << " (" << cached->gcells
               << " GCells/s when it was tuned)";
        finish(std::move(chosen),
               "tuned: the fastest plan timed for this device, functor and "
               "grid",
               tuning.str());
        return;
      } catch (stencil::error const& e) {
        cache_note = std::string("the cached plan no longer runs (") +
                     e.what() + "), so it was tuned again; ";
      }
    }
  }

  std::optional<Grid<T, Rank, MemorySpace>> scratch;
  try {
    scratch.emplace(grid.label() + ":tuning", grid.extents(),
                    GridOptions{.halo = grid.halo(), .dt = grid.dt()});
    scratch->set_boundaries(grid.boundaries());
  } catch (out_of_memory const& e) {
    throw_out_of_memory(
        concat("Auto{.tune = true}: cannot allocate the scratch copy of grid '",
               grid.label(), "' that the candidates are timed on (", e.what(),
               "); use Auto{} (untimed) or a plan of your own, or free memory"),
        e.requested_bytes(), e.available_bytes());
  }
  constexpr double seconds_per_candidate = 0.01;

  struct Timed {
    Plan plan;
    double gcells;
  };
  std::vector<Timed> timed;
  int refused = 0;
  Kokkos::Timer search;
  auto const try_choice = [&](TunedChoice const& choice) {
    Plan c;
    try {
      c = plan_for_choice<ExecSpace, T, Op>(described, choice);
    } catch (stencil::error const&) {
      ++refused;  // a depth or prefetch that does not fit this grid
      return;
    }
    for (Timed const& t : timed) {
      if (candidate_label(t.plan) == candidate_label(c)) return;
    }
    double const gcells =
        time_candidate(space, grid, *scratch, op, c, seconds_per_candidate);
    timed.push_back({std::move(c), gcells});
  };
  auto const by_rate = [](Timed const& a, Timed const& b) {
    return a.gcells > b.gcells;
  };
  for (TunedChoice const& choice : first_round_choices<ExecSpace, T, Op>()) {
    try_choice(choice);
  }
  STENCIL_EXPECT_SUPPORTED(
      !timed.empty(), "Auto{.tune = true}: no candidate plan runs this grid");
  Plan const leader =
      std::min_element(timed.begin(), timed.end(), by_rate)->plan;
  // Rank 1's temporal kernel and warp tiles have nothing to prefetch.
  if (has_depth_and_prefetch(leader.policy) && leader.rank >= 2 &&
      !leader.native_cuda.warp_tiles) {
    for (int prefetch = 0; prefetch <= 2; ++prefetch) {
      try_choice({leader.policy, leader.depth, prefetch, Tile{}, 0.0,
                  tiles_of(leader)});
    }
  }
  std::sort(timed.begin(), timed.end(), by_rate);
  Timed const& winner = timed.front();

  std::ostringstream tuning;
  tuning.precision(4);
  tuning << "timed " << timed.size() << " plans in " << search.seconds()
         << " s (GCells/s): ";
  for (std::size_t i = 0; i < timed.size(); ++i) {
    tuning << (i ? ", " : "") << candidate_label(timed[i].plan) << " "
           << timed[i].gcells;
  }
  if (refused > 0) tuning << "; " << refused << " did not fit";
  if (file) {
    TunedChoice choice = choice_of(winner.plan);
    choice.gcells = winner.gcells;
    try {
      write_tuned_choice(*file, key, choice);
      tuning << "; " << cache_note << "cached in " << file->string();
    } catch (stencil::error const& e) {
      tuning << "; " << cache_note << "not cached: " << e.what();
    }
  } else {
    tuning << "; " << cache_note;
  }
  std::ostringstream reason;
  reason.precision(4);
  reason << "tuned: fastest of " << timed.size()
         << " plans timed on a copy of the grid (" << winner.gcells
         << " GCells/s";
  if (timed.size() > 1) {
    reason << " against " << timed[1].gcells << " for the next, "
           << candidate_label(timed[1].plan);
  }
  reason << ")";
  finish(winner.plan, reason.str(), tuning.str());
}

}  // namespace stencil::detail
