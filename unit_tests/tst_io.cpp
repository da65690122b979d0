// SPDX-License-Identifier: Apache-2.0
// Field output: .vti and .png files are read back here by decoders written
// for the test (the XML header, the appended binary data, PNG chunks and
// stored deflate blocks) and compared value by value with the grid.
// check_png.py reads the PNGs of PngForExternalDecoder with matplotlib.
#include "stencil_test_spaces.hpp"
#include "test_support.hpp"

#include <stencil/grid.hpp>
#include <stencil/io/png.hpp>
#include <stencil/io/vtk.hpp>

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string read_file(fs::path const& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A scratch directory removed at the end of the test.
class Scratch {
 public:
  Scratch() : m_dir(stencil_test::scratch_directory("stencil-io")) {
    fs::create_directories(m_dir);
  }
  Scratch(Scratch const&) = delete;
  Scratch& operator=(Scratch const&) = delete;
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  std::string operator/(std::string const& name) const {
    return (m_dir / name).string();
  }

 private:
  fs::path m_dir;
};

// --- the .vti reader ---------------------------------------------------------

struct VtiArrayRead {
  std::string name;
  std::string type;
  std::string bytes;  // the values as stored, little-endian
};

struct VtiRead {
  std::string whole_extent;
  std::string piece_extent;
  std::array<double, 3> origin{};
  std::array<double, 3> spacing{};
  std::string scalars;
  std::vector<VtiArrayRead> arrays;
};

/// The value of `name="..."` in the tag that starts at `from`.
std::string attribute(std::string const& text, std::size_t from,
                      std::string const& name) {
  std::size_t const end = text.find('>', from);
  std::size_t const at = text.find(" " + name + "=\"", from);
  if (at == std::string::npos || at > end) {
    ADD_FAILURE() << "no attribute " << name << " in "
                  << text.substr(from, end - from);
    return {};
  }
  std::size_t const begin = at + name.size() + 3;
  return text.substr(begin, text.find('"', begin) - begin);
}

std::array<double, 3> three_doubles(std::string const& text) {
  std::istringstream in(text);
  std::array<double, 3> v{};
  in >> v[0] >> v[1] >> v[2];
  EXPECT_FALSE(in.fail()) << text;
  return v;
}

std::uint64_t little_endian_u64(std::string const& text, std::size_t at) {
  std::uint64_t v = 0;
  for (int b = 7; b >= 0; --b) {
    v = (v << 8) | static_cast<unsigned char>(text.at(at + b));
  }
  return v;
}

VtiRead read_vti(std::string const& path) {
  std::string const text = read_file(path);
  VtiRead out;
  EXPECT_EQ(text.rfind("<?xml version=\"1.0\"?>\n", 0), 0u);
  // The binary data follows the first <AppendedData; the XML before it is
  // text, so searching it cannot hit a value's bytes.
  std::size_t const appended = text.find("<AppendedData encoding=\"raw\">");
  if (appended == std::string::npos) {
    ADD_FAILURE() << "no raw AppendedData in " << path;
    return out;
  }
  std::string const head = text.substr(0, appended);
  std::size_t const file = head.find("<VTKFile ");
  EXPECT_NE(file, std::string::npos);
  EXPECT_EQ(attribute(head, file, "type"), "ImageData");
  EXPECT_EQ(attribute(head, file, "version"), "1.0");
  EXPECT_EQ(attribute(head, file, "byte_order"), "LittleEndian");
  EXPECT_EQ(attribute(head, file, "header_type"), "UInt64");
  std::size_t const image = head.find("<ImageData ");
  EXPECT_NE(image, std::string::npos);
  out.whole_extent = attribute(head, image, "WholeExtent");
  out.origin = three_doubles(attribute(head, image, "Origin"));
  out.spacing = three_doubles(attribute(head, image, "Spacing"));
  std::size_t const piece = head.find("<Piece ");
  EXPECT_NE(piece, std::string::npos);
  out.piece_extent = attribute(head, piece, "Extent");
  std::size_t const point_data = head.find("<PointData ");
  EXPECT_NE(point_data, std::string::npos);
  out.scalars = attribute(head, point_data, "Scalars");

  std::size_t underscore = text.find('>', appended) + 1;
  while (text.at(underscore) == ' ' || text.at(underscore) == '\n') {
    ++underscore;
  }
  EXPECT_EQ(text.at(underscore), '_');
  std::size_t const base = underscore + 1;
  std::size_t end_of_data = base;
  for (std::size_t at = head.find("<DataArray "); at != std::string::npos;
       at = head.find("<DataArray ", at + 1)) {
    VtiArrayRead array;
    array.name = attribute(head, at, "Name");
    array.type = attribute(head, at, "type");
    EXPECT_EQ(attribute(head, at, "format"), "appended");
    EXPECT_EQ(attribute(head, at, "NumberOfComponents"), "1");
    std::size_t const offset = std::stoull(attribute(head, at, "offset"));
    std::uint64_t const bytes = little_endian_u64(text, base + offset);
    array.bytes = text.substr(base + offset + 8, bytes);
    EXPECT_EQ(array.bytes.size(), bytes) << "the file ends early";
    end_of_data = std::max<std::size_t>(end_of_data, base + offset + 8 + bytes);
    out.arrays.push_back(std::move(array));
  }
  // Nothing but the closing tags after the last array.
  EXPECT_EQ(text.substr(end_of_data), "\n  </AppendedData>\n</VTKFile>\n");
  return out;
}

template <class T>
std::vector<T> values_of(VtiArrayRead const& array) {
  EXPECT_EQ(array.bytes.size() % sizeof(T), 0u);
  std::vector<T> v(array.bytes.size() / sizeof(T));
  // The file is little-endian; the test hosts are too.
  static_assert(std::endian::native == std::endian::little);
  std::memcpy(v.data(), array.bytes.data(), array.bytes.size());
  return v;
}

template <class T>
char const* vtk_type_name() {
  if constexpr (std::is_same_v<T, float>) return "Float32";
  if constexpr (std::is_same_v<T, double>) return "Float64";
  if constexpr (std::is_same_v<T, std::int32_t>) return "Int32";
  if constexpr (std::is_same_v<T, std::int64_t>) return "Int64";
  if constexpr (std::is_same_v<T, std::uint8_t>) return "UInt8";
}

/// A value distinct per cell (and a fraction, so that float and double
/// differ); halo cells hold -1000 - their distance, which must not appear.
template <class T>
T cell_value(int k, int j, int i, int seed) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(seed + 100.0 * k + 10.0 * j + i + 1.0 / 3.0);
  } else {
    return static_cast<T>(seed + 10000 * k + 100 * j + i);
  }
}

template <class T, int Rank, class Memory>
void fill_cells(stencil::Grid<T, Rank, Memory>& g, int seed) {
  auto inside = [&](int c, int d) { return c >= 0 && c < g.extent(d); };
  if constexpr (Rank == 1) {
    stencil::fill(g, [&](int i) {
      return inside(i, 0) ? cell_value<T>(0, 0, i, seed) : T(-1000);
    });
  } else if constexpr (Rank == 2) {
    stencil::fill(g, [&](int j, int i) {
      return inside(j, 0) && inside(i, 1) ? cell_value<T>(0, j, i, seed)
                                          : T(-1000);
    });
  } else {
    stencil::fill(g, [&](int k, int j, int i) {
      return inside(k, 0) && inside(j, 1) && inside(i, 2)
                 ? cell_value<T>(k, j, i, seed)
                 : T(-1000);
    });
  }
}

/// Every value of `values` (x fastest) against the cells of grid extents
/// `zyx`.
template <class T>
void expect_cells(std::vector<T> const& values, std::array<int, 3> zyx,
                  int seed) {
  ASSERT_EQ(values.size(), static_cast<std::size_t>(zyx[0]) * zyx[1] * zyx[2]);
  std::size_t n = 0;
  int mismatches = 0;
  for (int k = 0; k < zyx[0]; ++k) {
    for (int j = 0; j < zyx[1]; ++j) {
      for (int i = 0; i < zyx[2]; ++i, ++n) {
        T const expected = cell_value<T>(k, j, i, seed);
        if (values[n] != expected && ++mismatches <= 5) {
          ADD_FAILURE() << "value " << n << " (z " << k << ", y " << j << ", x "
                        << i << ") is " << values[n] << ", not " << expected;
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

template <class Space>
class Io : public ::testing::Test {
 protected:
  using Memory = typename Space::memory_space;

  template <class T, int Rank>
  void round_trip(std::array<int, Rank> const& extents,
                  std::string const& extent_text) {
    SCOPED_TRACE(extent_text);
    Scratch scratch;
    stencil::Grid<T, Rank, Memory> g("field", extents, {.halo = 2});
    fill_cells(g, 7);
    // The next level holds other values: the file shows the current one.
    Kokkos::deep_copy(g.next(), T(-5));
    std::string const path = scratch / "field.vti";
    stencil::write_vti(path, g);
    VtiRead const read = read_vti(path);
    EXPECT_EQ(read.whole_extent, extent_text);
    EXPECT_EQ(read.piece_extent, extent_text);
    EXPECT_EQ(read.origin, (std::array<double, 3>{0, 0, 0}));
    EXPECT_EQ(read.spacing, (std::array<double, 3>{1, 1, 1}));
    EXPECT_EQ(read.scalars, "field");
    ASSERT_EQ(read.arrays.size(), 1u);
    EXPECT_EQ(read.arrays[0].name, "field");
    EXPECT_EQ(read.arrays[0].type, vtk_type_name<T>());
    expect_cells(values_of<T>(read.arrays[0]),
                 stencil::detail::extents_zyx<Rank>(extents), 7);

    g.swap();
    stencil::write_vti(path, g, "swapped");
    VtiRead const swapped = read_vti(path);
    ASSERT_EQ(swapped.arrays.size(), 1u);
    EXPECT_EQ(swapped.arrays[0].name, "swapped");
    EXPECT_EQ(values_of<T>(swapped.arrays[0]),
              std::vector<T>(g.interior_cells(), T(-5)));
  }
};
TYPED_TEST_SUITE(Io, stencil_test::ExecutionSpaces);

TYPED_TEST(Io, VtiRoundTripsEveryRank) {
  this->template round_trip<double, 1>({5}, "0 4 0 0 0 0");
  this->template round_trip<float, 1>({5}, "0 4 0 0 0 0");
  this->template round_trip<double, 2>({7, 5}, "0 4 0 6 0 0");
  this->template round_trip<float, 2>({7, 5}, "0 4 0 6 0 0");
  this->template round_trip<double, 3>({3, 7, 5}, "0 4 0 6 0 2");
  this->template round_trip<float, 3>({3, 7, 5}, "0 4 0 6 0 2");
}

TYPED_TEST(Io, VtiIntegerGrids) {
  this->template round_trip<std::int32_t, 2>({7, 5}, "0 4 0 6 0 0");
  this->template round_trip<std::int64_t, 3>({3, 7, 5}, "0 4 0 6 0 2");
  this->template round_trip<std::uint8_t, 1>({5}, "0 4 0 0 0 0");
}

TYPED_TEST(Io, VtiOriginSpacingAndSeveralGrids) {
  using Grid3 = stencil::Grid<double, 3, typename TestFixture::Memory>;
  using Fields = std::vector<std::pair<std::string, Grid3 const*>>;
  Scratch scratch;
  Grid3 u("u", {3, 7, 5}, {.halo = 2});
  Grid3 v("v", {3, 7, 5}, {.halo = 1});
  fill_cells(u, 1);
  fill_cells(v, 2);
  stencil::VtiOptions const options{.origin_xyz = {-1.5, 0.1, 2e-9},
                                    .spacing_xyz = {0.1, 0.25, 1.0 / 3.0}};
  std::string const path = scratch / "uv.vti";
  stencil::write_vti(path, Fields{{"u", &u}, {"v & <w>", &v}}, options);
  VtiRead const read = read_vti(path);
  EXPECT_EQ(read.origin, options.origin_xyz);
  EXPECT_EQ(read.spacing, options.spacing_xyz);
  EXPECT_EQ(read.scalars, "u");
  ASSERT_EQ(read.arrays.size(), 2u);
  EXPECT_EQ(read.arrays[0].name, "u");
  EXPECT_EQ(read.arrays[1].name, "v &amp; &lt;w&gt;");  // XML-escaped
  expect_cells(values_of<double>(read.arrays[0]), {3, 7, 5}, 1);
  expect_cells(values_of<double>(read.arrays[1]), {3, 7, 5}, 2);

  Grid3 other("other", {3, 7, 6});
  stencil_test::expect_error(
      [&] {
        stencil::write_vti(path, Fields{{"u", &u}, {"other", &other}});
      },
      {"write_vti", "'other'", "other extents"});
}

TEST(IoVti, ArraysOfMixedTypes) {
  Scratch scratch;
  std::array<int, 3> const zyx{1, 4, 3};
  std::vector<float> a(12);
  std::vector<double> b(12);
  for (int n = 0; n < 12; ++n) {
    a[n] = 0.5f * n;
    b[n] = -0.25 * n;
  }
  using stencil::detail::VtiType;
  std::string const path = scratch / "mixed.vti";
  stencil::detail::write_vti_arrays(
      path, zyx, {},
      {{"a", VtiType::float32, a.data()}, {"b", VtiType::float64, b.data()}});
  VtiRead const read = read_vti(path);
  EXPECT_EQ(read.whole_extent, "0 2 0 3 0 0");
  ASSERT_EQ(read.arrays.size(), 2u);
  EXPECT_EQ(read.arrays[0].type, "Float32");
  EXPECT_EQ(read.arrays[1].type, "Float64");
  EXPECT_EQ(values_of<float>(read.arrays[0]), a);
  EXPECT_EQ(values_of<double>(read.arrays[1]), b);

  EXPECT_THROW(
      stencil::detail::write_vti_arrays(path, zyx, {},
                                        {{"a", VtiType::float32, a.data()},
                                         {"a", VtiType::float64, b.data()}}),
      stencil::bad_input);
  EXPECT_THROW(
      stencil::detail::write_vti_arrays(path, zyx, {.spacing_xyz = {1, 0, 1}},
                                        {{"a", VtiType::float32, a.data()}}),
      stencil::bad_input);
  EXPECT_THROW(stencil::detail::write_vti_arrays(
                   path, {0, 4, 3}, {}, {{"a", VtiType::float32, a.data()}}),
               stencil::bad_input);
}

TEST(IoVti, FailuresSayWhy) {
  Scratch scratch;
  stencil::Grid<double, 2> g("g", {3, 4});
  std::string const missing = scratch / "no-such-directory/g.vti";
  stencil_test::expect_error([&] { stencil::write_vti(missing, g); },
                             {"write_vti", "cannot open", missing});
  EXPECT_FALSE(fs::exists(missing));

  // A write that fails part way (a full disk: /dev/full, through a link
  // in the scratch directory) throws, and the link is not removed: only a
  // plain file the writer made is.
  if (fs::is_character_file("/dev/full")) {
    std::string const full = scratch / "full.vti";
    fs::create_symlink("/dev/full", full);
    stencil_test::expect_error([&] { stencil::write_vti(full, g); },
                               {"write_vti", "cannot write", full});
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(full)));
    EXPECT_TRUE(fs::is_character_file("/dev/full"));
  }

  stencil::Grid<double, 2> moved = std::move(g);
  EXPECT_THROW(stencil::write_vti(scratch / "g.vti", g), stencil::bad_input);
  stencil::Grid<double, 2> unnamed("", {3, 4});
  EXPECT_THROW(stencil::write_vti(scratch / "g.vti", unnamed),
               stencil::bad_input);
  EXPECT_FALSE(fs::exists(scratch / "g.vti"));
}

// --- the PNG reader ----------------------------------------------------------

/// CRC-32 bit by bit, unlike the writer's table, so that the two share no
/// code and no table.
std::uint32_t bitwise_crc32(std::string const& bytes) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : bytes) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) {
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
  }
  return ~crc;
}

std::uint32_t big_endian_u32(std::string const& text, std::size_t at) {
  std::uint32_t v = 0;
  for (int b = 0; b < 4; ++b) {
    v = (v << 8) | static_cast<unsigned char>(text.at(at + b));
  }
  return v;
}

struct PngRead {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  int idat_chunks = 0;
  int stored_blocks = 0;
  std::vector<std::string> rows;  // RGB bytes, the top row first

  std::array<int, 3> pixel(int row, int column) const {
    std::string const& r = rows.at(row);
    return {static_cast<unsigned char>(r.at(3 * column)),
            static_cast<unsigned char>(r.at(3 * column + 1)),
            static_cast<unsigned char>(r.at(3 * column + 2))};
  }
};

PngRead read_png(std::string const& path) {
  std::string const file = read_file(path);
  PngRead out;
  EXPECT_EQ(file.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  std::string zlib;
  std::vector<std::string> types;
  for (std::size_t at = 8; at < file.size();) {
    std::uint32_t const length = big_endian_u32(file, at);
    std::string const type = file.substr(at + 4, 4);
    std::string const data = file.substr(at + 8, length);
    std::uint32_t const crc = big_endian_u32(file, at + 8 + length);
    EXPECT_EQ(crc, bitwise_crc32(type + data)) << "chunk " << type;
    types.push_back(type);
    if (type == "IHDR") {
      EXPECT_EQ(length, 13u);
      out.width = big_endian_u32(data, 0);
      out.height = big_endian_u32(data, 4);
      EXPECT_EQ(data.substr(8), std::string("\x08\x02\x00\x00\x00", 5))
          << "8-bit RGB, deflate, no interlace";
    } else if (type == "IDAT") {
      zlib += data;
      ++out.idat_chunks;
    }
    at += 12 + length;
  }
  EXPECT_GE(types.size(), 3u);
  EXPECT_EQ(types.front(), "IHDR");
  EXPECT_EQ(types.back(), "IEND");

  // The zlib stream: its header, stored deflate blocks, then the Adler-32.
  EXPECT_EQ(static_cast<unsigned char>(zlib.at(0)) & 0x0F, 8) << "deflate";
  EXPECT_EQ((static_cast<unsigned char>(zlib.at(0)) * 256 +
             static_cast<unsigned char>(zlib.at(1))) %
                31,
            0);
  std::string inflated;
  std::size_t at = 2;
  for (bool final = false; !final;) {
    unsigned char const head = zlib.at(at);
    final = head & 1;
    EXPECT_EQ(head >> 1, 0) << "a stored block";
    unsigned const len = static_cast<unsigned char>(zlib.at(at + 1)) |
                         static_cast<unsigned char>(zlib.at(at + 2)) << 8;
    unsigned const nlen = static_cast<unsigned char>(zlib.at(at + 3)) |
                          static_cast<unsigned char>(zlib.at(at + 4)) << 8;
    EXPECT_EQ(len ^ nlen, 0xFFFFu);
    inflated += zlib.substr(at + 5, len);
    at += 5 + len;
    ++out.stored_blocks;
  }
  std::uint32_t a = 1, b = 0;
  for (unsigned char byte : inflated) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  EXPECT_EQ(big_endian_u32(zlib, at), (b << 16) | a) << "Adler-32";
  EXPECT_EQ(at + 4, zlib.size()) << "nothing after the checksum";

  std::size_t const row_bytes = 1 + 3 * std::size_t{out.width};
  EXPECT_EQ(inflated.size(), row_bytes * out.height);
  for (std::uint32_t row = 0; row < out.height; ++row) {
    EXPECT_EQ(inflated.at(row * row_bytes), 0) << "filter type of row " << row;
    out.rows.push_back(inflated.substr(row * row_bytes + 1, row_bytes - 1));
  }
  return out;
}

using Rgb = std::array<int, 3>;
constexpr Rgb viridis_first{68, 1, 84};
constexpr Rgb viridis_last{253, 231, 37};

template <class Space>
class IoPng : public ::testing::Test {};
TYPED_TEST_SUITE(IoPng, stencil_test::ExecutionSpaces);

TYPED_TEST(IoPng, ImageRowsAreTheGridUpsideDown) {
  using Memory = typename TypeParam::memory_space;
  Scratch scratch;
  // 120 rows of 1 + 600 bytes: two stored blocks.
  int const ny = 120, nx = 200;
  stencil::Grid<double, 2, Memory> g("g", {ny, nx}, {.halo = 2});
  double const nan = std::numeric_limits<double>::quiet_NaN();
  stencil::fill(g, [&](int j, int i) {
    if (j < 0 || i < 0 || j >= ny || i >= nx) return 1e9;  // halo: not drawn
    if (j == 5 && i == 7) return nan;
    return double(j * nx + i);
  });
  std::string const path = scratch / "g.png";
  stencil::write_png(path, g);
  PngRead const png = read_png(path);
  EXPECT_EQ(png.width, std::uint32_t(nx));
  EXPECT_EQ(png.height, std::uint32_t(ny));
  EXPECT_EQ(png.stored_blocks, 2);
  ASSERT_EQ(png.rows.size(), std::size_t(ny));
  EXPECT_EQ(png.pixel(ny - 1, 0), viridis_first) << "min, bottom left";
  EXPECT_EQ(png.pixel(0, nx - 1), viridis_last) << "max, top right";
  EXPECT_EQ(png.pixel(ny - 1 - 5, 7), (Rgb{0, 0, 0})) << "NaN";

  // Grey with a given range: below min black, above max white, midway 128.
  stencil::write_png(
      path, g,
      {.min = 1.0 * nx, .max = 3.0 * nx, .colormap = stencil::Colormap::grey});
  PngRead const grey = read_png(path);
  EXPECT_EQ(grey.pixel(ny - 1, 0), (Rgb{0, 0, 0}));
  EXPECT_EQ(grey.pixel(ny - 1 - 2, 0), (Rgb{128, 128, 128}));
  EXPECT_EQ(grey.pixel(ny - 1 - 3, 0), (Rgb{255, 255, 255}));
  EXPECT_EQ(grey.pixel(0, 0), (Rgb{255, 255, 255}));
}

TYPED_TEST(IoPng, FloatAndConstantFields) {
  using Memory = typename TypeParam::memory_space;
  Scratch scratch;
  stencil::Grid<float, 2, Memory> g("g", {3, 4});
  stencil::fill(g, [](int j, int i) { return 0.25f * float(j * 4 + i); });
  std::string const path = scratch / "g.png";
  stencil::write_png(path, g);
  PngRead const png = read_png(path);
  EXPECT_EQ(png.width, 4u);
  EXPECT_EQ(png.height, 3u);
  EXPECT_EQ(png.stored_blocks, 1);
  EXPECT_EQ(png.pixel(2, 0), viridis_first);
  EXPECT_EQ(png.pixel(0, 3), viridis_last);

  // A constant field has no range: every cell takes the first colour.
  stencil::Grid<int, 2, Memory> constant("c", {2, 2});
  stencil::fill(constant, [](int, int) { return 3; });
  stencil::write_png(path, constant);
  PngRead const flat = read_png(path);
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 2; ++c) EXPECT_EQ(flat.pixel(r, c), viridis_first);
  }
}

TEST(IoPngErrors, FailuresSayWhy) {
  Scratch scratch;
  stencil::Grid<double, 2> g("g", {3, 4});
  std::string const missing = scratch / "no-such-directory/g.png";
  stencil_test::expect_error([&] { stencil::write_png(missing, g); },
                             {"write_png", "cannot open", missing});
  stencil_test::expect_error(
      [&] { stencil::write_png(scratch / "g.png", g, {.min = 2, .max = 1}); },
      {"write_png", "min 2 is not below max 1"});
  EXPECT_THROW(
      stencil::write_png(scratch / "g.png", g,
                         {.max = std::numeric_limits<double>::infinity()}),
      stencil::bad_input);
  stencil::Grid<double, 2> moved = std::move(g);
  EXPECT_THROW(stencil::write_png(scratch / "g.png", g), stencil::bad_input);
  EXPECT_FALSE(fs::exists(scratch / "g.png"));
}

/// The images check_png.py decodes with matplotlib (an independent
/// decoder), written to $STENCIL_TEST_PNG_DIR when set; checked here too.
TEST(IoPngFiles, PngForExternalDecoder) {
  Scratch scratch;
  char const* dir = std::getenv("STENCIL_TEST_PNG_DIR");
  auto const path = [&](std::string const& name) {
    return dir ? (fs::path(dir) / name).string() : scratch / name;
  };
  // 16 x 16 values 0..255 in grey: the grey level of a pixel is its value.
  stencil::Grid<double, 2> ramp("ramp", {16, 16});
  stencil::fill(ramp, [](int j, int i) { return double(j * 16 + i); });
  stencil::write_png(path("grey16.png"), ramp,
                     {.colormap = stencil::Colormap::grey});
  PngRead const grey = read_png(path("grey16.png"));
  for (int r = 0; r < 16; ++r) {
    for (int c = 0; c < 16; ++c) {
      int const v = (15 - r) * 16 + c;
      ASSERT_EQ(grey.pixel(r, c), (Rgb{v, v, v})) << r << ", " << c;
    }
  }
  // 8 rows of 12 in viridis: min bottom left, max top right.
  stencil::Grid<float, 2> wide("wide", {8, 12});
  stencil::fill(wide, [](int j, int i) { return float(j * 12 + i); });
  stencil::write_png(path("viridis.png"), wide);
  PngRead const viridis = read_png(path("viridis.png"));
  EXPECT_EQ(viridis.width, 12u);
  EXPECT_EQ(viridis.pixel(7, 0), viridis_first);
  EXPECT_EQ(viridis.pixel(0, 11), viridis_last);
}

}  // namespace
