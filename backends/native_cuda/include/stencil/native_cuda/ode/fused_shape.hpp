// SPDX-License-Identifier: Apache-2.0
// What the fused Runge-Kutta step (ode/fused_kernel.hpp) can run, and the
// shapes it runs in: a tile per cluster of blocks, or one cluster that holds
// the whole domain; the cluster launch and CUDA's occupancy query.
// fused_launch.hpp picks among them.
#pragma once

#include <stencil/native_cuda/common/cuda_check.hpp>
#include <stencil/native_cuda/common/device.hpp>
#include <stencil/native_cuda/ode/fused_kernel.hpp>

#include <stencil/boundary.hpp>
#include <stencil/error.hpp>
#include <stencil/fields/state.hpp>

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace stencil::native_cuda::ode {

/// The cluster and tiles of a fused run. `global_barrier`: the tile's
/// blocks are no cluster; they meet in global memory, with buffers for
/// `exchange_slots` tiles at once.
struct FusedShape {
  int cluster_x = 1, cluster_y = 1;
  bool global_barrier = false;
  int exchange_slots = 0;
  std::size_t slot_cells = 0;  ///< a block's grown box
  int own_x = threads_x, own_y = threads_y;
  int tiles_x = 1, tiles_y = 1;
  std::size_t shared_bytes = 0;

  int tile_x() const { return cluster_x * own_x; }
  int tile_y() const { return cluster_y * own_y; }
};

/// The fewest cells along an axis a tile must write: below it the rims,
/// recomputed by the neighbouring tiles, are most of the work.
inline constexpr int fewest_valid = 4;
/// Blocks a cluster may have: CUDA's portable size is 8; Hopper runs 16
/// where a kernel opts in to non-portable sizes, and the plan asks CUDA
/// whether a cluster fits before it takes one.
inline constexpr int largest_cluster = 16;

/// Blocks a tile may have where they meet in global memory. Each barrier
/// waits for the slowest of them, and the counter takes one atomic add per
/// block (paper 001 found its barrier's cost flat up to about 160 blocks).
inline constexpr int largest_global_tile = 64;

/// The blocks along one axis of a tile the plan weighs: the number asked
/// for, or (0) the powers of two up to `largest`. Any number runs; the
/// plan's own choice keeps to the powers of two its cost was fitted on.
inline std::vector<int> cluster_sides(int asked, int largest) {
  if (asked > 0) return {asked};
  std::vector<int> sides;
  for (int side = 1; side <= largest; side *= 2) sides.push_back(side);
  return sides;
}

/// Lets `function` run clusters above the portable 8 blocks.
template <class... Args>
void allow_large_clusters(void (*function)(Args...)) {
  STENCIL_CUDA_CHECK(cudaFuncSetAttribute(
      function, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}

/// f(std::integral_constant<int, S>{}) for the stage counts with a fused
/// kernel (those of stencil::ode::Method); false for any other.
template <class F>
bool with_stages(int stages, F&& f) {
  auto const one = [&]<int S>(std::integral_constant<int, S> count) {
    if (stages != S) return false;
    f(count);
    return true;
  };
  return one(std::integral_constant<int, 1>{}) ||
         one(std::integral_constant<int, 4>{}) ||
         one(std::integral_constant<int, 7>{}) ||
         one(std::integral_constant<int, 8>{});
}

template <class T, class Rhs, int Stages, bool Resident = false,
          bool GlobalBarrier = false>
auto fused_function() {
  return &fused_step<T, Rhs, Stages, Resident, GlobalBarrier>;
}

/// The launch of `shape`'s tiles (all of them; `tiles` = false: one
/// cluster, as the occupancy query wants) on `stream`. Holds the cluster
/// attribute the configuration points to, so keep it while it is used.
/// Tiles that meet in global memory are launched without one.
struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute{};

  ClusterLaunch(FusedShape const& shape, bool tiles, cudaStream_t stream) {
    int const across = tiles ? shape.tiles_x : 1;
    int const down = tiles ? shape.tiles_y : 1;
    config.gridDim = dim3(static_cast<unsigned>(across * shape.cluster_x),
                          static_cast<unsigned>(down * shape.cluster_y), 1);
    config.blockDim = dim3(threads_x, threads_y, 1);
    config.dynamicSmemBytes = shape.shared_bytes;
    config.stream = stream;
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = static_cast<unsigned>(shape.cluster_x);
    attribute.val.clusterDim.y = static_cast<unsigned>(shape.cluster_y);
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = shape.global_barrier ? 0 : 1;
  }
  ClusterLaunch(ClusterLaunch const&) = delete;
  ClusterLaunch& operator=(ClusterLaunch const&) = delete;
};

/// Clusters of `shape`'s kernel that fit on the device at once (0: none).
template <class T, class Rhs, int Stages, bool Resident = false>
int resident_clusters(FusedShape const& shape) {
  auto const function = fused_function<T, Rhs, Stages, Resident>();
  allow_large_clusters(function);
  if (cudaFuncSetAttribute(
          function, cudaFuncAttributeMaxDynamicSharedMemorySize,
          static_cast<int>(shape.shared_bytes)) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  ClusterLaunch const launch(shape, /*tiles=*/false, nullptr);
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, function, &launch.config) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return clusters;
}

/// Tiles of `shape` (meeting in global memory) whose blocks all fit on the
/// device at once: 0 where not even one tile's do, and the kernel could
/// wait for a block that never starts.
template <class T, class Rhs, int Stages>
int concurrent_tiles(FusedShape const& shape) {
  auto const function = fused_function<T, Rhs, Stages, false, true>();
  DeviceLimits const device = current_device_limits();
  if (!shared_memory_fits(function, shape.shared_bytes, device)) return 0;
  int const per_sm =
      resident_blocks_per_sm(function, threads_per_block, shape.shared_bytes);
  return per_sm * device.multiprocessors / (shape.cluster_x * shape.cluster_y);
}

/// The tiles of a cluster of `cx` x `cy` blocks on an nx x ny domain, and
/// the cells their stages compute (rims included): the plan's cost.
template <class T, class Fields, int Stages>
FusedShape shape_for(int cx, int cy, int nx, int ny, double& work) {
  constexpr int rx = fused_radius<Fields>[0], ry = fused_radius<Fields>[1];
  FusedShape s;
  s.cluster_x = cx;
  s.cluster_y = cy;
  s.own_x = threads_x * fused_columns<Fields, Stages>();
  s.own_y = threads_y * fused_rows<Fields, Stages>();
  int const valid_x = s.tile_x() - 2 * Stages * rx;
  int const valid_y = s.tile_y() - 2 * Stages * ry;
  work = -1.0;
  if (valid_x < fewest_valid || valid_y < fewest_valid) return s;
  s.tiles_x = (nx + valid_x - 1) / valid_x;
  s.tiles_y = (ny + valid_y - 1) / valid_y;
  s.slot_cells =
      static_cast<std::size_t>(s.own_x + 2 * rx) * (s.own_y + 2 * ry);
  s.shared_bytes = fused_shared_bytes<Fields>(s.slot_cells, sizeof(T));
  double per_tile = 0.0;
  for (int i = 1; i <= Stages; ++i) {
    per_tile += static_cast<double>(s.tile_x() - 2 * i * rx) *
                (s.tile_y() - 2 * i * ry);
  }
  work = per_tile * s.tiles_x * s.tiles_y;
  return s;
}

/// The cluster of `cx` x `cy` blocks as one tile that holds the whole nx x
/// ny domain (the resident kernel's), or tiles_x = 0 where it does not.
template <class T, class Fields, int Stages>
FusedShape resident_shape_for(int cx, int cy, int nx, int ny) {
  constexpr int rx = fused_radius<Fields>[0], ry = fused_radius<Fields>[1];
  FusedShape s;
  s.cluster_x = cx;
  s.cluster_y = cy;
  s.own_y =
      threads_y * resident_cells_per_thread(Stages, Fields::written_count);
  bool const holds = s.tile_x() >= nx && s.tile_y() >= ny;
  s.tiles_x = s.tiles_y = holds ? 1 : 0;
  s.slot_cells =
      static_cast<std::size_t>(s.own_x + 2 * rx) * (s.own_y + 2 * ry);
  s.shared_bytes = fused_shared_bytes<Fields>(s.slot_cells, sizeof(T));
  return s;
}

/// Why the fused plan cannot run `state` with `stages` stages ("" when it
/// can), each reason with what would run.
template <class Rhs, class T, int Rank, class MemorySpace>
std::string fused_refusal(State<T, Rank, MemorySpace> const& state,
                          int stages) {
  using stencil::detail::concat;
  if (Rank != 2) {
    return concat("Fused runs 2D right-hand sides; this one is ", Rank,
                  "D (use Unfused)");
  }
  if (!with_stages(stages, [](auto) {})) {
    return concat("Fused has kernels for 1, 4, 7 and 8 stages, not ", stages,
                  " (use Unfused)");
  }
  DeviceLimits const device = current_device_limits();
  if (device.compute_capability < 70) {
    return concat(
        "Fused needs compute capability 7.0 or newer (its tiles' blocks "
        "wait for each other in global memory; clusters from 9.0); ",
        capability_of(device), " (use Unfused)");
  }
  auto const& sides = state.boundaries();
  for (int a = 0; a < Rank; ++a) {
    for (int side = 0; side < 2; ++side) {
      if (sides.kind_at(a, side) == Boundary::dirichlet) {
        return concat(
            "Fused refreshes fixed, periodic, neumann and "
            "reflecting sides inside the step; axis ",
            stencil::detail::axis_name(Rank, a),
            " is dirichlet "
            "(use Unfused)");
      }
    }
  }
  if (!state.position_map().identity()) {
    return "Fused runs a whole domain; this state is part of a distributed "
           "one (use Unfused)";
  }
  return {};
}

}  // namespace stencil::native_cuda::ode
