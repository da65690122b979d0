// SPDX-License-Identifier: Apache-2.0
// The native kernels of stencil::suite::J3d27pt, compiled once for every
// unit that runs it (stencil/suite/kernels.hpp says why).
#include <stencil/suite/kernels.hpp>

namespace stencil::native_cuda {
STENCIL_NATIVE_CUDA_KERNELS_RANK3(template, float, suite::J3d27pt)
STENCIL_NATIVE_CUDA_KERNELS_RANK3(template, double, suite::J3d27pt)
}  // namespace stencil::native_cuda
