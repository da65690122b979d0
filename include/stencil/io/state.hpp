// SPDX-License-Identifier: Apache-2.0
// Output of a State: every field in one .vti file, one field as a PNG.
#pragma once

#include <stencil/detail/padded.hpp>
#include <stencil/fields/state.hpp>
#include <stencil/io/png.hpp>
#include <stencil/io/vtk.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

namespace stencil {

namespace detail {

/// The interior of field `field`'s current level as a contiguous host
/// array, x fastest (detail::host_interior for a grid says why the whole
/// level travels).
template <class T, int Rank, class MemorySpace>
std::vector<T> host_interior(State<T, Rank, MemorySpace> const& state,
                             int field, std::string const& call) {
  expect_not_empty(state, call.c_str());
  Kokkos::fence("stencil::" + call + ": the state's pending steps");
  auto const level = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace{}, state.current(field));
  std::vector<T> packed(state.interior_cells());
  pack_interior<decltype(level), Rank>(level, state.extents(), state.halo(),
                                       packed.data());
  return packed;
}

}  // namespace detail

/// Writes the current level of every field of `state` to `path` as one VTK
/// XML ImageData file, one point-data array per field named as the field
/// (write_vti for a grid says what the file holds). Synchronous.
template <class T, int Rank, class MemorySpace>
void write_vti(std::string const& path,
               State<T, Rank, MemorySpace> const& state,
               VtiOptions const& options = {}) {
  detail::expect_not_empty(state, "write_vti");
  std::vector<std::vector<T>> values;
  std::vector<detail::VtiArray> arrays;
  for (int f = 0; f < state.field_count(); ++f) {
    values.push_back(detail::host_interior(state, f, "write_vti"));
  }
  for (int f = 0; f < state.field_count(); ++f) {
    arrays.push_back({state.name(f), detail::vti_type_of<T>(),
                      values[f].data()});
  }
  detail::write_vti_arrays(path, detail::extents_zyx<Rank>(state.extents()),
                           options, arrays);
}

/// Writes field `field` of a rank-2 state as a PNG (write_png for a grid
/// says how values become colours). Synchronous.
template <class T, int Rank, class MemorySpace>
void write_png(std::string const& path,
               State<T, Rank, MemorySpace> const& state, int field,
               PngOptions const& options = {}) {
  static_assert(Rank == 2,
                "stencil::write_png: an image shows a rank-2 state; write "
                "rank-1 and rank-3 states with write_vti");
  auto const values = detail::host_interior(state, field, "write_png");
  detail::write_png_values(path, values.data(), state.extent(0),
                           state.extent(1), options);
}

}  // namespace stencil
