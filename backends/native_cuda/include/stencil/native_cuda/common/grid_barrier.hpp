// SPDX-License-Identifier: Apache-2.0
// Device-wide barriers for kernels whose blocks are all resident at once
// (device tiling exchanges halo lines between blocks through L2 and waits
// for them once per streamed plane), the cooperative launch that makes the
// residency a guarantee, and the measurement of what one barrier costs.
#pragma once

#include <stencil/native_cuda/common/cuda_check.hpp>
#include <stencil/native_cuda/common/device.hpp>

#include <stencil/error.hpp>

#include <Kokkos_Core.hpp>

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <cuda/atomic>

#include <cstddef>
#include <string_view>
#include <tuple>

namespace stencil::native_cuda {

enum class BarrierKind {
  /// cooperative_groups::this_grid().sync(), CUDA's own.
  grid_sync,
  /// One arrival counter in global memory whose top bit flips when the
  /// last block arrives (CounterBarrier). One atomic per block and barrier,
  /// then reads that hit L2.
  counter,
};

constexpr std::string_view name(BarrierKind kind) {
  return kind == BarrierKind::grid_sync ? "grid_sync" : "counter";
}

/// The device side of BarrierKind::grid_sync.
struct GridSyncBarrier {
  __device__ void sync() const { cooperative_groups::this_grid().sync(); }
};

/// The device side of BarrierKind::counter, over one word of global memory,
/// `*counter`, whose low 31 bits must be 0 before the first launch (every
/// barrier leaves them so). Each block adds to it once per barrier: the
/// first block 2^31 - (blocks - 1), the others 1. No partial sum reaches
/// 2^31, so the top bit flips exactly when the last block arrives, and every
/// block waits for the flip. No reset: the critical path is one atomic and
/// the poll. Every block of the grid must call sync() the same number of
/// times.
struct CounterBarrier {
  unsigned* counter;
  unsigned blocks;  // of the grid

  __device__ void sync() const {
    // bar.sync makes the block's writes part of what thread 0's fence
    // below releases (fences are cumulative).
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
      constexpr auto device = cuda::thread_scope_device;
      constexpr unsigned top = 0x80000000u;
      bool const first = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
      cuda::atomic_ref<unsigned, device> arrivals(*counter);
      cuda::atomic_thread_fence(cuda::memory_order_release, device);
      unsigned const before = arrivals.fetch_add(
          first ? top - (blocks - 1) : 1u, cuda::memory_order_relaxed);
      // The poll reads the RMW chain every block's release fence precedes.
      while (((arrivals.load(cuda::memory_order_relaxed) ^ before) & top) ==
             0) {
      }
      cuda::atomic_thread_fence(cuda::memory_order_acquire, device);
    }
    __syncthreads();
  }
};

/// Blocks of `kernel` that fit on the device at once with `threads`
/// threads and `shared_bytes` of dynamic shared memory each.
template <class... Args>
int co_resident_blocks(void (*kernel)(Args...), int threads,
                       std::size_t shared_bytes) {
  return resident_blocks_per_sm(kernel, threads, shared_bytes) *
         Kokkos::Cuda{}.cuda_device_prop().multiProcessorCount;
}

/// Launches `kernel` so that all its blocks are resident together, which a
/// device-wide barrier needs. A grid that cannot be is refused before
/// anything runs: launched anyway, the blocks already resident would wait
/// at the first barrier for blocks that never start.
template <class... Params, class... Args>
void launch_cooperative(void (*kernel)(Params...), int blocks, int threads,
                        std::size_t shared_bytes, cudaStream_t stream,
                        Args const&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args),
                "launch_cooperative: one argument per kernel parameter");
  cudaDeviceProp const& prop = Kokkos::Cuda{}.cuda_device_prop();
  STENCIL_EXPECT_SUPPORTED(
      prop.cooperativeLaunch != 0, prop.name,
      " does not support cooperative launches, which device-wide "
      "barriers need");
  int const fit = co_resident_blocks(kernel, threads, shared_bytes);
  STENCIL_EXPECT_SUPPORTED(
      blocks >= 1 && blocks <= fit, "a grid of ", blocks, " blocks of ",
      threads, " threads with ", shared_bytes,
      " bytes of shared memory each cannot be resident at once "
      "on ",
      prop.name, ": at most ", fit, " fit (", prop.multiProcessorCount,
      " SMs); a device-wide barrier in it would never return. Use "
      "1 to ",
      fit, " blocks");
  // The kernel's parameters, converted, and pointers to them.
  auto const converted = std::tuple<Params...>(args...);
  std::apply(
      [&](auto const&... values) {
        void* pointers[] = {
            const_cast<void*>(static_cast<void const*>(&values))...};
        STENCIL_CUDA_CHECK(cudaLaunchCooperativeKernel(
            reinterpret_cast<void const*>(kernel), dim3(blocks), dim3(threads),
            pointers, shared_bytes, stream));
      },
      converted);
}

/// Milliseconds the work `enqueue()` puts on `stream` takes, between two
/// events recorded around it.
template <class Enqueue>
float stream_milliseconds(cudaStream_t stream, Enqueue&& enqueue) {
  cudaEvent_t start, stop;
  STENCIL_CUDA_CHECK(cudaEventCreate(&start));
  STENCIL_CUDA_CHECK(cudaEventCreate(&stop));
  STENCIL_CUDA_CHECK(cudaEventRecord(start, stream));
  enqueue();
  STENCIL_CUDA_CHECK(cudaEventRecord(stop, stream));
  STENCIL_CUDA_CHECK(cudaEventSynchronize(stop));
  float milliseconds = 0;
  STENCIL_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start, stop));
  STENCIL_CUDA_CHECK(cudaEventDestroy(start));
  STENCIL_CUDA_CHECK(cudaEventDestroy(stop));
  return milliseconds;
}

namespace detail {
template <class Barrier>
__global__ void barrier_rounds(Barrier barrier, int rounds) {
  for (int i = 0; i < rounds; ++i) barrier.sync();
}
}  // namespace detail

/// Microseconds one device-wide barrier of `kind` takes, for a grid of
/// `blocks_per_sm` blocks of `threads` threads on every SM: `rounds`
/// barriers back to back in one cooperative launch, after a warm-up launch.
inline double barrier_microseconds(BarrierKind kind, int blocks_per_sm,
                                   int threads, int rounds) {
  STENCIL_EXPECT(blocks_per_sm >= 1 && threads >= 1 && rounds >= 1,
                 "barrier_microseconds: blocks per SM (", blocks_per_sm,
                 "), threads (", threads, ") and rounds (", rounds,
                 ") must all be at least 1");
  int const blocks =
      blocks_per_sm * Kokkos::Cuda{}.cuda_device_prop().multiProcessorCount;
  Kokkos::View<unsigned, Kokkos::CudaSpace> counter("stencil_barrier_counter");
  cudaStream_t const stream = Kokkos::Cuda{}.cuda_stream();
  auto launch = [&](int count) {
    if (kind == BarrierKind::grid_sync) {
      launch_cooperative(&detail::barrier_rounds<GridSyncBarrier>, blocks,
                         threads, 0, stream, GridSyncBarrier{}, count);
    } else {
      launch_cooperative(
          &detail::barrier_rounds<CounterBarrier>, blocks, threads, 0, stream,
          CounterBarrier{counter.data(), static_cast<unsigned>(blocks)}, count);
    }
  };
  launch(16);
  return 1000.0 * stream_milliseconds(stream, [&] { launch(rounds); }) / rounds;
}

}  // namespace stencil::native_cuda
