// SPDX-License-Identifier: Apache-2.0
// The native CUDA backend's single entry point, included by
// stencil/backend.hpp only when Kokkos has CUDA and the build enables
// STENCIL_ENABLE_NATIVE_CUDA. It declares the backend available for
// Kokkos::Cuda; the kernels (temporal blocking, device tiling, prefetch)
// land here one mechanism per folder. Until they do, every policy runs on
// the portable backend and the plan says so.
#pragma once

#include <stencil/backend.hpp>

#include <Kokkos_Core.hpp>

namespace stencil {

template <>
inline constexpr bool native_available_v<Kokkos::Cuda> = true;

}  // namespace stencil
