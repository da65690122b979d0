// SPDX-License-Identifier: Apache-2.0
// NCCL for the ghost exchange: a communicator over the same ranks as the
// decomposition's MPI communicator (built where CMake found NCCL beside
// CUDA: STENCIL_HAVE_NCCL), and whether a grid's memory can use it.
#pragma once

#include <stencil/error.hpp>
#include <stencil/mpi/decomposition.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#if defined(STENCIL_HAVE_NCCL) && defined(KOKKOS_ENABLE_CUDA)
#include <nccl.h>
#define STENCIL_MPI_NCCL 1
#else
#define STENCIL_MPI_NCCL 0
#endif

namespace stencil::mpi::detail {

/// Whether a grid in `MemorySpace` can exchange through NCCL in this build.
template <class MemorySpace>
constexpr bool nccl_runs() {
#if STENCIL_MPI_NCCL
  return std::is_same_v<MemorySpace, Kokkos::CudaSpace>;
#else
  return false;
#endif
}

#if STENCIL_MPI_NCCL
inline void check_nccl(ncclResult_t r, char const* call) {
  if (r == ncclSuccess) return;
  stencil::detail::throw_error(stencil::detail::concat(
      "stencil::mpi: ", call, " failed: ", ncclGetErrorString(r)));
}

/// An NCCL communicator with the ranks of `comm`, in its order.
class NcclComm {
 public:
  NcclComm() = default;
  explicit NcclComm(MPI_Comm comm) {
    int rank = 0, size = 0;
    check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    ncclUniqueId id{};
    if (rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm), "MPI_Bcast");
    check_nccl(ncclCommInitRank(&m_comm, size, id, rank), "ncclCommInitRank");
  }
  NcclComm(NcclComm const&) = delete;
  NcclComm& operator=(NcclComm const&) = delete;
  ~NcclComm() {
    if (m_comm != nullptr) ncclCommDestroy(m_comm);
  }
  ncclComm_t get() const { return m_comm; }

 private:
  ncclComm_t m_comm = nullptr;
};
/// Whether any two ranks of `comm` run on the same GPU (NCCL refuses a
/// communicator with two ranks on one device). Collective over `comm`.
inline bool ranks_share_a_gpu(MPI_Comm comm) {
  int device = Kokkos::Cuda().cuda_device();
  cudaUUID_t mine{};
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    stencil::detail::throw_error(stencil::detail::concat(
        "stencil::mpi: cudaGetDeviceProperties failed for device ", device));
  }
  mine = prop.uuid;
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  std::vector<cudaUUID_t> all(static_cast<std::size_t>(size));
  check_mpi(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine,
                          MPI_BYTE, comm),
            "MPI_Allgather");
  for (int a = 0; a < size; ++a) {
    for (int b = a + 1; b < size; ++b) {
      if (std::memcmp(&all[a], &all[b], sizeof mine) == 0) return true;
    }
  }
  return false;
}

/// Times intervals of a CUDA stream without waiting for them: an event
/// pair around each, read back at collect(). The events are kept and
/// reused.
class StreamIntervals {
 public:
  StreamIntervals() = default;
  StreamIntervals(StreamIntervals const&) = delete;
  StreamIntervals& operator=(StreamIntervals const&) = delete;
  ~StreamIntervals() {
    for (auto& p : m_events) {
      cudaEventDestroy(p[0]);
      cudaEventDestroy(p[1]);
    }
  }
  void start(cudaStream_t stream) {
    if (m_used == m_events.size()) {
      std::array<cudaEvent_t, 2> p{};
      check_cuda(cudaEventCreate(&p[0]), "cudaEventCreate");
      check_cuda(cudaEventCreate(&p[1]), "cudaEventCreate");
      m_events.push_back(p);
    }
    check_cuda(cudaEventRecord(m_events[m_used][0], stream), "cudaEventRecord");
  }
  void stop(cudaStream_t stream) {
    check_cuda(cudaEventRecord(m_events[m_used][1], stream), "cudaEventRecord");
    ++m_used;
  }
  /// Waits for the last interval to end (not for work queued after it),
  /// returns the seconds of all intervals since the last collect(), and
  /// forgets them.
  double collect() {
    if (m_used == 0) return 0.0;
    check_cuda(cudaEventSynchronize(m_events[m_used - 1][1]),
               "cudaEventSynchronize");
    double seconds = 0.0;
    for (std::size_t i = 0; i < m_used; ++i) {
      float ms = 0.0f;
      check_cuda(cudaEventElapsedTime(&ms, m_events[i][0], m_events[i][1]),
                 "cudaEventElapsedTime");
      seconds += 1e-3 * ms;
    }
    m_used = 0;
    return seconds;
  }

 private:
  static void check_cuda(cudaError_t e, char const* call) {
    if (e == cudaSuccess) return;
    stencil::detail::throw_error(stencil::detail::concat(
        "stencil::mpi: ", call, " failed: ", cudaGetErrorString(e)));
  }
  std::vector<std::array<cudaEvent_t, 2>> m_events;
  std::size_t m_used = 0;
};
#endif

/// The transport chosen for a grid, and why.
struct TransportChoice {
  Transport transport = Transport::host;
  std::string reason;
};

/// The transport a grid in `MemorySpace` on the ranks of `comm` uses for
/// `requested`, or stencil::unsupported saying what runs. Collective over
/// `comm` (it asks every rank for its GPU).
template <class MemorySpace>
TransportChoice choose_transport(Transport requested, MPI_Comm comm) {
  if (requested == Transport::host) return {Transport::host, "requested"};
  (void)comm;
  bool shared = false;
#if STENCIL_MPI_NCCL
  if constexpr (nccl_runs<MemorySpace>()) shared = ranks_share_a_gpu(comm);
#endif
  if (requested == Transport::nccl) {
    STENCIL_EXPECT_SUPPORTED(
        nccl_runs<MemorySpace>(), "stencil::mpi: transport nccl",
        " needs a grid in Kokkos::CudaSpace and a build that found NCCL "
        "(STENCIL_HAVE_NCCL); this grid lives in ",
        MemorySpace::name(),
#if STENCIL_MPI_NCCL
        " (NCCL found)",
#else
        " and this build has no NCCL",
#endif
        "; use Transport::host");
    STENCIL_EXPECT_SUPPORTED(
        !shared, "stencil::mpi: transport nccl",
        " needs a GPU of its own for every rank, and two ranks of this "
        "communicator run on one GPU (NCCL refuses that); run one rank per "
        "GPU or use Transport::host");
    return {Transport::nccl, "requested"};
  }
  if (!nccl_runs<MemorySpace>()) {
    return {Transport::host,
            std::string("automatic: NCCL does not run here (the grid is in ") +
                MemorySpace::name() +
                (STENCIL_MPI_NCCL ? ")" : " and this build has no NCCL)")};
  }
  if (shared) {
    return {Transport::host,
            "automatic: two ranks share a GPU, which NCCL refuses"};
  }
  return {Transport::nccl,
          "automatic: every rank has a GPU of its own, and NCCL moved the "
          "ghosts several times faster than host staging "
          "(docs/decisions/mpi-transport.md)"};
}

}  // namespace stencil::mpi::detail
