// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/error.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <utility>

namespace stencil {

/// What the halo cells around the interior mean.
/// `fixed`: Dirichlet; halo cells hold what the user set (with `fill`) and are
/// never overwritten. `periodic`: the halo mirrors the opposite side of the
/// interior; it is refreshed from the interior before every step.
enum class Boundary { fixed, periodic };

/// Construction options of a Grid. The halo must be at least the radius of
/// every stencil applied to the grid; iterate refuses a narrower one.
struct GridOptions {
  int halo = 1;
  Boundary boundary = Boundary::fixed;
};

namespace detail {
template <class T, int Rank>
struct ViewData;
template <class T>
struct ViewData<T, 1> {
  using type = T*;
};
template <class T>
struct ViewData<T, 2> {
  using type = T**;
};
template <class T>
struct ViewData<T, 3> {
  using type = T***;
};
}  // namespace detail

/// A structured grid of `Rank` dimensions (1, 2 or 3) with two buffers, the
/// current time level and the next, each holding the interior plus `halo`
/// cells on every side. Extents are given slowest dimension first ({ny, nx},
/// {nz, ny, nx}); the last dimension is contiguous (LayoutRight).
///
/// A Grid owns its buffers and is move-only: a copy would share buffers but
/// not which one is current.
template <class T, int Rank,
          class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class Grid {
  static_assert(Rank >= 1 && Rank <= 3,
                "stencil::Grid: Rank must be 1, 2 or 3");
  static_assert(std::is_arithmetic_v<T>,
                "stencil::Grid: the value type must be a floating-point or "
                "integer type");

 public:
  using value_type = T;
  using memory_space = MemorySpace;
  using view_type = Kokkos::View<typename detail::ViewData<T, Rank>::type,
                                 Kokkos::LayoutRight, MemorySpace>;
  static constexpr int rank = Rank;

  /// Allocates both buffers (zero-initialised). Throws stencil::error if an
  /// extent is not positive or the halo is negative.
  Grid(std::string label, std::array<int, Rank> const& extents,
       GridOptions options = {})
      : m_label(std::move(label)),
        m_extents(extents),
        m_halo(options.halo),
        m_boundary(options.boundary) {
    for (int d = 0; d < Rank; ++d) {
      STENCIL_EXPECT(extents[d] > 0, "grid '", m_label, "': extent ", d,
                     " is ", extents[d],
                     "; every extent must be a positive number of cells");
    }
    STENCIL_EXPECT(m_halo >= 0 && m_halo <= 64, "grid '", m_label,
                   "': halo is ", m_halo,
                   "; it must be between 0 and 64 cells (at least the radius "
                   "of the stencils you apply)");
    m_buffers[0] = allocate(m_label + ":a");
    m_buffers[1] = allocate(m_label + ":b");
  }

  Grid(Grid const&) = delete;
  Grid& operator=(Grid const&) = delete;
  Grid(Grid&&) noexcept = default;
  Grid& operator=(Grid&&) noexcept = default;
  ~Grid() = default;

  std::string const& label() const { return m_label; }
  std::array<int, Rank> const& extents() const { return m_extents; }
  /// Interior extent of dimension `d` (0 = slowest).
  int extent(int d) const { return m_extents[d]; }
  /// Extent of dimension `d` including both halos.
  int padded_extent(int d) const { return m_extents[d] + 2 * m_halo; }
  int halo() const { return m_halo; }
  Boundary boundary() const { return m_boundary; }
  std::size_t interior_cells() const {
    std::size_t n = 1;
    for (int e : m_extents) n *= static_cast<std::size_t>(e);
    return n;
  }

  /// The current time level, halo included: index i of dimension d is the
  /// interior cell i - halo.
  view_type const& current() const { return m_buffers[m_current]; }
  /// The buffer the next step writes; its halo holds the boundary values too.
  view_type const& next() const { return m_buffers[1 - m_current]; }
  /// The interior of the current time level, as an unmanaged-offset subview.
  auto interior() const { return interior_of(current()); }

  /// Makes `next()` current. Called by iterate after each step.
  void swap() noexcept { m_current = 1 - m_current; }

 private:
  view_type allocate(std::string const& name) const {
    if constexpr (Rank == 1) {
      return view_type(name, padded_extent(0));
    } else if constexpr (Rank == 2) {
      return view_type(name, padded_extent(0), padded_extent(1));
    } else {
      return view_type(name, padded_extent(0), padded_extent(1),
                       padded_extent(2));
    }
  }

  auto interior_of(view_type const& v) const {
    auto range = [this](int d) {
      return Kokkos::pair<int, int>(m_halo, m_halo + m_extents[d]);
    };
    if constexpr (Rank == 1) {
      return Kokkos::subview(v, range(0));
    } else if constexpr (Rank == 2) {
      return Kokkos::subview(v, range(0), range(1));
    } else {
      return Kokkos::subview(v, range(0), range(1), range(2));
    }
  }

  std::string m_label;
  std::array<int, Rank> m_extents;
  int m_halo;
  Boundary m_boundary;
  std::array<view_type, 2> m_buffers;
  int m_current = 0;
};

/// Sets every cell of both buffers, halo included, to `f(i)` / `f(i, j)` /
/// `f(i, j, k)`, where the indices are interior coordinates (the halo has
/// indices -halo..-1 and n..n+halo-1). `f` runs on the host. Writing both
/// buffers puts the fixed boundary values where every later step reads them.
/// Synchronous: returns when the device holds the values.
template <class T, int Rank, class MemorySpace, class F>
void fill(Grid<T, Rank, MemorySpace>& grid, F&& f) {
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace{}, grid.current());
  int const h = grid.halo();
  if constexpr (Rank == 1) {
    for (int i = 0; i < grid.padded_extent(0); ++i) host(i) = f(i - h);
  } else if constexpr (Rank == 2) {
    for (int i = 0; i < grid.padded_extent(0); ++i)
      for (int j = 0; j < grid.padded_extent(1); ++j)
        host(i, j) = f(i - h, j - h);
  } else {
    for (int i = 0; i < grid.padded_extent(0); ++i)
      for (int j = 0; j < grid.padded_extent(1); ++j)
        for (int k = 0; k < grid.padded_extent(2); ++k)
          host(i, j, k) = f(i - h, j - h, k - h);
  }
  Kokkos::deep_copy(grid.current(), host);
  Kokkos::deep_copy(grid.next(), host);
}

}  // namespace stencil
