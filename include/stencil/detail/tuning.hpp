// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/backend.hpp>
#include <stencil/detail/plan_data.hpp>
#include <stencil/detail/planning.hpp>
#include <stencil/detail/run.hpp>
#include <stencil/detail/tuning_cache.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>
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
/// stencil::plan; throws stencil::error where it cannot run (a depth that
/// no longer fits, a policy Auto does not compile for this rank).
template <class ExecSpace, class T, class Op>
Plan plan_for_choice(Plan const& described, TunedChoice const& choice) {
  Plan p = described;
  bool const native = choice.policy == PolicyKind::temporal_blocking ||
                      choice.policy == PolicyKind::device_tiling ||
                      choice.policy == PolicyKind::streaming_sweep;
  if (!native) {
    if (choice.policy == PolicyKind::naive) {
      p.policy = PolicyKind::naive;
    } else {
      resolve_spatial_blocking<ExecSpace>(p, choice.tile);
    }
    return p;
  }
  STENCIL_EXPECT((auto_native_kinds<Op::rank> & kind_bit(choice.policy)) != 0 &&
                     native_available_v<ExecSpace>,
                 "Auto does not run ", to_string(choice.policy), " on a rank-",
                 Op::rank, " grid on ", described.execution_space,
                 " in this build (it compiles the native kernels of "
                 "TemporalBlocking for rank 1 and 2, and of StreamingSweep, "
                 "TemporalBlocking at depths 1-",
                 auto_sm_tiling_depths, " and DeviceTiling at depths 1-",
                 auto_device_tiling_depths,
                 " for rank 3, where the native CUDA backend is enabled)");
  // Only the kernels Auto compiles for this rank are instantiated.
  constexpr PolicyKinds kinds = auto_native_kinds<Op::rank>;
  if constexpr (native_available_v<ExecSpace> &&
                (kinds & kind_bit(PolicyKind::temporal_blocking)) != 0) {
    if (choice.policy == PolicyKind::temporal_blocking) {
      Native<ExecSpace>::template plan_temporal_blocking<T, Op, kinds>(
          p, TemporalBlocking{choice.depth, choice.prefetch});
    }
  }
  if constexpr (native_available_v<ExecSpace> &&
                (kinds & kind_bit(PolicyKind::device_tiling)) != 0) {
    if (choice.policy == PolicyKind::device_tiling) {
      Native<ExecSpace>::template plan_device_tiling<T, Op, kinds>(
          p, DeviceTiling{choice.depth, choice.prefetch});
    }
  }
  if constexpr (native_available_v<ExecSpace> &&
                (kinds & kind_bit(PolicyKind::streaming_sweep)) != 0) {
    if (choice.policy == PolicyKind::streaming_sweep) {
      Native<ExecSpace>::template plan_streaming_sweep<T, Op>(
          p, StreamingSweep{choice.prefetch});
    }
  }
  return p;
}

inline TunedChoice choice_of(Plan const& p) {
  return {p.policy, p.depth, p.prefetch, p.tile, 0.0};
}

inline std::string candidate_label(Plan const& p) {
  std::ostringstream out;
  out << to_string(p.policy);
  if (p.policy == PolicyKind::spatial_blocking) {
    out << ' ' << p.tile.x;
    if (p.rank >= 2) out << 'x' << p.tile.y;
    if (p.rank == 3) out << 'x' << p.tile.z;
  }
  if (p.policy == PolicyKind::temporal_blocking ||
      p.policy == PolicyKind::device_tiling) {
    out << " depth " << p.depth;
  }
  if (p.backend == Backend::native_cuda) out << " prefetch " << p.prefetch;
  return out.str();
}

/// The first round of candidates: every policy Auto compiles for this rank
/// and space, the temporal ones at every depth Auto runs (rank 3: SM tiling
/// at depths 1 to auto_sm_tiling_depths, device tiling at depths 1 to
/// auto_device_tiling_depths). Refused ones are left out by the caller.
template <int Rank>
std::vector<TunedChoice> first_round_choices(bool native) {
  std::vector<TunedChoice> choices{
      {PolicyKind::naive, 0, -1, Tile{}, 0.0},
      {PolicyKind::spatial_blocking, 0, -1, Tile{}, 0.0}};
  if (!native) return choices;
  if constexpr ((auto_native_kinds<Rank> &
                 kind_bit(PolicyKind::temporal_blocking)) != 0) {
    std::vector<int> depths;
    if constexpr (Rank == 1) {
      depths = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
    } else if constexpr (Rank == 2) {
      depths = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    } else {
      for (int d = 1; d <= auto_sm_tiling_depths; ++d) depths.push_back(d);
    }
    for (int depth : depths) {
      choices.push_back(
          {PolicyKind::temporal_blocking, depth, -1, Tile{}, 0.0});
    }
  }
  if constexpr ((auto_native_kinds<Rank> &
                 kind_bit(PolicyKind::device_tiling)) != 0) {
    for (int depth = 1; depth <= auto_device_tiling_depths; ++depth) {
      choices.push_back({PolicyKind::device_tiling, depth, -1, Tile{}, 0.0});
    }
  }
  if constexpr ((auto_native_kinds<Rank> &
                 kind_bit(PolicyKind::streaming_sweep)) != 0) {
    for (int prefetch = 0; prefetch <= 4; ++prefetch) {
      choices.push_back(
          {PolicyKind::streaming_sweep, 0, prefetch, Tile{}, 0.0});
    }
  }
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
  constexpr PolicyKinds kinds = auto_native_kinds<Rank>;
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
                    GridOptions{grid.halo(), grid.boundary()});
  } catch (std::exception const& e) {
    throw_error(concat(
        "Auto{.tune = true}: cannot allocate the scratch copy of grid '",
        grid.label(), "' that the candidates are timed on (", e.what(),
        "); use Auto{} (untimed) or a plan of your own, or free memory"));
  }
  constexpr double seconds_per_candidate = 0.01;
  bool const native = native_available_v<ExecSpace>;

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
  for (TunedChoice const& choice : first_round_choices<Rank>(native)) {
    try_choice(choice);
  }
  STENCIL_EXPECT(!timed.empty(),
                 "Auto{.tune = true}: no candidate plan runs this grid");
  Plan const leader =
      std::min_element(timed.begin(), timed.end(), by_rate)->plan;
  if (leader.policy == PolicyKind::temporal_blocking && leader.rank >= 2) {
    for (int prefetch = 0; prefetch <= 2; ++prefetch) {
      try_choice(
          {PolicyKind::temporal_blocking, leader.depth, prefetch, Tile{}, 0.0});
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
