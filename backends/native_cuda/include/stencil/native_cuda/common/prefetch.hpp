// SPDX-License-Identifier: Apache-2.0
// Asynchronous copies from global into shared memory, the native kernels'
// one prefetch mechanism. A kernel starts the copies of a line or plane,
// closes them as one batch (`commit`), and `Stages` batches later waits for
// it (`wait`): the loads of the next `Stages` lines are in flight while the
// current one is computed, without holding them in registers.
//
// On compute capability 8.0 and newer the copies are `cp.async` (through
// the `__pipeline_*` primitives of cuda_pipeline.h), which write shared
// memory without passing through registers. Older GPUs have no such
// instruction: there a copy is a plain load and store, complete when
// `copy` returns, so the data is always there when `wait` returns; only
// the overlap is lost. `Stages == 0` asks for plain copies on every GPU
// (the measured baseline: prefetch off).
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <type_traits>

namespace stencil::native_cuda {

/// The deepest prefetch a native kernel is compiled for (batches in
/// flight behind the one being waited for).
inline constexpr int max_prefetch_stages = 4;

template <int Stages>
struct AsyncCopy {
  static_assert(Stages >= 0 && Stages <= max_prefetch_stages,
                "prefetch stages: 0 (plain copies) to max_prefetch_stages");
  static constexpr int stages = Stages;

  /// Starts copying `*global` to `*shared` (T of 4, 8 or 16 bytes). With
  /// Stages == 0, or below compute capability 8.0, the copy is complete on
  /// return.
  template <class T>
  __device__ static void copy(T* shared, T const* global) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16,
                  "cp.async copies 4, 8 or 16 bytes");
    if constexpr (Stages == 0) {
      *shared = *global;
    } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
      __pipeline_memcpy_async(shared, global, sizeof(T));
#else
      *shared = *global;
#endif
    }
  }

  /// Closes the batch of copies this thread started since the last commit.
  /// Every thread commits the same number of batches (an empty one where
  /// it has nothing to copy), so that `wait` means the same batch for all.
  __device__ static void commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (Stages > 0) __pipeline_commit();
#endif
  }

  /// Waits until this thread's copies of every batch but the `Stages` most
  /// recent have landed. Other threads' copies are visible after a
  /// __syncthreads() that follows every thread's wait.
  __device__ static void wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (Stages > 0) __pipeline_wait_prior(Stages);
#endif
  }
};

/// The same copies with the number of stages known only at run time: for
/// the temporal-blocking and device-tiling kernels, which compile one
/// kernel per depth already and would multiply them by the stages.
/// `stages == 0` is not for this type: those kernels keep their plain
/// loads (into registers, an iteration ahead) for it.
struct RuntimeAsyncCopy {
  int stages;  // 1..max_prefetch_stages

  template <class T>
  __device__ static void copy(T* shared, T const* global) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16,
                  "cp.async copies 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    __pipeline_memcpy_async(shared, global, sizeof(T));
#else
    *shared = *global;
#endif
  }
  __device__ static void commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    __pipeline_commit();
#endif
  }
  /// As AsyncCopy::wait: all but the `stages` most recent batches landed.
  /// The count is an immediate of the instruction, hence the switch (a
  /// uniform branch).
  __device__ void wait() const { wait_all_but(stages); }
  /// All but the `n` most recent batches landed (0: all).
  __device__ static void wait_all_but(int n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    static_assert(max_prefetch_stages == 4, "one case per number of stages");
    switch (n) {
      case 0:
        __pipeline_wait_prior(0);
        break;
      case 1:
        __pipeline_wait_prior(1);
        break;
      case 2:
        __pipeline_wait_prior(2);
        break;
      case 3:
        __pipeline_wait_prior(3);
        break;
      default:
        __pipeline_wait_prior(4);
        break;
    }
#else
    (void)n;
#endif
  }
};

/// f(std::integral_constant<int, stages>) for a run-time number of stages
/// in 0..max_prefetch_stages.
template <class F>
decltype(auto) dispatch_prefetch(int stages, F&& f) {
  static_assert(max_prefetch_stages == 4, "one case per number of stages");
  switch (stages) {
    case 0:
      return f(std::integral_constant<int, 0>{});
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    default:
      return f(std::integral_constant<int, 4>{});
  }
}

}  // namespace stencil::native_cuda
