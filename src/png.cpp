// SPDX-License-Identifier: Apache-2.0
#include <stencil/error.hpp>
#include <stencil/io/png.hpp>

#include "output_file.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace stencil::detail {
namespace {

/// CRC-32 as PNG and zlib define it (the reflected polynomial 0xEDB88320),
/// continued from `crc` over `bytes`; start with 0.
std::uint32_t crc32(std::uint32_t crc, std::uint8_t const* bytes,
                    std::size_t count) {
  static std::array<std::uint32_t, 256> const table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (std::size_t i = 0; i < count; ++i) {
    crc = table[(crc ^ bytes[i]) & 0xFFu] ^ (crc >> 8);
  }
  return ~crc;
}

/// zlib's checksum of the uncompressed data.
std::uint32_t adler32(std::vector<std::uint8_t> const& bytes) {
  constexpr std::uint32_t base = 65521;
  // 5552 bytes is the most that cannot overflow 32 bits before the modulo.
  constexpr std::size_t run = 5552;
  std::uint32_t a = 1, b = 0;
  for (std::size_t begin = 0; begin < bytes.size(); begin += run) {
    std::size_t const end = std::min(bytes.size(), begin + run);
    for (std::size_t i = begin; i < end; ++i) {
      a += bytes[i];
      b += a;
    }
    a %= base;
    b %= base;
  }
  return (b << 16) | a;
}

void put_big_endian(std::vector<std::uint8_t>& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<std::uint8_t>(value >> shift));
  }
}

/// One chunk: length, type, data, and the CRC of type and data.
void write_chunk(OutputFile& file, char const (&type)[5],
                 std::vector<std::uint8_t> const& data) {
  std::vector<std::uint8_t> head;
  put_big_endian(head, static_cast<std::uint32_t>(data.size()));
  head.insert(head.end(), type, type + 4);
  std::uint32_t crc = crc32(0, head.data() + 4, 4);
  crc = crc32(crc, data.data(), data.size());
  std::vector<std::uint8_t> tail;
  put_big_endian(tail, crc);
  file.write(head.data(), head.size());
  file.write(data.data(), data.size());
  file.write(tail.data(), tail.size());
}

/// A colormap's control points, evenly spaced over [0, 1].
struct Ramp {
  std::uint8_t const (*points)[3];
  int count;
};

// Five colours of matplotlib's viridis at 0, 1/4, 1/2, 3/4 and 1; between
// them the colour is interpolated linearly, which keeps the lightness
// rising evenly enough for a quick look.
constexpr std::uint8_t viridis_points[][3] = {
    {68, 1, 84}, {59, 82, 139}, {33, 144, 140}, {93, 200, 99}, {253, 231, 37}};
constexpr std::uint8_t grey_points[][3] = {{0, 0, 0}, {255, 255, 255}};

Ramp ramp(Colormap colormap) {
  switch (colormap) {
    case Colormap::grey:
      return {grey_points, 2};
    case Colormap::viridis:
      return {viridis_points, 5};
  }
  return {viridis_points, 5};
}

template <class T>
void write_values(std::string const& path, T const* values, int ny, int nx,
                  PngOptions const& options) {
  STENCIL_EXPECT(ny > 0 && nx > 0, "write_png to '", path, "': the field is ",
                 nx, " x ", ny, "; an image needs at least one pixel");
  STENCIL_EXPECT(!options.min || std::isfinite(*options.min), "write_png to '",
                 path, "': min is ", *options.min, "; give a finite value");
  STENCIL_EXPECT(!options.max || std::isfinite(*options.max), "write_png to '",
                 path, "': max is ", *options.max, "; give a finite value");
  STENCIL_EXPECT(!options.min || !options.max || *options.min < *options.max,
                 "write_png to '", path, "': min ", *options.min,
                 " is not below max ", *options.max,
                 "; give min < max, or leave either unset to use the "
                 "field's own");
  std::size_t const cells =
      static_cast<std::size_t>(ny) * static_cast<std::size_t>(nx);
  double low = options.min.value_or(0.0);
  double high = options.max.value_or(0.0);
  if (!options.min || !options.max) {
    double field_low = std::numeric_limits<double>::infinity();
    double field_high = -field_low;
    for (std::size_t c = 0; c < cells; ++c) {
      double const v = values[c];
      if (std::isfinite(v)) {
        field_low = std::min(field_low, v);
        field_high = std::max(field_high, v);
      }
    }
    if (field_low > field_high) field_low = field_high = 0.0;  // none finite
    if (!options.min) low = field_low;
    if (!options.max) high = field_high;
  }
  // Halves, so that a range as wide as the doubles (-max to max) does not
  // overflow; halving is exact.
  double const half_range = 0.5 * high - 0.5 * low;

  std::vector<std::uint8_t> rgb(cells * 3);
  for (int row = 0; row < ny; ++row) {
    T const* line = values + static_cast<std::size_t>(ny - 1 - row) * nx;
    std::uint8_t* out = rgb.data() + static_cast<std::size_t>(row) * nx * 3;
    for (int j = 0; j < nx; ++j, out += 3) {
      double const v = line[j];
      if (std::isnan(v)) {
        out[0] = out[1] = out[2] = 0;
        continue;
      }
      // A one-value range (a constant field, or a given min above the
      // field's max) draws what is above it in the last colour.
      double const t = half_range > 0 ? (0.5 * v - 0.5 * low) / half_range
                                      : (v > low ? 1.0 : 0.0);
      colormap_rgb(options.colormap, std::clamp(t, 0.0, 1.0), out);
    }
  }
  write_png_rgb(path, nx, ny, rgb.data());
}

}  // namespace

void colormap_rgb(Colormap colormap, double t, std::uint8_t rgb[3]) {
  Ramp const r = ramp(colormap);
  double const x = std::clamp(t, 0.0, 1.0) * (r.count - 1);
  int const segment = std::min(static_cast<int>(x), r.count - 2);
  double const f = x - segment;
  for (int c = 0; c < 3; ++c) {
    double const a = r.points[segment][c];
    double const b = r.points[segment + 1][c];
    rgb[c] = static_cast<std::uint8_t>(std::lround(a + (b - a) * f));
  }
}

void write_png_values(std::string const& path, float const* values, int ny,
                      int nx, PngOptions const& options) {
  write_values(path, values, ny, nx, options);
}

void write_png_values(std::string const& path, double const* values, int ny,
                      int nx, PngOptions const& options) {
  write_values(path, values, ny, nx, options);
}

void write_png_rgb(std::string const& path, int width, int height,
                   std::uint8_t const* rgb) {
  STENCIL_EXPECT(width > 0 && height > 0, "write_png to '", path,
                 "': the image is ", width, " x ", height,
                 "; it needs at least one pixel");
  std::size_t const row_bytes = 3 * static_cast<std::size_t>(width);
  // The scanlines as PNG filters them: each row after a filter-type byte,
  // 0 (none), since the stored blocks below do not compress anyway.
  std::vector<std::uint8_t> scanlines;
  scanlines.reserve(static_cast<std::size_t>(height) * (1 + row_bytes));
  for (int row = 0; row < height; ++row) {
    scanlines.push_back(0);
    std::uint8_t const* line = rgb + static_cast<std::size_t>(row) * row_bytes;
    scanlines.insert(scanlines.end(), line, line + row_bytes);
  }

  OutputFile file(path, "write_png");
  constexpr std::uint8_t signature[] = {0x89, 'P',  'N',  'G',
                                        '\r', '\n', 0x1A, '\n'};
  file.write(signature, sizeof signature);

  std::vector<std::uint8_t> header;
  put_big_endian(header, static_cast<std::uint32_t>(width));
  put_big_endian(header, static_cast<std::uint32_t>(height));
  // Bit depth 8, colour type 2 (RGB), deflate, adaptive filtering (each
  // row names its filter), no interlace.
  header.insert(header.end(), {8, 2, 0, 0, 0});
  write_chunk(file, "IHDR", header);

  // The zlib stream, without compression: a header (deflate, 32 KiB window,
  // no dictionary; 0x7801 is a multiple of 31 as the check bits require),
  // stored deflate blocks of at most 65535 bytes, and the Adler-32 of the
  // scanlines. One IDAT chunk per block keeps only one block in memory.
  constexpr std::size_t block_max = 65535;
  std::size_t const total = scanlines.size();
  std::vector<std::uint8_t> data;
  for (std::size_t begin = 0; begin < total; begin += block_max) {
    std::size_t const length = std::min(block_max, total - begin);
    bool const last = begin + length == total;
    data.clear();
    if (begin == 0) data.insert(data.end(), {0x78, 0x01});
    // BFINAL in bit 0, BTYPE 00 (stored) in bits 1-2; a stored block's
    // length then starts at the next byte boundary.
    data.push_back(last ? 1 : 0);
    auto const len = static_cast<std::uint16_t>(length);
    auto const nlen = static_cast<std::uint16_t>(~len);
    data.insert(data.end(), {static_cast<std::uint8_t>(len & 0xFF),
                             static_cast<std::uint8_t>(len >> 8),
                             static_cast<std::uint8_t>(nlen & 0xFF),
                             static_cast<std::uint8_t>(nlen >> 8)});
    data.insert(data.end(), scanlines.begin() + begin,
                scanlines.begin() + begin + length);
    if (last) put_big_endian(data, adler32(scanlines));
    write_chunk(file, "IDAT", data);
  }
  write_chunk(file, "IEND", {});
  file.close();
}

}  // namespace stencil::detail
