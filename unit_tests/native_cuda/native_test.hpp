// SPDX-License-Identifier: Apache-2.0
// What the native CUDA tests share: they skip cleanly on a machine without
// a GPU (CI compiles them there), and STENCIL_TEST_SMALL=1 keeps only their
// small sizes, for compute-sanitizer, which runs kernels tens of times
// slower.
#pragma once

#include <stencil/error.hpp>
#include <stencil/native_cuda/common/device.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>
#include <utility>

namespace stencil_test {

inline bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

inline bool small_only() {
  return std::getenv("STENCIL_TEST_SMALL") != nullptr;
}

/// `run()` must throw a stencil::error whose message contains `text`.
template <class Run>
void expect_refused_with(Run&& run, std::string const& text) {
  try {
    run();
    ADD_FAILURE() << "expected stencil::error containing '" << text << "'";
  } catch (stencil::error const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find(text), std::string::npos) << what;
  }
}

/// `run()` must throw a stencil::error naming `deepest` as the largest
/// depth that fits (the refusal of a depth one too deep).
template <class Run>
void expect_refused_naming_deepest(Run&& run, int deepest) {
  expect_refused_with(
      std::forward<Run>(run),
      "largest depth that fits at this prefetch is " + std::to_string(deepest));
}

}  // namespace stencil_test

#define STENCIL_REQUIRE_GPU() \
  if (!::stencil_test::have_gpu()) GTEST_SKIP() << "no CUDA device"

// Tests of the full-depth plans (default depths, refusals just past the
// deepest that fits) need every depth compiled; a build capped by
// STENCIL_NATIVE_MAX_DEPTH (CI's compile check, a quick gpu-check) skips
// them, saying why.
#define STENCIL_REQUIRE_ALL_DEPTHS()                                        \
  if (::stencil::native_cuda::max_depth_compiled < 12)                     \
  GTEST_SKIP() << "this build compiles native depths up to "               \
               << ::stencil::native_cuda::max_depth_compiled               \
               << " (STENCIL_NATIVE_MAX_DEPTH); the test checks full-depth " \
                  "plans"
