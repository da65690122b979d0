// SPDX-License-Identifier: Apache-2.0
// What DistributedGrid and DistributedState share: the ghost layout, the
// rank's container (a Grid or a State) with its sides set, the transport,
// the exchange's kept buffers and NCCL communicator, and its statistics.
#pragma once

#include <stencil/mpi/decomposition.hpp>
#include <stencil/mpi/exchange.hpp>
#include <stencil/mpi/ghost_layout.hpp>
#include <stencil/mpi/nccl.hpp>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>

namespace stencil::mpi {

/// What this rank's exchanges took since the grid was made or the
/// statistics were reset: their time (through the host, wall time from the
/// first pack to the last unpack, the space fenced before, so no compute is
/// counted; through NCCL, the time they held the stream, waits for the
/// neighbours included), bytes sent, and exchanges.
struct ExchangeStats {
  double seconds = 0.0;
  std::size_t bytes_sent = 0;
  long long exchanges = 0;
};

namespace detail {

template <class Local>
class Distributed {
 public:
  using local_type = Local;
  using value_type = typename Local::value_type;
  using memory_space = typename Local::memory_space;
  static constexpr int rank = Local::rank;

  /// This rank's container: its cells with the ghost cells around them.
  Local& local() { return m_local; }
  Local const& local() const { return m_local; }
  Decomposition<rank> const& decomposition() const {
    return m_layout.decomposition();
  }
  DistributedOptions<rank> const& options() const { return m_layout.options(); }
  GhostLayout<rank> const& layout() const { return m_layout; }
  int ghost_width() const { return m_layout.ghost_width(); }
  /// Ghost cells below (side 0) and above (side 1) this rank's block along
  /// `axis`: ghost_width() on a shared side, 0 elsewhere.
  int ghost(int axis, int side) const { return m_layout.ghost(axis, side); }
  std::array<int, rank> const& global_extents() const {
    return decomposition().global();
  }
  double time() const { return m_local.time(); }
  ExchangeStats const& exchange_stats() const { return m_stats; }
  ExchangeStats& exchange_stats() { return m_stats; }
  /// How the ghosts travel (options().transport resolved).
  Transport transport() const { return m_transport.transport; }
  /// Why: "requested", or what `automatic` saw.
  std::string const& transport_reason() const { return m_transport.reason; }
  /// The exchange's packs and host staging, kept between exchanges.
  ExchangeBuffers<rank, value_type, memory_space>& exchange_buffers() {
    return m_buffers;
  }
#if STENCIL_MPI_NCCL
  /// The NCCL communicator of the decomposition's ranks, made at the first
  /// exchange that needs it (collective, as exchanges are).
  ncclComm_t nccl_comm() {
    if (!m_nccl) {
      m_nccl = std::make_unique<NcclComm>(decomposition().communicator());
    }
    return m_nccl->get();
  }
  /// The exchanges' intervals on the stream, when they are not fenced.
  StreamIntervals& exchange_intervals() { return m_intervals; }
#endif

 protected:
  /// `make(extents)` builds the rank's container for the layout's extents.
  template <class Make>
  Distributed(std::string const& label, MPI_Comm comm,
              std::array<int, rank> const& global,
              DistributedOptions<rank> const& options, Make&& make)
      : m_layout(label, comm, global, options),
        m_transport(choose_transport<memory_space>(
            options.transport, m_layout.decomposition().communicator())),
        m_local(make(m_layout.extents())) {
    m_layout.set_sides(m_local);
  }

  GhostLayout<rank> m_layout;
  TransportChoice m_transport;
  Local m_local;

 private:
  ExchangeStats m_stats;
  ExchangeBuffers<rank, value_type, memory_space> m_buffers;
#if STENCIL_MPI_NCCL
  std::unique_ptr<NcclComm> m_nccl;
  StreamIntervals m_intervals;
#endif
};

}  // namespace detail
}  // namespace stencil::mpi
