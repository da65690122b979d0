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
/// stage beats plain loads on 16 of the 18 2D and 3D rows (by up to 51%,
/// float j3d13pt) and is within 4% of the best number of stages on all but
/// two; it loses 4-6% on j2d5pt. The model (Auto) is to choose per stencil.
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
           shared_bytes(stages) <= device.shared_per_block_optin;
  }
};

/// Planes a block streams in rank 3 (its pipeline refills 2r planes per
/// segment, which the block streaming the segment before has just read:
/// mostly L2 hits).
inline constexpr int rank3_segment = 16;

struct Geometry {
  int tiles_x = 0;
  int tiles = 0;
  int units = 0;    // along the streamed dimension
  int segment = 0;  // units per block
  int blocks = 0;
  int blocks_per_sm = 0;
  std::size_t shared_bytes = 0;
};

/// Prepares the kernel for `stages` (its shared memory) and returns its
/// launch geometry for a grid of `extents` (z, y, x; unused dims 1).
template <class T, class Op>
Geometry ready_geometry(int stages, std::array<int, 3> const& extents, int halo,
                        int multiprocessors) {
  using K = Kernel<T, Op>;
  using U = typename K::Unit;
  Geometry g;
  g.shared_bytes = K::shared_bytes(stages);
  STENCIL_CUDA_CHECK(cudaFuncSetAttribute(
      K::function(stages), cudaFuncAttributeMaxDynamicSharedMemorySize,
      static_cast<int>(g.shared_bytes)));
  STENCIL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &g.blocks_per_sm, K::function(stages), threads_per_block,
      g.shared_bytes));
  int const nx = extents[2];
  int const ny = Op::rank == 3 ? extents[1] : 1;
  g.units = Op::rank == 3 ? extents[0] : extents[1];
  // The tiles start halo % V cells left of the grid (kernels.hpp).
  g.tiles_x = (nx + halo % U::vector + U::width - 1) / U::width;
  g.tiles = g.tiles_x * ((ny + U::height - 1) / U::height);
  if constexpr (Op::rank == 3) {
    // Short segments in many waves, as the hardware schedules them in
    // order: the blocks running at any time then read a few neighbouring
    // slabs of planes. Long segments, one wave of blocks each at its own
    // z, left the DRAM half busy (ncu: 49%; H200, j3d7pt double,
    // prefetch 4: 16 planes 219 GCells/s, 32 planes 200, one segment per
    // resident block 152).
    g.segment = std::min(g.units, rank3_segment);
  } else {
    // As many segments as fill the resident blocks, at least one.
    int const resident = std::max(1, g.blocks_per_sm) * multiprocessors;
    int const segments = std::clamp(resident / g.tiles, 1, g.units);
    g.segment = (g.units + segments - 1) / segments;
  }
  g.blocks = g.tiles * ((g.units + g.segment - 1) / g.segment);
  return g;
}

/// Resolves a StreamingSweep policy into `p`: refuses what the device
/// cannot run, before anything runs. `requested_prefetch` < 0: the
/// default.
template <class T, class Op>
void plan(Plan& p, int requested_prefetch) {
  static_assert(Op::rank == 2 || Op::rank == 3,
                "StreamingSweep streams lines of a rank-2 grid or planes of "
                "a rank-3 grid");
  using K = Kernel<T, Op>;
  DeviceLimits const device = current_device_limits();
  STENCIL_EXPECT(device.compute_capability >= 70,
                 "StreamingSweep needs a GPU of compute capability 7.0 or "
                 "newer; ",
                 device.name, " is ", device.compute_capability / 10, ".",
                 device.compute_capability % 10);
  STENCIL_EXPECT(
      requested_prefetch >= -1 && requested_prefetch <= max_prefetch_stages,
      "StreamingSweep: prefetch is ", requested_prefetch,
      "; use 0 (plain loads) to ", max_prefetch_stages,
      " stages of asynchronous copies, or -1 to let the plan "
      "choose");
  // cp.async is an sm_80 instruction: below it, asking for prefetch is an
  // error, not a plain-load run that says otherwise.
  bool const has_async_copy = device.compute_capability >= 80;
  STENCIL_EXPECT(requested_prefetch <= 0 || has_async_copy,
                 "StreamingSweep: prefetch ", requested_prefetch,
                 " needs asynchronous copies (cp.async, compute capability "
                 "8.0 or newer); ",
                 device.name, " is ", device.compute_capability / 10, ".",
                 device.compute_capability % 10, "; use prefetch 0");
  int stages = requested_prefetch;
  if (stages < 0) {
    stages = has_async_copy ? default_prefetch : 0;
    while (stages > 0 && !K::fits(stages, device)) --stages;
  }
  if (!K::fits(stages, device)) {
    int deepest = stages;
    while (deepest >= 0 && !K::fits(deepest, device)) --deepest;
    stencil::detail::throw_error(stencil::detail::concat(
        "StreamingSweep: prefetch ", stages, " with radius ", Op::radius,
        " and ", sizeof(T), "-byte values needs ", K::shared_bytes(stages),
        " bytes of shared memory per block; ", device.name, " allows ",
        device.shared_per_block_optin,
        deepest >= 0 ? stencil::detail::concat(
                           "; the largest prefetch that fits is ", deepest)
                     : std::string("; not even prefetch 0 fits")));
  }

  Geometry const g =
      ready_geometry<T, Op>(stages, p.extents, p.halo, device.multiprocessors);
  cudaFuncAttributes attributes{};
  STENCIL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, K::function(stages)));

  p.backend = Backend::native_cuda;
  p.policy = PolicyKind::streaming_sweep;
  p.depth = 1;
  p.prefetch = stages;
  p.tile = Tile{K::Unit::width, K::Unit::height, g.segment};
  p.team_size = threads_per_block;
  p.scratch_bytes = g.shared_bytes;
  p.registers = attributes.numRegs;
  p.local_memory_bytes = static_cast<int>(attributes.localSizeBytes);
  p.blocks = g.blocks;
  p.blocks_per_sm = g.blocks_per_sm;
  p.device = device.name;
}

/// Advances `grid` by `steps`, one launch per step. Asynchronous on the
/// space's stream.
template <class T, int Rank, class MemorySpace, class Op>
void run(Kokkos::Cuda const& space, Grid<T, Rank, MemorySpace>& grid,
         Op const& op, int steps, Plan const& p) {
  int const multiprocessors = space.cuda_device_prop().multiProcessorCount;
  Geometry const g = ready_geometry<T, Op>(p.prefetch, p.extents, grid.halo(),
                                           multiprocessors);
  constexpr int vector = Kernel<T, Op>::Unit::vector;
  auto aligned = [](T const* pointer) {
    return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
  };
  // 16-byte items need every padded row to start at a 16-byte boundary.
  bool const vector_rows = (p.extents[2] + 2 * grid.halo()) % vector == 0 &&
                           aligned(grid.current().data()) &&
                           aligned(grid.next().data());
  stencil::detail::PaddedLayout const layout =
      stencil::detail::make_layout<Rank>(grid.extents(), grid.halo());
  auto const function = Kernel<T, Op>::function(p.prefetch);
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
                               g.units,
                               grid.halo(),
                               Rank == 3 ? layout.stride_y : 0,
                               Rank == 3 ? static_cast<long>(layout.stride_z)
                                         : static_cast<long>(layout.stride_y),
                               g.tiles_x,
                               g.tiles,
                               g.segment,
                               vector_rows};
    function<<<g.blocks, threads_per_block, g.shared_bytes,
               space.cuda_stream()>>>(params);
    STENCIL_CUDA_CHECK(cudaGetLastError());
    grid.swap();
  }
}

}  // namespace stencil::native_cuda::streaming_sweep
