// SPDX-License-Identifier: Apache-2.0
// Explicit instantiation of one functor's native kernels. A translation unit
// that runs a functor on Kokkos::Cuda compiles every kernel that could run
// it (every depth, plain and staged). A project that runs the same functors
// from many units (the benchmark suite's stencils, in the tests and
// perf_tests) declares them `extern template` where they are used and
// instantiates them once, in a unit of their own, with these lists
// (suite/include/stencil/suite/kernels.hpp does this for the suite).
#pragma once

#include <stencil/native_cuda/device_tiling/launch.hpp>
#include <stencil/native_cuda/streaming_sweep/launch.hpp>
#include <stencil/native_cuda/temporal_blocking/launch.hpp>

#include <stencil/policy.hpp>

/// The members that name the kernels of one (value type T, functor Op) of
/// rank 1, 2 or 3, for use inside namespace stencil::native_cuda; `Which` is
/// `extern template` to declare them and `template` to instantiate them.
/// Rank 3 covers both depth caps the native backend plans with: every
/// compiled depth, and Auto's.
#define STENCIL_NATIVE_CUDA_KERNELS_RANK1(Which, T, Op) \
  Which temporal_blocking::Kernel<T, Op>::Function      \
  temporal_blocking::Kernel<T, Op>::function(int, int);

#define STENCIL_NATIVE_CUDA_KERNELS_RANK2(Which, T, Op)       \
  STENCIL_NATIVE_CUDA_KERNELS_RANK1(Which, T, Op)             \
  Which temporal_blocking::Kernel<T, Op, true>::Function      \
  temporal_blocking::Kernel<T, Op, true>::function(int, int); \
  Which streaming_sweep::Kernel<T, Op>::Function              \
  streaming_sweep::Kernel<T, Op>::function(int);

#define STENCIL_IMPL_NATIVE_CUDA_TILING_KERNELS(Which, T, Op, X, Cap)        \
  Which device_tiling::Kernel<T, Op, device_tiling::X<T>, Cap>::Function     \
  device_tiling::Kernel<T, Op, device_tiling::X<T>, Cap>::function(int, int, \
                                                                   bool);

#define STENCIL_NATIVE_CUDA_KERNELS_RANK3(Which, T, Op)                       \
  STENCIL_IMPL_NATIVE_CUDA_TILING_KERNELS(Which, T, Op, Exchange,             \
                                          device_tiling::all_compiled_depths) \
  STENCIL_IMPL_NATIVE_CUDA_TILING_KERNELS(                                    \
      Which, T, Op, Exchange, stencil::detail::auto_device_tiling_depths)     \
  STENCIL_IMPL_NATIVE_CUDA_TILING_KERNELS(Which, T, Op, NoExchange,           \
                                          device_tiling::all_compiled_depths) \
  STENCIL_IMPL_NATIVE_CUDA_TILING_KERNELS(                                    \
      Which, T, Op, NoExchange, stencil::detail::auto_sm_tiling_depths)       \
  Which streaming_sweep::Kernel<T, Op>::Function                              \
  streaming_sweep::Kernel<T, Op>::function(int);                              \
  Which streaming_sweep::Kernel<T, Op>::DirectFunction                        \
  streaming_sweep::Kernel<T, Op>::direct_function(int);
