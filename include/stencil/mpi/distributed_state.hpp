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
#include <stencil/mpi/distributed_base.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace stencil::mpi {

template <class T, int Rank,
          class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class DistributedState
    : public detail::Distributed<State<T, Rank, MemorySpace>> {
  using Base = detail::Distributed<State<T, Rank, MemorySpace>>;

 public:
  /// `fields` as for stencil::State (stencil::field_specs<Op>({...})).
  DistributedState(std::string label, MPI_Comm comm,
                   std::array<int, Rank> const& global,
                   std::vector<FieldSpec> fields,
                   DistributedOptions<Rank> const& options = {},
                   double t0 = 0.0)
      : Base(label, comm, global, options, [&](auto const& extents) {
          return State<T, Rank, MemorySpace>(
              label, extents, std::move(fields),
              {.halo = options.halo, .t0 = t0, .dt = options.dt});
        }) {
    // in.position() names global cells, wrapped across periodic edges, as
    // a single-rank state gives them.
    stencil::detail::PositionMap map;
    auto const& d = this->decomposition();
    for (int a = 0; a < Rank; ++a) {
      int const slot = 3 - Rank + a;
      map.origin[slot] = d.offset()[a] - this->ghost(a, 0);
      bool const wraps =
          options.boundary[a] == Boundary::periodic && d.dims()[a] > 1;
      map.period[slot] = wraps ? d.global()[a] : 0;
    }
    this->m_local.set_position_map(map);
  }

  /// Every level of field `field`, halo included, from f(global
  /// coordinates), as DistributedGrid::fill.
  template <class F>
  void fill(int field, F&& f) {
    stencil::fill(this->m_local, field, this->m_layout.globalized(f));
  }
  /// Level `level` (0, -1, ...) of field `field` only.
  template <class F>
  void fill_level(int field, int level, F&& f) {
    stencil::fill_level(this->m_local, field, level,
                        this->m_layout.globalized(f));
  }

  /// This rank's own cells of level `level` of field `field`.
  auto owned(int field, int level = 0) const {
    return this->m_layout.owned_of(this->m_local.level(field, level),
                                   this->m_local.halo());
  }

  /// The buffers an exchange refreshes: every kept level of every field a
  /// step writes.
  std::vector<typename State<T, Rank, MemorySpace>::view_type> exchanged()
      const {
    std::vector<typename State<T, Rank, MemorySpace>::view_type> views;
    auto const& local = this->local();
    for (int f = 0; f < local.field_count(); ++f) {
      if (local.spec(f).read_only) continue;
      for (int k = 0; k < local.spec(f).levels; ++k) {
        views.push_back(local.level(f, -k));
      }
    }
    return views;
  }
};

}  // namespace stencil::mpi
