// SPDX-License-Identifier: Apache-2.0
// A Cartesian decomposition of a global grid over an MPI communicator: the
// process grid, this rank's block of cells and its neighbours.
#pragma once

#include <stencil/boundary.hpp>
#include <stencil/error.hpp>

#include <mpi.h>

#include <array>
#include <string>

namespace stencil::mpi {

/// How ghost slabs travel between ranks. `host`: packed on the grid's
/// space, staged through (pinned) host memory, sent with MPI; every MPI
/// accepts it. `nccl`: NCCL point-to-point between device buffers on the
/// space's stream (CUDA grids, in a build that found NCCL, one GPU per
/// rank), ordered with the compute so that no exchange waits for the host.
/// `automatic`: nccl where it runs, host elsewhere
/// (docs/decisions/mpi-transport.md).
enum class Transport { automatic, host, nccl };

inline char const* to_string(Transport t) {
  switch (t) {
    case Transport::host:
      return "host";
    case Transport::nccl:
      return "nccl";
    default:
      return "automatic";
  }
}

/// How a distributed grid is laid out and advanced.
template <int Rank>
struct DistributedOptions {
  /// The largest radius of the stencils the grid will be advanced with.
  int radius = 1;
  /// Steps between two halo exchanges: each rank keeps `radius x depth`
  /// ghost cells of its neighbours on every side it shares, recomputes them
  /// redundantly, and exchanges once per `depth` steps.
  int depth = 4;
  /// The halo of each rank's grid beyond its ghost cells (at least
  /// `radius`): the global boundary where the rank touches it.
  int halo = 1;
  /// Ranks per axis (slowest first); 0 on an axis lets the library choose:
  /// the process grid whose exchange moves the fewest ghost cells.
  std::array<int, Rank> ranks{};
  /// The global boundary of each axis, slowest first: fixed, periodic,
  /// neumann or reflecting on both sides.
  std::array<Boundary, Rank> boundary = filled(Boundary::fixed);
  double dt = 1.0;
  /// How the ghosts travel (see Transport).
  Transport transport = Transport::automatic;

  static constexpr std::array<Boundary, Rank> filled(Boundary b) {
    std::array<Boundary, Rank> a{};
    for (auto& x : a) x = b;
    return a;
  }
};

namespace detail {

inline void check_mpi(int code, char const* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  stencil::detail::throw_error(stencil::detail::concat(
      "stencil::mpi: ", call, " failed: ", std::string(text, length)));
}

/// The process grid of `size` ranks whose exchange moves the fewest cells:
/// the axes `given` fixes (> 0) keep their count, and the others take the
/// factorisation of the rest that minimises one rank's ghost cells sent
/// per exchange (ghost width `g` on every side of a split axis), among
/// those that give every rank at least `g` cells along a split axis. Ties
/// go to fewer split axes, then to the first found (the slow axes split
/// first). Returns false when no factorisation fits; the caller then lets
/// MPI_Dims_create choose and reports what does not fit.
/// Why not MPI_Dims_create alone: it balances rank counts, not faces, and
/// on a long 3D box (2560x352x384 per GPU) its 2x2x2 grid sends about ten
/// times the cells of 8x1x1 slabs.
template <int Rank>
bool least_exchange_dims(int size, std::array<int, Rank> const& global,
                         int const (&given)[Rank], int g, int (&dims)[Rank]) {
  int trial[Rank] = {};
  double best = -1;
  int best_split = Rank + 1;
  auto cost = [&](int& split) {
    double sent = 0;
    split = 0;
    for (int a = 0; a < Rank; ++a) {
      if (trial[a] == 1) continue;
      if (global[a] / trial[a] < g) return -1.0;
      ++split;
      double face = g;
      for (int b = 0; b < Rank; ++b) {
        if (b == a) continue;
        int const p = trial[b];
        face *= (global[b] + p - 1) / p + (p > 1 ? 2 * g : 0);
      }
      sent += 2 * face;
    }
    return sent;
  };
  auto search = [&](auto&& self, int axis, int left) -> void {
    if (axis == Rank) {
      if (left != 1) return;
      int split = 0;
      double const sent = cost(split);
      if (sent < 0) return;
      if (best < 0 || sent < best || (sent == best && split < best_split)) {
        best = sent;
        best_split = split;
        for (int a = 0; a < Rank; ++a) dims[a] = trial[a];
      }
      return;
    }
    if (given[axis] > 0) {
      if (left % given[axis] != 0) return;
      trial[axis] = given[axis];
      self(self, axis + 1, left / given[axis]);
      return;
    }
    for (int f = left; f >= 1; --f) {
      if (left % f != 0) continue;
      trial[axis] = f;
      self(self, axis + 1, left / f);
    }
  };
  search(search, 0, size);
  return best >= 0;
}

}  // namespace detail

/// The process grid and this rank's place in it. Cells are split as evenly
/// as possible: the first `n mod P` ranks of an axis hold one cell more.
template <int Rank>
class Decomposition {
 public:
  Decomposition(MPI_Comm comm, std::array<int, Rank> const& global,
                DistributedOptions<Rank> const& options)
      : m_global(global) {
    int size = 0;
    detail::check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    int dims[Rank] = {};
    int periods[Rank] = {};
    long long product = 1;
    bool chosen = true;
    for (int a = 0; a < Rank; ++a) {
      STENCIL_EXPECT(options.ranks[a] >= 0, "stencil::mpi: ranks[", a, "] is ",
                     options.ranks[a],
                     "; give a positive number of ranks or 0 to let the "
                     "library choose");
      dims[a] = options.ranks[a];
      if (dims[a] > 0) product *= dims[a];
      chosen = chosen && dims[a] > 0;
      periods[a] = options.boundary[a] == Boundary::periodic;
    }
    STENCIL_EXPECT(chosen ? product == size : size % product == 0,
                   "stencil::mpi: the process grid given has ", product,
                   " ranks but the communicator has ", size,
                   "; give ranks whose product is ", size,
                   " (0 on an axis lets the library choose)");
    if (!chosen) {
      int given[Rank] = {};
      for (int a = 0; a < Rank; ++a) given[a] = dims[a];
      if (!detail::least_exchange_dims<Rank>(
              size, global, given, options.radius * options.depth, dims)) {
        detail::check_mpi(MPI_Dims_create(size, Rank, dims), "MPI_Dims_create");
      }
    }
    detail::check_mpi(MPI_Cart_create(comm, Rank, dims, periods, 0, &m_cart),
                      "MPI_Cart_create");
    int coords[Rank] = {};
    detail::check_mpi(MPI_Comm_rank(m_cart, &m_rank), "MPI_Comm_rank");
    detail::check_mpi(MPI_Cart_coords(m_cart, m_rank, Rank, coords),
                      "MPI_Cart_coords");
    for (int a = 0; a < Rank; ++a) {
      m_dims[a] = dims[a];
      m_coords[a] = coords[a];
      int const n = global[a], p = dims[a], c = coords[a];
      STENCIL_EXPECT(n >= p, "stencil::mpi: axis ", a, " has ", n,
                     " cells for ", p, " ranks; give at most ", n,
                     " ranks on it");
      m_owned[a] = n / p + (c < n % p ? 1 : 0);
      m_offset[a] = c * (n / p) + (c < n % p ? c : n % p);
      detail::check_mpi(MPI_Cart_shift(m_cart, a, 1, &m_low[a], &m_high[a]),
                        "MPI_Cart_shift");
    }
  }

  Decomposition(Decomposition const&) = delete;
  Decomposition& operator=(Decomposition const&) = delete;
  ~Decomposition() {
    if (m_cart != MPI_COMM_NULL) MPI_Comm_free(&m_cart);
  }

  MPI_Comm communicator() const { return m_cart; }
  int rank() const { return m_rank; }
  std::array<int, Rank> const& dims() const { return m_dims; }
  std::array<int, Rank> const& coords() const { return m_coords; }
  std::array<int, Rank> const& global() const { return m_global; }
  /// This rank's cells and the global index of its first cell, per axis.
  std::array<int, Rank> const& owned() const { return m_owned; }
  std::array<int, Rank> const& offset() const { return m_offset; }
  /// The neighbour below and above along `axis` (MPI_PROC_NULL at a
  /// non-periodic global edge).
  int low(int axis) const { return m_low[axis]; }
  int high(int axis) const { return m_high[axis]; }
  /// Whether this rank shares its side of `axis` with another block: an
  /// axis split over several ranks, inside the domain or periodic.
  bool shares(int axis, bool high_side) const {
    if (m_dims[axis] == 1) return false;
    return (high_side ? m_high[axis] : m_low[axis]) != MPI_PROC_NULL;
  }

 private:
  MPI_Comm m_cart = MPI_COMM_NULL;
  int m_rank = 0;
  std::array<int, Rank> m_global{}, m_dims{}, m_coords{}, m_owned{}, m_offset{},
      m_low{}, m_high{};
};

}  // namespace stencil::mpi
