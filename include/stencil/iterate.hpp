// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/detail/mechanism.hpp>
#include <stencil/detail/planning.hpp>
#include <stencil/detail/run.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>
#include <stencil/hooks.hpp>
#include <stencil/plan.hpp>
#include <stencil/policy.hpp>

#include <Kokkos_Core.hpp>

#include <exception>
#include <string>
#include <type_traits>

namespace stencil {

namespace detail {

/// The policies a plan made from `How` for a rank-`Rank` grid can name.
/// iterate() instantiates the mechanisms of these only.
template <class How, int Rank>
constexpr PolicyKinds kinds_for() {
  if constexpr (std::is_same_v<How, Auto>) {
    return auto_kinds<Rank>;
  } else if constexpr (std::is_same_v<How, Plan>) {
    return all_kinds;  // a plan from any policy
  } else {
    return kinds_of<How>();
  }
}

/// Refuses a plan made for another space, grid shape, value type or stencil.
template <class ExecSpace, class Op, class T, int Rank, class MemorySpace>
void check_plan_matches(Plan const& p, Grid<T, Rank, MemorySpace> const& grid) {
  Plan const expected = describe<Op>(ExecSpace::name(), grid);
  bool const same = p.execution_space == expected.execution_space &&
                    p.rank == expected.rank && p.radius == expected.radius &&
                    p.shape == expected.shape &&
                    p.extents == expected.extents && p.halo == expected.halo &&
                    p.sides == expected.sides &&
                    p.value_size == expected.value_size;
  if (same) return;
  std::string differences;
  auto differ = [&](char const* what, auto const& planned, auto const& here) {
    if (planned == here) return;
    differences += concat(differences.empty() ? "" : ", ", what,
                          " (plan: ", planned, ", this call: ", here, ")");
  };
  auto extents = [](Plan const& q) {
    return concat(q.extents[0], "x", q.extents[1], "x", q.extents[2]);
  };
  differ("execution space", p.execution_space, expected.execution_space);
  differ("rank", p.rank, expected.rank);
  differ("radius", p.radius, expected.radius);
  differ("shape", to_string(p.shape), to_string(expected.shape));
  differ("extents", extents(p), extents(expected));
  differ("halo", p.halo, expected.halo);
  differ("boundary", sides_text(p.sides, p.rank),
         sides_text(expected.sides, expected.rank));
  differ("value size in bytes", p.value_size, expected.value_size);
  throw_bad_input(
      concat("the plan was made for a different run; it differs in ",
             differences, "; make a plan for this grid with stencil::plan"));
}

}  // namespace detail

/// Advances `grid` by `steps` time steps of `op` on `space`, as `how` says:
/// a policy (stencil::Naive, stencil::SpatialBlocking, stencil::Auto) or a
/// Plan from stencil::plan. After the call the grid's current buffer holds
/// the last time level.
///
/// Asynchronous: the kernels are enqueued on `space` and the call returns;
/// fence the space (or use a Kokkos deep_copy) before reading the grid on
/// the host. Everything is checked before the first kernel is enqueued: a
/// call that throws stencil::error leaves the grid untouched. `steps == 0`
/// does nothing.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Op,
          class How = Auto, class... Hooks>
requires(Kokkos::is_execution_space_v<ExecSpace> && (is_hook_v<Hooks> && ...))
void iterate(ExecSpace const& space, Grid<T, Rank, MemorySpace>& grid,
             Op const& op, int steps, How const& how = {},
             Hooks const&... hooks) {
  static_assert(detail::check_operator<Op, Rank>());
  static_assert(std::is_same_v<How, Plan> || is_policy_v<How>,
                "stencil::iterate: the last argument must be a policy "
                "(stencil::Naive, stencil::SpatialBlocking, stencil::Auto) "
                "or a stencil::Plan");
  STENCIL_EXPECT(steps >= 0, "steps is ", steps,
                 "; the number of time steps must be 0 or more");
  Plan p;
  if constexpr (std::is_same_v<How, Plan>) {
    detail::validate_grid<Op>(grid);
    detail::check_plan_matches<ExecSpace, Op>(how, grid);
    p = how;
  } else {
    p = plan(space, grid, op, how);
  }
  if (steps == 0) return;
  try {
    detail::run_plan<detail::kinds_for<How, Rank>()>(
        space, grid, op, steps, p, detail::make_loop_hooks(hooks...));
  } catch (detail::HookFailure const& hook) {
    std::rethrow_exception(hook.thrown);
  } catch (error const&) {
    throw;
  } catch (std::exception const& e) {
    // Kokkos reports a failed launch or allocation with std::runtime_error;
    // callers catch one family.
    detail::throw_device_error(
        detail::concat("a kernel of ", to_string(p.policy)), e.what(),
        "stencil::iterate");
  }
}

/// iterate() on the default execution space.
template <class T, int Rank, class MemorySpace, class Op, class How = Auto,
          class... Hooks>
requires(is_hook_v<Hooks> && ...)
void iterate(Grid<T, Rank, MemorySpace>& grid, Op const& op, int steps,
             How const& how = {}, Hooks const&... hooks) {
  iterate(Kokkos::DefaultExecutionSpace{}, grid, op, steps, how, hooks...);
}

}  // namespace stencil
