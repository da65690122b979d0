// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Kokkos_Core.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace stencil::native_cuda {

/// What the native kernels size themselves by, for the device Kokkos::Cuda
/// runs on. Kokkos caches these properties at initialisation, so a plan
/// costs no cudaGetDeviceProperties call (tens of microseconds or more).
struct DeviceLimits {
  std::string name;
  int multiprocessors = 0;
  int compute_capability = 0;  // major * 10 + minor
  std::size_t shared_per_block_optin = 0;
};

inline DeviceLimits current_device_limits() {
  cudaDeviceProp const& prop = Kokkos::Cuda{}.cuda_device_prop();
  DeviceLimits d;
  d.name = prop.name;
  d.multiprocessors = prop.multiProcessorCount;
  d.compute_capability = prop.major * 10 + prop.minor;
  d.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  return d;
}

}  // namespace stencil::native_cuda
