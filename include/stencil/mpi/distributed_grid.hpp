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
#include <stencil/mpi/distributed_base.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace stencil::mpi {

template <class T, int Rank,
          class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class DistributedGrid : public detail::Distributed<Grid<T, Rank, MemorySpace>> {
  using Base = detail::Distributed<Grid<T, Rank, MemorySpace>>;

 public:
  DistributedGrid(std::string label, MPI_Comm comm,
                  std::array<int, Rank> const& global,
                  DistributedOptions<Rank> const& options = {})
      : Base(label, comm, global, options, [&](auto const& extents) {
          return Grid<T, Rank, MemorySpace>(
              label, extents, {.halo = options.halo, .dt = options.dt});
        }) {}

  /// Sets every cell of this rank's grid, halo included, to f(global
  /// coordinates): the same call on every rank fills the global grid as a
  /// single-rank stencil::fill would, ghosts and global halo included. A
  /// ghost across a periodic edge takes the wrapped cell's values, the
  /// fixed halo of the other axes included, as the single grid holds them.
  template <class F>
  void fill(F&& f) {
    stencil::fill(this->m_local, this->m_layout.globalized(f));
  }

  /// This rank's own cells of the current level (a subview of local()).
  auto owned() const {
    return this->m_layout.owned_of(this->m_local.current(),
                                   this->m_local.halo());
  }

  /// The buffers an exchange refreshes: the current level.
  std::vector<typename Grid<T, Rank, MemorySpace>::view_type> exchanged()
      const {
    return {this->m_local.current()};
  }
};

}  // namespace stencil::mpi
