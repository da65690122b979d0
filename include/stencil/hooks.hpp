// SPDX-License-Identifier: Apache-2.0
// User code that runs between steps inside one iterate call: a norm, a NaN
// check, output. The time loop cuts its blocks of steps so that one ends on
// every multiple of n; temporal blocking runs in between.
#pragma once

#include <stencil/detail/time_loop.hpp>
#include <stencil/error.hpp>

#include <exception>
#include <functional>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

namespace stencil {

/// Runs `f(step)` after every `n` steps of an iterate call, where `step` is
/// the number of steps that call has done so far (n, 2n, ...). The grid or
/// state then holds that level, and its time() has advanced with it. `f`
/// runs on the host, between kernels on the iterate call's execution
/// space: a Kokkos reduction or deep_copy in it sees the level. What `f`
/// throws leaves iterate as it was thrown; the steps done stay done.
template <class F>
struct Every {
  int n;
  F f;
};

template <class F>
Every<std::decay_t<F>> every(int n, F&& f) {
  STENCIL_EXPECT(n >= 1, "every(n, f): n is ", n,
                 "; a hook runs every n >= 1 steps");
  return {n, std::forward<F>(f)};
}

template <class T>
inline constexpr bool is_hook_v = false;
template <class F>
inline constexpr bool is_hook_v<Every<F>> = true;

namespace detail {

/// What a user's hook threw, carried past iterate's handler for kernel
/// failures (which makes a Kokkos exception a device_error) and rethrown
/// as it was.
struct HookFailure {
  std::exception_ptr thrown;
};

/// The time loop's one hook from any number of every(n, f): it falls due
/// every gcd of the n, and calls each f whose n divides the steps done.
template <class... F>
LoopHooks make_loop_hooks(Every<F> const&... hooks) {
  if constexpr (sizeof...(F) == 0) {
    return {};
  } else {
    int period = 0;
    ((period = std::gcd(period, hooks.n)), ...);
    std::vector<std::pair<int, std::function<void(int)>>> calls;
    (calls.emplace_back(hooks.n, std::function<void(int)>(hooks.f)), ...);
    return {period, [calls = std::move(calls)](int steps_done) {
              for (auto const& [n, f] : calls) {
                if (steps_done % n != 0) continue;
                try {
                  f(steps_done);
                } catch (...) {
                  throw HookFailure{std::current_exception()};
                }
              }
            }};
  }
}

}  // namespace detail
}  // namespace stencil
