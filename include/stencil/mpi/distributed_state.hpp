// SPDX-License-Identifier: Apache-2.0
// The several fields and time levels of a solver (stencil::State) split
// over MPI ranks, as DistributedGrid splits one grid: each rank's State
// holds its block and the ghosts of its neighbours, and an exchange
// refreshes every kept level of every written field (a leapfrog's ghosts
// need u at n-1 too); read-only coefficients are filled once, ghosts
// included, and never exchanged. in.position() names global cells (the
// portable kernels map them; the native kernels of several fields refuse
// such a state).
#pragma once

#include <stencil/fields/state.hpp>
#include <stencil/mpi/distributed_grid.hpp>
#include <stencil/mpi/exchange.hpp>
#include <stencil/mpi/ghost_layout.hpp>
#include <stencil/mpi/nccl.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace stencil::mpi {

template <class T, int Rank,
          class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class DistributedState {
 public:
  using value_type = T;
  using memory_space = MemorySpace;
  using local_type = State<T, Rank, MemorySpace>;
  static constexpr int rank = Rank;

  /// `fields` as for stencil::State (stencil::field_specs<Op>({...})).
  DistributedState(std::string label, MPI_Comm comm,
                   std::array<int, Rank> const& global,
                   std::vector<FieldSpec> fields,
                   DistributedOptions<Rank> const& options = {},
                   double t0 = 0.0)
      : m_layout(label, comm, global, options),
        m_local(label, m_layout.extents(), std::move(fields),
                {.halo = options.halo, .t0 = t0, .dt = options.dt}),
        m_transport(detail::resolve_transport<MemorySpace>(options.transport)) {
    m_layout.set_sides(m_local);
    // in.position() names global cells, wrapped across periodic edges, as
    // a single-rank state gives them.
    stencil::detail::PositionMap map;
    auto const& d = m_layout.decomposition();
    for (int a = 0; a < Rank; ++a) {
      int const slot = 3 - Rank + a;
      map.origin[slot] = d.offset()[a] - m_layout.ghost(a, 0);
      bool const wraps =
          options.boundary[a] == Boundary::periodic && d.dims()[a] > 1;
      map.period[slot] = wraps ? d.global()[a] : 0;
    }
    m_local.set_position_map(map);
  }

  /// How this state's ghosts travel (options().transport resolved).
  Transport transport() const { return m_transport; }
#if STENCIL_MPI_NCCL
  ncclComm_t nccl_comm() {
    if (!m_nccl) {
      m_nccl = std::make_unique<detail::NcclComm>(
          m_layout.decomposition().communicator());
    }
    return m_nccl->get();
  }
#endif
  detail::ExchangeBuffers<Rank, T, MemorySpace>& exchange_buffers() {
    return m_buffers;
  }

  local_type& local() { return m_local; }
  local_type const& local() const { return m_local; }
  Decomposition<Rank> const& decomposition() const {
    return m_layout.decomposition();
  }
  DistributedOptions<Rank> const& options() const { return m_layout.options(); }
  detail::GhostLayout<Rank> const& layout() const { return m_layout; }
  int ghost_width() const { return m_layout.ghost_width(); }
  int ghost(int axis, int side) const { return m_layout.ghost(axis, side); }
  std::array<int, Rank> const& global_extents() const {
    return decomposition().global();
  }
  double time() const { return m_local.time(); }
  ExchangeStats const& exchange_stats() const { return m_stats; }
  ExchangeStats& exchange_stats() { return m_stats; }

  /// Every level of field `field`, halo included, from f(global
  /// coordinates), as DistributedGrid::fill.
  template <class F>
  void fill(int field, F&& f) {
    stencil::fill(m_local, field, m_layout.globalized(f));
  }
  /// Level `level` (0, -1, ...) of field `field` only.
  template <class F>
  void fill_level(int field, int level, F&& f) {
    stencil::fill_level(m_local, field, level, m_layout.globalized(f));
  }

  /// This rank's own cells of level `level` of field `field`.
  auto owned(int field, int level = 0) const {
    return m_layout.owned_of(m_local.level(field, level), m_local.halo());
  }

  /// The buffers an exchange refreshes: every kept level of every field a
  /// step writes.
  std::vector<typename local_type::view_type> exchanged() const {
    std::vector<typename local_type::view_type> views;
    for (int f = 0; f < m_local.field_count(); ++f) {
      if (m_local.spec(f).read_only) continue;
      for (int k = 0; k < m_local.spec(f).levels; ++k) {
        views.push_back(m_local.level(f, -k));
      }
    }
    return views;
  }

 private:
  detail::GhostLayout<Rank> m_layout;
  local_type m_local;
  Transport m_transport;
  ExchangeStats m_stats;
  detail::ExchangeBuffers<Rank, T, MemorySpace> m_buffers;
#if STENCIL_MPI_NCCL
  std::unique_ptr<detail::NcclComm> m_nccl;
#endif
};

}  // namespace stencil::mpi
