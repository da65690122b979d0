// SPDX-License-Identifier: Apache-2.0
// Host side of the native single-step sweep: checks, launch geometry, and
// one launch per step (with the periodic halo refreshed before each).
#pragma once

#include <native_cuda/common/cuda_check.hpp>
#include <native_cuda/common/device.hpp>
#include <native_cuda/common/prefetch.hpp>
#include <native_cuda/streaming_sweep/kernels.hpp>

#include <stencil/detail/plan_data.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/portable/periodic_halo.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace stencil::native_cuda::streaming_sweep {

/// Prefetch stages when the policy leaves the choice to the plan, from the
/// sweep of 0-4 stages on an H200 (native README, "Streaming sweep"): one
/// stage beats plain loads on 16 of the 18 2D and 3D rows (by up to 75%,
/// float j3d13pt) and is within 4% of the best number of stages on all but
/// four (within 7%); it loses 4% on j2d5pt double. The model (Auto) is to
/// choose per stencil.
inline constexpr int default_prefetch = 1;

template <class T, class Op>
struct Kernel {
  static constexpr int rank = Op::rank;
  using Unit = UnitShape<T, rank, Op::radius>;
  using Function = void (*)(Params<T, Op>);

  static Function function(int stages) {
    return dispatch_prefetch(stages, [](auto s) -> Function {
      return &streaming_sweep<T, Op, decltype(s)::value>;
    });
  }
  static std::size_t shared_bytes(int stages) {
    return streaming_sweep::shared_bytes<T, rank, Op::radius>(stages);
  }
  /// Whether `stages` fits in one block's shared memory on `device`.
  static bool fits(int stages, DeviceLimits const& device) {
    return stages >= 0 && stages <= max_prefetch_stages &&
           shared_memory_fits(function(stages), shared_bytes(stages), device);
  }
};

/// Planes a block streams in rank 3 (its pipeline refills 2r planes per
/// segment, which the block streaming the segment before has just read:
/// mostly L2 hits).
inline constexpr int rank3_segment = 16;

/// How a grid's units are cut into tiles.
struct Tiling {
  int tiles_x = 0;
  int tiles = 0;
  int units = 0;  // along the streamed dimension
};

template <class T, class Op>
Tiling tiling(std::array<int, 3> const& extents, int halo) {
  using U = typename Kernel<T, Op>::Unit;
  int const nx = extents[2];
  int const ny = Op::rank == 3 ? extents[1] : 1;
  // The tiles start halo % V cells left of the grid (kernels.hpp).
  int const tiles_x = (nx + halo % U::vector + U::width - 1) / U::width;
  return Tiling{tiles_x, tiles_x * ((ny + U::height - 1) / U::height),
                Op::rank == 3 ? extents[0] : extents[1]};
}

/// Units a block streams, when `resident_blocks` fit on the device at once.
template <class Op>
int segment_length(Tiling const& t, [[maybe_unused]] int resident_blocks) {
  if constexpr (Op::rank == 3) {
    // Short segments in many waves, as the hardware schedules them in
    // order: the blocks running at any time then read a few neighbouring
    // slabs of planes. Long segments, one wave of blocks that drift apart
    // in z, left the DRAM half busy (ncu: 49%). H200, j3d7pt double, 64x16
    // tiles: 16 planes 219 GCells/s and 32 planes 200 (prefetch 4), one
    // segment per resident block 153 (prefetch 2).
    return std::min(t.units, rank3_segment);
  } else {
    // As many segments as fill the resident blocks, at least one.
    int const segments = std::clamp(resident_blocks / t.tiles, 1, t.units);
    return (t.units + segments - 1) / segments;
  }
}

/// Whether every padded row of an x extent `nx` with `halo` is a whole
/// number of 16-byte items (the 16-byte copies and stores, and the bulk
/// copies, need it).
template <class T>
constexpr bool rows_of_whole_items(int nx, int halo) {
  return (nx + 2 * halo) % vector_cells<T> == 0;
}

/// Refuses bulk copies where they cannot run: below sm_90, without a
/// stage of prefetch, or on padded rows that are not whole 16-byte items.
template <class T>
void expect_bulk_copy_runs(Plan const& p, DeviceLimits const& device,
                           int requested_prefetch) {
  STENCIL_EXPECT(device.compute_capability >= 90,
                 "StreamingSweep: bulk_copy needs compute capability 9.0 or "
                 "newer (cp.async.bulk); ",
                 device.name, " is ", device.compute_capability / 10, ".",
                 device.compute_capability % 10, "; use bulk_copy = false");
  STENCIL_EXPECT(requested_prefetch != 0,
                 "StreamingSweep: bulk_copy copies asynchronously, so it needs "
                 "at least one stage of prefetch, and prefetch is 0; use 1 to ",
                 max_prefetch_stages, ", or -1 for the plan's default");
  if (!rows_of_whole_items<T>(p.extents[2], p.halo)) {
    int const padded = p.extents[2] + 2 * p.halo;
    constexpr int vector = vector_cells<T>;
    int const fitting = p.extents[2] + (vector - padded % vector);
    stencil::detail::throw_error(stencil::detail::concat(
        "StreamingSweep: bulk_copy moves whole 16-byte items of each padded "
        "row, but this grid's padded row (x extent ",
        p.extents[2], " + 2 x halo ", p.halo, " = ", padded, " values of ",
        sizeof(T),
        " bytes) is not a multiple of 16 bytes; use an x extent "
        "that makes it one (e.g. ",
        fitting, "), or bulk_copy = false"));
  }
}

/// Resolves a StreamingSweep policy into `p`: refuses what the device
/// cannot run, before anything runs. `requested_prefetch` < 0: the
/// default.
template <class T, class Op>
void plan(Plan& p, int requested_prefetch, bool bulk_copy = false) {
  static_assert(Op::rank == 2 || Op::rank == 3,
                "StreamingSweep streams lines of a rank-2 grid or planes of "
                "a rank-3 grid");
  using K = Kernel<T, Op>;
  DeviceLimits const device = current_device_limits();
  expect_native_gpu(device, "StreamingSweep");
  int const resolved = resolve_prefetch(device, "StreamingSweep",
                                        requested_prefetch, default_prefetch);
  if (bulk_copy) expect_bulk_copy_runs<T>(p, device, requested_prefetch);
  int largest = max_prefetch_stages;  // that fits; -1: none
  while (largest >= 0 && !K::fits(largest, device)) --largest;
  int const stages =
      requested_prefetch >= 0 ? resolved : std::min(resolved, largest);
  if (stages < 0 || !K::fits(stages, device)) {
    int const asked = std::max(stages, 0);
    stencil::detail::throw_error(stencil::detail::concat(
        "StreamingSweep: prefetch ", asked, " with radius ", Op::radius,
        " and ", sizeof(T), "-byte values needs ", K::shared_bytes(asked),
        " bytes of shared memory per block; ", device.name, " allows ",
        device.shared_per_block_optin,
        " (and CUDA must accept it for the kernel)",
        largest >= 0 ? stencil::detail::concat(
                           "; the largest prefetch that fits is ", largest)
                     : std::string("; not even prefetch 0 fits")));
  }

  STENCIL_EXPECT(!bulk_copy || stages >= 1,
                 "StreamingSweep: bulk_copy needs at least one stage of "
                 "prefetch, and with radius ",
                 Op::radius, " and ", sizeof(T),
                 "-byte values not even one fits in the shared memory of ",
                 device.name, "; use bulk_copy = false");

  auto const function = K::function(stages);
  std::size_t const shared_bytes = K::shared_bytes(stages);
  allow_dynamic_shared(function, shared_bytes);
  int const per_sm =
      resident_blocks_per_sm(function, threads_per_block, shared_bytes);
  Tiling const t = tiling<T, Op>(p.extents, p.halo);
  int const segment =
      segment_length<Op>(t, std::max(1, per_sm) * device.multiprocessors);
  cudaFuncAttributes attributes{};
  STENCIL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, function));

  p.backend = Backend::native_cuda;
  p.policy = PolicyKind::streaming_sweep;
  p.depth = 1;
  p.prefetch = stages;
  p.bulk_copy = bulk_copy;
  p.tile = Tile{K::Unit::width, K::Unit::height, segment};
  p.team_size = threads_per_block;
  p.scratch_bytes = shared_bytes;
  p.registers = attributes.numRegs;
  p.local_memory_bytes = static_cast<int>(attributes.localSizeBytes);
  p.blocks = t.tiles * ((t.units + segment - 1) / segment);
  p.blocks_per_sm = per_sm;
  p.device = device.name;
}

/// Advances `grid` by `steps`, one launch per step, in the plan's tiles and
/// segments. Asynchronous on the space's stream.
template <class T, int Rank, class MemorySpace, class Op>
void run(Kokkos::Cuda const& space, Grid<T, Rank, MemorySpace>& grid,
         Op const& op, int steps, Plan const& p) {
  using K = Kernel<T, Op>;
  auto const function = K::function(p.prefetch);
  allow_dynamic_shared(function, p.scratch_bytes);
  Tiling const t = tiling<T, Op>(p.extents, grid.halo());
  auto aligned = [](T const* pointer) {
    return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
  };
  // 16-byte items need every padded row to start at a 16-byte boundary.
  bool const vector_rows = rows_of_whole_items<T>(p.extents[2], grid.halo()) &&
                           aligned(grid.current().data()) &&
                           aligned(grid.next().data());
  STENCIL_EXPECT(!p.bulk_copy || vector_rows,
                 "StreamingSweep: bulk_copy needs the grid's buffers to start "
                 "at a 16-byte boundary, and these do not; use bulk_copy = "
                 "false");
  stencil::detail::PaddedLayout const layout =
      stencil::detail::make_layout<Rank>(grid.extents(), grid.halo());
  for (int step = 0; step < steps; ++step) {
    T* const in = grid.current().data();
    if (grid.boundary() == Boundary::periodic) {
      stencil::detail::refresh_periodic_halo<Kokkos::Cuda, T, Rank>(space, in,
                                                                    layout);
    }
    Params<T, Op> const params{in,
                               grid.next().data(),
                               op,
                               p.extents[2],
                               Rank == 3 ? p.extents[1] : 1,
                               t.units,
                               grid.halo(),
                               Rank == 3 ? layout.stride_y : 0,
                               Rank == 3 ? static_cast<long>(layout.stride_z)
                                         : static_cast<long>(layout.stride_y),
                               t.tiles_x,
                               t.tiles,
                               p.tile.z,
                               vector_rows,
                               p.bulk_copy};
    function<<<p.blocks, threads_per_block, p.scratch_bytes,
               space.cuda_stream()>>>(params);
    STENCIL_CUDA_CHECK(cudaGetLastError());
    grid.swap();
  }
}

}  // namespace stencil::native_cuda::streaming_sweep
