// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/backend.hpp>
#include <stencil/detail/native_dispatch.hpp>
#include <stencil/detail/planning.hpp>
#include <stencil/detail/tuning.hpp>
#include <stencil/detail/validate.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>
#include <stencil/plan_type.hpp>
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

/// True where this build has a mechanism that runs `Policy` on `ExecSpace`
/// (an availability trait: Naive and SpatialBlocking run everywhere, the
/// native policies where a native backend registered them).
template <class Policy, class ExecSpace>
inline constexpr bool policy_available_v =
    detail::mechanism_available_v<Policy, ExecSpace>;

/// Resolves `policy` (any policy of policy_traits, or Auto) for `grid` and
/// `op` on `space` with the mechanism registered for it: checks everything a
/// run would check and returns what would run.
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
      Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
      "stencil::plan: the grid's memory space is not accessible from this "
      "execution space; allocate the grid in ExecSpace::memory_space");
  if constexpr (!std::is_same_v<Policy, Auto>) {
    static_assert(runs_rank_v<Policy, Rank>,
                  "stencil::plan: the policy does not run grids of this rank "
                  "(DeviceTiling runs rank 3; StreamingSweep ranks 2 and 3; "
                  "RegisterResident rank 1; "
                  "the others every rank)");
    static_assert(detail::mechanism_available_v<Policy, ExecSpace>,
                  "stencil::plan: no mechanism runs this policy on this "
                  "execution space in this build (the native policies need "
                  "Kokkos::Cuda with STENCIL_ENABLE_NATIVE_CUDA=ON); use "
                  "Naive, SpatialBlocking or Auto here");
  }
  (void)space;  // used by Auto's tuning only
  (void)op;
  detail::validate_grid<Op>(grid);
  Plan p = detail::describe<Op>(ExecSpace::name(), grid);
  p.space_backend = backend_for<ExecSpace>;
  if constexpr (std::is_same_v<Policy, Auto>) {
    detail::choose_automatically<ExecSpace, T, Op>(p);
    if (detail::tuning_requested(policy)) detail::tune(space, grid, op, p);
    return p;
  } else {
    detail::plan_with<ExecSpace, T, Op, detail::all_kinds>(p, policy);
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
