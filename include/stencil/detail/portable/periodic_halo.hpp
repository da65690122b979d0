// SPDX-License-Identifier: Apache-2.0
// The periodic halo refresh of the time loop before boundaries per side:
// kept for callers that have not moved to refresh_boundaries
// (boundary_halo.hpp), which it calls. New code calls that directly.
#pragma once

#include <stencil/boundary.hpp>
#include <stencil/detail/portable/boundary_halo.hpp>
#include <stencil/detail/portable/layout.hpp>

namespace stencil::detail {

/// Copies the interior's opposite side into the halo on every axis.
template <class ExecSpace, class T, int Rank>
void refresh_periodic_halo(ExecSpace const& space, T* data,
                           PaddedLayout const& layout) {
  refresh_boundaries<ExecSpace, T, Rank>(
      space, data, layout, BoundarySet<Rank>(Boundary::periodic), 0.0);
}

}  // namespace stencil::detail
