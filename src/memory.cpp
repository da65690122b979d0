// SPDX-License-Identifier: Apache-2.0
#include <stencil/detail/memory.hpp>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace stencil::detail {

namespace {

/// The number in a one-number file (cgroup v2's memory.max), or nothing
/// for "max" or an unreadable file.
bool read_number(char const* path, std::size_t& value) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return false;
  std::istringstream parse(word);
  return static_cast<bool>(parse >> value);
}

std::size_t mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::size_t kib = 0;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

}  // namespace

std::size_t available_host_bytes() {
  std::size_t available = mem_available();
  std::size_t limit = 0, used = 0;
  if (read_number("/sys/fs/cgroup/memory.max", limit) &&
      read_number("/sys/fs/cgroup/memory.current", used)) {
    std::size_t const left = limit > used ? limit - used : 0;
    available = available == 0 ? left : std::min(available, left);
  }
  return available;
}

std::size_t available_cuda_bytes() {
#if defined(KOKKOS_ENABLE_CUDA)
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return free_bytes;
#else
  return 0;
#endif
}

}  // namespace stencil::detail
