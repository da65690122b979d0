// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/error.hpp>
#include <stencil/grid.hpp>

#include <Kokkos_Core.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace stencil::native_cuda {

/// The largest dynamic shared memory a block can have today (227 KiB on
/// Hopper): what the compile-time choices of tile width and depth assume.
/// The plan checks the actual device's limit.
inline constexpr std::size_t max_shared_per_block = 232448;

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

/// The checks every native policy (`policy` names it) makes before it
/// plans anything: a GPU it can run on, fixed boundaries, and a requested
/// depth of 1 or more, or 0 for the plan's choice.
inline void expect_native_policy_applies(DeviceLimits const& device,
                                         std::string_view policy,
                                         Boundary boundary,
                                         int requested_depth) {
  STENCIL_EXPECT(device.compute_capability >= 70, policy,
                 " needs a GPU of compute capability 7.0 or newer; ",
                 device.name, " is ", device.compute_capability / 10, ".",
                 device.compute_capability % 10);
  STENCIL_EXPECT(boundary == Boundary::fixed, policy,
                 " supports fixed boundaries only; for a periodic grid use "
                 "Naive or SpatialBlocking");
  STENCIL_EXPECT(requested_depth >= 0, policy, ": depth is ", requested_depth,
                 "; use 1 or more, or 0 to let the plan choose");
}

/// Refuses a kernel family of which not even depth 1 fits (`max_depth`
/// is its deepest that does, 0 for none).
inline void expect_some_depth_fits(int max_depth, DeviceLimits const& device,
                                   std::string_view policy, int radius,
                                   std::size_t value_size) {
  STENCIL_EXPECT(
      max_depth >= 1, policy, ": radius ", radius, " with ", value_size,
      "-byte values does not fit in the ", device.shared_per_block_optin,
      " bytes of shared memory per block of ", device.name, " even at depth 1");
}

/// "1-5, 7-9": the depths in 1..deepest for which `fits(depth)` holds,
/// as ranges. A depth can fail alone in the middle (its kernel spills
/// registers while a deeper one, on a narrower block, does not), so an
/// error names all of them, not only the largest.
template <class Fits>
std::string fitting_depths(int deepest, Fits&& fits) {
  std::string text;
  for (int depth = 1; depth <= deepest;) {
    if (!fits(depth)) {
      ++depth;
      continue;
    }
    int last = depth;
    while (last + 1 <= deepest && fits(last + 1)) ++last;
    if (!text.empty()) text += ", ";
    text += std::to_string(depth);
    if (last > depth) text += "-" + std::to_string(last);
    depth = last + 1;
  }
  return text.empty() ? "none" : text;
}

}  // namespace stencil::native_cuda
