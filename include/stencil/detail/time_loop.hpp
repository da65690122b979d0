// SPDX-License-Identifier: Apache-2.0
// The one time loop every mechanism runs through. A mechanism advances the
// grid by a block of steps without leaving its kernels (its temporal depth;
// one step for the one-kernel-per-step policies); between blocks the loop
// brings the halo up to date and runs the hooks that fall due.
#pragma once

#include <stencil/detail/portable/boundary_halo.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>

#include <algorithm>
#include <functional>
#include <vector>

namespace stencil::detail {

/// What runs between blocks of steps. The halo refresh is the grid's
/// boundary (every side's rule, boundary.hpp; MPI exchanges would be a
/// further refresh at the same point). `after_block` runs
/// every `hook_every` steps, with the number of steps done so far in this
/// call; blocks are cut so that one ends on each multiple of `hook_every`.
struct LoopHooks {
  int hook_every = 0;  ///< 0: no hook
  std::function<void(int steps_done)> after_block;
};

/// The blocks a call of `steps` steps runs, in order: `depth` steps each,
/// cut where a hook falls due, and the remainder last.
inline std::vector<int> step_blocks(int steps, int depth,
                                    LoopHooks const& hooks = {}) {
  STENCIL_EXPECT(depth >= 1, "a block of steps must hold at least one step; ",
                 "the plan's depth is ", depth);
  std::vector<int> blocks;
  for (int done = 0; done < steps;) {
    int block = std::min(depth, steps - done);
    if (hooks.hook_every > 0) {
      int const to_hook = hooks.hook_every - done % hooks.hook_every;
      block = std::min(block, to_hook);
    }
    blocks.push_back(block);
    done += block;
  }
  return blocks;
}

/// Brings the halo of the grid's current time level up to date before a
/// block, at the grid's time: every side's rule (refresh_boundaries); fixed
/// halos hold the user's values and stay as they are.
template <class ExecSpace, class T, int Rank, class MemorySpace>
void refresh_halo(ExecSpace const& space, Grid<T, Rank, MemorySpace>& grid) {
  if (grid.boundaries().all_fixed()) return;
  PaddedLayout const layout = make_layout<Rank>(grid.extents(), grid.halo());
  refresh_boundaries<ExecSpace, T, Rank>(space, grid.current().data(), layout,
                                         grid.boundaries(), grid.time());
}

/// Runs `blocks` (from step_blocks) on `grid`: before each, the halo
/// refresh at the block's start time; then `run_block(steps)`, which
/// advances the grid by that many steps and leaves the last level current;
/// then the grid's time moves on by steps * dt; after it, the hook where
/// one falls due.
template <class ExecSpace, class T, int Rank, class MemorySpace, class RunBlock>
void time_loop(ExecSpace const& space, Grid<T, Rank, MemorySpace>& grid,
               std::vector<int> const& blocks, RunBlock&& run_block,
               LoopHooks const& hooks = {}) {
  // The time from the call's start and the steps done, not summed per
  // block, so that it carries no rounding of its own.
  double const start = grid.time();
  int done = 0;
  for (int block : blocks) {
    refresh_halo(space, grid);
    run_block(block);
    done += block;
    grid.set_time(start + done * grid.dt());
    if (hooks.hook_every > 0 && hooks.after_block &&
        done % hooks.hook_every == 0) {
      hooks.after_block(done);
    }
  }
}

}  // namespace stencil::detail
