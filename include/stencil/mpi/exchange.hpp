// SPDX-License-Identifier: Apache-2.0
// The ghost exchange of a distributed grid: axis by axis, each rank sends
// its outermost ghost_width() cells to the neighbour below and above and
// receives that neighbour's into its ghosts. A later axis sends the ghosts
// an earlier one has just received, so the diagonal neighbours' cells reach
// the corners (box stencils read them) without messages of their own.
// Buffers are packed on the grid's execution space and cross MPI from host
// memory (pinned where the grid lives on a GPU), which every MPI accepts:
// no CUDA-aware MPI is assumed. Through NCCL, they move device to device
// on the space's stream, and the exchange returns with its work queued.
// They are kept between exchanges.
#pragma once

#include <stencil/grid.hpp>
#include <stencil/mpi/decomposition.hpp>
#include <stencil/mpi/nccl.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace stencil::mpi::detail {

/// Cells [lo, hi) along `axis` and every cell of the ghosts-included block
/// along the other axes, of the padded view `v`.
template <int Rank, class View>
auto slab(View const& v, int halo, std::array<int, Rank> const& extents,
          int axis, int lo, int hi) {
  auto range = [&](int a) {
    return a == axis ? Kokkos::pair<int, int>(halo + lo, halo + hi)
                     : Kokkos::pair<int, int>(halo, halo + extents[a]);
  };
  if constexpr (Rank == 1) {
    return Kokkos::subview(v, range(0));
  } else if constexpr (Rank == 2) {
    return Kokkos::subview(v, range(0), range(1));
  } else {
    return Kokkos::subview(v, range(0), range(1), range(2));
  }
}

template <int Rank, class T, class MemorySpace>
using SlabBuffer =
    Kokkos::View<typename stencil::detail::ViewData<T, Rank>::type,
                 Kokkos::LayoutRight, MemorySpace>;

/// A contiguous buffer of the shape of slab `s`, in `Space`.
template <int Rank, class T, class Space, class Slab>
SlabBuffer<Rank, T, Space> buffer_like(Slab const& s) {
  using B = SlabBuffer<Rank, T, Space>;
  std::string const label = "stencil::mpi::slab";
  auto const init = Kokkos::view_alloc(Kokkos::WithoutInitializing, label);
  if constexpr (Rank == 1) {
    return B(init, s.extent(0));
  } else if constexpr (Rank == 2) {
    return B(init, s.extent(0), s.extent(1));
  } else {
    return B(init, s.extent(0), s.extent(1), s.extent(2));
  }
}

/// The exchange's buffers, kept from one exchange to the next (allocating
/// device and pinned memory per exchange would cost more than the copy):
/// per axis and per (buffer, side), a contiguous pack in the grid's memory
/// and, where the host cannot read that memory, a pinned host copy that
/// MPI sends from and receives into (no CUDA-aware MPI assumed).
template <int Rank, class T, class MemorySpace>
class ExchangeBuffers {
 public:
  static constexpr bool host_accessible =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
  using Pack = SlabBuffer<Rank, T, MemorySpace>;
  using Staging = SlabBuffer<Rank, T,
                             std::conditional_t<host_accessible, MemorySpace,
                                                Kokkos::SharedHostPinnedSpace>>;
  struct Pair {
    Pack pack;
    Staging host;  // the pack itself where the host reads it
  };

  /// Makes room for `count` buffers of `axis` each way; the references
  /// get() returns stay valid until the next call.
  void prepare(int axis, int count) {
    if (static_cast<int>(m_out[axis].size()) < count) {
      m_out[axis].resize(count);
      m_in[axis].resize(count);
    }
  }

  /// Buffer `b` (< the count prepared) of `axis`, `outgoing` or not,
  /// shaped as slab `s`.
  template <class Slab>
  Pair& get(int axis, int b, bool outgoing, Slab const& s) {
    Pair& p = (outgoing ? m_out : m_in)[axis][b];
    bool same = p.pack.is_allocated();
    for (int r = 0; r < Rank && same; ++r) {
      same = p.pack.extent(r) == s.extent(r);
    }
    if (!same) {
      p.pack = buffer_like<Rank, T, MemorySpace>(s);
      if constexpr (host_accessible) {
        p.host = p.pack;
      } else {
        p.host = buffer_like<Rank, T, Kokkos::SharedHostPinnedSpace>(s);
      }
    }
    return p;
  }

 private:
  std::array<std::vector<Pair>, Rank> m_out, m_in;
};

#if STENCIL_MPI_NCCL
/// One axis of the exchange through NCCL, device buffer to device buffer on
/// the space's stream. NCCL matches a pair's messages in the order they are
/// issued (it has no tags), so each rank sends below then above and
/// receives from above then below: with two ranks on a periodic axis, where
/// both neighbours are the same rank, its message below then meets the
/// other's receive from above. Returns the bytes sent.
template <class Pairs>
std::size_t nccl_exchange(Kokkos::Cuda const& space, ncclComm_t comm,
                          Pairs const& out, Pairs const& in,
                          bool const (&has)[2], int const (&peer)[2]) {
  cudaStream_t const stream = space.cuda_stream();
  std::size_t sent = 0;
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t v = 0; 2 * v < out.size(); ++v) {
    for (int s : {0, 1}) {
      if (!has[s]) continue;
      auto const& buffer = out[2 * v + s]->pack;
      std::size_t const bytes =
          buffer.size() *
          sizeof(typename std::decay_t<decltype(buffer)>::value_type);
      check_nccl(
          ncclSend(buffer.data(), bytes, ncclChar, peer[s], comm, stream),
          "ncclSend");
      sent += bytes;
    }
    for (int s : {1, 0}) {
      if (!has[s]) continue;
      auto const& buffer = in[2 * v + s]->pack;
      std::size_t const bytes =
          buffer.size() *
          sizeof(typename std::decay_t<decltype(buffer)>::value_type);
      check_nccl(
          ncclRecv(buffer.data(), bytes, ncclChar, peer[s], comm, stream),
          "ncclRecv");
    }
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  return sent;
}
#endif

/// Exchanges the ghosts of `distributed` (a DistributedGrid) with its
/// neighbours: every buffer of its exchanged() list, axis by axis. Returns the
/// bytes this rank sent.
template <class ExecSpace, class Distributed>
std::size_t exchange_ghosts(ExecSpace const& space, Distributed& distributed) {
  using T = typename Distributed::value_type;
  using MemorySpace = typename Distributed::memory_space;
  constexpr int Rank = Distributed::rank;
  using Buffers = ExchangeBuffers<Rank, T, MemorySpace>;
  auto const& layout = distributed.layout();
  auto const& d = layout.decomposition();
  auto const views = distributed.exchanged();
  int const halo = distributed.local().halo();
  int const g = layout.ghost_width();
  std::array<int, Rank> const extents = layout.extents();
  int const count = static_cast<int>(views.size());
  std::size_t sent = 0;
  for (int a = 0; a < Rank; ++a) {
    if (d.dims()[a] == 1) continue;
    int const low = layout.ghost(a, 0);
    int const n = d.owned()[a];
    // Side 0 is the neighbour below, side 1 the one above.
    bool const has[2] = {low > 0, layout.ghost(a, 1) > 0};
    int const peer[2] = {d.low(a), d.high(a)};
    int const send_lo[2] = {low, low + n - g};
    int const recv_lo[2] = {0, low + n};
    auto& buffers = distributed.exchange_buffers();
    buffers.prepare(a, 2 * count);
    std::vector<typename Buffers::Pair*> out(2 * count), in(2 * count);
    for (int v = 0; v < count; ++v) {
      for (int s = 0; s < 2; ++s) {
        if (!has[s]) continue;
        int const b = 2 * v + s;
        auto const from =
            slab<Rank>(views[v], halo, extents, a, send_lo[s], send_lo[s] + g);
        out[b] = &buffers.get(a, b, true, from);
        in[b] = &buffers.get(a, b, false, from);
        Kokkos::deep_copy(space, out[b]->pack, from);
        if constexpr (!Buffers::host_accessible) {
          Kokkos::deep_copy(space, out[b]->host, out[b]->pack);
        }
      }
    }
#if STENCIL_MPI_NCCL
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda> &&
                  nccl_runs<MemorySpace>()) {
      if (distributed.transport() == Transport::nccl) {
        sent +=
            nccl_exchange(space, distributed.nccl_comm(), out, in, has, peer);
        for (int v = 0; v < count; ++v) {
          for (int s = 0; s < 2; ++s) {
            if (!has[s]) continue;
            auto const to = slab<Rank>(views[v], halo, extents, a, recv_lo[s],
                                       recv_lo[s] + g);
            Kokkos::deep_copy(space, to, in[2 * v + s]->pack);
          }
        }
        // No fence: the next axis's packs, and the next block's kernels,
        // follow this unpack on the same stream.
        continue;
      }
    }
#endif
    space.fence("stencil::mpi: ghosts packed");
    std::vector<MPI_Request> requests;
    for (int b = 0; b < 2 * count; ++b) {
      int const s = b % 2;
      if (!has[s]) continue;
      std::size_t const size = out[b]->pack.size() * sizeof(T);
      STENCIL_EXPECT(size <= 0x7fffffffu, "stencil::mpi: a ghost slab of ",
                     size,
                     " bytes exceeds one MPI message's 2^31-1; use a "
                     "smaller depth or more ranks on the other axes");
      int const bytes = static_cast<int>(size);
      // Buffer v's message to the neighbour below carries tag 2v, above
      // 2v + 1: the one from the neighbour above is its message below.
      int const tag = b - s;
      requests.emplace_back();
      check_mpi(MPI_Irecv(in[b]->host.data(), bytes, MPI_BYTE, peer[s],
                          tag + 1 - s, d.communicator(), &requests.back()),
                "MPI_Irecv");
      requests.emplace_back();
      check_mpi(MPI_Isend(out[b]->host.data(), bytes, MPI_BYTE, peer[s],
                          tag + s, d.communicator(), &requests.back()),
                "MPI_Isend");
      sent += size;
    }
    check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                          MPI_STATUSES_IGNORE),
              "MPI_Waitall");
    for (int v = 0; v < count; ++v) {
      for (int s = 0; s < 2; ++s) {
        if (!has[s]) continue;
        int const b = 2 * v + s;
        if constexpr (!Buffers::host_accessible) {
          Kokkos::deep_copy(space, in[b]->pack, in[b]->host);
        }
        auto const to =
            slab<Rank>(views[v], halo, extents, a, recv_lo[s], recv_lo[s] + g);
        Kokkos::deep_copy(space, to, in[b]->pack);
      }
    }
    // The next axis sends what this one received.
    space.fence("stencil::mpi: ghosts unpacked");
  }
  return sent;
}

}  // namespace stencil::mpi::detail
