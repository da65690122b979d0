// SPDX-License-Identifier: Apache-2.0
// stencil::ode::integrate: an explicit Runge-Kutta method over a stencil
// right-hand side, y' = f(t, y), where y is the written fields of a State
// and f a multi-field functor that returns their derivatives.
//
// The Unfused plan runs one kernel per stage, as paper 001's reference
// does: stage i's kernel evaluates k_i = f(t + c_i dt, Y_i) at each cell
// and, in the same pass, the pointwise linear combination of the next
// stage, Y_{i+1} = y + dt sum_j a_{i+1,j} k_j (the last stage: y + dt
// sum_j b_j k_j and the error estimate). Only the link from a linear
// combination to the next right-hand side, which reads neighbours, needs a
// new kernel.
//
// The Fused plan runs every stage of a step over tiles: on the native CUDA
// backend in one launch over tiles that span a cluster of blocks
// (ode/fused_kernel.hpp there), on host spaces a tile per thread in its
// cache (detail/ode/tiled_fused_kernel.hpp). Auto takes it where it runs
// and its rims pay (a rule for each), and says why not where it does not.
#pragma once

#include <stencil/config.hpp>
#include <stencil/detail/fields/accessor.hpp>
#include <stencil/detail/fields/time_loop.hpp>
#include <stencil/detail/ode/tiled_fused_run.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/error.hpp>
#include <stencil/fields/state.hpp>
#include <stencil/hooks.hpp>
#include <stencil/ode/plans.hpp>
#include <stencil/ode/tableau.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace stencil::ode {

/// `steps` steps of `dt` from `t0`.
struct FixedSteps {
  double t0 = 0.0;
  double dt = 0.0;
  int steps = 0;
};

/// From `t0` to `t_end`, the step chosen by the embedded method's error
/// estimate: a step is accepted when the root mean square over every
/// unknown of err / (absolute + relative * max(|y_n|, |y_n+1|)) is at most
/// 1. `dt` is the first step tried (0: a hundredth of the interval).
struct Adaptive {
  double t0 = 0.0;
  double t_end = 0.0;
  double dt = 0.0;
  double absolute = 1e-8;
  double relative = 1e-6;
  long long max_steps = 10'000'000;
};

/// What an integrate call did.
struct Report {
  Method method = Method::rk4;
  std::string plan;         ///< the plan that ran, with its shape
  std::string plan_reason;  ///< Auto: why it chose that plan
  double t = 0.0;           ///< the state's time on return
  double dt = 0.0;  ///< the last step taken (adaptive: the next one proposed)
  long long accepted = 0;
  long long rejected = 0;
  long long rhs_evaluations = 0;  ///< stage kernels run
};

namespace detail {

/// The stage kernel of the Unfused plan (see the file comment).
template <class T, int Rank, class Rhs>
struct StageKernel {
  using Fields = typename Rhs::fields;
  static constexpr int W = Fields::written_count;
  struct Stage {};
  struct Last {};

  stencil::detail::FieldBuffers<T, Fields> buffers;  // Y_i in, Y_i+1 out
  T* saved[W] = {};                                  // y_n
  T const* current[W] = {};                          // Y_i of written slot w
  T* k[max_stages][W] = {};
  Kokkos::Array<double, max_stages> weight{};  // a_{i+1,j} or b_j
  Kokkos::Array<double, max_stages> error{};   // b_j - bhat_j
  int stage = 0;
  double t = 0.0, dt = 0.0;
  double absolute = 0.0, relative = 0.0;
  Rhs rhs;
  stencil::detail::PaddedLayout layout;
  stencil::detail::PositionMap map;

  KOKKOS_FORCEINLINE_FUNCTION std::int64_t cell_at(std::int64_t cell, int& z,
                                                   int& y, int& x) const {
    x = static_cast<int>(cell % layout.nx);
    std::int64_t const row = cell / layout.nx;
    y = static_cast<int>(row % layout.ny);
    z = static_cast<int>(row / layout.ny);
    return layout.offset<std::int64_t>(z, y, x);
  }

  /// k_i at `at`, stored, and the combination of stages 0..i.
  template <bool Estimate>
  KOKKOS_FORCEINLINE_FUNCTION double update(std::int64_t cell) const {
    int z = 0, y = 0, x = 0;
    std::int64_t const at = cell_at(cell, z, y, x);
    if (stage == 0) {
      for (int w = 0; w < W; ++w) saved[w][at] = current[w][at];
    }
    auto const result =
        rhs(stencil::detail::FieldsNeighbourhood<T, Rank, Fields>{
            buffers, at, layout.stride_y, layout.stride_z, z, y, x, t, map});
    double sum_squares = 0.0;
    for (int w = 0; w < W; ++w) {
      double derivative;
      if constexpr (requires { result.value[0]; }) {
        derivative = static_cast<double>(result.value[w]);
      } else {
        derivative = static_cast<double>(result);
      }
      k[stage][w][at] = static_cast<T>(derivative);
      double combination = 0.0, estimate = 0.0;
      for (int j = 0; j <= stage; ++j) {
        double const kj = static_cast<double>(k[j][w][at]);
        combination += weight[j] * kj;
        if constexpr (Estimate) estimate += error[j] * kj;
      }
      double const before = saved[w][at];
      double const after = before + dt * combination;
      buffers.out[w][at] = static_cast<T>(after);
      if constexpr (Estimate) {
        double const scale =
            absolute +
            relative * Kokkos::max(Kokkos::abs(before), Kokkos::abs(after));
        double const e = dt * estimate / scale;
        sum_squares += e * e;
      }
    }
    return sum_squares;
  }

  KOKKOS_FUNCTION void operator()(Stage, std::int64_t cell) const {
    (void)update<false>(cell);
  }
  KOKKOS_FUNCTION void operator()(Last, std::int64_t cell,
                                  double& sum_squares) const {
    sum_squares += update<true>(cell);
  }
};

template <class Rhs, class T, int Rank, class MemorySpace>
void expect_integrable(State<T, Rank, MemorySpace> const& state) {
  using Fields = typename Rhs::fields;
  static_assert(Rhs::rank == Rank,
                "stencil::ode::integrate: the right-hand side's rank differs "
                "from the state's");
  static_assert(stencil::detail::within_fits_rank<Fields>(Rank),
                "stencil::fields::within: give one radius per dimension of "
                "the right-hand side (within<ry, rx> for rank 2)");
  static_assert(Fields::most_levels == 1,
                "stencil::ode::integrate: a right-hand side reads its fields "
                "at the current level only (an ODE keeps no earlier levels); "
                "declare stencil::field<r> without levels");
  STENCIL_EXPECT(state.field_count() == Fields::count,
                 "stencil::ode::integrate: the state has ", state.field_count(),
                 " fields and the right-hand side ", "declares ", Fields::count,
                 "; make the state with stencil::field_specs<Rhs>(names)");
  for (int f = 0; f < Fields::count; ++f) {
    STENCIL_EXPECT(state.spec(f).read_only == !Fields::written[f] &&
                       state.spec(f).levels == 1,
                   "stencil::ode::integrate: field ", f, " ('",
                   state.spec(f).name,
                   "') does not match the right-hand side's declaration; "
                   "make the state with stencil::field_specs<Rhs>(names)");
  }
  STENCIL_EXPECT(state.halo() >= Fields::radius,
                 "stencil::ode::integrate: the state's halo is ", state.halo(),
                 " and the right-hand side reads ", Fields::radius,
                 " cells away; make the state with halo >= ", Fields::radius);
}

/// The Unfused integrator behind both integrate overloads: `next_dt`
/// proposes the step after one of `dt` with scaled error `err` (negative
/// for a fixed step), and says whether to accept it.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Rhs>
class UnfusedRun final : public StepRun {
 public:
  using Fields = typename Rhs::fields;
  static constexpr int W = Fields::written_count;
  using Kernel = StageKernel<T, Rank, Rhs>;

  UnfusedRun(ExecSpace const& space, State<T, Rank, MemorySpace>& state,
             Rhs const& rhs, Tableau tableau)
      : m_space(space), m_state(state), m_tableau(std::move(tableau)) {
    STENCIL_EXPECT(m_tableau.stages <= max_stages,
                   "stencil::ode: ", m_tableau.stages, " stages; at most ",
                   max_stages);
    m_kernel.rhs = rhs;
    m_kernel.layout =
        stencil::detail::make_layout<Rank>(state.extents(), state.halo());
    m_kernel.map = state.position_map();
    std::size_t const size = state.current(0).size();
    int slot = 0;
    for (int f = 0; f < Fields::count; ++f) {
      if (!Fields::written[f]) continue;
      m_written[slot] = f;
      // y_n with the state's halo: reject() copies it back whole, and a
      // fixed side's halo is never refreshed.
      m_saved[slot] = Buffer(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "stencil::ode::y"),
          size);
      Kokkos::deep_copy(space, m_saved[slot], whole(state.current(f)));
      for (int j = 0; j < m_tableau.stages; ++j) {
        m_k[j][slot] = Buffer(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "stencil::ode::k"),
            size);
      }
      ++slot;
    }
    m_cells = static_cast<std::int64_t>(state.interior_cells());
  }

  /// One step of `dt` from the state's time; returns the root mean square
  /// scaled error (0 without an embedded method). The state holds y_n+1
  /// afterwards; reject() takes it back to y_n.
  double step(double dt, double absolute, double relative) override {
    double const t = m_state.time();
    double err = 0.0;
    int const s = m_tableau.stages;
    bool const embedded = m_tableau.embedded() && absolute + relative > 0;
    for (int i = 0; i < s; ++i) {
      m_state.set_time(t + m_tableau.c[i] * dt);
      stencil::detail::refresh_state_halo(m_space, m_state, m_first);
      m_first = false;
      Kernel kernel = m_kernel;
      kernel.stage = i;
      kernel.t = m_state.time();
      kernel.dt = dt;
      kernel.absolute = absolute;
      kernel.relative = relative;
      for (int j = 0; j <= i; ++j) {
        kernel.weight[j] =
            i + 1 < s ? m_tableau.a_at(i + 1, j) : m_tableau.b[j];
        if (i + 1 == s && embedded) {
          kernel.error[j] = m_tableau.b[j] - m_tableau.bhat[j];
        }
      }
      for (int f = 0; f < Fields::count; ++f) {
        kernel.buffers.level[f][0] = m_state.current(f).data();
      }
      for (int w = 0; w < W; ++w) {
        kernel.buffers.out[w] = m_state.next(m_written[w]).data();
        kernel.current[w] = m_state.current(m_written[w]).data();
        kernel.saved[w] = m_saved[w].data();
        for (int j = 0; j < s; ++j) kernel.k[j][w] = m_k[j][w].data();
      }
      if (i + 1 < s || !embedded) {
        Kokkos::parallel_for(
            "stencil::ode::stage",
            Kokkos::RangePolicy<ExecSpace, typename Kernel::Stage,
                                Kokkos::IndexType<std::int64_t>>(m_space, 0,
                                                                 m_cells),
            kernel);
      } else {
        double sum_squares = 0.0;
        Kokkos::parallel_reduce(
            "stencil::ode::last_stage",
            Kokkos::RangePolicy<ExecSpace, typename Kernel::Last,
                                Kokkos::IndexType<std::int64_t>>(m_space, 0,
                                                                 m_cells),
            kernel, sum_squares);
        err = std::sqrt(sum_squares / (static_cast<double>(m_cells) * W));
      }
      for (int w = 0; w < W; ++w) m_state.rotate(m_written[w]);
      ++m_evaluations;
    }
    m_state.set_time(t + dt);
    m_step_start = t;
    return err;
  }

  /// Back to the state before the last step.
  void reject() override {
    for (int w = 0; w < W; ++w) {
      Kokkos::deep_copy(m_space, whole(m_state.current(m_written[w])),
                        m_saved[w]);
    }
    m_state.set_time(m_step_start);
  }

  long long evaluations() const override { return m_evaluations; }

  std::string description() const override { return "Unfused"; }

  /// A padded buffer as one contiguous array.
  template <class View>
  static Kokkos::View<T*, MemorySpace, Kokkos::MemoryUnmanaged> whole(
      View const& v) {
    return Kokkos::View<T*, MemorySpace, Kokkos::MemoryUnmanaged>(v.data(),
                                                                  v.size());
  }
  Tableau const& tableau() const { return m_tableau; }

 private:
  using Buffer = Kokkos::View<T*, MemorySpace>;
  ExecSpace m_space;
  State<T, Rank, MemorySpace>& m_state;
  Tableau m_tableau;
  Kernel m_kernel;
  int m_written[W] = {};
  Buffer m_saved[W];
  Buffer m_k[max_stages][W];
  std::int64_t m_cells = 0;
  bool m_first = true;
  double m_step_start = 0.0;
  long long m_evaluations = 0;
};

/// Runs the hooks due after `accepted` steps; what one throws reaches the
/// caller as it was thrown.
inline void run_hooks(stencil::detail::LoopHooks const& hooks,
                      long long accepted) {
  if (hooks.hook_every > 0 && accepted % hooks.hook_every == 0) {
    try {
      hooks.after_block(static_cast<int>(accepted));
    } catch (stencil::detail::HookFailure const& hook) {
      std::rethrow_exception(hook.thrown);
    }
  }
}

/// make_run on a host execution space: the tiled Fused plan where it runs
/// (and for Auto, where its tiles recompute at most
/// auto_host_recomputation cells per cell), else Unfused.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Rhs,
          Plan P>
std::unique_ptr<StepRun> make_host_run(ExecSpace const& space,
                                       State<T, Rank, MemorySpace>& state,
                                       Rhs const& rhs, Tableau tableau, P plan,
                                       std::string& reason) {
  using FusedPlan = TiledFusedRun<ExecSpace, T, Rank, MemorySpace, Rhs>;
  using UnfusedPlan = UnfusedRun<ExecSpace, T, Rank, MemorySpace, Rhs>;
  std::string why = tiled_fused_refusal<Rhs>(state);
  if constexpr (std::is_same_v<P, Fused>) {
    STENCIL_EXPECT_SUPPORTED(why.empty(), "stencil::ode: ", why);
    return std::make_unique<FusedPlan>(space, state, rhs, std::move(tableau),
                                       plan);
  } else {
    if (why.empty()) {
      try {
        auto run =
            std::make_unique<FusedPlan>(space, state, rhs, tableau, Fused{});
        double const recomputed = run->recomputation();
        if (recomputed <= auto_host_recomputation) {
          reason =
              "Fused: a tile's stages run in a core's cache, so a step reads "
              "y_n and writes y_n+1 once where Unfused moves every stage "
              "through memory";
          return run;
        }
        why = stencil::detail::concat(
            "Fused's tiles (", run->description(), ") would compute ",
            recomputed,
            " cells per cell they update, rims of stages x radius; Auto "
            "takes them at ",
            auto_host_recomputation, " or fewer (Fused{} runs them anyway)");
      } catch (stencil::unsupported const& e) {
        why = e.what();
      }
    }
    reason = stencil::detail::concat("Unfused: ", why);
    return std::make_unique<UnfusedPlan>(space, state, rhs, std::move(tableau));
  }
}

/// The run of `plan` on `state`; for Auto, `reason` says why it took the
/// plan it took. Fused refuses what it cannot run, naming Unfused.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Rhs,
          Plan P>
std::unique_ptr<StepRun> make_run(ExecSpace const& space,
                                  State<T, Rank, MemorySpace>& state,
                                  Rhs const& rhs, Tableau tableau, P plan,
                                  std::string& reason) {
  using UnfusedPlan = UnfusedRun<ExecSpace, T, Rank, MemorySpace, Rhs>;
  using Native = NativeOde<ExecSpace>;
  if constexpr (std::is_same_v<P, Unfused>) {
    (void)plan;
    return std::make_unique<UnfusedPlan>(space, state, rhs, std::move(tableau));
  } else if constexpr (runs_on_host_v<ExecSpace>) {
    return make_host_run(space, state, rhs, std::move(tableau), plan, reason);
  } else {
    std::string why;
    constexpr int radius_x =
        stencil::detail::largest_radius_along<typename Rhs::fields>(0);
    constexpr int radius_y =
        stencil::detail::largest_radius_along<typename Rhs::fields>(1);
    if constexpr (std::is_same_v<P, Auto> &&
                  !auto_takes_fused(radius_x, radius_y, sizeof(T))) {
      reason = stencil::detail::concat(
          "Unfused: the right-hand side reads ", radius_x,
          " cells away along x and ", radius_y, " along y, and on ", sizeof(T),
          "-byte values Fused's rims of stages x radius recomputed cells "
          "cost more than the memory traffic it saves (Auto takes it where "
          "the two radii sum to at most 3, or 4 on 8-byte values; "
          "fields<...>::within narrows an axis; Fused{} runs it anyway)");
      return std::make_unique<UnfusedPlan>(space, state, rhs,
                                           std::move(tableau));
    } else if constexpr (Native::available) {
      why = Native::template refusal<Rhs>(state, tableau.stages);
      if (why.empty()) {
        Fused request{};
        if constexpr (std::is_same_v<P, Fused>) request = plan;
        if constexpr (std::is_same_v<P, Auto>) {
          // Auto takes clusters only: tiles whose blocks meet in global
          // memory (GPUs without clusters) have not been measured against
          // Unfused on such a GPU (docs/ode.md). A cluster that fits is the
          // one check left to the run itself.
          request.barrier = TileBarrier::cluster;
          try {
            auto run = Native::make(space, state, rhs, tableau, request);
            reason =
                "Fused: one launch a step reads y_n and writes y_n+1 "
                "once, where Unfused moves every stage through memory";
            return run;
          } catch (stencil::unsupported const& e) {
            why = e.what();
          }
        } else {
          return Native::make(space, state, rhs, std::move(tableau), request);
        }
      }
    } else {
      why =
          stencil::detail::concat("Fused runs on the native CUDA backend; ",
                                  ExecSpace::name(), " has none (use Unfused)");
    }
    if constexpr (std::is_same_v<P, Fused>) {
      stencil::detail::throw_unsupported(
          stencil::detail::concat("stencil::ode: ", why));
    }
    reason = stencil::detail::concat("Unfused: ", why);
    return std::make_unique<UnfusedPlan>(space, state, rhs, std::move(tableau));
  }
}

}  // namespace detail

/// `steps.steps` steps of `method` from `steps.t0` with step `steps.dt` on
/// `state`'s written fields, `rhs` giving their derivatives; hooks
/// (stencil::every) run after every n steps. The state's time is t0 on
/// entry and t0 + steps * dt on return.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Rhs,
          Plan P = Auto, class... F>
Report integrate(ExecSpace const& space, State<T, Rank, MemorySpace>& state,
                 Rhs const& rhs, Method method, FixedSteps const& steps,
                 P plan = {}, Every<F> const&... hooks) {
  detail::expect_integrable<Rhs>(state);
  STENCIL_EXPECT(steps.steps >= 0, "stencil::ode::integrate: steps is ",
                 steps.steps, "; give 0 or more");
  STENCIL_EXPECT(steps.dt > 0 && std::isfinite(steps.dt),
                 "stencil::ode::integrate: dt is ", steps.dt,
                 "; give a positive, finite step");
  auto const loop_hooks = stencil::detail::make_loop_hooks(hooks...);
  state.set_time(steps.t0);
  Report report;
  report.method = method;
  auto const run = detail::make_run(space, state, rhs, tableau(method), plan,
                                    report.plan_reason);
  report.plan = run->description();
  for (int n = 0; n < steps.steps;) {
    // Up to the next hook: a resident Fused run takes them in one launch.
    int most = steps.steps - n;
    if (loop_hooks.hook_every > 0) {
      most = std::min(most, loop_hooks.hook_every - n % loop_hooks.hook_every);
    }
    n += run->fixed_steps(steps.t0, n, most, steps.dt);
    state.set_time(steps.t0 + n * steps.dt);
    report.accepted = n;
    detail::run_hooks(loop_hooks, report.accepted);
  }
  report.t = state.time();
  report.dt = steps.dt;
  report.rhs_evaluations = run->evaluations();
  return report;
}

/// `method` (an embedded pair: bogacki_shampine, dormand_prince or
/// verner56) from `a.t0` to `a.t_end` with the step controlled by its
/// error estimate (see Adaptive); hooks run after every n accepted steps.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Rhs,
          Plan P = Auto, class... F>
Report integrate(ExecSpace const& space, State<T, Rank, MemorySpace>& state,
                 Rhs const& rhs, Method method, Adaptive const& a, P plan = {},
                 Every<F> const&... hooks) {
  detail::expect_integrable<Rhs>(state);
  Tableau t = tableau(method);
  STENCIL_EXPECT(t.embedded(), "stencil::ode::integrate: ", to_string(method),
                 " has no embedded method to estimate the error; use "
                 "bogacki_shampine, dormand_prince or verner56, or "
                 "FixedSteps");
  STENCIL_EXPECT(a.t_end > a.t0, "stencil::ode::integrate: t_end (", a.t_end,
                 ") must be after t0 (", a.t0, ")");
  STENCIL_EXPECT(a.absolute > 0 && a.relative >= 0,
                 "stencil::ode::integrate: tolerances absolute ", a.absolute,
                 " and relative ", a.relative,
                 "; give absolute > 0 (a relative one alone divides by 0 "
                 "where the solution is 0) and relative >= 0");
  STENCIL_EXPECT(a.dt >= 0, "stencil::ode::integrate: the first step is ", a.dt,
                 "; give a positive one, or 0 for (t_end - t0) / 100");
  auto const loop_hooks = stencil::detail::make_loop_hooks(hooks...);
  // The controller's exponent: the error estimate is of the embedded
  // (lower) order q, so it scales as dt^(q + 1).
  double const exponent = 1.0 / (t.embedded_order + 1);
  state.set_time(a.t0);
  Report report;
  report.method = method;
  auto const run = detail::make_run(space, state, rhs, std::move(t), plan,
                                    report.plan_reason);
  report.plan = run->description();
  double dt = a.dt > 0 ? a.dt : (a.t_end - a.t0) / 100;
  while (state.time() < a.t_end) {
    STENCIL_EXPECT(report.accepted + report.rejected < a.max_steps,
                   "stencil::ode::integrate: ", a.max_steps,
                   " steps tried without reaching t_end = ", a.t_end,
                   " (t = ", state.time(), ", dt = ", dt,
                   "); loosen the tolerances or raise max_steps");
    double const t0 = state.time();
    double const step = std::min(dt, a.t_end - t0);
    double const err = run->step(step, a.absolute, a.relative);
    STENCIL_EXPECT(std::isfinite(err),
                   "stencil::ode::integrate: the error "
                   "estimate is not finite at t = ",
                   t0, " with dt = ", step,
                   "; the right-hand side gave a non-finite value");
    // Safety 0.9; the step grows at most 5x and shrinks at most 5x.
    double const factor =
        err == 0 ? 5.0 : std::clamp(0.9 * std::pow(err, -exponent), 0.2, 5.0);
    if (err <= 1.0) {
      ++report.accepted;
      if (t0 + step >= a.t_end) state.set_time(a.t_end);
      detail::run_hooks(loop_hooks, report.accepted);
      dt = step * factor;
    } else {
      ++report.rejected;
      run->reject();
      dt = step * std::min(factor, 1.0);
    }
  }
  report.t = state.time();
  report.dt = dt;
  report.rhs_evaluations = run->evaluations();
  return report;
}

}  // namespace stencil::ode

#if defined(KOKKOS_ENABLE_CUDA) && STENCIL_ENABLE_NATIVE_CUDA
#include <stencil/native_cuda/ode/fused_launch.hpp>
#endif
