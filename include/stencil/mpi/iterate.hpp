// SPDX-License-Identifier: Apache-2.0
// stencil::mpi::plan and iterate: the single-grid policies run on each
// rank's grid between ghost exchanges, one exchange per `depth` steps.
#pragma once

#include <stencil/iterate.hpp>
#include <stencil/mpi/distributed_grid.hpp>
#include <stencil/mpi/exchange.hpp>
#include <stencil/plan.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <ostream>
#include <sstream>
#include <string>

namespace stencil::mpi {

/// What a distributed run does: the plan of each rank's grid, the process
/// grid, and the exchange between blocks of `depth` steps.
template <int Rank>
struct DistributedPlan {
  Plan local;  ///< the policy on this rank's grid (ghosts included)
  std::array<int, Rank> ranks{};
  std::array<int, Rank> owned{};       ///< this rank's cells
  std::array<int, Rank> extents{};     ///< this rank's grid, ghosts included
  int depth = 1;                       ///< steps between exchanges
  int ghost_width = 0;                 ///< radius x depth
  std::size_t bytes_per_exchange = 0;  ///< this rank sends, per block
  /// Cells this rank computes per cell it owns (the ghosts' redundant work).
  double redundant_work = 1.0;
};

template <int Rank>
std::string to_string(DistributedPlan<Rank> const& p) {
  std::ostringstream s;
  auto join = [&](std::array<int, Rank> const& a) {
    for (int i = 0; i < Rank; ++i) s << (i ? "x" : "") << a[i];
  };
  s << "distributed over ";
  join(p.ranks);
  s << " ranks; this rank owns ";
  join(p.owned);
  s << " cells in a grid of ";
  join(p.extents);
  s << " (ghosts of " << p.ghost_width << " cells, " << p.redundant_work
    << "x the owned work); one exchange of "
    << stencil::detail::format_bytes(p.bytes_per_exchange) << " sent per "
    << p.depth << " steps\n"
    << p.local;
  return s.str();
}

namespace detail {

template <class Op>
constexpr int radius_of() {
  if constexpr (requires { Op::fields::radius; }) {
    return Op::fields::radius;
  } else {
    return Op::radius;
  }
}

template <class T, int Rank, class MemorySpace, class Op>
void expect_radius_fits(DistributedGrid<T, Rank, MemorySpace> const& grid) {
  constexpr int r = radius_of<Op>();
  STENCIL_EXPECT(r <= grid.options().radius,
                 "stencil::mpi: the stencil has "
                 "radius ",
                 r, " but the distributed grid was made for radius ",
                 grid.options().radius, "; make it with radius ", r,
                 " or more");
}

}  // namespace detail

/// The plan of a distributed run of `op` on `grid`; `how` is a policy.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Op,
          class How = Auto>
DistributedPlan<Rank> plan(ExecSpace const& space,
                           DistributedGrid<T, Rank, MemorySpace>& grid,
                           Op const& op, How const& how = {}) {
  detail::expect_radius_fits<T, Rank, MemorySpace, Op>(grid);
  DistributedPlan<Rank> p;
  p.local = stencil::plan(space, grid.local(), op, how);
  auto const& d = grid.decomposition();
  p.ranks = d.dims();
  p.owned = d.owned();
  p.extents = grid.local().extents();
  p.depth = grid.options().depth;
  p.ghost_width = grid.ghost_width();
  double owned = 1, computed = 1;
  std::size_t bytes = 0;
  for (int a = 0; a < Rank; ++a) {
    owned *= p.owned[a];
    computed *= p.extents[a];
    std::size_t slab = sizeof(T) * static_cast<std::size_t>(p.ghost_width);
    for (int b = 0; b < Rank; ++b) {
      if (b != a) slab *= static_cast<std::size_t>(p.extents[b]);
    }
    for (int s = 0; s < 2; ++s) {
      if (grid.ghost(a, s) > 0) bytes += slab;
    }
  }
  p.bytes_per_exchange = bytes;
  p.redundant_work = computed / owned;
  return p;
}

/// Advances the distributed grid `steps` steps of `op` with the policy
/// `how` on every rank: a ghost exchange, then up to `depth` steps, until
/// done. Collective: every rank of the grid's communicator calls it with
/// the same arguments. Returns the plan it ran. Synchronous (the exchange
/// waits for the data), so the grid can be read on return after a fence.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Op,
          class How = Auto>
DistributedPlan<Rank> iterate(ExecSpace const& space,
                              DistributedGrid<T, Rank, MemorySpace>& grid,
                              Op const& op, int steps, How const& how = {}) {
  STENCIL_EXPECT(steps >= 0, "steps is ", steps,
                 "; the number of time steps must be 0 or more");
  DistributedPlan<Rank> p = plan(space, grid, op, how);
  for (int done = 0; done < steps;) {
    int const block = std::min(p.depth, steps - done);
    space.fence("stencil::mpi: block done");
    double const start = MPI_Wtime();
    std::size_t const sent = detail::exchange_ghosts(space, grid);
    auto& stats = grid.exchange_stats();
    stats.seconds += MPI_Wtime() - start;
    stats.bytes_sent += sent;
    ++stats.exchanges;
    stencil::iterate(space, grid.local(), op, block, p.local);
    done += block;
  }
  return p;
}

}  // namespace stencil::mpi
