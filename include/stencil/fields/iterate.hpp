// SPDX-License-Identifier: Apache-2.0
// plan and iterate for a stencil of several fields on a stencil::State.
#pragma once

#include <stencil/detail/mechanism.hpp>
#include <stencil/detail/portable/mechanisms.hpp>
#include <stencil/detail/time_loop.hpp>
#include <stencil/error.hpp>
#include <stencil/fields/declare.hpp>
#include <stencil/fields/state.hpp>
#include <stencil/hooks.hpp>
#include <stencil/plan.hpp>
#include <stencil/plan_type.hpp>
#include <stencil/policy.hpp>

#include <Kokkos_Core.hpp>

#include <exception>
#include <string>
#include <type_traits>

namespace stencil {

namespace detail {

/// True where the mechanism of `Policy` on `ExecSpace` runs multi-field
/// stencils (it declares `runs_fields` and has plan_fields / run_fields).
template <class Policy, class ExecSpace>
constexpr bool runs_fields() {
  if constexpr (mechanism_available_v<Policy, ExecSpace>) {
    return requires { Mechanism<Policy, ExecSpace>::runs_fields; };
  } else {
    return false;
  }
}

/// Run-time checks of a state against a multi-field stencil.
template <class Op, class T, int Rank, class MemorySpace>
void validate_state(State<T, Rank, MemorySpace> const& state) {
  using Fields = typename Op::fields;
  expect_not_empty(state, "iterate/plan");
  STENCIL_EXPECT(state.field_count() == Fields::count, "state '", state.label(),
                 "' has ", state.field_count(),
                 " fields but the stencil declares ", Fields::count,
                 "; construct the state with one FieldSpec per declared "
                 "field (stencil::field_specs<Op>() lists them)");
  for (int f = 0; f < Fields::count; ++f) {
    FieldSpec const& spec = state.spec(f);
    STENCIL_EXPECT(spec.levels >= Fields::levels[f], "state '", state.label(),
                   "': field ", f, " ('", spec.name, "') keeps ", spec.levels,
                   " time levels but the stencil reads ", Fields::levels[f],
                   "; give its FieldSpec levels = ", Fields::levels[f]);
    STENCIL_EXPECT(!Fields::written[f] || !spec.read_only, "state '",
                   state.label(), "': field ", f, " ('", spec.name,
                   "') is read-only in the state but the stencil writes it; "
                   "declare it stencil::coefficient in the stencil, or not "
                   "read_only in the state");
  }
  constexpr int r = Fields::radius;
  STENCIL_EXPECT(
      state.halo() >= r, "state '", state.label(), "' has a halo of ",
      state.halo(), " cells but the stencil's largest radius is ", r,
      "; construct the state with StateOptions{.halo = ", r, "} or more");
  for (int d = 0; d < Rank; ++d) {
    STENCIL_EXPECT(state.extent(d) >= 2 * r + 1, "state '", state.label(),
                   "': extent ", d, " is ", state.extent(d),
                   " cells, smaller than the stencil's width 2*radius+1 = ",
                   2 * r + 1, "; every extent must be at least ", 2 * r + 1);
  }
}

template <class Op, class T, int Rank, class MemorySpace>
Plan describe_fields(std::string space_name,
                     State<T, Rank, MemorySpace> const& state) {
  using Fields = typename Op::fields;
  Plan p;
  p.execution_space = std::move(space_name);
  p.rank = Rank;
  p.radius = Fields::radius;
  p.shape = Op::shape;
  for (int d = 0; d < Rank; ++d) p.extents[3 - Rank + d] = state.extent(d);
  p.halo = state.halo();
  p.sides = state.boundaries().sides();
  p.value_size = static_cast<int>(sizeof(T));
  for (int f = 0; f < Fields::count; ++f) {
    p.fields += concat(f == 0 ? "" : ", ", state.name(f), " (radius ",
                       Fields::radii[f]);
    if (Fields::levels[f] > 1)
      p.fields += concat(", ", Fields::levels[f], " levels");
    p.fields += Fields::written[f] ? ", written)" : ", read-only)";
  }
  return p;
}

/// The multi-field plan of `policy` on `ExecSpace`, or stencil::unsupported
/// naming what does run them.
template <class ExecSpace, class T, class Op, class Policy>
void plan_fields_with(Plan& p, Policy const& policy) {
  if constexpr (runs_fields<Policy, ExecSpace>()) {
    Mechanism<Policy, ExecSpace>::template plan_fields<T, Op>(p, policy);
  } else {
    (void)policy;
    throw_unsupported(
        concat(to_string(policy_traits<Policy>::kind),
               " does not run multi-field stencils on ", p.execution_space,
               " in this build (its kernels read one field); Naive and "
               "SpatialBlocking run them on every space, StreamingSweep, "
               "TemporalBlocking and RegisterResident (rank 1) natively on "
               "CUDA, and Auto chooses among those that do"));
  }
}

/// Auto for a multi-field stencil. In 1D, where the space has the native
/// RegisterResident (CUDA) and the domain fits in the device's registers,
/// that. Then in 1D and 2D, where the space has a
/// native TemporalBlocking of several fields (CUDA) and its plan accepts
/// the state (fixed and periodic sides, tiles or rings that fit), that at
/// its default depth: measured ahead of Naive on every 2D solver of the
/// suite but the radius-4 wave in float, and on the 1D wave at radius 1
/// and 2; at the depth of 2 that wider radii get it ran behind Naive's
/// register windows, or level with them (docs/decisions/auto-fields.md).
/// In 3D the same, at radius 1 without coefficient fields and a depth of
/// at least 2: its two-dimensional rim let it lead Naive only there.
/// Elsewhere Naive, saying why: it moves each field's bytes once per step,
/// and SpatialBlocking adds scratch copies the caches already save.
template <class ExecSpace, class T, class Op>
void choose_fields_automatically(Plan& p, bool position_mapped) {
  std::string why_not_native;
  // In 1D, first the domain in registers, where it fits.
  if constexpr (Op::rank == 1 && runs_fields<RegisterResident, ExecSpace>()) {
    if (!position_mapped) {
      Plan resident = p;
      try {
        plan_fields_with<ExecSpace, T, Op>(resident, RegisterResident{});
        resident.chosen_by_auto = true;
        resident.reason =
            "the domain fits in the device's registers, where "
            "RegisterResident keeps it for the whole call: every step in "
            "one launch, no DRAM traffic between "
            "(docs/decisions/register-resident.md)";
        p = resident;
        return;
      } catch (unsupported const& e) {
        why_not_native =
            concat("; RegisterResident does not run it: ", e.what());
      }
    }
  }
  if constexpr (runs_fields<TemporalBlocking, ExecSpace>()) {
    using Fields = typename Op::fields;
    if (Op::rank == 3 && Fields::radius >= 2) {
      why_not_native +=
          "; in 3D at radius 2 and more the native TemporalBlocking (planes "
          "streamed through 32 x 16 tiles) ran behind Naive on the suite's "
          "wave, its rim growing as the square of radius x depth";
    } else if (Op::rank == 3 && Fields::written_count < Fields::count) {
      why_not_native +=
          "; in 3D with a coefficient field the native TemporalBlocking "
          "(planes streamed through 32 x 16 tiles) ran level with Naive or "
          "behind it on the suite's heat-varcoef3d";
    } else if (Op::rank == 1 && Fields::radius >= 3) {
      why_not_native +=
          "; in 1D at radius 3 and more the native TemporalBlocking (depth "
          "2) ran behind Naive on the suite's wave, or level with it";
    } else if (Op::rank == 2 && Fields::radius >= 4 && sizeof(T) < 8) {
      why_not_native +=
          "; at radius 4 in 4-byte values the native TemporalBlocking (depth "
          "2) ran behind Naive on the suite's wave";
    } else if (position_mapped) {
      why_not_native +=
          "; the native TemporalBlocking reads positions of a whole state, "
          "and this one is a rank's block of a distributed domain";
    } else {
      Plan native = p;
      bool planned = true;
      try {
        plan_fields_with<ExecSpace, T, Op>(native, TemporalBlocking{});
      } catch (unsupported const& e) {
        planned = false;
        why_not_native += concat(
            "; the native TemporalBlocking does not run "
            "this state: ",
            e.what());
      }
      if (planned && Op::rank == 3 && native.depth < 2) {
        why_not_native +=
            "; in 3D the native TemporalBlocking's default depth in this "
            "build is 1 (STENCIL_NATIVE_MAX_DEPTH), where its rims move more "
            "bytes than Naive";
      } else if (planned) {
        native.chosen_by_auto = true;
        native.reason = concat(
            "multi-field stencils in ",
            Op::rank == 1   ? "1D at radius 1 and 2"
            : Op::rank == 2 ? "2D"
                            : "3D at radius 1 without coefficient fields",
            " take the native TemporalBlocking at its default depth, which "
            "moves each field's bytes once per depth steps and ran the "
            "suite's ",
            Op::rank == 1   ? "1D wave"
            : Op::rank == 2 ? "2D solvers"
                            : "3D wave",
            " faster than Naive (docs/decisions/auto-fields.md)");
        if (!why_not_native.empty()) native.reason += why_not_native;
        p = native;
        return;
      }
    }
  }
  p.backend = Backend::portable;
  p.policy = PolicyKind::naive;
  p.chosen_by_auto = true;
  p.reason = concat(
      "multi-field stencils take the portable Naive: it moves each field's "
      "bytes once per step, and SpatialBlocking adds scratch copies the "
      "caches already save",
      Op::rank < 3 ? "" : " (in 3D: docs/decisions/auto-fields.md)",
      why_not_native);
}

template <PolicyKinds Kinds, class ExecSpace, class T, int Rank,
          class MemorySpace, class Op>
void run_fields_plan(ExecSpace const& space, State<T, Rank, MemorySpace>& state,
                     Op const& op, int steps, Plan const& p,
                     LoopHooks const& hooks) {
  bool ran = false;
  for_each_policy([&](auto policy) {
    using Policy = decltype(policy);
    if constexpr (runs_fields<Policy, ExecSpace>()) {
      if (!ran && p.policy == policy_traits<Policy>::kind) {
        Mechanism<Policy, ExecSpace>::run_fields(space, state, op, steps, p,
                                                 hooks);
        ran = true;
      }
    }
  });
  STENCIL_EXPECT_SUPPORTED(ran, "no mechanism runs ", to_string(p.policy),
                           " for multi-field stencils on ", ExecSpace::name(),
                           "; use Naive, SpatialBlocking or Auto");
}

}  // namespace detail

/// The plan of a multi-field stencil `op` on `state`: which policy runs it
/// and how. Auto takes Naive and says why; a policy that cannot run several
/// fields is refused with stencil::unsupported.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Op,
          class Policy>
requires detail::has_fields_v<Op> Plan
plan(ExecSpace const& space, State<T, Rank, MemorySpace> const& state,
     Op const& op, Policy const& policy) {
  static_assert(detail::check_fields_operator<Op, Rank>());
  static_assert(Kokkos::is_execution_space_v<ExecSpace>,
                "stencil::plan: the first argument must be a Kokkos "
                "execution space instance");
  static_assert(is_policy_v<Policy>,
                "stencil::plan: the policy must be one of stencil's policies "
                "or stencil::Auto");
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
      "stencil::plan: the state's memory space is not accessible from this "
      "execution space; allocate the state in ExecSpace::memory_space");
  (void)space;
  (void)op;
  detail::validate_state<Op>(state);
  Plan p = detail::describe_fields<Op>(ExecSpace::name(), state);
  p.space_backend = backend_for<ExecSpace>;
  if constexpr (std::is_same_v<Policy, Auto>) {
    STENCIL_EXPECT_SUPPORTED(!detail::tuning_requested(policy),
                             "Auto{.tune = true} does not time multi-field "
                             "stencils yet; use Auto{} or a policy");
    detail::choose_fields_automatically<ExecSpace, T, Op>(
        p, state.position_map_set());
  } else {
    detail::plan_fields_with<ExecSpace, T, Op>(p, policy);
  }
  // The native kernels of several fields give in.position() the state's
  // own cell; a block of a larger domain needs the portable kernels, which
  // map it (State::position_map).
  STENCIL_EXPECT_SUPPORTED(
      !(state.position_map_set() && p.backend != Backend::portable),
      to_string(p.policy),
      " of several fields runs natively, and the native kernels read "
      "positions of a whole state; this state is a rank's block of a "
      "distributed domain (stencil::mpi::DistributedState): use Naive or "
      "SpatialBlocking");
  p.model_note =
      "no prediction: the model describes single-field stencils only";
  return p;
}

/// Advances every written field of `state` by `steps` steps of the
/// multi-field stencil `op` on `space`, as `how` (a policy or a Plan from
/// stencil::plan for this state) says, running each every(n, f) hook after
/// every n steps. Asynchronous like the single-grid iterate; checked before
/// anything runs.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Op,
          class How = Auto, class... Hooks>
requires(Kokkos::is_execution_space_v<ExecSpace>&& detail::has_fields_v<Op> &&
         (is_hook_v<Hooks> &&
          ...)) void iterate(ExecSpace const& space,
                             State<T, Rank, MemorySpace>& state, Op const& op,
                             int steps, How const& how = {},
                             Hooks const&... hooks) {
  static_assert(detail::check_fields_operator<Op, Rank>());
  static_assert(std::is_same_v<How, Plan> || is_policy_v<How>,
                "stencil::iterate: the argument after the steps must be a "
                "policy or a stencil::Plan");
  STENCIL_EXPECT(steps >= 0, "steps is ", steps,
                 "; the number of time steps must be 0 or more");
  Plan p;
  if constexpr (std::is_same_v<How, Plan>) {
    detail::validate_state<Op>(state);
    Plan const expected = detail::describe_fields<Op>(ExecSpace::name(), state);
    STENCIL_EXPECT(
        how.fields == expected.fields && how.extents == expected.extents &&
            how.halo == expected.halo && how.sides == expected.sides &&
            how.value_size == expected.value_size &&
            how.execution_space == expected.execution_space,
        "the plan was made for a different run (", how.execution_space,
        ", fields ", how.fields, "); this call is on ",
        expected.execution_space, " with fields ", expected.fields,
        "; make a plan for this state with stencil::plan");
    p = how;
  } else {
    p = plan(space, state, op, how);
  }
  if (steps == 0) return;
  detail::LoopHooks const loop_hooks = detail::make_loop_hooks(hooks...);
  try {
    detail::run_fields_plan<detail::all_kinds>(space, state, op, steps, p,
                                               loop_hooks);
  } catch (detail::HookFailure const& hook) {
    std::rethrow_exception(hook.thrown);
  } catch (error const&) {
    throw;
  } catch (std::exception const& e) {
    detail::throw_device_error(
        detail::concat("a multi-field kernel of ", to_string(p.policy)),
        e.what(), "stencil::iterate");
  }
}

/// iterate() of a multi-field stencil on the default execution space.
template <class T, int Rank, class MemorySpace, class Op, class How = Auto,
          class... Hooks>
requires(detail::has_fields_v<Op> && (is_hook_v<Hooks> && ...)) void iterate(
    State<T, Rank, MemorySpace>& state, Op const& op, int steps,
    How const& how = {}, Hooks const&... hooks) {
  iterate(Kokkos::DefaultExecutionSpace{}, state, op, steps, how, hooks...);
}

}  // namespace stencil
