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
#include <stencil/mpi/exchange.hpp>
#include <stencil/mpi/ghost_layout.hpp>
#include <stencil/mpi/nccl.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

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
  using local_type = Grid<T, Rank, MemorySpace>;
  static constexpr int rank = Rank;

  DistributedGrid(std::string label, MPI_Comm comm,
                  std::array<int, Rank> const& global,
                  DistributedOptions<Rank> const& options = {})
      : m_layout(label, comm, global, options),
        m_transport(detail::resolve_transport<MemorySpace>(options.transport)),
        m_local(label, m_layout.extents(),
                {.halo = options.halo, .dt = options.dt}) {
    m_layout.set_sides(m_local);
  }

  /// How this grid's ghosts travel (options().transport resolved).
  Transport transport() const { return m_transport; }
#if STENCIL_MPI_NCCL
  /// The NCCL communicator of the decomposition's ranks, made at the first
  /// exchange that needs it (collective, as exchanges are).
  ncclComm_t nccl_comm() {
    if (!m_nccl) {
      m_nccl = std::make_unique<detail::NcclComm>(
          m_layout.decomposition().communicator());
    }
    return m_nccl->get();
  }
#endif

  /// This rank's grid: its cells with the ghost cells around them.
  local_type& local() { return m_local; }
  local_type const& local() const { return m_local; }
  Decomposition<Rank> const& decomposition() const {
    return m_layout.decomposition();
  }
  DistributedOptions<Rank> const& options() const { return m_layout.options(); }
  detail::GhostLayout<Rank> const& layout() const { return m_layout; }
  int ghost_width() const { return m_layout.ghost_width(); }
  /// Ghost cells below (side 0) and above (side 1) this rank's block along
  /// `axis`: ghost_width() on a shared side, 0 elsewhere.
  int ghost(int axis, int side) const { return m_layout.ghost(axis, side); }
  std::array<int, Rank> const& global_extents() const {
    return decomposition().global();
  }
  double time() const { return m_local.time(); }
  ExchangeStats const& exchange_stats() const { return m_stats; }
  ExchangeStats& exchange_stats() { return m_stats; }
  /// The exchange's packs and host staging, kept between exchanges.
  detail::ExchangeBuffers<Rank, T, MemorySpace>& exchange_buffers() {
    return m_buffers;
  }

  /// Sets every cell of this rank's grid, halo included, to f(global
  /// coordinates): the same call on every rank fills the global grid as a
  /// single-rank stencil::fill would, ghosts and global halo included. A
  /// ghost across a periodic edge takes the wrapped cell's values, the
  /// fixed halo of the other axes included, as the single grid holds them.
  template <class F>
  void fill(F&& f) {
    stencil::fill(m_local, m_layout.globalized(f));
  }

  /// This rank's own cells of the current level (a subview of local()).
  auto owned() const {
    return m_layout.owned_of(m_local.current(), m_local.halo());
  }

  /// The buffers an exchange refreshes: the current level.
  std::vector<typename local_type::view_type> exchanged() const {
    return {m_local.current()};
  }

 private:
  detail::GhostLayout<Rank> m_layout;
  Transport m_transport;
  local_type m_local;
  ExchangeStats m_stats;
  detail::ExchangeBuffers<Rank, T, MemorySpace> m_buffers;
#if STENCIL_MPI_NCCL
  std::unique_ptr<detail::NcclComm> m_nccl;
#endif
};

}  // namespace stencil::mpi
