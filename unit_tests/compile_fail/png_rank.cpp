// SPDX-License-Identifier: Apache-2.0
// Must not compile: an image of a rank-3 grid.
#include <stencil/grid.hpp>
#include <stencil/io/png.hpp>

void write(stencil::Grid<double, 3> const& g) {
  stencil::write_png("g.png", g);
}
