// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <native_cuda/common/cuda_check.hpp>

#include <cuda_runtime.h>

#include <string>

namespace stencil::native_cuda {

/// What the native kernels size themselves by, read once per call from the
/// current device.
struct DeviceLimits {
  int device = 0;
  std::string name;
  int multiprocessors = 0;
  int compute_capability = 0;  // major * 10 + minor
  std::size_t shared_per_block_optin = 0;
};

inline DeviceLimits current_device_limits() {
  DeviceLimits d;
  STENCIL_CUDA_CHECK(cudaGetDevice(&d.device));
  cudaDeviceProp prop{};
  STENCIL_CUDA_CHECK(cudaGetDeviceProperties(&prop, d.device));
  d.name = prop.name;
  d.multiprocessors = prop.multiProcessorCount;
  d.compute_capability = prop.major * 10 + prop.minor;
  d.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  return d;
}

}  // namespace stencil::native_cuda
