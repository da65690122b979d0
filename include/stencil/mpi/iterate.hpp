// SPDX-License-Identifier: Apache-2.0
// stencil::mpi::plan and iterate: the single-grid policies run on each
// rank's grid between ghost exchanges, one exchange per `depth` steps.
#pragma once

#include <stencil/fields/iterate.hpp>
#include <stencil/iterate.hpp>
#include <stencil/mpi/distributed_grid.hpp>
#include <stencil/mpi/distributed_state.hpp>
#include <stencil/mpi/exchange.hpp>
#include <stencil/plan.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>

namespace stencil::mpi {

/// What a distributed run does: the plan of each rank's grid, the process
/// grid, and the exchange between blocks of `depth` steps.
template <int Rank>
struct DistributedPlan {
  Plan local;  ///< the policy on this rank's grid (ghosts included)
  std::array<int, Rank> ranks{};
  std::array<int, Rank> owned{};          ///< this rank's cells
  std::array<int, Rank> extents{};        ///< this rank's grid, ghosts included
  int depth = 1;                          ///< steps between exchanges
  int ghost_width = 0;                    ///< radius x depth
  std::size_t bytes_per_exchange = 0;     ///< this rank sends, per block
  Transport transport = Transport::host;  ///< how the ghosts travel
  std::string transport_reason;           ///< why that transport
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
    << stencil::detail::format_bytes(p.bytes_per_exchange) << " ("
    << to_string(p.transport) << ", " << p.transport_reason << ")"
    << " sent per " << p.depth << " steps\n"
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

template <class Op, class Distributed>
void expect_radius_fits(Distributed const& d) {
  constexpr int r = radius_of<Op>();
  STENCIL_EXPECT(r <= d.options().radius,
                 "stencil::mpi: the stencil has "
                 "radius ",
                 r, " but the distributed grid was made for radius ",
                 d.options().radius, "; make it with radius ", r, " or more");
}

template <class D>
inline constexpr bool is_distributed_v = false;
template <class T, int Rank, class M>
inline constexpr bool is_distributed_v<DistributedGrid<T, Rank, M>> = true;
template <class T, int Rank, class M>
inline constexpr bool is_distributed_v<DistributedState<T, Rank, M>> = true;

}  // namespace detail

/// The plan of a distributed run of `op` on `d` (a DistributedGrid or a
/// DistributedState); `how` is a policy.
template <class ExecSpace, class Distributed, class Op, class How = Auto>
requires detail::is_distributed_v<Distributed>
    DistributedPlan<Distributed::rank> plan(ExecSpace const& space,
                                            Distributed& d, Op const& op,
                                            How const& how = {}) {
  constexpr int Rank = Distributed::rank;
  using T = typename Distributed::value_type;
  detail::expect_radius_fits<Op>(d);
  DistributedPlan<Rank> p;
  p.local = stencil::plan(space, d.local(), op, how);
  auto const& dec = d.decomposition();
  p.ranks = dec.dims();
  p.owned = dec.owned();
  p.extents = d.layout().extents();
  p.depth = d.options().depth;
  p.ghost_width = d.ghost_width();
  p.transport = d.transport();
  p.transport_reason = d.transport_reason();
  double owned = 1, computed = 1;
  std::size_t bytes = 0;
  std::size_t const buffers = d.exchanged().size();
  for (int a = 0; a < Rank; ++a) {
    owned *= p.owned[a];
    computed *= p.extents[a];
    std::size_t slab =
        buffers * sizeof(T) * static_cast<std::size_t>(p.ghost_width);
    for (int b = 0; b < Rank; ++b) {
      if (b != a) slab *= static_cast<std::size_t>(p.extents[b]);
    }
    for (int s = 0; s < 2; ++s) {
      if (d.ghost(a, s) > 0) bytes += slab;
    }
  }
  p.bytes_per_exchange = bytes;
  p.redundant_work = computed / owned;
  return p;
}

/// Advances `d` (a DistributedGrid or a DistributedState) `steps` steps of
/// `op` with the policy `how` on every rank: a ghost exchange, then up to
/// `depth` steps, until done. Collective: every rank of the communicator
/// calls it with the same arguments. Returns the plan it ran. The last
/// exchange has finished on return; the last block's kernels may still be
/// in flight (fence the space before reading the grid on the host).
///
/// Through the host, each exchange fences the space first (MPI sends from
/// host memory) and is timed by the wall clock. Through NCCL, exchanges
/// and blocks queue on the space's stream one after the other, with no
/// fence between them, and each exchange is timed on the stream.
template <class ExecSpace, class Distributed, class Op, class How = Auto>
requires detail::is_distributed_v<Distributed>
    DistributedPlan<Distributed::rank> iterate(ExecSpace const& space,
                                               Distributed& d, Op const& op,
                                               int steps, How const& how = {}) {
  STENCIL_EXPECT(steps >= 0, "steps is ", steps,
                 "; the number of time steps must be 0 or more");
  auto p = plan(space, d, op, how);
  auto& stats = d.exchange_stats();
  // Through NCCL the exchange queues on the stream like the blocks and is
  // timed there; through the host it fences first (MPI sends from host
  // memory) and is timed by the wall clock.
  auto exchange = [&] {
#if STENCIL_MPI_NCCL
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
      if (p.transport == Transport::nccl) {
        d.exchange_intervals().start(space.cuda_stream());
        stats.bytes_sent += detail::exchange_ghosts(space, d);
        d.exchange_intervals().stop(space.cuda_stream());
        return;
      }
    }
#endif
    space.fence("stencil::mpi: block done");
    double const start = MPI_Wtime();
    stats.bytes_sent += detail::exchange_ghosts(space, d);
    stats.seconds += MPI_Wtime() - start;
  };
  for (int done = 0; done < steps;) {
    int const block = std::min(p.depth, steps - done);
    exchange();
    ++stats.exchanges;
    stencil::iterate(space, d.local(), op, block, p.local);
    done += block;
  }
#if STENCIL_MPI_NCCL
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    stats.seconds += d.exchange_intervals().collect();
  }
#endif
  return p;
}

}  // namespace stencil::mpi
