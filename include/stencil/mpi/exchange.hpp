// SPDX-License-Identifier: Apache-2.0
// The ghost exchange of a distributed grid: axis by axis, each rank sends
// its outermost ghost_width() cells to the neighbour below and above and
// receives that neighbour's into its ghosts. A later axis sends the ghosts
// an earlier one has just received, so the diagonal neighbours' cells reach
// the corners (box stencils read them) without messages of their own.
// Buffers are packed on the grid's execution space and cross MPI from host
// memory, which every MPI accepts (no CUDA-aware MPI is assumed).
#pragma once

#include <stencil/grid.hpp>
#include <stencil/mpi/decomposition.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <array>
#include <cstddef>
#include <string>
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

template <int Rank, class T, class MemorySpace, class Slab>
SlabBuffer<Rank, T, MemorySpace> buffer_like(Slab const& s) {
  using B = SlabBuffer<Rank, T, MemorySpace>;
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

/// Exchanges the ghosts of `distributed` (a DistributedGrid) with its
/// neighbours: every buffer of its exchanged() list, axis by axis. Returns the
/// bytes this rank sent.
template <class ExecSpace, class Distributed>
std::size_t exchange_ghosts(ExecSpace const& space, Distributed& distributed) {
  using T = typename Distributed::value_type;
  using MemorySpace = typename Distributed::memory_space;
  constexpr int Rank = Distributed::rank;
  using Buffer = SlabBuffer<Rank, T, MemorySpace>;
  using HostBuffer =
      decltype(Kokkos::create_mirror_view(Kokkos::HostSpace{}, Buffer{}));
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
    std::vector<Buffer> out(2 * count), in(2 * count);
    std::vector<HostBuffer> host_out(2 * count), host_in(2 * count);
    for (int v = 0; v < count; ++v) {
      for (int s = 0; s < 2; ++s) {
        if (!has[s]) continue;
        auto const from =
            slab<Rank>(views[v], halo, extents, a, send_lo[s], send_lo[s] + g);
        out[2 * v + s] = buffer_like<Rank, T, MemorySpace>(from);
        in[2 * v + s] = buffer_like<Rank, T, MemorySpace>(from);
        Kokkos::deep_copy(space, out[2 * v + s], from);
      }
    }
    space.fence("stencil::mpi: ghosts packed");
    std::vector<MPI_Request> requests;
    for (int b = 0; b < 2 * count; ++b) {
      int const s = b % 2;
      if (!has[s]) continue;
      host_out[b] = Kokkos::create_mirror_view(Kokkos::HostSpace{}, out[b]);
      host_in[b] = Kokkos::create_mirror_view(Kokkos::HostSpace{}, in[b]);
      Kokkos::deep_copy(host_out[b], out[b]);
      std::size_t const size = out[b].size() * sizeof(T);
      STENCIL_EXPECT(size <= 0x7fffffffu, "stencil::mpi: a ghost slab of ",
                     size,
                     " bytes exceeds one MPI message's 2^31-1; use a "
                     "smaller depth or more ranks on the other axes");
      int const bytes = static_cast<int>(size);
      // Buffer v's message to the neighbour below carries tag 2v, above
      // 2v + 1: the one from the neighbour above is its message below.
      int const tag = b - s;
      requests.emplace_back();
      check_mpi(MPI_Irecv(host_in[b].data(), bytes, MPI_BYTE, peer[s],
                          tag + 1 - s, d.communicator(), &requests.back()),
                "MPI_Irecv");
      requests.emplace_back();
      check_mpi(MPI_Isend(host_out[b].data(), bytes, MPI_BYTE, peer[s], tag + s,
                          d.communicator(), &requests.back()),
                "MPI_Isend");
      sent += size;
    }
    check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                          MPI_STATUSES_IGNORE),
              "MPI_Waitall");
    for (int v = 0; v < count; ++v) {
      for (int s = 0; s < 2; ++s) {
        if (!has[s]) continue;
        Kokkos::deep_copy(in[2 * v + s], host_in[2 * v + s]);
        auto const to =
            slab<Rank>(views[v], halo, extents, a, recv_lo[s], recv_lo[s] + g);
        Kokkos::deep_copy(space, to, in[2 * v + s]);
      }
    }
    // The next axis sends what this one received.
    space.fence("stencil::mpi: ghosts unpacked");
  }
  return sent;
}

}  // namespace stencil::mpi::detail
