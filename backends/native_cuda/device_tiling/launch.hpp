// SPDX-License-Identifier: Apache-2.0
// Host side of device tiling: checks, the cut of the xy plane into regions,
// cooperative launches, steps beyond the depth by relaunching.
#pragma once

#include <native_cuda/common/cuda_check.hpp>
#include <native_cuda/common/device.hpp>
#include <native_cuda/common/grid_barrier.hpp>
#include <native_cuda/device_tiling/kernels.hpp>

#include <stencil/detail/plan_data.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace stencil::native_cuda::device_tiling {

/// The deepest blocking compiled: what fits in the largest shared memory a
/// block can have today, at most 12. One kernel per depth, so that the level
/// loop unrolls.
template <class T, class Op>
inline constexpr int max_compiled_depth = [] {
  int const fit = static_cast<int>(max_shared_per_block /
                                   shared_bytes_per_level<T, Op::radius>());
  return fit < 12 ? fit : 12;
}();

/// The barrier between streamed planes. Grid sync measured cheaper than the
/// counter barrier on an H200 (0.97 against 1.02 us per barrier,
/// `stencil_perf` context), so it is the one used.
using Barrier = GridSyncBarrier;
inline constexpr BarrierKind barrier_kind = BarrierKind::grid_sync;

template <class T, class Op>
struct Kernel {
  using Function = void (*)(Params3D<T, Op, Barrier>);

  static Function function(int depth) { return function_at<1>(depth); }
  template <int Depth>
  static Function function_at(int depth) {
    if constexpr (Depth < max_compiled_depth<T, Op>) {
      if (depth > Depth) return function_at<Depth + 1>(depth);
    }
    return &device_tiling_3d<T, Op, Depth, Barrier>;
  }
  static std::size_t shared(int depth) {
    return shared_bytes<T, Op::radius>(depth);
  }
  static bool spills(int depth) {
    cudaFuncAttributes attributes{};
    STENCIL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, function(depth)));
    return attributes.localSizeBytes > 0;
  }
  static bool fits(int depth, DeviceLimits const& device) {
    return depth >= 1 && depth <= max_compiled_depth<T, Op> &&
           shared(depth) <= device.shared_per_block_optin && !spills(depth);
  }
  static int max_depth(DeviceLimits const& device) {
    for (int depth = max_compiled_depth<T, Op>; depth >= 1; --depth) {
      if (fits(depth, device)) return depth;
    }
    return 0;
  }
  /// The deepest that fits: every level saves a DRAM round trip, and the
  /// regions' overlap (the only redundant work) is absent when the xy plane
  /// fits in one region.
  static int default_depth(DeviceLimits const& device) {
    return max_depth(device);
  }
};

/// Blocks resident at once for the kernel of `depth`: the most tiles a
/// region can have.
template <class T, class Op>
int resident_blocks(int depth) {
  auto const kernel = Kernel<T, Op>::function(depth);
  std::size_t const shared = Kernel<T, Op>::shared(depth);
  STENCIL_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(shared)));
  return co_resident_blocks(kernel, threads_per_block, shared);
}

/// How the xy plane (nx by ny) is cut into regions of at most `blocks`
/// tiles. One region when the plane fits; else regions that overlap by
/// depth*radius cells on each side where they meet, chosen to compute the
/// fewest tiles in all.
inline std::vector<Region> cut_regions(int nx, int ny, int blocks, int depth,
                                       int radius) {
  int const all_x = (nx + tile_x - 1) / tile_x;
  int const all_y = (ny + tile_y - 1) / tile_y;
  if (static_cast<long>(all_x) * all_y <= blocks) {
    return {Region{0, 0, all_x, all_y, 0, nx, 0, ny}};
  }
  int const overlap = depth * radius;
  // Cells of output a region of `tiles` tiles covers along one axis, and
  // how many regions the axis then needs (0: cannot cover).
  auto regions_along = [&](int tiles, int all, int n) {
    if (tiles >= all) return 1;
    int const core = tiles * tile_x - 2 * overlap;
    return core <= 0 ? 0 : (n + core - 1) / core;
  };
  long best_work = -1;
  int best_x = 0, best_y = 0;
  for (int tx = 1; tx <= std::min(all_x, blocks); ++tx) {
    int const ty = std::min(all_y, blocks / tx);
    int const rx = regions_along(tx, all_x, nx);
    int const ry = regions_along(ty, all_y, ny);
    if (ty < 1 || rx == 0 || ry == 0) continue;
    long const work = static_cast<long>(rx) * ry * tx * ty;
    if (best_work < 0 || work < best_work) {
      best_work = work;
      best_x = tx;
      best_y = ty;
    }
  }
  STENCIL_EXPECT(best_work > 0, "DeviceTiling: at depth ", depth,
                 " and radius ", radius, " a region of at most ", blocks,
                 " tiles of ", tile_x, "x", tile_y,
                 " cells is all overlap; use a smaller depth");
  std::vector<Region> regions;
  auto cores = [&](int tiles, int all, int n) {
    // (first output cell, output cells), or (0, 0) for the whole axis.
    std::vector<std::pair<int, int>> c;
    if (tiles >= all) {
      c.push_back({0, 0});
      return c;
    }
    int const core = tiles * tile_x - 2 * overlap;
    for (int begin = 0; begin < n; begin += core) c.push_back({begin, core});
    return c;
  };
  for (auto const [y_begin, y_core] : cores(best_y, all_y, ny)) {
    for (auto const [x_begin, x_core] : cores(best_x, all_x, nx)) {
      Region g{};
      g.tiles_x = best_x;
      g.tiles_y = best_y;
      g.x0 = x_core == 0 ? 0 : x_begin - overlap;
      g.y0 = y_core == 0 ? 0 : y_begin - overlap;
      g.core_x0 = x_begin;
      g.core_x1 = x_core == 0 ? nx : std::min(nx, x_begin + x_core);
      g.core_y0 = y_begin;
      g.core_y1 = y_core == 0 ? ny : std::min(ny, y_begin + y_core);
      regions.push_back(g);
    }
  }
  return regions;
}

/// Resolves a DeviceTiling policy into `p`; refuses what the device or the
/// kernel cannot do before anything runs.
template <class T, class Op>
void plan(Plan& p, int requested_depth) {
  static_assert(Op::rank == 3,
                "stencil::DeviceTiling is for rank-3 grids; rank 1 and 2 use "
                "TemporalBlocking");
  static_assert(Op::radius >= 1 && Op::radius <= 2,
                "stencil::DeviceTiling supports radius 1 and 2");
  using K = Kernel<T, Op>;
  DeviceLimits const device = current_device_limits();
  STENCIL_EXPECT(device.compute_capability >= 70,
                 "DeviceTiling needs a GPU of compute capability 7.0 or "
                 "newer; ",
                 device.name, " is ", device.compute_capability / 10, ".",
                 device.compute_capability % 10);
  STENCIL_EXPECT(p.boundary == Boundary::fixed,
                 "DeviceTiling supports fixed boundaries only; for a periodic "
                 "grid use Naive or SpatialBlocking");
  STENCIL_EXPECT(requested_depth >= 0, "DeviceTiling: depth is ",
                 requested_depth,
                 "; use 1 or more, or 0 to let the plan choose");
  int const max_depth = K::max_depth(device);
  STENCIL_EXPECT(
      max_depth >= 1, "DeviceTiling: radius ", Op::radius, " with ", sizeof(T),
      "-byte values does not fit in the ", device.shared_per_block_optin,
      " bytes of shared memory per block of ", device.name, " even at depth 1");
  int const depth =
      requested_depth == 0 ? K::default_depth(device) : requested_depth;
  STENCIL_EXPECT(K::fits(depth, device), "DeviceTiling: depth ", depth,
                 " does not fit on ", device.name, " for radius ", Op::radius,
                 " and ", sizeof(T), "-byte values (each level keeps ",
                 shared_bytes_per_level<T, Op::radius>(),
                 " bytes of shared memory per block, within the ",
                 device.shared_per_block_optin,
                 " bytes the device allows; this build has depths up to ",
                 max_compiled_depth<T, Op>,
                 "); the largest depth that fits is ", max_depth,
                 " (all that fit: ",
                 fitting_depths(max_compiled_depth<T, Op>,
                                [&](int d) { return K::fits(d, device); }),
                 ")");
  int const blocks = resident_blocks<T, Op>(depth);
  STENCIL_EXPECT(blocks >= 1, "DeviceTiling: no block of the depth-", depth,
                 " kernel can be resident on ", device.name);
  std::vector<Region> const regions =
      cut_regions(p.extents[2], p.extents[1], blocks, depth, Op::radius);
  cudaFuncAttributes attributes{};
  STENCIL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, K::function(depth)));

  p.backend = Backend::native_cuda;
  p.policy = PolicyKind::device_tiling;
  p.depth = depth;
  p.tile = Tile{tile_x, tile_y, p.extents[0]};
  p.team_size = threads_per_block;
  p.scratch_bytes = K::shared(depth);
  p.registers = attributes.numRegs;
  p.local_memory_bytes = static_cast<int>(attributes.localSizeBytes);
  p.blocks = regions.front().tiles_x * regions.front().tiles_y;
  p.blocks_per_sm = blocks / device.multiprocessors;
  p.regions = static_cast<int>(regions.size());
  p.barrier = std::string(name(barrier_kind));
  p.device = device.name;
}

/// Advances `grid` by `steps`: per launch depth `p.depth` steps (the last
/// one the remainder), one cooperative launch per region.
template <class T, class MemorySpace, class Op>
void run(Kokkos::Cuda const& space, Grid<T, 3, MemorySpace>& grid, Op const& op,
         int steps, Plan const& p) {
  using K = Kernel<T, Op>;
  int const nx = grid.extent(2), ny = grid.extent(1), nz = grid.extent(0);
  auto regions_for = [&](int depth, int& blocks) {
    blocks = resident_blocks<T, Op>(depth);
    return cut_regions(nx, ny, blocks, depth, Op::radius);
  };
  int full_blocks = 0;
  std::vector<Region> const full = regions_for(p.depth, full_blocks);
  int const remainder = steps % p.depth;
  int remainder_blocks = 0;
  std::vector<Region> const last =
      remainder == 0 ? full : regions_for(remainder, remainder_blocks);
  // Exchange planes of levels 1..depth-1, two iteration parities, for the
  // larger need of the two launch shapes.
  auto exchange_cells = [](int depth, Region const& g) {
    return 2L * (depth - 1) * g.tiles_x * g.tiles_y * tile_x * tile_y;
  };
  Kokkos::View<T*, Kokkos::CudaSpace> exchange(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                         "stencil::device_tiling::exchange"),
      std::max({1L, exchange_cells(p.depth, full.front()),
                exchange_cells(std::max(1, remainder), last.front())}));
  for (int done = 0; done < steps;) {
    int const depth = std::min(p.depth, steps - done);
    std::vector<Region> const& regions = depth == p.depth ? full : last;
    for (Region const& region : regions) {
      Params3D<T, Op, Barrier> const params{
          grid.current().data(),
          grid.next().data(),
          exchange.data(),
          op,
          nx,
          ny,
          nz,
          grid.halo(),
          grid.padded_extent(2),
          grid.padded_extent(2) * grid.padded_extent(1),
          region,
          Barrier{}};
      launch_cooperative(K::function(depth), region.tiles_x * region.tiles_y,
                         threads_per_block, K::shared(depth),
                         space.cuda_stream(), params);
    }
    grid.swap();
    done += depth;
  }
}

}  // namespace stencil::native_cuda::device_tiling
