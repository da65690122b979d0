// SPDX-License-Identifier: Apache-2.0
// Tiles of blocks without clusters (paper 001, §4.1 and §4.3): the blocks
// of a tile exchange stage values through a buffer in global memory and
// wait for each other at a counter every block of the tile adds to
// (paper 001's "Barrier-A": one thread a block arrives and spins).
//
// Nothing in CUDA promises that the blocks of a tile run at the same time,
// or in the order of their indices. So a block does not take its place
// from blockIdx but from a ticket counter, at its start: the blocks holding
// tickets 0..t have all started, and a block only ever waits for blocks of
// its own tile or of an earlier one. Every tile before the last one started
// is whole and runs to its end, freeing room for the next blocks; as long
// as one tile's blocks fit on the GPU at once (the plan checks), every
// block that waits is waited for by blocks that will come.
//
// The buffers are reused: tile t takes slot t mod slots, and before it
// writes there it waits until each block of the tile that held the slot
// before has said it is done reading.
#pragma once

#include <cstdint>

namespace stencil::native_cuda::ode {

/// The counters of one launch, zeroed before it: the ticket, then for each
/// buffer slot the barrier arrivals and the blocks done with it.
struct TileCounters {
  unsigned* ticket = nullptr;
  unsigned* arrived = nullptr;  ///< [slots]
  unsigned* done = nullptr;     ///< [slots]
  int slots = 1;
};

__device__ __forceinline__ unsigned load_acquire(unsigned const* counter) {
  unsigned value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
               : "=r"(value)
               : "l"(counter)
               : "memory");
  return value;
}

/// Waits, with the whole block, until `counter` reaches `target`; what
/// the blocks that raised it wrote before is then visible to every thread.
__device__ __forceinline__ void wait_until(unsigned const* counter,
                                           unsigned target, bool leader) {
  if (leader) {
    while (load_acquire(counter) < target) __nanosleep(32);
  }
  __syncthreads();
}

/// Adds the block's arrival to `counter`, after everything its threads
/// wrote (and read) before: the block's barrier orders them before the
/// leader's fence, which makes them visible at GPU scope first.
__device__ __forceinline__ void arrive(unsigned* counter, bool leader) {
  __syncthreads();
  if (leader) {
    __threadfence();
    atomicAdd(counter, 1u);
  }
}

/// Loads a value another block wrote in this launch, from L2 (the L1 of
/// this multiprocessor may hold an older copy of the line).
template <class T>
__device__ __forceinline__ T load_from_l2(T const* address) {
  return __ldcg(address);
}

}  // namespace stencil::native_cuda::ode
