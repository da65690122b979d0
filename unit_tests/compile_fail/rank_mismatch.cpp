// SPDX-License-Identifier: Apache-2.0
// Must not compile: a 2D stencil applied to a 1D grid.
#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

void run(stencil::Grid<double, 1>& g) {
  stencil::iterate(g, stencil::suite::J2d5pt{}, 1);
}
