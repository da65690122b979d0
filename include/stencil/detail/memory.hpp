// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

namespace stencil::detail {

/// Bytes the host can still give this process: the smaller of the kernel's
/// MemAvailable and what the process's cgroup (a batch job's limit) has
/// left. 0 where neither can be read.
std::size_t available_host_bytes();

/// Bytes free on the current CUDA device (cudaMemGetInfo); 0 in a build
/// without CUDA.
std::size_t available_cuda_bytes();

/// Bytes free in the memory behind `MemorySpace`, 0 where it cannot tell
/// (the allocation is then tried, and a failure still reported).
template <class MemorySpace>
std::size_t available_bytes() {
  if constexpr (std::is_same_v<MemorySpace, Kokkos::HostSpace>) {
    return available_host_bytes();
#if defined(KOKKOS_ENABLE_CUDA)
  } else if constexpr (std::is_same_v<MemorySpace, Kokkos::CudaSpace> ||
                       std::is_same_v<MemorySpace, Kokkos::CudaUVMSpace>) {
    return available_cuda_bytes();
  } else if constexpr (std::is_same_v<MemorySpace,
                                      Kokkos::CudaHostPinnedSpace>) {
    return available_host_bytes();
#endif
  } else {
    return 0;
  }
}

}  // namespace stencil::detail
