// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/native_cuda/common/cuda_check.hpp>
#include <stencil/native_cuda/common/prefetch.hpp>

#include <stencil/boundary.hpp>
#include <stencil/config.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>

#include <Kokkos_Core.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace stencil::native_cuda {

/// The largest dynamic shared memory a block can have today (227 KiB on
/// Hopper): what the compile-time choices of tile width and depth assume.
/// The plan checks the actual device's limit.
inline constexpr std::size_t max_shared_per_block = 232448;

/// The deepest temporal depth compiled for any kernel (config.hpp's
/// STENCIL_NATIVE_MAX_DEPTH, 0 for no limit below 12). Each depth is a
/// kernel of its own so that its level loops unroll.
inline constexpr int max_depth_compiled = [] {
  constexpr int limit = 12;
  return STENCIL_NATIVE_MAX_DEPTH > 0 && STENCIL_NATIVE_MAX_DEPTH < limit
             ? STENCIL_NATIVE_MAX_DEPTH
             : limit;
}();

/// What the native kernels size themselves by, for the device Kokkos::Cuda
/// runs on. Kokkos caches these properties at initialisation, so a plan
/// costs no cudaGetDeviceProperties call (tens of microseconds or more).
struct DeviceLimits {
  std::string name;
  int multiprocessors = 0;
  int compute_capability = 0;  // major * 10 + minor
  std::size_t shared_per_block_optin = 0;
  /// L2 that can be set aside for persisting accesses, and the largest
  /// access policy window (0 where the device has none: below compute
  /// capability 8.0).
  std::size_t persisting_l2_max = 0;
  std::size_t access_policy_window_max = 0;
};

/// The device and its compute capability for a refusal: "<name> is
/// <major>.<minor>".
inline std::string capability_of(DeviceLimits const& device) {
  return device.name + " is " + std::to_string(device.compute_capability / 10) +
         "." + std::to_string(device.compute_capability % 10);
}

inline DeviceLimits current_device_limits() {
  cudaDeviceProp const& prop = Kokkos::Cuda{}.cuda_device_prop();
  DeviceLimits d;
  d.name = prop.name;
  d.multiprocessors = prop.multiProcessorCount;
  d.compute_capability = prop.major * 10 + prop.minor;
  d.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  d.persisting_l2_max = static_cast<std::size_t>(prop.persistingL2CacheMaxSize);
  d.access_policy_window_max =
      static_cast<std::size_t>(prop.accessPolicyMaxWindowSize);
  return d;
}

/// Opts `kernel` into `shared_bytes` of dynamic shared memory per block
/// (above the default 48 KiB); cheap, so done before launches.
template <class... Args>
void allow_dynamic_shared(void (*kernel)(Args...), std::size_t shared_bytes) {
  STENCIL_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(shared_bytes)));
}

/// Whether `kernel` can have `shared_bytes` of dynamic shared memory per
/// block on `device`: within the device's opt-in limit and accepted by CUDA
/// for this kernel. Every native family's plan checks its configurations
/// with this, so that a refusal becomes "does not fit" (with the largest
/// that does) instead of a CUDA error when the plan prepares the kernel.
/// CUDA is asked, not only the limit compared: once, on an H200, the staged
/// radius-2 box kernel at depth 7 (191104 bytes, below the 232448 allowed)
/// was refused with cudaErrorInvalidValue (a second H200 accepted it; the
/// cause is not known). The refusal is not sticky; it is cleared here.
template <class... Args>
bool shared_memory_fits(void (*kernel)(Args...), std::size_t shared_bytes,
                        DeviceLimits const& device) {
  if (shared_bytes > device.shared_per_block_optin) return false;
  cudaError_t const status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(shared_bytes));
  if (status == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

/// Blocks of `kernel` that fit on one multiprocessor at once with
/// `threads` threads and `shared_bytes` of dynamic shared memory each.
template <class... Args>
int resident_blocks_per_sm(void (*kernel)(Args...), int threads,
                           std::size_t shared_bytes) {
  int per_sm = 0;
  STENCIL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, kernel, threads, shared_bytes));
  return per_sm;
}

/// A GPU the native kernels run on (`policy` names the one asking).
inline void expect_native_gpu(DeviceLimits const& device,
                              std::string_view policy) {
  STENCIL_EXPECT_SUPPORTED(device.compute_capability >= 70, policy,
                           " needs a GPU of compute capability 7.0 or newer; ",
                           capability_of(device));
}

/// The checks every temporal native policy (`policy` names it) makes
/// before it plans anything: a GPU it can run on, every side of a rank-
/// `rank` grid fixed, and a requested depth of 1 or more, or 0 for the
/// plan's choice. A temporal kernel advances several steps per launch, and
/// the halo is refreshed only between launches, so any other boundary
/// would go stale inside one.
inline void expect_native_policy_applies(
    DeviceLimits const& device, std::string_view policy,
    stencil::detail::BoundarySides const& sides, int rank,
    int requested_depth) {
  expect_native_gpu(device, policy);
  for (int a = 3 - rank; a < 3; ++a) {
    for (int s = 0; s < 2; ++s) {
      STENCIL_EXPECT_SUPPORTED(
          sides[a][s] == Boundary::fixed, policy,
          " supports fixed boundaries only (it advances several steps per "
          "launch, and a halo is refreshed only between launches); the ",
          s == 0 ? "low" : "high", " side of axis ", a - (3 - rank), " (",
          "zyx"[a], ") is ", stencil::detail::boundary_name(sides[a][s]),
          " (boundary: ", stencil::detail::sides_text(sides, rank),
          "); use Naive or SpatialBlocking",
          rank >= 2 ? " (or StreamingSweep, one launch per step)" : "");
    }
  }
  STENCIL_EXPECT(requested_depth >= 0, policy, ": depth is ", requested_depth,
                 "; use 1 or more, or 0 to let the plan choose");
}

/// The rank-3 native kernels index a padded xy plane (`ny` x `nx` cells
/// and a `halo` on each side) with 32-bit offsets.
inline void expect_plane_indexable(std::string_view policy, int ny, int nx,
                                   int halo) {
  long long const cells = (static_cast<long long>(ny) + 2 * halo) *
                          (static_cast<long long>(nx) + 2 * halo);
  STENCIL_EXPECT_SUPPORTED(
      cells <= std::numeric_limits<int>::max(), policy,
      ": an xy plane of the grid with its halo has ", cells,
      " cells; the native rank-3 kernels index a plane with 32-bit "
      "offsets, so at most ",
      std::numeric_limits<int>::max(),
      " (use Naive or SpatialBlocking for larger planes)");
}

/// A requested number of prefetch stages (`policy` names the one asking)
/// that a native kernel can run on `device`: -1 (the plan's choice), 0
/// (plain loads) or up to `max_stages` stages of cp.async, which needs
/// compute capability 8.0 or newer; below it, asking for prefetch is an
/// error, not a plain-load run that says otherwise.
inline void expect_prefetch_runs(DeviceLimits const& device,
                                 std::string_view policy, int requested,
                                 int max_stages = max_prefetch_stages) {
  STENCIL_EXPECT(requested >= -1 && requested <= max_stages, policy,
                 ": prefetch is ", requested, "; use 0 (plain loads) to ",
                 max_stages,
                 " stages of asynchronous copies, or -1 to let the plan "
                 "choose");
  STENCIL_EXPECT_SUPPORTED(
      requested <= 0 || device.compute_capability >= 80, policy, ": prefetch ",
      requested,
      " needs asynchronous copies (cp.async, compute capability "
      "8.0 or newer); ",
      capability_of(device), "; use prefetch 0");
}

/// The prefetch a plan runs: the requested stages once checked
/// (expect_prefetch_runs), or for -1 the policy's `preferred` stages where
/// the device has cp.async and plain loads where it has not.
inline int resolve_prefetch(DeviceLimits const& device, std::string_view policy,
                            int requested, int preferred,
                            int max_stages = max_prefetch_stages) {
  expect_prefetch_runs(device, policy, requested, max_stages);
  if (requested >= 0) return requested;
  return device.compute_capability >= 80 ? preferred : 0;
}

/// Refuses a kernel family of which not even depth 1 fits (`max_depth`
/// is its deepest that does, 0 for none).
inline void expect_some_depth_fits(int max_depth, DeviceLimits const& device,
                                   std::string_view policy, int radius,
                                   std::size_t value_size) {
  STENCIL_EXPECT_SUPPORTED(
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
