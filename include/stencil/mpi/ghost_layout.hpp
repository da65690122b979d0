// SPDX-License-Identifier: Apache-2.0
// What a distributed grid and a distributed state share: the checked
// options, the decomposition, and the ghost cells each rank keeps of its
// neighbours. Each rank's container (a Grid or a State) holds its block
// plus `radius x depth` ghost cells on every side it shares, and a halo
// beyond them that is fixed there and the global boundary elsewhere.
#pragma once

#include <stencil/boundary.hpp>
#include <stencil/error.hpp>
#include <stencil/mpi/decomposition.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <string>

namespace stencil::mpi::detail {

template <int Rank>
class GhostLayout {
 public:
  GhostLayout(std::string const& label, MPI_Comm comm,
              std::array<int, Rank> const& global,
              DistributedOptions<Rank> const& options)
      : m_options(checked(options, label)),
        m_decomposition(comm, global, m_options) {
    int const g = ghost_width();
    for (int a = 0; a < Rank; ++a) {
      m_ghost[a][0] = m_decomposition.shares(a, false) ? g : 0;
      m_ghost[a][1] = m_decomposition.shares(a, true) ? g : 0;
      m_extents[a] = m_ghost[a][0] + m_decomposition.owned()[a] + m_ghost[a][1];
      if (m_decomposition.dims()[a] == 1) continue;
      // A neighbour fills its ghosts from this rank's outermost cells.
      int const fewest = global[a] / m_decomposition.dims()[a];
      STENCIL_EXPECT(fewest >= g, "distributed grid '", label, "': axis ", a,
                     " gives ", fewest,
                     " cells to a rank but the ghost width is ", g, " (radius ",
                     m_options.radius, " x depth ", m_options.depth,
                     "); use depth ", std::max(1, fewest / m_options.radius),
                     " or less, or fewer ranks on that axis");
    }
  }

  DistributedOptions<Rank> const& options() const { return m_options; }
  Decomposition<Rank> const& decomposition() const { return m_decomposition; }
  int ghost_width() const { return m_options.radius * m_options.depth; }
  int ghost(int axis, int side) const { return m_ghost[axis][side]; }
  /// The rank's container: its cells and ghosts, per axis.
  std::array<int, Rank> const& extents() const { return m_extents; }

  /// The global coordinate of the container's cell `i` along `axis` (halo
  /// included); a ghost across a periodic edge names the wrapped cell.
  int global(int axis, int i) const {
    int const g = i + m_decomposition.offset()[axis] - m_ghost[axis][0];
    int const n = m_decomposition.global()[axis];
    bool const wraps = m_options.boundary[axis] == Boundary::periodic &&
                       m_decomposition.dims()[axis] > 1;
    return wraps ? ((g % n) + n) % n : g;
  }

  /// A shared side is fixed: its ghosts come from the neighbour and the halo
  /// beyond them reaches no cell that matters. A global edge keeps the
  /// global boundary, and an axis periodic on one rank wraps within it.
  template <class Local>
  void set_sides(Local& local) const {
    for (int a = 0; a < Rank; ++a) {
      Boundary const kind = m_options.boundary[a];
      if (kind == Boundary::periodic) {
        if (m_decomposition.dims()[a] == 1) {
          local.set_boundary(a, Side::both, Boundary::periodic);
        }
        continue;
      }
      for (int s = 0; s < 2; ++s) {
        if (m_ghost[a][s] == 0) {
          local.set_boundary(a, s == 0 ? Side::low : Side::high, kind);
        }
      }
    }
  }

  /// f(global coordinates) for g(container coordinates), as stencil::fill
  /// takes it.
  template <class F>
  auto globalized(F& f) const {
    if constexpr (Rank == 1) {
      return [this, &f](int i) { return f(global(0, i)); };
    } else if constexpr (Rank == 2) {
      return [this, &f](int i, int j) { return f(global(0, i), global(1, j)); };
    } else {
      return [this, &f](int i, int j, int k) {
        return f(global(0, i), global(1, j), global(2, k));
      };
    }
  }

  /// The rank's own cells of the padded view `v` (a subview).
  template <class View>
  auto owned_of(View const& v, int halo) const {
    auto range = [&](int a) {
      int const lo = halo + m_ghost[a][0];
      return Kokkos::pair<int, int>(lo, lo + m_decomposition.owned()[a]);
    };
    if constexpr (Rank == 1) {
      return Kokkos::subview(v, range(0));
    } else if constexpr (Rank == 2) {
      return Kokkos::subview(v, range(0), range(1));
    } else {
      return Kokkos::subview(v, range(0), range(1), range(2));
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

  DistributedOptions<Rank> m_options;
  Decomposition<Rank> m_decomposition;
  std::array<std::array<int, 2>, Rank> m_ghost{};
  std::array<int, Rank> m_extents{};
};

}  // namespace stencil::mpi::detail
