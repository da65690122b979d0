// SPDX-License-Identifier: Apache-2.0
// An optional form of a right-hand side whose one field stores each point's
// two values side by side (u at an even x, v at x + 1): it evaluates a
// point at once. Plans that can use it say so (docs/ode.md); the others
// call operator() a value at a time.
#pragma once

#include <stencil/detail/fields/accessor.hpp>

namespace stencil::ode {

/// `rhs.rates_of_point(in)`, for `in` at the even x of a point, returns
/// `stencil::values{rate at x, rate at x + 1}`: what rhs(in) gives at x and
/// at x + 1. The fused CUDA plan then gives each thread a point.
template <class Rhs, class T>
concept PointRates = requires(
    Rhs const& rhs,
    stencil::detail::FieldsNeighbourhood<T, 2, typename Rhs::fields> const&
        in) {
  {rhs.rates_of_point(in).value[1]};
};

}  // namespace stencil::ode
