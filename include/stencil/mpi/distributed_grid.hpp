// SPDX-License-Identifier: Apache-2.0
// A grid split over the ranks of an MPI communicator. Each rank holds its
// block of cells plus `radius x depth` ghost cells of its neighbours on
// every side it shares, as one stencil::Grid: the library's policies
// advance it like any grid, the ghost cells included (their outer halo is
// fixed), and the error that comes in from that halo moves `radius` cells
// per step, so after `depth` steps it has reached only the ghost cells.
// Then the ranks exchange ghosts once, for `depth` steps of work.
#pragma once

#include <stencil/grid.hpp>
#include <stencil/mpi/decomposition.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <utility>

namespace stencil::mpi {

/// What this rank's exchanges took since the grid was made or the
/// statistics were reset: wall time from the first pack to the last unpack
/// (the space fenced before, so no compute is counted), bytes sent, and
/// exchanges.
struct ExchangeStats {
  double seconds = 0.0;
  std::size_t bytes_sent = 0;
  long long exchanges = 0;
};

template <class T, int Rank,
          class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class DistributedGrid {
 public:
  using value_type = T;
  using memory_space = MemorySpace;
  using grid_type = Grid<T, Rank, MemorySpace>;
  static constexpr int rank = Rank;

  DistributedGrid(std::string label, MPI_Comm comm,
                  std::array<int, Rank> const& global,
                  DistributedOptions<Rank> const& options = {})
      : m_options(checked(options, label)),
        m_decomposition(comm, global, m_options) {
    int const g = ghost_width();
    std::array<int, Rank> extents{};
    for (int a = 0; a < Rank; ++a) {
      m_ghost[a][0] = m_decomposition.shares(a, false) ? g : 0;
      m_ghost[a][1] = m_decomposition.shares(a, true) ? g : 0;
      extents[a] = m_ghost[a][0] + m_decomposition.owned()[a] + m_ghost[a][1];
    }
    expect_ghosts_fit(label);
    m_local =
        grid_type(label, extents, {.halo = m_options.halo, .dt = m_options.dt});
    // A shared side is fixed: its ghost cells come from the neighbour and
    // the halo beyond them is never read by a cell that matters. A global
    // edge keeps the global boundary, and an axis periodic on one rank
    // wraps within it.
    for (int a = 0; a < Rank; ++a) {
      Boundary const global_kind = m_options.boundary[a];
      for (int s = 0; s < 2; ++s) {
        Side const side = s == 0 ? Side::low : Side::high;
        if (global_kind == Boundary::periodic) {
          if (m_decomposition.dims()[a] == 1)
            m_local.set_boundary(a, Side::both, Boundary::periodic);
        } else if (m_ghost[a][s] == 0) {
          m_local.set_boundary(a, side, global_kind);
        }
      }
    }
  }

  /// This rank's grid: its cells with the ghost cells around them.
  grid_type& local() { return m_local; }
  grid_type const& local() const { return m_local; }
  Decomposition<Rank> const& decomposition() const { return m_decomposition; }
  DistributedOptions<Rank> const& options() const { return m_options; }
  int ghost_width() const { return m_options.radius * m_options.depth; }
  /// Ghost cells below (side 0) and above (side 1) this rank's block along
  /// `axis`: ghost_width() on a shared side, 0 elsewhere.
  int ghost(int axis, int side) const { return m_ghost[axis][side]; }
  std::array<int, Rank> const& global_extents() const {
    return m_decomposition.global();
  }
  double time() const { return m_local.time(); }
  ExchangeStats const& exchange_stats() const { return m_stats; }
  ExchangeStats& exchange_stats() { return m_stats; }

  /// Sets every cell of this rank's grid, halo included, to f(global
  /// coordinates): the same call on every rank fills the global grid as a
  /// single-rank stencil::fill would, ghosts and global halo included. A
  /// ghost across a periodic edge takes the wrapped cell's values, the
  /// fixed halo of the other axes included, as the single grid holds them.
  template <class F>
  void fill(F&& f) {
    auto const global = [&](int a, int i) {
      int const g = i + m_decomposition.offset()[a] - m_ghost[a][0];
      int const n = m_decomposition.global()[a];
      bool const wraps = m_options.boundary[a] == Boundary::periodic &&
                         m_decomposition.dims()[a] > 1;
      return wraps ? ((g % n) + n) % n : g;
    };
    if constexpr (Rank == 1) {
      stencil::fill(m_local, [&](int i) { return f(global(0, i)); });
    } else if constexpr (Rank == 2) {
      stencil::fill(
          m_local, [&](int i, int j) { return f(global(0, i), global(1, j)); });
    } else {
      stencil::fill(m_local, [&](int i, int j, int k) {
        return f(global(0, i), global(1, j), global(2, k));
      });
    }
  }

  /// This rank's own cells of the current level (a subview of local()).
  auto owned() const {
    auto range = [&](int a) {
      int const lo = m_options.halo + m_ghost[a][0];
      return Kokkos::pair<int, int>(lo, lo + m_decomposition.owned()[a]);
    };
    if constexpr (Rank == 1) {
      return Kokkos::subview(m_local.current(), range(0));
    } else if constexpr (Rank == 2) {
      return Kokkos::subview(m_local.current(), range(0), range(1));
    } else {
      return Kokkos::subview(m_local.current(), range(0), range(1), range(2));
    }
  }

 private:
  static DistributedOptions<Rank> const& checked(
      DistributedOptions<Rank> const& o, std::string const& label) {
    std::string const context = "distributed grid '" + label + "'";
    STENCIL_EXPECT(o.radius >= 1, context, ": radius is ", o.radius,
                   "; give the largest radius of the stencils to apply (1 "
                   "or more)");
    STENCIL_EXPECT(o.depth >= 1, context, ": depth is ", o.depth,
                   "; give the steps between exchanges (1 or more)");
    STENCIL_EXPECT(o.halo >= o.radius, context, ": halo is ", o.halo,
                   " but radius is ", o.radius,
                   "; the halo must hold at least radius cells");
    for (int a = 0; a < Rank; ++a) {
      Boundary const b = o.boundary[a];
      STENCIL_EXPECT(b == Boundary::fixed || b == Boundary::periodic ||
                         b == Boundary::neumann || b == Boundary::reflecting,
                     context, ": axis ", a, " is ",
                     stencil::detail::boundary_name(b),
                     "; a distributed grid runs fixed, periodic, neumann "
                     "and reflecting global boundaries (a dirichlet "
                     "function of position is not distributed yet)");
    }
    return o;
  }

  /// A neighbour fills its ghosts from this rank's outermost ghost_width()
  /// cells, so every block must hold at least that many.
  void expect_ghosts_fit(std::string const& label) const {
    int const g = ghost_width();
    for (int a = 0; a < Rank; ++a) {
      if (m_decomposition.dims()[a] == 1) continue;
      int const fewest =
          m_decomposition.global()[a] / m_decomposition.dims()[a];
      STENCIL_EXPECT(fewest >= g, "distributed grid '", label, "': axis ", a,
                     " gives ", fewest,
                     " cells to a rank but the ghost width is ", g, " (radius ",
                     m_options.radius, " x depth ", m_options.depth,
                     "); use depth ", std::max(1, fewest / m_options.radius),
                     " or less, or fewer ranks on that axis");
    }
  }

  DistributedOptions<Rank> m_options;
  Decomposition<Rank> m_decomposition;
  std::array<std::array<int, 2>, Rank> m_ghost{};
  grid_type m_local;
  ExchangeStats m_stats;
};

}  // namespace stencil::mpi
