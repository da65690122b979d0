// SPDX-License-Identifier: Apache-2.0
// The seam between the frontend and the backends. A mechanism is what runs
// one policy on one execution space; a backend registers one by
// specialising `Mechanism<Policy, ExecSpace>` (the portable backend for
// every space in detail/portable/mechanisms.hpp, the native CUDA backend for
// Kokkos::Cuda in native_cuda/native_cuda.hpp). The frontend finds a
// mechanism through the availability trait and names none itself.
//
// A registered mechanism has:
//   static constexpr bool available = true;
//   template <class T, class Op, PolicyKinds Kinds>
//   static void plan(Plan& p, Policy const&);    // fills p or throws
//   template <PolicyKinds Kinds, class T, int Rank, class MemorySpace,
//             class Op>
//   static void run(ExecSpace const&, Grid<T, Rank, MemorySpace>&,
//                   Op const&, int steps, Plan const&, LoopHooks const&);
//   template <class T, class Op>
//   static AutoPreference auto_preference();     // Auto's untimed rule
//   template <class T, class Op>
//   static std::vector<TunedChoice> tuning_candidates();  // Auto's tuning
// and, where it can tell more cheaply than by planning, optionally
//   template <class T, class Op, PolicyKinds Kinds>
//   static Support can_implement(Plan const& described, Policy const&);
// (detail::can_implement below answers from the planner otherwise).
// `Kinds` is the set of policies the caller compiles (iterate with a
// policy compiles one, with Auto the ones Auto may choose): a mechanism
// whose kernels depend on it (Auto's depth caps) instantiates only those.
#pragma once

#include <stencil/error.hpp>
#include <stencil/plan_type.hpp>
#include <stencil/policy.hpp>

#include <string>

namespace stencil::detail {

/// Whether a mechanism can run a plan, and if not, why.
struct Support {
  bool ok = true;
  std::string reason;  ///< what prevents it, and what would run
  explicit operator bool() const { return ok; }
};

/// The mechanism that runs `Policy` on `ExecSpace`. The primary template is
/// "none"; backends specialise it.
template <class Policy, class ExecSpace, class Enable = void>
struct Mechanism {
  static constexpr bool available = false;
};

/// True where a backend registered a mechanism for `Policy` on `ExecSpace`.
template <class Policy, class ExecSpace>
inline constexpr bool mechanism_available_v =
    Mechanism<Policy, ExecSpace>::available;

/// What a mechanism tells untimed Auto about running a functor: whether
/// Auto takes it where it can run, and why (or why not).
struct AutoPreference {
  bool preferred = false;
  /// Auto still takes Naive where the model predicts it faster.
  bool model_may_veto = false;
  std::string what;     ///< the mechanism, as Auto's reasons name it
  std::string why;      ///< why Auto takes it (preferred)
  std::string why_not;  ///< why Auto leaves it (not preferred), or empty
};

/// can_implement from a mechanism's planner: the planner checks everything
/// a run needs and throws stencil::error with the reason where it cannot.
template <class MakePlan>
Support support_of(Plan const& described, MakePlan&& make_plan) {
  Plan p = described;
  try {
    make_plan(p);
  } catch (stencil::error const& e) {
    return {false, e.what()};
  }
  return {};
}

/// Whether the mechanism of `Policy` on `ExecSpace` can run the grid and
/// functor `described` with `policy`, and if not, why: the mechanism's own
/// can_implement where it has one, else its planner's verdict.
template <class ExecSpace, class T, class Op, PolicyKinds Kinds, class Policy>
Support can_implement(Plan const& described, Policy const& policy) {
  using M = Mechanism<Policy, ExecSpace>;
  if constexpr (requires {
                  M::template can_implement<T, Op, Kinds>(described, policy);
                }) {
    return M::template can_implement<T, Op, Kinds>(described, policy);
  } else {
    return support_of(
        described, [&](Plan& p) { M::template plan<T, Op, Kinds>(p, policy); });
  }
}

/// The kinds of a set of policies, one bit each (policy.hpp's kind_bit).
template <class... Policy>
constexpr PolicyKinds kinds_of() {
  return (PolicyKinds{0} | ... | kind_bit(policy_traits<Policy>::kind));
}

/// Every policy's kind: a plan from stencil::plan may name any of them.
inline constexpr PolicyKinds all_kinds = [] {
  PolicyKinds kinds = 0;
  for_each_policy([&](auto policy) {
    kinds |= kind_bit(policy_traits<decltype(policy)>::kind);
  });
  return kinds;
}();

}  // namespace stencil::detail
