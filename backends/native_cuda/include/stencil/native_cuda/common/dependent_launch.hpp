// SPDX-License-Identifier: Apache-2.0
// Programmatic dependent launch (compute capability 9.0): a kernel launched
// with cudaLaunchAttributeProgrammaticStreamSerialization may start its
// blocks before the kernel ahead of it in the stream has finished, once
// every block of that one has called release_dependent_launch() (or
// exited). Its blocks then do what needs nothing of the earlier kernel's
// output and call wait_for_prior_grid() before they read it: the wait
// returns when the earlier grid has completed and its memory operations are
// visible. A kernel launched without the attribute, or whose predecessor
// never releases, behaves as an ordinary launch (the wait returns at once;
// the release is ignored).
//
// Where a step is a single launch of a few waves of blocks, this hides the
// launch and the prologue of step n + 1 behind the last wave of step n.
// Compiled for an older GPU, both are no-ops.
#pragma once

namespace stencil::native_cuda {

/// Lets a kernel launched after this one, with the programmatic stream
/// serialization attribute, start its blocks; call it once per block, from
/// every thread or any.
__device__ __forceinline__ void release_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// Waits until the kernel ahead of this one in the stream has completed
/// and its writes are visible; every thread that reads its output calls it
/// first.
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace stencil::native_cuda
