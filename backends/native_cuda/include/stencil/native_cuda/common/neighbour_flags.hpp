// SPDX-License-Identifier: Apache-2.0
// Synchronisation of a block with its neighbours only, through flags in
// global memory (which stay in L2): a block publishes how far it has got,
// and waits until the blocks it reads from have got as far. Paper 004
// (section 4, "semaphores") finds this far cheaper than a barrier over the
// whole grid, since no block waits for blocks it does not read; its time
// per round is the paper's Lambda_sync, which bounds how often a
// register-resident kernel may synchronise (its eq. 7); the calibration
// measures it (src/calibration.cpp).
#pragma once

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

}  // namespace stencil::native_cuda
