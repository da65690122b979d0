// SPDX-License-Identifier: Apache-2.0
// Device-wide barriers: every block sees every other block's writes from
// before the barrier, and none overwrites before all have read; grids that
// cannot be resident together are refused before they launch.
#include "native_test.hpp"

#include <stencil/error.hpp>
#include <stencil/native_cuda/common/grid_barrier.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace {

using stencil::native_cuda::BarrierKind;
using stencil::native_cuda::CounterBarrier;
using stencil::native_cuda::GridSyncBarrier;

/// Round r: block b writes r into its slot, barrier, every thread reads the
/// slot of another block (a different one per thread) and counts a value
/// other than r, barrier. A barrier that lets a block through early, or
/// does not order memory, makes stale or future values visible.
template <class Barrier>
__global__ void exchange(Barrier barrier, int* slots, int* errors, int rounds) {
  int const blocks = static_cast<int>(gridDim.x);
  int const other =
      (static_cast<int>(blockIdx.x) + 1 + static_cast<int>(threadIdx.x)) %
      blocks;
  for (int r = 1; r <= rounds; ++r) {
    if (threadIdx.x == 0) slots[blockIdx.x] = r;
    barrier.sync();
    if (slots[other] != r) atomicAdd(errors, 1);
    barrier.sync();
  }
}

template <class Barrier>
int exchange_errors(Barrier barrier, int blocks, int rounds) {
  Kokkos::View<int*, Kokkos::CudaSpace> slots("slots", blocks);
  Kokkos::View<int, Kokkos::CudaSpace> errors("errors");
  stencil::native_cuda::launch_cooperative(
      &exchange<Barrier>, blocks, 128, 0, Kokkos::Cuda{}.cuda_stream(), barrier,
      slots.data(), errors.data(), rounds);
  int host_errors = -1;
  Kokkos::deep_copy(host_errors, errors);
  return host_errors;
}

int multiprocessors() {
  return Kokkos::Cuda{}.cuda_device_prop().multiProcessorCount;
}

TEST(GridBarrier, GridSyncOrdersMemory) {
  STENCIL_REQUIRE_GPU();
  for (int blocks : {1, 3, multiprocessors(), 2 * multiprocessors()}) {
    EXPECT_EQ(exchange_errors(GridSyncBarrier{}, blocks, 500), 0)
        << blocks << " blocks";
  }
}

TEST(GridBarrier, CounterOrdersMemory) {
  STENCIL_REQUIRE_GPU();
  for (int blocks : {1, 3, multiprocessors(), 2 * multiprocessors()}) {
    // A counter starts with its low 31 bits 0, its top bit either way.
    for (unsigned start : {0u, 0x80000000u}) {
      Kokkos::View<unsigned, Kokkos::CudaSpace> counter("counter");
      Kokkos::deep_copy(counter, start);
      CounterBarrier const barrier{counter.data(),
                                   static_cast<unsigned>(blocks)};
      EXPECT_EQ(exchange_errors(barrier, blocks, 500), 0)
          << blocks << " blocks";
      // Reusable: a second launch on the same counter.
      EXPECT_EQ(exchange_errors(barrier, blocks, 7), 0) << blocks << " blocks";
    }
  }
}

TEST(GridBarrier, RefusesGridsThatCannotBeResident) {
  STENCIL_REQUIRE_GPU();
  int const fit = stencil::native_cuda::co_resident_blocks(
      &exchange<GridSyncBarrier>, 128, 0);
  ASSERT_GE(fit, multiprocessors());
  Kokkos::View<int, Kokkos::CudaSpace> errors("errors");
  for (int blocks : {fit + 1, 0}) {
    try {
      stencil::native_cuda::launch_cooperative(
          &exchange<GridSyncBarrier>, blocks, 128, 0,
          Kokkos::Cuda{}.cuda_stream(), GridSyncBarrier{},
          static_cast<int*>(nullptr), errors.data(), 1);
      ADD_FAILURE() << blocks << " blocks were launched";
    } catch (stencil::error const& e) {
      std::string const what = e.what();
      EXPECT_NE(what.find("cannot be resident at once"), std::string::npos)
          << what;
      EXPECT_NE(what.find("Use 1 to " + std::to_string(fit)), std::string::npos)
          << what;
    }
  }
  int host_errors = -1;
  Kokkos::deep_copy(host_errors, errors);
  EXPECT_EQ(host_errors, 0) << "a refused grid ran";
}

TEST(GridBarrier, MeasuresMicrosecondsPerBarrier) {
  STENCIL_REQUIRE_GPU();
  for (BarrierKind kind : {BarrierKind::grid_sync, BarrierKind::counter}) {
    double const us =
        stencil::native_cuda::barrier_microseconds(kind, 1, 256, 200);
    EXPECT_TRUE(std::isfinite(us) && us > 0 && us < 1000)
        << stencil::native_cuda::name(kind) << ": " << us << " us";
  }
  EXPECT_THROW(stencil::native_cuda::barrier_microseconds(BarrierKind::counter,
                                                          0, 256, 10),
               stencil::error);
}

}  // namespace
