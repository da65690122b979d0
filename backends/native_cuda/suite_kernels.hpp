// SPDX-License-Identifier: Apache-2.0
// Explicit instantiation of the native kernels of the benchmark suite's
// stencils. A translation unit that runs a suite stencil on Kokkos::Cuda
// would otherwise compile every kernel that could run it (every depth, plain
// and staged), and each test and benchmark translation unit did so again:
// the sm_90 build of f14d104 compiled 3021 native kernels, 1174 different
// ones. With these declarations the kernels of each (stencil,
// value type) are compiled once, into the library, by a translation unit
// that CMake generates from suite_kernels.cpp.in for each entry of
// STENCIL_NATIVE_CUDA_SUITE below. Stencils outside the list (a user's own)
// are instantiated where they are used, as before.
#pragma once

#include <native_cuda/device_tiling/launch.hpp>
#include <native_cuda/streaming_sweep/launch.hpp>
#include <native_cuda/temporal_blocking/launch.hpp>

#include <stencil/policy.hpp>
#include <stencil/suite.hpp>

/// The suite's stencils with their rank, as F(rank, name in stencil::suite).
/// CMake reads this list (one entry per line) to generate the translation
/// units that instantiate them.
// clang-format off
#define STENCIL_NATIVE_CUDA_SUITE(F) \
  F(1, Heat1D<1>)                    \
  F(1, Heat1D<2>)                    \
  F(1, Heat1D<3>)                    \
  F(2, J2d5pt)                       \
  F(2, J2d5ptPrescaled)              \
  F(2, J2d9pt)                       \
  F(2, J2d9ptPrescaled)              \
  F(2, J2d9ptGol)                    \
  F(2, J2d9ptGolPrescaled)           \
  F(2, J2d25pt)                      \
  F(2, J2d25ptPrescaled)             \
  F(3, J3d7pt)                       \
  F(3, J3d13pt)                      \
  F(3, J3d17pt)                      \
  F(3, J3d17ptPrescaled)             \
  F(3, J3d27pt)                      \
  F(3, J3d27ptPrescaled)             \
  F(3, Poisson19pt)
// clang-format on

/// The members that name the kernels of one (value type T, suite stencil
/// Op) of rank 1, 2 or 3, for use inside namespace stencil::native_cuda;
/// `Which` is `extern template` to declare them and `template` to
/// instantiate them. Rank 3 covers both depth caps the native backend plans
/// with: every compiled depth, and Auto's.
#define STENCIL_NATIVE_CUDA_KERNELS_RANK1(Which, T, Op) \
  Which temporal_blocking::Kernel<T, Op>::Function      \
  temporal_blocking::Kernel<T, Op>::function(int, int);

#define STENCIL_NATIVE_CUDA_KERNELS_RANK2(Which, T, Op) \
  STENCIL_NATIVE_CUDA_KERNELS_RANK1(Which, T, Op)       \
  Which streaming_sweep::Kernel<T, Op>::Function        \
  streaming_sweep::Kernel<T, Op>::function(int);

#define STENCIL_NATIVE_CUDA_TILING_KERNELS(Which, T, Op, X, Cap)             \
  Which device_tiling::Kernel<T, Op, device_tiling::X<T>, Cap>::Function     \
  device_tiling::Kernel<T, Op, device_tiling::X<T>, Cap>::function(int, int, \
                                                                   bool);

#define STENCIL_NATIVE_CUDA_KERNELS_RANK3(Which, T, Op)                      \
  STENCIL_NATIVE_CUDA_TILING_KERNELS(Which, T, Op, Exchange,                 \
                                     device_tiling::all_compiled_depths)     \
  STENCIL_NATIVE_CUDA_TILING_KERNELS(                                        \
      Which, T, Op, Exchange, stencil::detail::auto_device_tiling_depths)    \
  STENCIL_NATIVE_CUDA_TILING_KERNELS(Which, T, Op, NoExchange,               \
                                     device_tiling::all_compiled_depths)     \
  STENCIL_NATIVE_CUDA_TILING_KERNELS(Which, T, Op, NoExchange,               \
                                     stencil::detail::auto_sm_tiling_depths) \
  Which streaming_sweep::Kernel<T, Op>::Function                             \
  streaming_sweep::Kernel<T, Op>::function(int);                             \
  Which streaming_sweep::Kernel<T, Op>::DirectFunction                       \
  streaming_sweep::Kernel<T, Op>::direct_function(int);

#define STENCIL_NATIVE_CUDA_DECLARE_SUITE_KERNELS(Rank, Name)                 \
  STENCIL_NATIVE_CUDA_KERNELS_RANK##Rank(extern template, float, suite::Name) \
      STENCIL_NATIVE_CUDA_KERNELS_RANK##Rank(extern template, double,         \
                                             suite::Name)

namespace stencil::native_cuda {
STENCIL_NATIVE_CUDA_SUITE(STENCIL_NATIVE_CUDA_DECLARE_SUITE_KERNELS)
}  // namespace stencil::native_cuda
