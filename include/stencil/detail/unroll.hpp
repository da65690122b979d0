// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Kokkos_Macros.hpp>

/// `#pragma unroll` where the compiler takes it (Kokkos says which), nothing
/// elsewhere. The register-window kernels need their loops unrolled so that
/// window indices are compile-time constants.
#ifdef KOKKOS_ENABLE_PRAGMA_UNROLL
#define STENCIL_UNROLL _Pragma("unroll")
#else
#define STENCIL_UNROLL
#endif
