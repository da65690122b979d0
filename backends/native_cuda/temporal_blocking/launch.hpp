// SPDX-License-Identifier: Apache-2.0
// Host side of temporal blocking: checks (can_run), launch geometry and the
// launches, steps beyond the depth by relaunching.
#pragma once

#include <native_cuda/common/cuda_check.hpp>
#include <native_cuda/common/device.hpp>
#include <native_cuda/temporal_blocking/kernels.hpp>

#include <stencil/detail/plan_data.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <type_traits>

namespace stencil::native_cuda::temporal_blocking {

/// Where the plan chooses the depth itself (depth = 0): deep enough to move
/// the bottleneck off DRAM for the suite's stencils (EBISU used 4 to 12),
/// capped by what fits. The performance model will refine this.
inline constexpr int default_depth = 12;

/// Deepest rank-1 blocking: each level costs a barrier over the whole tile,
/// so beyond this the tile's halo work outweighs the saved DRAM traffic.
inline constexpr int max_depth_1d = 64;

template <class T, class Op>
struct Kernel {
  static constexpr int rank = Op::rank;
  using Function = void (*)(std::conditional_t<rank == 1, Params1D<T, Op>,
                                               Params2D<T, Op>>);

  /// The kernel for `depth` (rank 2 compiles one per depth).
  static Function function(int depth) {
    if constexpr (rank == 1) {
      (void)depth;
      return &temporal_blocking_1d<T, Op>;
    } else {
      return function_2d<1>(depth);
    }
  }
  template <int Depth>
  static Function function_2d(int depth) {
    if constexpr (Depth < max_compiled_depth_2d<T, Op::radius>) {
      if (depth > Depth) return function_2d<Depth + 1>(depth);
    }
    return &temporal_blocking_2d<T, Op, Depth>;
  }

  static std::size_t shared_bytes(int depth) {
    if constexpr (rank == 1) {
      return shared_bytes_1d<T, Op::radius>();
    } else {
      return static_cast<std::size_t>(depth) *
             shared_bytes_per_level_2d<T, Op::radius>();
    }
  }
  static int block_width() {
    return rank == 1 ? tile_cells_1d : block_width_2d<T>;
  }
  /// The deepest blocking this device's shared memory holds (and this build
  /// compiled), keeping at least half of every block's columns valid.
  static int max_depth(DeviceLimits const& device) {
    int const by_halo =
        Op::radius == 0 ? 1 << 20 : block_width() / (4 * Op::radius);
    if constexpr (rank == 1) {
      return shared_bytes(1) <= device.shared_per_block_optin
                 ? std::min(by_halo, max_depth_1d)
                 : 0;
    } else {
      int const by_shared = static_cast<int>(
          device.shared_per_block_optin /
          shared_bytes_per_level_2d<T, Op::radius>());
      return std::min({by_halo, by_shared,
                       max_compiled_depth_2d<T, Op::radius>});
    }
  }
};

struct Geometry {
  int valid_width;
  int strips;
  int parts;
  int rows_per_part;
  std::size_t shared_bytes;
};

template <class T, class Op>
Geometry geometry(int depth, int nx, int ny, int multiprocessors) {
  using K = Kernel<T, Op>;
  Geometry g{};
  g.valid_width = K::block_width() - 2 * depth * Op::radius;
  g.strips = (nx + g.valid_width - 1) / g.valid_width;
  // Split the rows into streaming partitions so that strips x parts fills
  // every multiprocessor once (one resident block each); each partition
  // recomputes depth*radius rows of overlap above and below.
  g.parts = Op::rank == 2 ? std::max(1, multiprocessors / g.strips) : 1;
  g.rows_per_part = (ny + g.parts - 1) / g.parts;
  g.parts = (ny + g.rows_per_part - 1) / g.rows_per_part;
  g.shared_bytes = K::shared_bytes(depth);
  return g;
}

/// Opts the kernel for `depth` into the shared memory it needs (above the
/// default 48 KiB); cheap, so done before every launch.
template <class T, class Op>
void prepare_kernel(int depth, std::size_t shared_bytes) {
  STENCIL_CUDA_CHECK(cudaFuncSetAttribute(
      Kernel<T, Op>::function(depth),
      cudaFuncAttributeMaxDynamicSharedMemorySize,
      static_cast<int>(shared_bytes)));
}

/// Resolves a TemporalBlocking policy into `p` (can_run: refuses what the
/// device or the kernel cannot do, before anything runs).
template <class T, class Op>
void plan(Plan& p, int requested_depth) {
  static_assert(Op::rank <= 2,
                "stencil::TemporalBlocking: rank-3 grids use device tiling "
                "(a later policy); use Naive or SpatialBlocking for now");
  using K = Kernel<T, Op>;
  DeviceLimits const device = current_device_limits();
  STENCIL_EXPECT(device.compute_capability >= 70, "TemporalBlocking needs a "
                 "GPU of compute capability 7.0 or newer; ", device.name,
                 " is ", device.compute_capability / 10, ".",
                 device.compute_capability % 10);
  STENCIL_EXPECT(p.boundary == Boundary::fixed,
                 "TemporalBlocking supports fixed boundaries only; for a "
                 "periodic grid use Naive or SpatialBlocking");
  STENCIL_EXPECT(requested_depth >= 0, "TemporalBlocking: depth is ",
                 requested_depth, "; use 1 or more, or 0 to let the plan "
                 "choose");
  int const max_depth = K::max_depth(device);
  STENCIL_EXPECT(max_depth >= 1, "TemporalBlocking: radius ", Op::radius,
                 " with ", sizeof(T), "-byte values does not fit in the ",
                 device.shared_per_block_optin, " bytes of shared memory per "
                 "block of ", device.name, " even at depth 1");
  int const depth =
      requested_depth == 0 ? std::min(default_depth, max_depth) : requested_depth;
  STENCIL_EXPECT(
      depth <= max_depth, "TemporalBlocking: depth ", depth, " with radius ",
      Op::radius, " and ", sizeof(T), "-byte values needs ",
      K::shared_bytes(depth), " bytes of shared memory per block (or leaves "
      "too few valid columns); ", device.name, " allows ",
      device.shared_per_block_optin,
      " bytes: the largest depth that fits is ", max_depth);

  Geometry const g = geometry<T, Op>(depth, p.extents[2], p.extents[1],
                                     device.multiprocessors);
  prepare_kernel<T, Op>(depth, g.shared_bytes);
  cudaFuncAttributes attributes{};
  STENCIL_CUDA_CHECK(
      cudaFuncGetAttributes(&attributes, K::function(depth)));
  int blocks_per_sm = 0;
  STENCIL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks_per_sm, K::function(depth), threads_per_block, g.shared_bytes));

  p.backend = Backend::native_cuda;
  p.policy = PolicyKind::temporal_blocking;
  p.depth = depth;
  p.tile = Tile{g.valid_width, Op::rank == 2 ? g.rows_per_part : 1, 1};
  p.team_size = threads_per_block;
  p.scratch_bytes = g.shared_bytes;
  p.registers = attributes.numRegs;
  p.local_memory_bytes = static_cast<int>(attributes.localSizeBytes);
  p.blocks = g.strips * g.parts;
  p.blocks_per_sm = blocks_per_sm;
  p.device = device.name;
}

/// Advances `grid` by `steps`: launches of `p.depth` steps, then one of the
/// remainder. Asynchronous on the space's stream.
template <class T, int Rank, class MemorySpace, class Op>
void run(Kokkos::Cuda const& space, Grid<T, Rank, MemorySpace>& grid,
         Op const& op, int steps, Plan const& p) {
  int const multiprocessors = space.cuda_device_prop().multiProcessorCount;
  int const nx = grid.extent(Rank - 1);
  int const ny = Rank == 2 ? grid.extent(0) : 1;
  for (int done = 0; done < steps;) {
    int const depth = std::min(p.depth, steps - done);
    Geometry const g = geometry<T, Op>(depth, nx, ny, multiprocessors);
    prepare_kernel<T, Op>(depth, g.shared_bytes);
    T const* const in = grid.current().data();
    T* const out = grid.next().data();
    if constexpr (Rank == 1) {
      Params1D<T, Op> const params{in,          out,         op, nx,
                                   grid.halo(), depth, g.valid_width};
      temporal_blocking_1d<T, Op><<<g.strips, threads_per_block,
                                    g.shared_bytes, space.cuda_stream()>>>(
          params);
    } else {
      Params2D<T, Op> const params{in,
                                   out,
                                   op,
                                   nx,
                                   ny,
                                   grid.halo(),
                                   grid.padded_extent(1),
                                   depth,
                                   g.valid_width,
                                   g.rows_per_part};
      Kernel<T, Op>::function(depth)<<<dim3(g.strips, g.parts),
                                        threads_per_block, g.shared_bytes,
                                        space.cuda_stream()>>>(params);
    }
    STENCIL_CUDA_CHECK(cudaGetLastError());
    grid.swap();
    done += depth;
  }
}

}  // namespace stencil::native_cuda::temporal_blocking
