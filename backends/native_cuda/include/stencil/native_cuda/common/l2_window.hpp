// SPDX-License-Identifier: Apache-2.0
// An L2 access policy window on a stream for the launches enqueued while it
// is open: accesses to [base, base + bytes) persist in L2.
#pragma once

#include <stencil/native_cuda/common/cuda_check.hpp>

#include <cuda_runtime.h>

#include <cstddef>

namespace stencil::native_cuda {

/// While it is open, the launches enqueued on `stream` keep [base, base +
/// bytes) in L2 as persisting lines: the device's persisting L2 limit is
/// raised to `bytes` where it was lower, and the stream gets an access
/// policy window over the range (a launch keeps the window it was enqueued
/// with). close() waits for the stream, then puts the limit and the
/// stream's window back and demotes the persisting lines. The wait is the
/// price: the limit is device-wide and not stream-ordered, and left raised
/// it takes that much L2 from every later kernel; demoting the lines alone
/// did not help (docs/decisions/l2-window-off.md).
class L2Window {
 public:
  /// Nothing when `bytes` is 0.
  L2Window(cudaStream_t stream, void* base, std::size_t bytes)
      : m_stream(stream), m_base(base), m_bytes(base == nullptr ? 0 : bytes) {
    if (m_bytes == 0) return;
    STENCIL_CUDA_CHECK(cudaStreamGetAttribute(
        m_stream, cudaStreamAttributeAccessPolicyWindow, &m_previous));
    STENCIL_CUDA_CHECK(
        cudaDeviceGetLimit(&m_previous_limit, cudaLimitPersistingL2CacheSize));
    m_open = true;
    try {
      if (m_previous_limit < m_bytes) {
        STENCIL_CUDA_CHECK(
            cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, m_bytes));
      }
      cudaStreamAttrValue window{};
      window.accessPolicyWindow.base_ptr = m_base;
      window.accessPolicyWindow.num_bytes = m_bytes;
      window.accessPolicyWindow.hitRatio = 1.0f;
      window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
      window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
      STENCIL_CUDA_CHECK(cudaStreamSetAttribute(
          m_stream, cudaStreamAttributeAccessPolicyWindow, &window));
    } catch (...) {
      restore();  // no destructor runs for an object whose constructor threw
      throw;
    }
  }

  /// Waits for the launches, then restores the device's limit and the
  /// stream's window and demotes the lines they made persisting.
  void close() {
    if (!m_open) return;
    m_open = false;
    STENCIL_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    restore();
  }

  ~L2Window() {
    // Reached open only when a launch threw: nothing is thrown from here,
    // and the launches already enqueued keep the window they had.
    if (m_open) restore();
  }
  L2Window(L2Window const&) = delete;
  L2Window& operator=(L2Window const&) = delete;

 private:
  // Errors are not thrown here (the destructor calls it); the next CUDA
  // call reports them.
  void restore() {
    (void)cudaStreamSetAttribute(
        m_stream, cudaStreamAttributeAccessPolicyWindow, &m_previous);
    (void)cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, m_previous_limit);
    (void)cudaCtxResetPersistingL2Cache();
  }

  cudaStream_t m_stream;
  void* m_base;
  std::size_t m_bytes;
  bool m_open = false;
  std::size_t m_previous_limit = 0;
  cudaStreamAttrValue m_previous{};
};

}  // namespace stencil::native_cuda
