// SPDX-License-Identifier: Apache-2.0
// Synchronisation of a block with its neighbours only, through flags in
// global memory (which stay in L2): a block publishes how far it has got,
// and waits until the blocks it reads from have got as far. Paper 004
// (section 4, "semaphores") finds this far cheaper than a barrier over the
// whole grid, since no block waits for blocks it does not read; its time
// per round is the paper's Lambda_sync, which bounds how often a
// register-resident kernel may synchronise (its eq. 7).
#pragma once

#include <stencil/native_cuda/common/device.hpp>
#include <stencil/native_cuda/common/grid_barrier.hpp>

#include <stencil/error.hpp>

#include <Kokkos_Core.hpp>

#include <cuda/atomic>

namespace stencil::native_cuda {

/// One flag per block: the last round the block finished. Rounds count
/// from 1 and only grow, so a flag never needs resetting within a launch,
/// and a reader waits for "at least", never for "equal".
struct NeighbourFlags {
  unsigned* flags = nullptr;  // one per block, zero before the first round

  /// The calling block's writes so far (every thread's, after a block
  /// barrier) become visible to whoever sees `round` in its flag. One
  /// thread calls it.
  __device__ void publish(int block, unsigned round) const {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> flag(flags[block]);
    flag.store(round, cuda::memory_order_release);
  }
  /// Waits until `block` has published `round` or a later one; its writes
  /// before that are then visible to the calling thread (to the whole
  /// block after a block barrier). One thread calls it.
  __device__ void wait_for(int block, unsigned round) const {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> flag(flags[block]);
    while (flag.load(cuda::memory_order_acquire) < round) {
    }
  }
};

namespace detail {

/// `rounds` rounds of a ring of blocks, each waiting for its left and
/// right neighbours in every round: what a 1D kernel synchronising every
/// step pays.
__global__ inline void neighbour_flag_rounds(NeighbourFlags flags, int rounds) {
  int const block = static_cast<int>(blockIdx.x);
  int const blocks = static_cast<int>(gridDim.x);
  int const left = block == 0 ? blocks - 1 : block - 1;
  int const right = block + 1 == blocks ? 0 : block + 1;
  for (int r = 1; r <= rounds; ++r) {
    __syncthreads();
    if (threadIdx.x == 0) {
      flags.publish(block, static_cast<unsigned>(r));
      flags.wait_for(left, static_cast<unsigned>(r));
      flags.wait_for(right, static_cast<unsigned>(r));
    }
    __syncthreads();
  }
}

}  // namespace detail

/// Microseconds one round of neighbour synchronisation takes (publish, wait
/// for both neighbours, a block barrier either side) for one block of
/// `threads` threads per SM in a ring: `rounds` rounds in one launch, all
/// blocks resident (a cooperative launch), after a warm-up launch.
inline double neighbour_flag_microseconds(int threads, int rounds) {
  STENCIL_EXPECT(threads >= 1 && rounds >= 1,
                 "neighbour_flag_microseconds: threads (", threads,
                 ") and rounds (", rounds, ") must be at least 1");
  int const blocks = Kokkos::Cuda{}.cuda_device_prop().multiProcessorCount;
  Kokkos::View<unsigned*, Kokkos::CudaSpace> flags("stencil_neighbour_flags",
                                                   blocks);
  cudaStream_t const stream = Kokkos::Cuda{}.cuda_stream();
  auto launch = [&](int count) {
    // Every launch counts its rounds from 1 again.
    STENCIL_CUDA_CHECK(
        cudaMemsetAsync(flags.data(), 0, blocks * sizeof(unsigned), stream));
    launch_cooperative(&detail::neighbour_flag_rounds, blocks, threads, 0,
                       stream, NeighbourFlags{flags.data()}, count);
  };
  launch(16);
  // The memset is part of the timed work; against thousands of rounds it
  // is noise.
  return 1000.0 * stream_milliseconds(stream, [&] { launch(rounds); }) / rounds;
}

}  // namespace stencil::native_cuda
