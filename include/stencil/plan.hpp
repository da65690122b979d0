// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/backend.hpp>
#include <stencil/detail/plan_data.hpp>
#include <stencil/detail/planning.hpp>
#include <stencil/detail/tuning.hpp>
#include <stencil/detail/validate.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>
#include <stencil/policy.hpp>
#include <stencil/traits.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <iomanip>
#include <iosfwd>
#include <sstream>
#include <string>

namespace stencil {

/// Resolves `policy` (Naive, SpatialBlocking or Auto) for `grid` and `op` on
/// `space`: checks everything a run would check and returns what would run.
/// Throws stencil::error for an unusable grid or policy; touches nothing.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Op,
          class Policy>
Plan plan(ExecSpace const& space, Grid<T, Rank, MemorySpace> const& grid,
          Op const& op, Policy const& policy) {
  static_assert(detail::check_operator<Op, Rank>());
  static_assert(Kokkos::is_execution_space_v<ExecSpace>,
                "stencil::plan: the first argument must be a Kokkos execution "
                "space instance, e.g. Kokkos::DefaultExecutionSpace{}");
  static_assert(is_policy_v<Policy>,
                "stencil::plan: the policy must be stencil::Naive, "
                "stencil::SpatialBlocking, stencil::TemporalBlocking, "
                "stencil::DeviceTiling, stencil::StreamingSweep or "
                "stencil::Auto");
  static_assert(
      !std::is_same_v<Policy, TemporalBlocking> ||
          native_available_v<ExecSpace>,
      "stencil::plan: TemporalBlocking runs on the native CUDA "
      "backend only (Kokkos::Cuda with STENCIL_ENABLE_NATIVE_CUDA=ON); "
      "use Naive or SpatialBlocking on this execution space");
  static_assert(
      !std::is_same_v<Policy, DeviceTiling> || native_available_v<ExecSpace>,
      "stencil::plan: DeviceTiling runs on the native CUDA backend only "
      "(Kokkos::Cuda with STENCIL_ENABLE_NATIVE_CUDA=ON); use Naive or "
      "SpatialBlocking on this execution space");
  static_assert(
      !std::is_same_v<Policy, StreamingSweep> || native_available_v<ExecSpace>,
      "stencil::plan: StreamingSweep runs on the native CUDA "
      "backend only (Kokkos::Cuda with "
      "STENCIL_ENABLE_NATIVE_CUDA=ON); use Naive or "
      "SpatialBlocking on this execution space");
  static_assert(!std::is_same_v<Policy, StreamingSweep> || Rank >= 2,
                "stencil::plan: StreamingSweep streams the lines of a rank-2 "
                "grid or the planes of a rank-3 grid; a rank-1 grid has "
                "nothing to stream, use Naive or TemporalBlocking");
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
      "stencil::plan: the grid's memory space is not accessible from this "
      "execution space; allocate the grid in ExecSpace::memory_space");
  (void)space;  // used by Auto's tuning only
  (void)op;
  detail::validate_grid<Op>(grid);
  Plan p = detail::describe<Op>(ExecSpace::name(), grid);
  p.space_backend = backend_for<ExecSpace>;
  if constexpr (std::is_same_v<Policy, Naive>) {
    p.policy = PolicyKind::naive;
  } else if constexpr (std::is_same_v<Policy, SpatialBlocking>) {
    detail::resolve_spatial_blocking<ExecSpace>(p, policy.tile);
  } else if constexpr (std::is_same_v<Policy, TemporalBlocking>) {
    detail::Native<ExecSpace>::template plan_temporal_blocking<T, Op>(p,
                                                                      policy);
  } else if constexpr (std::is_same_v<Policy, DeviceTiling>) {
    detail::Native<ExecSpace>::template plan_device_tiling<T, Op>(p, policy);
  } else if constexpr (std::is_same_v<Policy, StreamingSweep>) {
    detail::Native<ExecSpace>::template plan_streaming_sweep<T, Op>(p, policy);
  } else {
    detail::choose_automatically<ExecSpace, T, Op>(p);
    if (detail::tuning_requested(policy)) detail::tune(space, grid, op, p);
    return p;
  }
  detail::add_prediction<ExecSpace, T, Op>(p);
  return p;
}

/// plan() on the default execution space.
template <class T, int Rank, class MemorySpace, class Op, class Policy = Auto>
Plan plan(Grid<T, Rank, MemorySpace> const& grid, Op const& op,
          Policy const& policy = {}) {
  return plan(Kokkos::DefaultExecutionSpace{}, grid, op, policy);
}

}  // namespace stencil
