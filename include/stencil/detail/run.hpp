// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/detail/mechanism.hpp>
#include <stencil/detail/native_dispatch.hpp>
#include <stencil/detail/portable/mechanisms.hpp>
#include <stencil/detail/time_loop.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>
#include <stencil/plan_type.hpp>
#include <stencil/policy.hpp>

namespace stencil::detail {

/// Runs the checked plan `p` with the mechanism registered for its policy
/// on `ExecSpace`. Only the mechanisms of the policies in `Kinds` are
/// instantiated: a native mechanism is dozens of kernels (one per depth and
/// load path) for every functor and value type, so a call with Naive must
/// not compile them.
template <PolicyKinds Kinds, class ExecSpace, class T, int Rank,
          class MemorySpace, class Op>
void run_plan(ExecSpace const& space, Grid<T, Rank, MemorySpace>& grid,
              Op const& op, int steps, Plan const& p,
              LoopHooks const& hooks = {}) {
  bool ran = false;
  for_each_policy([&](auto policy) {
    using Policy = decltype(policy);
    constexpr PolicyKind kind = policy_traits<Policy>::kind;
    if constexpr (mechanism_available_v<Policy, ExecSpace> &&
                  runs_rank_v<Policy, Rank> && (Kinds & kind_bit(kind)) != 0) {
      if (!ran && p.policy == kind) {
        Mechanism<Policy, ExecSpace>::template run<Kinds>(space, grid, op,
                                                          steps, p, hooks);
        ran = true;
      }
    }
  });
  STENCIL_EXPECT_SUPPORTED(ran, "no mechanism runs ", to_string(p.policy), " on a rank-",
                 Rank, " grid on ", ExecSpace::name(),
                 " in this call; make the plan with stencil::plan for this "
                 "space and grid");
}

}  // namespace stencil::detail
