// SPDX-License-Identifier: Apache-2.0
// The suite's native kernels, compiled once into stencil_suite (one unit per
// stencil, suite/kernels/) and declared `extern template` here for every
// test and benchmark unit that runs them, so that those units compile none.
#pragma once

#include <stencil/stencil.hpp>
#include <stencil/suite/stencils.hpp>

#if defined(KOKKOS_ENABLE_CUDA) && STENCIL_ENABLE_NATIVE_CUDA
#include <stencil/native_cuda/instantiation.hpp>

#define STENCIL_IMPL_SUITE_EXTERN_KERNELS(Rank, Op)                  \
  STENCIL_NATIVE_CUDA_KERNELS_RANK##Rank(extern template, float, Op) \
      STENCIL_NATIVE_CUDA_KERNELS_RANK##Rank(extern template, double, Op)

namespace stencil::native_cuda {
// clang-format off
STENCIL_IMPL_SUITE_EXTERN_KERNELS(1, suite::Heat1D<1>)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(1, suite::Heat1D<2>)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(1, suite::Heat1D<3>)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(2, suite::J2d5pt)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(2, suite::J2d5ptPrescaled)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(2, suite::J2d9pt)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(2, suite::J2d9ptPrescaled)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(2, suite::J2d9ptGol)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(2, suite::J2d9ptGolPrescaled)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(2, suite::J2d25pt)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(2, suite::J2d25ptPrescaled)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(3, suite::J3d7pt)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(3, suite::J3d13pt)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(3, suite::J3d17pt)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(3, suite::J3d17ptPrescaled)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(3, suite::J3d27pt)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(3, suite::J3d27ptPrescaled)
STENCIL_IMPL_SUITE_EXTERN_KERNELS(3, suite::Poisson19pt)
// clang-format on
}  // namespace stencil::native_cuda

#undef STENCIL_IMPL_SUITE_EXTERN_KERNELS
#endif
