// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/config.hpp>
#include <stencil/detail/backend_trait.hpp>

#include <Kokkos_Core.hpp>

// The one dispatch point of the native backend.
#if defined(KOKKOS_ENABLE_CUDA) && STENCIL_ENABLE_NATIVE_CUDA
#include <native_cuda/native_cuda.hpp>
#endif

namespace stencil {

/// The backend that serves `ExecSpace` in this build: the native CUDA backend
/// for Kokkos::Cuda when the build enables it (STENCIL_ENABLE_NATIVE_CUDA),
/// the portable one otherwise. Policies the native backend does not
/// implement (Naive, SpatialBlocking) run on the portable backend even where
/// the native one is available; the plan says which one runs.
template <class ExecSpace>
inline constexpr Backend backend_for =
    native_available_v<ExecSpace> ? Backend::native_cuda : Backend::portable;

}  // namespace stencil
