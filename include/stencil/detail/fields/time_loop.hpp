// SPDX-License-Identifier: Apache-2.0
// The time loop of a State: the one loop of detail/time_loop.hpp, with the
// halo refresh and the clock of every field.
#pragma once

#include <stencil/detail/fields/accessor.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/portable/boundary_halo.hpp>
#include <stencil/detail/time_loop.hpp>
#include <stencil/fields/state.hpp>

#include <vector>

namespace stencil::detail {

/// Brings the halo of every field's current level up to date. Earlier
/// levels are read at their own cell only, so their halos are never read.
/// `coefficients` too: a read-only field's halo follows the boundary once.
template <class ExecSpace, class T, int Rank, class MemorySpace>
void refresh_state_halo(ExecSpace const& space,
                        State<T, Rank, MemorySpace>& state,
                        bool coefficients) {
  if (state.boundaries().all_fixed()) return;
  PaddedLayout const layout = make_layout<Rank>(state.extents(), state.halo());
  // A Dirichlet function gives the values of the solution, not of a
  // coefficient: a coefficient's halo on such a side stays as filled.
  BoundarySet<Rank> coefficient_sides;
  if (coefficients) {
    coefficient_sides = state.boundaries();
    for (int a = 0; a < Rank; ++a) {
      for (Side side : {Side::low, Side::high}) {
        if (coefficient_sides.kind(a, side) == Boundary::dirichlet) {
          coefficient_sides.set(a, side, Boundary::fixed);
        }
      }
    }
  }
  for (int f = 0; f < state.field_count(); ++f) {
    bool const read_only = state.spec(f).read_only;
    if (read_only && !coefficients) continue;
    refresh_boundaries<ExecSpace, T, Rank>(
        space, state.current(f).data(), layout,
        read_only ? coefficient_sides : state.boundaries(), state.time());
  }
}

/// The buffers of the state's fields as a kernel of `Fields` reads and
/// writes them this step.
template <class Fields, class T, int Rank, class MemorySpace>
FieldBuffers<T, Fields> field_buffers(State<T, Rank, MemorySpace> const& s) {
  FieldBuffers<T, Fields> b;
  int slot = 0;
  for (int f = 0; f < Fields::count; ++f) {
    for (int k = 0; k < Fields::levels[f]; ++k) {
      b.level[f][k] = s.level(f, -k).data();
    }
    if (Fields::written[f]) b.out[slot++] = s.next(f).data();
  }
  return b;
}

/// Advances the state by one step after a kernel wrote every written
/// field's next level: the next levels become current, the clock moves.
template <class Fields, class T, int Rank, class MemorySpace>
void finish_step(State<T, Rank, MemorySpace>& state) {
  for (int f = 0; f < Fields::count; ++f) {
    if (Fields::written[f]) state.rotate(f);
  }
  state.advance_time(1);
}

/// Runs `blocks` on `state`: the halo refresh before each, then
/// `run_block(steps)`, then the hook where one falls due.
template <class ExecSpace, class T, int Rank, class MemorySpace, class RunBlock>
void state_time_loop(ExecSpace const& space,
                     State<T, Rank, MemorySpace>& state,
                     std::vector<int> const& blocks, RunBlock&& run_block,
                     LoopHooks const& hooks) {
  int done = 0;
  bool first = true;
  for (int block : blocks) {
    refresh_state_halo(space, state, first);
    first = false;
    run_block(block);
    done += block;
    if (hooks.hook_every > 0 && hooks.after_block &&
        done % hooks.hook_every == 0) {
      hooks.after_block(done);
    }
  }
}

}  // namespace stencil::detail
