// SPDX-License-Identifier: Apache-2.0
// The one place a native backend is included: the frontend includes this
// header, and a native backend specialises the declarations below.
#pragma once

#include <stencil/backend.hpp>
#include <stencil/config.hpp>

#include <Kokkos_Core.hpp>

namespace stencil::detail {
/// The native backend's entry points for `ExecSpace` (plan and run of the
/// native policies). Only declared here; a native backend specialises it.
template <class ExecSpace>
struct Native;
}  // namespace stencil::detail

#if defined(KOKKOS_ENABLE_CUDA) && STENCIL_ENABLE_NATIVE_CUDA
#include <stencil/native_cuda/native_cuda.hpp>
#endif
