// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/backend.hpp>
#include <stencil/detail/plan_data.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/portable/naive.hpp>
#include <stencil/detail/portable/periodic_halo.hpp>
#include <stencil/detail/portable/spatial_blocking.hpp>
#include <stencil/grid.hpp>
#include <stencil/policy.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace stencil::detail {

template <class ExecSpace, class T, int Rank, class MemorySpace, class Op>
void run_portable(ExecSpace const& space, Grid<T, Rank, MemorySpace>& grid,
                  Op const& op, int steps, Plan const& p) {
  PaddedLayout const layout = make_layout<Rank>(grid.extents(), grid.halo());
  std::int64_t const padded_cells =
      static_cast<std::int64_t>(grid.current().size());
  for (int step = 0; step < steps; ++step) {
    T* const in = grid.current().data();
    T* const out = grid.next().data();
    if (grid.boundary() == Boundary::periodic) {
      refresh_periodic_halo<ExecSpace, T, Rank>(space, in, layout);
    }
    switch (p.policy) {
      case PolicyKind::naive:
        naive_step<ExecSpace, T, Rank>(space, in, out, layout, padded_cells,
                                       op);
        break;
      case PolicyKind::spatial_blocking:
        blocked_step<ExecSpace, T, Rank>(space, in, out, layout, op, p.tile,
                                         p.team_size, p.scratch_bytes);
        break;
      case PolicyKind::temporal_blocking:
      case PolicyKind::device_tiling:
      case PolicyKind::streaming_sweep:
        break;  // native only; dispatched before run_portable
    }
    grid.swap();
  }
}

/// Runs the checked plan `p`: on the native backend if it names one of the
/// native policies in `Kinds` (the only native kernels instantiated), else
/// on the portable one.
template <PolicyKinds Kinds, class ExecSpace, class T, int Rank,
          class MemorySpace, class Op>
void run_plan(ExecSpace const& space, Grid<T, Rank, MemorySpace>& grid,
              Op const& op, int steps, Plan const& p) {
  if constexpr (native_available_v<ExecSpace> && Kinds != 0) {
    if (p.backend == Backend::native_cuda) {
      Native<ExecSpace>::template run<Kinds>(space, grid, op, steps, p);
      return;
    }
  }
  run_portable(space, grid, op, steps, p);
}

}  // namespace stencil::detail
