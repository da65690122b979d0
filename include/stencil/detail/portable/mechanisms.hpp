// SPDX-License-Identifier: Apache-2.0
// The portable backend's mechanisms: Naive and SpatialBlocking on every
// Kokkos execution space, one kernel per step through the time loop.
#pragma once

#include <stencil/detail/fields/time_loop.hpp>
#include <stencil/detail/mechanism.hpp>
#include <stencil/detail/portable/fields_naive.hpp>
#include <stencil/detail/portable/fields_spatial_blocking.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/portable/naive.hpp>
#include <stencil/detail/portable/spatial_blocking.hpp>
#include <stencil/detail/time_loop.hpp>
#include <stencil/detail/tuning_cache.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>
#include <stencil/plan_type.hpp>
#include <stencil/policy.hpp>
#include <stencil/traits.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace stencil::detail {

/// The portable SpatialBlocking's plan: `requested` checked and clipped to
/// the domain, `scratch_bytes(tile)` per team checked against the space's
/// limit (`holds` says what the scratch holds, for the message), and the
/// team size. One grid and a State's fields share it.
template <class ExecSpace, class ScratchBytes>
void resolve_blocked_plan(Plan& p, Tile requested, ScratchBytes&& scratch_bytes,
                          std::string const& holds) {
  int const rank = p.rank;
  STENCIL_EXPECT(requested.x > 0 && (rank < 2 || requested.y > 0) &&
                     (rank < 3 || requested.z > 0),
                 "SpatialBlocking: tile {x=", requested.x, ", y=", requested.y,
                 ", z=", requested.z,
                 "} has a zero or negative extent in a "
                 "dimension a rank-",
                 rank,
                 " grid uses; every used tile "
                 "extent must be at least 1 cell");
  // A tile larger than the domain only wastes scratch: clip it.
  Tile t{std::min(requested.x, p.extents[2]), 1, 1};
  if (rank >= 2) t.y = std::min(requested.y, p.extents[1]);
  if (rank == 3) t.z = std::min(requested.z, p.extents[0]);
  std::size_t const bytes = scratch_bytes(t);
  std::size_t const limit = static_cast<std::size_t>(
      Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0));
  STENCIL_EXPECT_SUPPORTED(bytes <= limit, "SpatialBlocking: tile {x=", t.x,
                           ", y=", t.y, "} with ", holds, " needs ", bytes,
                           " bytes of scratch per team on ", p.execution_space,
                           ", which allows ", limit, "; use a smaller tile");
  p.policy = PolicyKind::spatial_blocking;
  p.tile = t;
  p.scratch_bytes = bytes;
  // Host spaces run a team per thread; device spaces cover the tile's cells
  // with up to 256 threads (whole warps) that stride over them.
  if constexpr (is_host_space_v<ExecSpace>) {
    p.team_size = 1;
  } else {
    int const cells = t.x * (rank >= 2 ? t.y : 1);
    p.team_size = std::min(256, (cells + 31) / 32 * 32);
  }
}

template <class ExecSpace>
void resolve_spatial_blocking(Plan& p, Tile requested) {
  resolve_blocked_plan<ExecSpace>(
      p, requested,
      [&](Tile t) {
        return blocked_scratch_bytes(p.rank, p.radius, t, p.value_size);
      },
      concat("radius ", p.radius));
}

/// resolve_spatial_blocking for the fields of a multi-field stencil: each
/// field read with a radius > 0 has its own tile and halo in scratch.
template <class ExecSpace, class Fields>
void resolve_fields_spatial_blocking(Plan& p, Tile requested) {
  std::string radii;
  int staged = 0;
  for (int f = 0; f < Fields::count; ++f) {
    if (Fields::radii[f] == 0) continue;
    radii += concat(staged == 0 ? "" : ", ", Fields::radii[f]);
    ++staged;
  }
  resolve_blocked_plan<ExecSpace>(
      p, requested,
      [&](Tile t) {
        return fields_scratch_bytes<Fields>(p.rank, t, p.value_size);
      },
      concat(staged, staged == 1 ? " field" : " fields", " in scratch (radii ",
             radii, ")"));
}

template <class ExecSpace>
struct Mechanism<Naive, ExecSpace,
                 std::enable_if_t<Kokkos::is_execution_space_v<ExecSpace>>> {
  static constexpr bool available = true;

  template <class T, class Op, PolicyKinds Kinds>
  static void plan(Plan& p, Naive const&) {
    p.backend = Backend::portable;
    p.policy = PolicyKind::naive;
  }
  /// Naive runs every grid plan() accepts.
  template <class T, class Op, PolicyKinds Kinds>
  static Support can_implement(Plan const&, Naive const&) {
    return {};
  }
  template <PolicyKinds Kinds, class T, int Rank, class MemorySpace, class Op>
  static void run(ExecSpace const& space, Grid<T, Rank, MemorySpace>& grid,
                  Op const& op, int steps, Plan const&,
                  LoopHooks const& hooks) {
    PaddedLayout const layout = make_layout<Rank>(grid.extents(), grid.halo());
    std::int64_t const padded_cells =
        static_cast<std::int64_t>(grid.current().size());
    auto const one_step = [&](int) {
      naive_step<ExecSpace, T, Rank>(space, grid.current().data(),
                                     grid.next().data(), layout, padded_cells,
                                     op);
      grid.swap();
    };
    time_loop(space, grid, step_blocks(steps, 1, hooks), one_step, hooks);
  }
  /// Multi-field stencils on a State: one kernel per step writes every
  /// written field.
  static constexpr bool runs_fields = true;
  template <class T, class Op>
  static void plan_fields(Plan& p, Naive const&) {
    p.backend = Backend::portable;
    p.policy = PolicyKind::naive;
  }
  template <class T, int Rank, class MemorySpace, class Op>
  static void run_fields(ExecSpace const& space,
                         State<T, Rank, MemorySpace>& state, Op const& op,
                         int steps, Plan const&, LoopHooks const& hooks) {
    using Fields = typename Op::fields;
    PaddedLayout const layout =
        make_layout<Rank>(state.extents(), state.halo());
    auto const one_step = [&](int) {
      fields_naive_step<ExecSpace, T, Rank>(space, field_buffers<Fields>(state),
                                            op, layout, state.time(),
                                            state.position_map());
      finish_step<Fields>(state);
    };
    state_time_loop(space, state, step_blocks(steps, 1, hooks), one_step,
                    hooks);
  }
  /// Naive is Auto's fallback, not a preference.
  template <class T, class Op>
  static AutoPreference auto_preference() {
    return {};
  }
  template <class T, class Op>
  static std::vector<TunedChoice> tuning_candidates() {
    return {{PolicyKind::naive, 0, -1, Tile{}, 0.0}};
  }
};

template <class ExecSpace>
struct Mechanism<SpatialBlocking, ExecSpace,
                 std::enable_if_t<Kokkos::is_execution_space_v<ExecSpace>>> {
  static constexpr bool available = true;

  template <class T, class Op, PolicyKinds Kinds>
  static void plan(Plan& p, SpatialBlocking const& policy) {
    resolve_spatial_blocking<ExecSpace>(p, policy.tile);
  }
  template <PolicyKinds Kinds, class T, int Rank, class MemorySpace, class Op>
  static void run(ExecSpace const& space, Grid<T, Rank, MemorySpace>& grid,
                  Op const& op, int steps, Plan const& p,
                  LoopHooks const& hooks) {
    PaddedLayout const layout = make_layout<Rank>(grid.extents(), grid.halo());
    auto const one_step = [&](int) {
      blocked_step<ExecSpace, T, Rank>(space, grid.current().data(),
                                       grid.next().data(), layout, op, p.tile,
                                       p.team_size, p.scratch_bytes);
      grid.swap();
    };
    time_loop(space, grid, step_blocks(steps, 1, hooks), one_step, hooks);
  }
  /// Multi-field stencils on a State: one kernel per step, each team
  /// staging its tile of every field read with a radius > 0.
  static constexpr bool runs_fields = true;
  template <class T, class Op>
  static void plan_fields(Plan& p, SpatialBlocking const& policy) {
    p.backend = Backend::portable;
    resolve_fields_spatial_blocking<ExecSpace, typename Op::fields>(
        p, policy.tile);
  }
  template <class T, int Rank, class MemorySpace, class Op>
  static void run_fields(ExecSpace const& space,
                         State<T, Rank, MemorySpace>& state, Op const& op,
                         int steps, Plan const& p, LoopHooks const& hooks) {
    using Fields = typename Op::fields;
    PaddedLayout const layout =
        make_layout<Rank>(state.extents(), state.halo());
    auto const one_step = [&](int) {
      fields_blocked_step<ExecSpace, T, Rank>(
          space, field_buffers<Fields>(state), op, layout, p.tile, p.team_size,
          p.scratch_bytes, state.time(), state.position_map());
      finish_step<Fields>(state);
    };
    state_time_loop(space, state, step_blocks(steps, 1, hooks), one_step,
                    hooks);
  }
  /// On host spaces, rank-3 boxes: a box reads 3 to 5 planes per output
  /// plane, which the scratch ring of 2r+1 planes serves from cache where
  /// Naive's strided reads do not. Measured on OpenMP with 2 cores at 64^3
  /// to 256^3, every suite box ran faster blocked and every star and every
  /// rank-1 and rank-2 stencil slower
  /// (docs/decisions/auto-host-spatial-blocking.md). Devices: Naive, whose
  /// caches serve the reuse.
  template <class T, class Op>
  static AutoPreference auto_preference() {
    if constexpr (is_host_space_v<ExecSpace> && Op::rank == 3 &&
                  Op::shape == Shape::box) {
      return {.preferred = true,
              .model_may_veto = false,
              .what = "SpatialBlocking",
              .why =
                  "on a host space a rank-3 box runs faster from a "
                  "scratch ring of planes than from Naive's strided reads "
                  "(docs/decisions/auto-host-spatial-blocking.md); "
                  "Auto{.tune = true} times both",
              .why_not = {}};
    } else {
      return {};
    }
  }
  template <class T, class Op>
  static std::vector<TunedChoice> tuning_candidates() {
    return {{PolicyKind::spatial_blocking, 0, -1, Tile{}, 0.0}};
  }
};

}  // namespace stencil::detail
