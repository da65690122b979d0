// SPDX-License-Identifier: Apache-2.0
// The ghost exchange of a distributed grid: axis by axis, each rank sends
// its outermost ghost_width() cells to the neighbour below and above and
// receives that neighbour's into its ghosts. A later axis sends the ghosts
// an earlier one has just received, so the diagonal neighbours' cells reach
// the corners (box stencils read them) without messages of their own.
// Buffers are packed on the grid's execution space and cross MPI from host
// memory, which every MPI accepts (no CUDA-aware MPI is assumed).
#pragma once

#include <stencil/mpi/distributed_grid.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <array>
#include <cstddef>
#include <string>

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

/// Exchanges the ghosts of `grid`'s current level with its neighbours;
/// returns the bytes this rank sent.
template <class ExecSpace, class T, int Rank, class MemorySpace>
std::size_t exchange_ghosts(ExecSpace const& space,
                            DistributedGrid<T, Rank, MemorySpace>& grid) {
  auto const& d = grid.decomposition();
  auto& local = grid.local();
  auto const v = local.current();
  int const halo = local.halo();
  int const g = grid.ghost_width();
  std::array<int, Rank> const extents = local.extents();
  std::size_t sent = 0;
  for (int a = 0; a < Rank; ++a) {
    if (d.dims()[a] == 1) continue;
    int const low = grid.ghost(a, 0);
    int const n = d.owned()[a];
    // Side 0 is the neighbour below, side 1 the one above.
    bool const has[2] = {low > 0, grid.ghost(a, 1) > 0};
    int const peer[2] = {d.low(a), d.high(a)};
    int const send_lo[2] = {low, low + n - g};
    int const recv_lo[2] = {0, low + n};
    SlabBuffer<Rank, T, MemorySpace> out[2], in[2];
    for (int s = 0; s < 2; ++s) {
      if (!has[s]) continue;
      auto const from =
          slab<Rank>(v, halo, extents, a, send_lo[s], send_lo[s] + g);
      out[s] = buffer_like<Rank, T, MemorySpace>(from);
      in[s] = buffer_like<Rank, T, MemorySpace>(from);
      Kokkos::deep_copy(space, out[s], from);
    }
    space.fence("stencil::mpi: ghosts packed");
    decltype(Kokkos::create_mirror_view(Kokkos::HostSpace{},
                                        out[0])) host_out[2],
        host_in[2];
    MPI_Request requests[4];
    int count = 0;
    for (int s = 0; s < 2; ++s) {
      if (!has[s]) continue;
      host_out[s] = Kokkos::create_mirror_view(Kokkos::HostSpace{}, out[s]);
      host_in[s] = Kokkos::create_mirror_view(Kokkos::HostSpace{}, in[s]);
      Kokkos::deep_copy(host_out[s], out[s]);
      std::size_t const size = out[s].size() * sizeof(T);
      STENCIL_EXPECT(size <= 0x7fffffffu, "stencil::mpi: a ghost slab of ",
                     size,
                     " bytes exceeds one MPI message's 2^31-1; use a "
                     "smaller depth or more ranks on the other axes");
      int const bytes = static_cast<int>(size);
      // A message to the neighbour below carries tag 0, above tag 1: the
      // one from the neighbour above is its message below.
      check_mpi(MPI_Irecv(host_in[s].data(), bytes, MPI_BYTE, peer[s], 1 - s,
                          d.communicator(), &requests[count++]),
                "MPI_Irecv");
      check_mpi(MPI_Isend(host_out[s].data(), bytes, MPI_BYTE, peer[s], s,
                          d.communicator(), &requests[count++]),
                "MPI_Isend");
      sent += static_cast<std::size_t>(bytes);
    }
    check_mpi(MPI_Waitall(count, requests, MPI_STATUSES_IGNORE), "MPI_Waitall");
    for (int s = 0; s < 2; ++s) {
      if (!has[s]) continue;
      Kokkos::deep_copy(in[s], host_in[s]);
      auto const to =
          slab<Rank>(v, halo, extents, a, recv_lo[s], recv_lo[s] + g);
      Kokkos::deep_copy(space, to, in[s]);
    }
    // The next axis sends what this one received.
    space.fence("stencil::mpi: ghosts unpacked");
  }
  return sent;
}

}  // namespace stencil::mpi::detail
