// SPDX-License-Identifier: Apache-2.0
// Device buffers a native policy keeps from one call to the next
// (allocating and zeroing them costs more than a short run): one per
// process and type, released when Kokkos finalizes, and handed from stream
// to stream so that a call on another stream waits for the last one first.
#pragma once

#include <Kokkos_Core.hpp>

namespace stencil::native_cuda {

/// The process's one `Buffers`, reset to `Buffers{}` when Kokkos finalizes.
template <class Buffers>
Buffers& kept_between_calls() {
  static Buffers* cached = [] {
    static Buffers kept;
    Kokkos::push_finalize_hook([] { kept = Buffers{}; });
    return &kept;
  }();
  return *cached;
}

/// Makes `space` the user of buffers that `last` used, waiting for `last`'s
/// stream first where it differs and the buffers are in use (`in_use`).
inline void hand_over_stream(Kokkos::Cuda& last, Kokkos::Cuda const& space,
                             bool in_use, char const* fence_label) {
  if (in_use && last.cuda_stream() != space.cuda_stream()) {
    last.fence(fence_label);
  }
  last = space;
}

}  // namespace stencil::native_cuda
