// SPDX-License-Identifier: Apache-2.0
// A padded buffer (interior plus `halo` cells on every side, LayoutRight):
// what a Grid's levels and a State's fields are, allocated, viewed and
// filled the same way.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <utility>

namespace stencil::detail {

/// A zero-initialised padded buffer of `extents` (slowest first) and halo.
template <class View, int Rank>
View allocate_padded(std::string const& name,
                     std::array<int, Rank> const& extents, int halo) {
  auto padded = [&](int d) { return extents[d] + 2 * halo; };
  if constexpr (Rank == 1) {
    return View(name, padded(0));
  } else if constexpr (Rank == 2) {
    return View(name, padded(0), padded(1));
  } else {
    return View(name, padded(0), padded(1), padded(2));
  }
}

/// The interior of a padded buffer, as a subview.
template <class View, int Rank>
auto interior_of(View const& v, std::array<int, Rank> const& extents,
                 int halo) {
  auto range = [&](int d) {
    return Kokkos::pair<int, int>(halo, halo + extents[d]);
  };
  if constexpr (Rank == 1) {
    return Kokkos::subview(v, range(0));
  } else if constexpr (Rank == 2) {
    return Kokkos::subview(v, range(0), range(1));
  } else {
    return Kokkos::subview(v, range(0), range(1), range(2));
  }
}

/// Copies the halo of padded buffer `from` into `to`, axis by axis: the
/// two halo bands of an axis span the interior of the axes before it and
/// the whole of the axes after it, so every halo cell is copied once.
template <class ExecSpace, class View>
void copy_halo(ExecSpace const& space, View const& to, View const& from,
               int halo) {
  if (halo == 0) return;
  using Range = std::pair<int, int>;
  constexpr int rank = View::rank;
  for (int axis = 0; axis < rank; ++axis) {
    int const n = to.extent_int(axis);
    for (Range const band : {Range{0, halo}, Range{n - halo, n}}) {
      Range ranges[3];
      for (int b = 0; b < rank; ++b) {
        int const m = to.extent_int(b);
        ranges[b] = b == axis  ? band
                    : b < axis ? Range{halo, m - halo}
                               : Range{0, m};
      }
      auto copy = [&](auto const&... r) {
        Kokkos::deep_copy(space, Kokkos::subview(to, r...),
                          Kokkos::subview(from, r...));
      };
      if constexpr (rank == 1) {
        copy(ranges[0]);
      } else if constexpr (rank == 2) {
        copy(ranges[0], ranges[1]);
      } else {
        copy(ranges[0], ranges[1], ranges[2]);
      }
    }
  }
}

/// Sets every cell of a host padded buffer, halo included, to f(i),
/// f(i, j) or f(i, j, k) in interior coordinates (the halo is -halo..-1
/// and n..n+halo-1).
template <class HostView, int Rank, class F>
void fill_padded(HostView const& host, std::array<int, Rank> const& extents,
                 int halo, F&& f) {
  int const h = halo;
  auto padded = [&](int d) { return extents[d] + 2 * h; };
  if constexpr (Rank == 1) {
    for (int i = 0; i < padded(0); ++i) host(i) = f(i - h);
  } else if constexpr (Rank == 2) {
    for (int i = 0; i < padded(0); ++i)
      for (int j = 0; j < padded(1); ++j) host(i, j) = f(i - h, j - h);
  } else {
    for (int i = 0; i < padded(0); ++i)
      for (int j = 0; j < padded(1); ++j)
        for (int k = 0; k < padded(2); ++k)
          host(i, j, k) = f(i - h, j - h, k - h);
  }
}

/// Copies the interior of a host padded buffer to `out`, contiguous, in the
/// buffer's order (the last index fastest). Rows of the last dimension are
/// contiguous in both, so they are copied whole.
template <class HostView, int Rank, class T>
void pack_interior(HostView const& level, std::array<int, Rank> const& extents,
                   int halo, T* out) {
  int const h = halo;
  if constexpr (Rank == 1) {
    std::copy_n(&level(h), extents[0], out);
  } else if constexpr (Rank == 2) {
    for (int i = 0; i < extents[0]; ++i, out += extents[1]) {
      std::copy_n(&level(h + i, h), extents[1], out);
    }
  } else {
    for (int i = 0; i < extents[0]; ++i) {
      for (int j = 0; j < extents[1]; ++j, out += extents[2]) {
        std::copy_n(&level(h + i, h + j, h), extents[2], out);
      }
    }
  }
}

}  // namespace stencil::detail
