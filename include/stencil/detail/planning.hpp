// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/backend.hpp>
#include <stencil/detail/mechanism.hpp>
#include <stencil/detail/native_dispatch.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/portable/mechanisms.hpp>
#include <stencil/detail/validate.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>
#include <stencil/plan_type.hpp>
#include <stencil/policy.hpp>
#include <stencil/traits.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <iomanip>
#include <sstream>
#include <string>

namespace stencil {

namespace detail {

template <class Op, class T, int Rank, class MemorySpace>
Plan describe(std::string space_name, Grid<T, Rank, MemorySpace> const& grid) {
  Plan p;
  p.execution_space = std::move(space_name);
  p.rank = Rank;
  p.radius = Op::radius;
  p.shape = Op::shape;
  for (int d = 0; d < Rank; ++d) p.extents[3 - Rank + d] = grid.extent(d);
  p.halo = grid.halo();
  p.sides = grid.boundaries().sides();
  p.value_size = static_cast<int>(sizeof(T));
  return p;
}

/// The policies plan(..., Auto{}) may choose for a rank-`Rank` grid,
/// untimed or tuned (policy_traits::auto_candidate), with Auto's depth caps
/// (auto_depths_only). iterate() with Auto compiles the mechanisms of these
/// only: a native mechanism's temporal kernels are dozens per functor and
/// value type (one per depth and load path), too many for every call.
template <int Rank>
inline constexpr PolicyKinds auto_kinds = [] {
  PolicyKinds kinds = auto_depths_only;
  for_each_policy([&](auto policy) {
    using Policy = decltype(policy);
    if (runs_rank_v<Policy, Rank> &&
        policy_traits<Policy>::auto_candidate(Rank)) {
      kinds |= kind_bit(policy_traits<Policy>::kind);
    }
  });
  return kinds;
}();

/// The plan of `policy` by the mechanism registered for it on `ExecSpace`,
/// compiling only the kernels of `Kinds`.
template <class ExecSpace, class T, class Op, PolicyKinds Kinds, class Policy>
void plan_with(Plan& p, Policy const& policy) {
  Mechanism<Policy, ExecSpace>::template plan<T, Op, Kinds>(p, policy);
}

/// Adds stencil::model's prediction for plan `p` of functor `Op` on `T`
/// (or the reason there is none). The model is advisory: a device it
/// cannot calibrate or a plan it cannot describe leaves a note, never an
/// error.
template <class ExecSpace, class T, class Op>
void add_prediction(Plan& p) {
  if constexpr (!native_available_v<ExecSpace>) {
    p.model_note =
        "no prediction: the model's device figures come from the native "
        "CUDA backend's calibration, which this space does not have";
  } else if constexpr (!requires { Op::flops; }) {
    p.model_note =
        "no prediction: the functor declares no `static constexpr int "
        "flops` (floating-point operations per cell update)";
  } else {
    Native<ExecSpace>::predict(p, model::Stencil::of<Op, T>());
  }
}

inline std::string gcells_text(Plan const& p) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(p.prediction->gcells < 10 ? 2 : 0)
      << p.prediction->gcells << " GCells/s (" << to_string(p.prediction->limit)
      << ")";
  return out.str();
}

/// Auto: fills `p`, described but without a policy, with the plan the
/// library runs by default, and says why in p.reason. It walks the policy
/// table in order and asks each mechanism registered on `ExecSpace` for its
/// preference (the backend's measured rule for this functor and value
/// type): the first preferred one that can run the grid is taken, unless it
/// lets the model veto it and the model predicts Naive faster. Otherwise
/// Naive, with the reason the mechanisms gave.
template <class ExecSpace, class T, class Op>
void choose_automatically(Plan& p) {
  constexpr int rank = Op::rank;
  Plan naive = p;
  naive.policy = PolicyKind::naive;
  naive.chosen_by_auto = true;
  add_prediction<ExecSpace, T, Op>(naive);
  std::string why_naive;
  std::string passed_over;  // preferred mechanisms that could not run it
  bool decided = false;
  for_each_policy([&](auto policy) {
    using Policy = decltype(policy);
    if constexpr (mechanism_available_v<Policy, ExecSpace> &&
                  runs_rank_v<Policy, rank> &&
                  policy_traits<Policy>::auto_candidate(rank)) {
      if (decided) return;
      AutoPreference const preference =
          Mechanism<Policy, ExecSpace>::template auto_preference<T, Op>();
      if (!preference.preferred) {
        if (why_naive.empty()) why_naive = preference.why_not;
        return;
      }
      Support const support =
          can_implement<ExecSpace, T, Op, auto_kinds<rank>>(p, Policy{});
      if (!support) {
        // A later preferred mechanism may still run it.
        if (why_naive.rfind("one kernel per step; ", 0) != 0) {
          why_naive = "one kernel per step; " + preference.what +
                      " cannot run this grid: " + support.reason;
        }
        passed_over +=
            "; " + preference.what + " cannot run this grid: " + support.reason;
        return;
      }
      decided = true;
      Plan chosen = p;
      plan_with<ExecSpace, T, Op, auto_kinds<rank>>(chosen, Policy{});
      add_prediction<ExecSpace, T, Op>(chosen);
      bool const both = chosen.prediction && naive.prediction;
      if (preference.model_may_veto && both &&
          chosen.prediction->gcells < naive.prediction->gcells) {
        naive.reason = "the model predicts Naive at " + gcells_text(naive) +
                       ", " + preference.what + " at " + gcells_text(chosen);
        p = std::move(naive);
        return;
      }
      chosen.chosen_by_auto = true;
      chosen.reason = preference.why + "; " +
                      (both ? "the model predicts " + gcells_text(chosen) +
                                  " against Naive's " + gcells_text(naive)
                            : "no model prediction to compare (" +
                                  chosen.model_note + ")") +
                      passed_over;
      p = std::move(chosen);
    }
  });
  if (!decided) {
    naive.reason =
        why_naive.empty()
            ? "one kernel per step moves the fewest bytes without temporal "
              "blocking, and measured fastest among this space's policies "
              "for this rank and boundary (SpatialBlocking's tile reloads "
              "cost more than the caches it replaces)"
            : why_naive;
    p = std::move(naive);
  }
}

}  // namespace detail

}  // namespace stencil
