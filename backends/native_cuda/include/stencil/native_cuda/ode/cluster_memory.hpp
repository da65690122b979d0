// SPDX-License-Identifier: Apache-2.0
// Distributed shared memory for the fused Runge-Kutta kernel: a cluster
// barrier that orders shared memory alone, and loads from another block's
// shared memory through 32-bit cluster addresses.
//
// cooperative_groups' cluster.sync() releases at cluster scope, which
// Hopper implements as a fence at GPU scope (MEMBAR.ALL.GPU): each stage
// would wait for every memory operation of the thread to be visible to the
// whole device, although the blocks only exchange shared memory. A release
// fence restricted to the block's shared memory (PTX ISA 8.6,
// fence.release.sync_restrict::shared::cta.cluster) before a relaxed
// arrive orders exactly the stores the neighbours read, at block scope
// (MEMBAR.ALL.CTA). The wait keeps its acquire.
//
// Clusters exist from compute capability 9.0; compiled for an older GPU,
// these trap (the plan never launches a cluster kernel there).
#pragma once

#include <cstdint>

namespace stencil::native_cuda::ode {

// The restricted fence needs PTX ISA 8.6 (CUDA 12.8); older toolkits get
// the release arrive, as cluster.sync() does.
#if !defined(STENCIL_CLUSTER_SHARED_FENCE)
#if defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ > 12 ||    \
     (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8))
#define STENCIL_CLUSTER_SHARED_FENCE 1
#else
#define STENCIL_CLUSTER_SHARED_FENCE 0
#endif
#endif

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define STENCIL_HAS_CLUSTERS 1
#else
#define STENCIL_HAS_CLUSTERS 0
#endif

/// The block's position in its cluster, along x and y.
__device__ __forceinline__ dim3 cluster_block_index() {
#if STENCIL_HAS_CLUSTERS
  unsigned x, y;
  asm("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(x));
  asm("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(y));
  return dim3(x, y, 0);
#else
  __trap();
  return dim3(0, 0, 0);
#endif
}

/// Every block of the cluster has arrived, and the shared-memory stores
/// each made before arriving are visible to the others' loads after it.
/// Loads from another block's shared memory made before arriving have
/// completed (their values were used), so a block may also overwrite or
/// leave what the others read before this barrier.
__device__ __forceinline__ void cluster_shared_barrier() {
#if !STENCIL_HAS_CLUSTERS
  __trap();
#elif STENCIL_CLUSTER_SHARED_FENCE
  asm volatile(
      "fence.release.sync_restrict::shared::cta.cluster;\n\t"
      "barrier.cluster.arrive.relaxed.aligned;\n\t"
      "barrier.cluster.wait.aligned;" ::
          : "memory");
#else
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n\t"
      "barrier.cluster.wait.acquire.aligned;" ::
          : "memory");
#endif
}

/// The cluster address of `local` (this block's shared memory) in the
/// shared memory of block `rank` of the cluster.
__device__ __forceinline__ std::uint32_t cluster_address(void const* local,
                                                         unsigned rank) {
  auto const own = static_cast<std::uint32_t>(__cvta_generic_to_shared(local));
  std::uint32_t remote = own;
#if STENCIL_HAS_CLUSTERS
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(own), "r"(rank));
#else
  (void)rank;
  __trap();
#endif
  return remote;
}

template <class T>
__device__ __forceinline__ T load_cluster(std::uint32_t address) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8,
                "stencil: the fused kernel exchanges 4- or 8-byte values");
#if !STENCIL_HAS_CLUSTERS
  (void)address;
  __trap();
  return T{};
#else
  if constexpr (sizeof(T) == 8) {
    std::uint64_t bits;
    asm volatile("ld.shared::cluster.b64 %0, [%1];"
                 : "=l"(bits)
                 : "r"(address)
                 : "memory");
    T value;
    __builtin_memcpy(&value, &bits, sizeof(T));
    return value;
  } else {
    std::uint32_t bits;
    asm volatile("ld.shared::cluster.b32 %0, [%1];"
                 : "=r"(bits)
                 : "r"(address)
                 : "memory");
    T value;
    __builtin_memcpy(&value, &bits, sizeof(T));
    return value;
  }
#endif
}

}  // namespace stencil::native_cuda::ode
