// SPDX-License-Identifier: Apache-2.0
// A rank-2 field as a colour image (PNG), for a quick look without a viewer.
#pragma once

#include <stencil/detail/host_interior.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace stencil {

/// How values become colours. `grey`: black to white. `viridis`: dark
/// purple through blue and green to yellow, a ramp whose lightness rises
/// evenly, so that equal steps of value look like equal steps of colour
/// (an approximation of matplotlib's viridis through five of its colours).
enum class Colormap { grey, viridis };

/// `min` and `max` are the values drawn as the colormap's first and last
/// colour; values beyond them take the end colours. Unset: the field's own
/// smallest and largest finite value. NaN is drawn black.
struct PngOptions {
  std::optional<double> min;
  std::optional<double> max;
  Colormap colormap = Colormap::viridis;
};

namespace detail {

/// Maps `values` (ny rows of nx, x fastest, row 0 at y = 0) through the
/// options' colormap and writes them as an 8-bit RGB PNG with y up.
void write_png_values(std::string const& path, float const* values, int ny,
                      int nx, PngOptions const& options);
void write_png_values(std::string const& path, double const* values, int ny,
                      int nx, PngOptions const& options);

/// Writes `rgb` (height rows of width pixels of 3 bytes, the top row first)
/// as an 8-bit RGB PNG. Throws stencil::error naming the path if the file
/// cannot be written.
void write_png_rgb(std::string const& path, int width, int height,
                   std::uint8_t const* rgb);

/// The colour `colormap` gives t in [0, 1].
void colormap_rgb(Colormap colormap, double t, std::uint8_t rgb[3]);

}  // namespace detail

/// Writes the interior of a rank-2 grid's current level as an 8-bit RGB
/// PNG of nx x ny pixels: column j is x, and the image's top row is the
/// grid's last row (y up, as a plot shows it). Works from any memory space
/// and waits for pending steps; synchronous. Throws stencil::bad_input for
/// an empty grid or a non-finite or reversed min/max, and stencil::error
/// naming the path if the file cannot be written.
template <class T, int Rank, class MemorySpace>
void write_png(std::string const& path, Grid<T, Rank, MemorySpace> const& grid,
               PngOptions const& options = {}) {
  static_assert(Rank == 2,
                "stencil::write_png: an image shows a rank-2 grid; write "
                "rank-1 and rank-3 grids with write_vti");
  auto const values = detail::host_interior(grid, "write_png");
  int const ny = grid.extent(0);
  int const nx = grid.extent(1);
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    detail::write_png_values(path, values.data(), ny, nx, options);
  } else {
    std::vector<double> converted(values.data(), values.data() + values.size());
    detail::write_png_values(path, converted.data(), ny, nx, options);
  }
}

}  // namespace stencil
