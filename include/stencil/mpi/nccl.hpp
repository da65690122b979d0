// SPDX-License-Identifier: Apache-2.0
// NCCL for the ghost exchange: a communicator over the same ranks as the
// decomposition's MPI communicator (built where CMake found NCCL beside
// CUDA: STENCIL_HAVE_NCCL), and whether a grid's memory can use it.
#pragma once

#include <stencil/error.hpp>
#include <stencil/mpi/decomposition.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <string>
#include <type_traits>

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

/// The transport a grid in `MemorySpace` uses for `requested`, or
/// stencil::unsupported saying what runs.
template <class MemorySpace>
Transport resolve_transport(Transport requested) {
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
    return Transport::nccl;
  }
  return Transport::host;
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
#endif

}  // namespace stencil::mpi::detail
