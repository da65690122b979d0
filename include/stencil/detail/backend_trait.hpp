// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace stencil {

/// The families of kernels the library has.
enum class Backend {
  portable,     ///< Kokkos parallel patterns; every execution space
  native_cuda,  ///< hand-written CUDA kernels; Kokkos::Cuda only
};

/// True when a native backend is compiled in and serves `ExecSpace`. A
/// default-false availability trait: native backends specialise it.
template <class ExecSpace>
inline constexpr bool native_available_v = false;

namespace detail {
/// The native backend's entry points for `ExecSpace` (plan and run of the
/// native policies). Only declared here; a native backend specialises it.
template <class ExecSpace>
struct Native;
}  // namespace detail

}  // namespace stencil
