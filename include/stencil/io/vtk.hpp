// SPDX-License-Identifier: Apache-2.0
// Field output as VTK XML ImageData (.vti), which ParaView and VisIt open.
#pragma once

#include <stencil/detail/host_interior.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace stencil {

/// Where the grid lies in space. Both are in the file's order x, y, z, the
/// reverse of a Grid's extents ({nz, ny, nx}); a rank-1 or rank-2 grid
/// uses the first one or two. Cell (k, j, i) of a rank-3 grid is the point
/// origin + (i, j, k) * spacing.
struct VtiOptions {
  std::array<double, 3> origin_xyz{0.0, 0.0, 0.0};
  std::array<double, 3> spacing_xyz{1.0, 1.0, 1.0};
};

namespace detail {

/// The VTK type names a DataArray can have.
enum class VtiType {
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  float32,
  float64
};

template <class T>
constexpr VtiType vti_type_of() {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, long double>,
                "stencil::write_vti: VTK has no type for long double; copy "
                "the values to a double grid");
  if constexpr (std::is_floating_point_v<T>) {
    return sizeof(T) == 4 ? VtiType::float32 : VtiType::float64;
  } else if constexpr (std::is_signed_v<T>) {
    if constexpr (sizeof(T) == 1) return VtiType::int8;
    if constexpr (sizeof(T) == 2) return VtiType::int16;
    if constexpr (sizeof(T) == 4) return VtiType::int32;
    if constexpr (sizeof(T) == 8) return VtiType::int64;
  } else {  // unsigned, and bool (one byte holding 0 or 1)
    if constexpr (sizeof(T) == 1) return VtiType::uint8;
    if constexpr (sizeof(T) == 2) return VtiType::uint16;
    if constexpr (sizeof(T) == 4) return VtiType::uint32;
    if constexpr (sizeof(T) == 8) return VtiType::uint64;
  }
}

/// One named array of a .vti file: `values` points to extents_zyx[0] *
/// extents_zyx[1] * extents_zyx[2] host values of `type`, contiguous, x
/// fastest (a Grid's interior in its own order).
struct VtiArray {
  std::string name;
  VtiType type = VtiType::float64;
  void const* values = nullptr;
};

/// Writes `arrays` as the point data of one .vti file of extents nz, ny, nx
/// (1 for a dimension a rank-1 or rank-2 field does not have). The first
/// array is the one ParaView colours by. Throws stencil::bad_input for a
/// non-positive extent, a spacing that is not positive and finite, no
/// arrays, an empty or repeated name or a null pointer, and stencil::error
/// with the path and the system's reason if the file cannot be written (no
/// partial file is left).
void write_vti_arrays(std::string const& path,
                      std::array<int, 3> const& extents_zyx,
                      VtiOptions const& options,
                      std::vector<VtiArray> const& arrays);

template <int Rank>
std::array<int, 3> extents_zyx(std::array<int, Rank> const& extents) {
  std::array<int, 3> zyx{1, 1, 1};
  for (int d = 0; d < Rank; ++d) zyx[3 - Rank + d] = extents[d];
  return zyx;
}

}  // namespace detail

/// Writes the interior of `grid`'s current level (not the halo) to `path`
/// as VTK XML ImageData: one point-data array named `name`, Float32 or
/// Float64 by the value type (integers as Int8..Int64 / UInt8..UInt64), in
/// raw appended binary, little-endian. A rank-1 or rank-2 grid is a line or
/// a plane of a 3D image. Works from any memory space (the level is copied
/// to the host) and waits for pending steps; synchronous. Throws
/// stencil::bad_input for an empty grid or an empty name, and
/// stencil::error naming the path if the file cannot be written.
template <class T, int Rank, class MemorySpace>
void write_vti(std::string const& path, Grid<T, Rank, MemorySpace> const& grid,
               std::string const& name, VtiOptions const& options = {}) {
  constexpr detail::VtiType type = detail::vti_type_of<T>();
  auto const values = detail::host_interior(grid, "write_vti");
  detail::write_vti_arrays(path, detail::extents_zyx<Rank>(grid.extents()),
                           options, {{name, type, values.data()}});
}

/// As above, with the grid's label as the array's name.
template <class T, int Rank, class MemorySpace>
void write_vti(std::string const& path, Grid<T, Rank, MemorySpace> const& grid,
               VtiOptions const& options = {}) {
  detail::expect_not_empty(grid, "write_vti");
  write_vti(path, grid, grid.label(), options);
}

/// Several grids of one shape in one file, one array each, named by the
/// pair's string; the first is the one ParaView colours by. Throws
/// stencil::bad_input if the list is empty, a pointer is null, a grid is
/// empty or its extents differ from the first's.
template <class T, int Rank, class MemorySpace>
void write_vti(
    std::string const& path,
    std::vector<std::pair<std::string,
                          Grid<T, Rank, MemorySpace> const*>> const& fields,
    VtiOptions const& options = {}) {
  STENCIL_EXPECT(!fields.empty(), "write_vti to '", path,
                 "': no grids given; pass at least one (name, &grid) pair");
  for (auto const& [name, grid] : fields) {
    STENCIL_EXPECT(grid != nullptr, "write_vti to '", path, "': the grid of '",
                   name, "' is a null pointer");
    detail::expect_not_empty(*grid, "write_vti");
    STENCIL_EXPECT(grid->extents() == fields.front().second->extents(),
                   "write_vti to '", path, "': grid '", grid->label(),
                   "' (array '", name, "') has other extents than grid '",
                   fields.front().second->label(),
                   "'; one file holds fields of one shape");
  }
  constexpr detail::VtiType type = detail::vti_type_of<T>();
  std::vector<Kokkos::View<T*, Kokkos::HostSpace>> values;
  std::vector<detail::VtiArray> arrays;
  values.reserve(fields.size());
  for (auto const& [name, grid] : fields) {
    values.push_back(detail::host_interior(*grid, "write_vti"));
    arrays.push_back({name, type, values.back().data()});
  }
  detail::write_vti_arrays(
      path, detail::extents_zyx<Rank>(fields.front().second->extents()),
      options, arrays);
}

}  // namespace stencil
