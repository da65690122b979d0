// SPDX-License-Identifier: Apache-2.0
#include <stencil/error.hpp>
#include <stencil/io/vtk.hpp>

#include "output_file.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <locale>
#include <set>
#include <sstream>
#include <vector>

namespace stencil::detail {
namespace {

char const* type_name(VtiType type) {
  switch (type) {
    case VtiType::int8:
      return "Int8";
    case VtiType::uint8:
      return "UInt8";
    case VtiType::int16:
      return "Int16";
    case VtiType::uint16:
      return "UInt16";
    case VtiType::int32:
      return "Int32";
    case VtiType::uint32:
      return "UInt32";
    case VtiType::int64:
      return "Int64";
    case VtiType::uint64:
      return "UInt64";
    case VtiType::float32:
      return "Float32";
    case VtiType::float64:
      return "Float64";
  }
  return "Float64";
}

std::size_t type_size(VtiType type) {
  switch (type) {
    case VtiType::int8:
    case VtiType::uint8:
      return 1;
    case VtiType::int16:
    case VtiType::uint16:
      return 2;
    case VtiType::int32:
    case VtiType::uint32:
    case VtiType::float32:
      return 4;
    case VtiType::int64:
    case VtiType::uint64:
    case VtiType::float64:
      return 8;
  }
  return 8;
}

/// A name as an XML attribute value: a label may hold any character.
std::string xml_escaped(std::string const& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// Writes `bytes` bytes of values of `size` bytes each in little-endian
/// order, as the header declares, whatever the host's order.
void write_little_endian(OutputFile& file, void const* values,
                         std::size_t bytes, std::size_t size) {
  if constexpr (std::endian::native == std::endian::little) {
    file.write(values, bytes);
  } else {
    auto const* in = static_cast<unsigned char const*>(values);
    std::vector<unsigned char> chunk;
    std::size_t const step = (std::size_t{1} << 20) / size * size;
    for (std::size_t begin = 0; begin < bytes; begin += step) {
      std::size_t const n = std::min(step, bytes - begin);
      chunk.assign(in + begin, in + begin + n);
      for (std::size_t v = 0; v < n; v += size) {
        std::reverse(chunk.begin() + v, chunk.begin() + v + size);
      }
      file.write(chunk.data(), n);
    }
  }
}

}  // namespace

void write_vti_arrays(std::string const& path,
                      std::array<int, 3> const& extents_zyx,
                      VtiOptions const& options,
                      std::vector<VtiArray> const& arrays) {
  for (int d = 0; d < 3; ++d) {
    STENCIL_EXPECT(extents_zyx[d] > 0, "write_vti to '", path, "': extent ", d,
                   " (z, y, x) is ", extents_zyx[d],
                   "; every extent must be a positive number of points (1 "
                   "for a dimension the field does not have)");
    STENCIL_EXPECT(std::isfinite(options.origin_xyz[d]), "write_vti to '", path,
                   "': origin_xyz[", d, "] is ", options.origin_xyz[d],
                   "; give a finite coordinate");
    STENCIL_EXPECT(
        std::isfinite(options.spacing_xyz[d]) && options.spacing_xyz[d] > 0,
        "write_vti to '", path, "': spacing_xyz[", d, "] is ",
        options.spacing_xyz[d], "; give a positive, finite spacing");
  }
  STENCIL_EXPECT(!arrays.empty(), "write_vti to '", path,
                 "': no arrays given; pass at least one");
  std::set<std::string> names;
  for (VtiArray const& array : arrays) {
    STENCIL_EXPECT(!array.name.empty(), "write_vti to '", path,
                   "': an array has an empty name (an unlabelled grid?); "
                   "name every array");
    STENCIL_EXPECT(names.insert(array.name).second, "write_vti to '", path,
                   "': two arrays are named '", array.name,
                   "'; a reader tells arrays apart by name, so give each "
                   "its own");
    STENCIL_EXPECT(array.values != nullptr, "write_vti to '", path,
                   "': array '", array.name,
                   "' has no values (a null pointer)");
  }

  std::size_t const points = static_cast<std::size_t>(extents_zyx[0]) *
                             static_cast<std::size_t>(extents_zyx[1]) *
                             static_cast<std::size_t>(extents_zyx[2]);
  std::ostringstream header;
  // The classic locale writes "0.5", not a locale's "0,5", and no
  // thousands separators in the extents.
  header.imbue(std::locale::classic());
  header.precision(17);  // every double reads back to itself
  std::string const extent = "0 " + std::to_string(extents_zyx[2] - 1) + " 0 " +
                             std::to_string(extents_zyx[1] - 1) + " 0 " +
                             std::to_string(extents_zyx[0] - 1);
  header << "<?xml version=\"1.0\"?>\n"
         << "<VTKFile type=\"ImageData\" version=\"1.0\" "
            "byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
         << "  <ImageData WholeExtent=\"" << extent << "\" Origin=\""
         << options.origin_xyz[0] << ' ' << options.origin_xyz[1] << ' '
         << options.origin_xyz[2] << "\" Spacing=\"" << options.spacing_xyz[0]
         << ' ' << options.spacing_xyz[1] << ' ' << options.spacing_xyz[2]
         << "\">\n"
         << "    <Piece Extent=\"" << extent << "\">\n"
         << "      <PointData Scalars=\"" << xml_escaped(arrays[0].name)
         << "\">\n";
  // Offsets count from the byte after the '_' that opens the appended data;
  // each array there is its byte count (UInt64, the header_type) and then
  // its values.
  std::uint64_t offset = 0;
  for (VtiArray const& array : arrays) {
    header << "        <DataArray type=\"" << type_name(array.type)
           << "\" Name=\"" << xml_escaped(array.name)
           << "\" NumberOfComponents=\"1\" format=\"appended\" offset=\""
           << offset << "\"/>\n";
    offset += sizeof(std::uint64_t) + points * type_size(array.type);
  }
  header << "      </PointData>\n"
         << "    </Piece>\n"
         << "  </ImageData>\n"
         << "  <AppendedData encoding=\"raw\">\n   _";

  OutputFile file(path, "write_vti");
  file.write(header.str());
  for (VtiArray const& array : arrays) {
    std::uint64_t const bytes = points * type_size(array.type);
    write_little_endian(file, &bytes, sizeof bytes, sizeof bytes);
    write_little_endian(file, array.values, bytes, type_size(array.type));
  }
  file.write(std::string("\n  </AppendedData>\n</VTKFile>\n"));
  file.close();
}

}  // namespace stencil::detail
