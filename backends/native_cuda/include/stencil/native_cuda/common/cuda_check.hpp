// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/error.hpp>

#include <cuda_runtime.h>

/// Every CUDA runtime call of the native backend goes through this: a failure
/// throws stencil::device_error with the call as written, the error's name
/// and string, file and line.
#define STENCIL_CUDA_CHECK(expr)                               \
  do {                                                         \
    cudaError_t const stencil_impl_status = (expr);            \
    if (stencil_impl_status != cudaSuccess) {                  \
      ::stencil::detail::throw_device_error(                   \
          #expr,                                               \
          ::stencil::detail::concat(                           \
              cudaGetErrorName(stencil_impl_status), " (",     \
              cudaGetErrorString(stencil_impl_status), ")"),   \
          ::stencil::detail::concat(__FILE__, ":", __LINE__)); \
    }                                                          \
  } while (false)
