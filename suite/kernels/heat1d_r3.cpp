// SPDX-License-Identifier: Apache-2.0
// The native kernels of stencil::suite::Heat1D<3>, compiled once for every
// unit that runs it (stencil/suite/kernels.hpp says why).
#include <stencil/suite/kernels.hpp>

namespace stencil::native_cuda {
STENCIL_NATIVE_CUDA_KERNELS_RANK1(template, float, suite::Heat1D<3>)
STENCIL_NATIVE_CUDA_KERNELS_RANK1(template, double, suite::Heat1D<3>)
}  // namespace stencil::native_cuda
