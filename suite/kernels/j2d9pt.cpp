// SPDX-License-Identifier: Apache-2.0
// The native kernels of stencil::suite::J2d9pt, compiled once for every
// unit that runs it (stencil/suite/kernels.hpp says why).
#include <stencil/suite/kernels.hpp>

namespace stencil::native_cuda {
STENCIL_NATIVE_CUDA_KERNELS_RANK2(template, float, suite::J2d9pt)
STENCIL_NATIVE_CUDA_KERNELS_RANK2(template, double, suite::J2d9pt)
}  // namespace stencil::native_cuda
