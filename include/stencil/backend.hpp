// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/config.hpp>

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

/// The backend that serves `ExecSpace` in this build: the native CUDA backend
/// for Kokkos::Cuda when the build enables it (STENCIL_ENABLE_NATIVE_CUDA),
/// the portable one otherwise. Policies the native backend does not
/// implement (Naive, SpatialBlocking) run on the portable backend even where
/// the native one is available; the plan says which one runs.
template <class ExecSpace>
inline constexpr Backend backend_for =
    native_available_v<ExecSpace> ? Backend::native_cuda : Backend::portable;

}  // namespace stencil
