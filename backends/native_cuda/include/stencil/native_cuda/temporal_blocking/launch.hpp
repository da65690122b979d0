// SPDX-License-Identifier: Apache-2.0
// Host side of temporal blocking: checks (can_run), launch geometry and the
// launches, steps beyond the depth by relaunching.
#pragma once

#include <stencil/native_cuda/common/cuda_check.hpp>
#include <stencil/native_cuda/common/device.hpp>
#include <stencil/native_cuda/temporal_blocking/kernels.hpp>
#include <stencil/native_cuda/temporal_blocking/warp_tiles.hpp>

#include <stencil/detail/time_loop.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>
#include <stencil/plan_type.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>

namespace stencil::native_cuda::temporal_blocking {

/// Deepest rank-1 blocking: each level costs a barrier over the whole tile,
/// so beyond this the tile's halo work outweighs the saved DRAM traffic.
inline constexpr int max_depth_1d = 64;

/// The deepest default for a radius-1 star whose update divides (see
/// Kernel::default_depth). In float every depth to 12 runs on 512 columns,
/// so the block's width does not stop it; deeper than 10 did not pay
/// (docs/decisions/temporal-blocking-2d-depth.md).
inline constexpr int max_divided_star_depth = 10;

/// The depth the plan takes for the warp-tiled kernel where it chooses:
/// deeper blocking moves fewer bytes, but each level's registers leave
/// fewer warps to hide the loads' latency, and each costs the narrow tile
/// 2r columns (docs/decisions/temporal-blocking-2d-warp-tiles.md).
inline constexpr int warp_tile_default_depth = 8;

/// The kernels of stencil `Op` on `T`; rank 2 in shared-memory rings
/// (kernels.hpp) or, with `WarpTiles`, in warp tiles (warp_tiles.hpp).
template <class T, class Op, bool WarpTiles = false>
struct Kernel {
  using Operator = Op;
  static constexpr int rank = Op::rank;
  static constexpr bool warp_tiles = rank == 2 && WarpTiles;
  static_assert(rank == 2 || !WarpTiles, "warp tiles are rank 2 only");
  using Function =
      void (*)(std::conditional_t<rank == 1, Params1D<T, Op>, Params2D<T, Op>>);

  /// The kernel for `depth` and `prefetch` (rank 2 compiles one per depth,
  /// with plain loads and staged). The one member that names the kernels,
  /// and defined out of line so that it is not inline: a translation unit
  /// that sees the suite's explicit instantiation declarations
  /// (native_cuda/instantiation.hpp) compiles none of them.
  static Function function(int depth, int prefetch);
  template <int Depth>
  static Function function_2d(int depth, bool staged) {
    if constexpr (Depth < max_compiled_depth_2d<T, Op, WarpTiles>) {
      if (depth > Depth) return function_2d<Depth + 1>(depth, staged);
    }
    if constexpr (warp_tiles) {
      (void)staged;
      return &temporal_blocking_2d_warp_tiles<T, Op, Depth>;
    } else {
      return staged ? &temporal_blocking_2d<T, Op, Depth, true>
                    : &temporal_blocking_2d<T, Op, Depth, false>;
    }
  }

  /// Rings (rank 2) or tile buffers (rank 1), plus the staging ring of
  /// `prefetch` stages (rank 2; rank 1 loads its tile once per launch and
  /// has nothing to prefetch).
  static std::size_t shared_bytes(int depth, int prefetch) {
    if constexpr (rank == 1) {
      return shared_bytes_1d<T, Op::radius>();
    } else if constexpr (warp_tiles) {
      (void)depth;
      (void)prefetch;
      return 0;
    } else {
      return dispatch_2d<1>(depth, [&](auto d) {
        constexpr int Depth = decltype(d)::value;
        return shared_bytes_2d<T, Op, Depth>() +
               staging_bytes_2d<T>(
                   prefetch,
                   threads_2d<T, Op, Depth> * columns_2d<T, Op, Depth>,
                   rows_2d<T, Op, Depth>);
      });
    }
  }
  /// The most prefetch stages the kernels take: none for rank 1, nor for
  /// warp tiles (their input rows come 2r iterations ahead, in registers).
  static constexpr int max_prefetch =
      rank == 1 || warp_tiles ? 0 : max_prefetch_stages;
  static int compiled_depth() {
    if constexpr (rank == 1) {
      return max_depth_1d;
    } else {
      return max_compiled_depth_2d<T, Op, WarpTiles>;
    }
  }
  /// How a block of the kernel for `depth` is laid out: its threads, the
  /// output rows (per level and iteration) and adjacent columns each thread
  /// computes, and whether it sums the box row by row (sums_rows_2d); rank
  /// 1: one cell at a time.
  struct ThreadShape {
    int threads, rows, columns;
    bool sums_rows;
  };
  static ThreadShape thread_shape(int depth) {
    if constexpr (rank == 1) {
      (void)depth;
      return {threads_per_block, 1, 1, false};
    } else if constexpr (warp_tiles) {
      (void)depth;
      return {32 * warp_tiles_per_block, 1, warp_tile_columns_2d<T, Op>(),
              false};
    } else {
      return dispatch_2d<1>(depth, [](auto d) {
        constexpr int Depth = decltype(d)::value;
        constexpr int columns = columns_2d<T, Op, Depth>;
        return ThreadShape{threads_2d<T, Op, Depth>, rows_2d<T, Op, Depth>,
                           columns, sums_rows_2d<T, Op, columns>};
      });
    }
  }
  static int threads(int depth) { return thread_shape(depth).threads; }
  /// Cells (rank 1) or columns (rank 2) a tile computes, halo included: a
  /// block's, or with warp tiles a warp's.
  static int block_width(int depth) {
    if constexpr (rank == 1) {
      return tile_cells_1d;
    } else if constexpr (warp_tiles) {
      (void)depth;
      return 32 * warp_tile_columns_2d<T, Op>();
    } else {
      ThreadShape const shape = thread_shape(depth);
      return shape.threads * shape.columns;
    }
  }
  /// f(std::integral_constant<int, depth>) for a run-time depth.
  template <int Depth, class F>
  static auto dispatch_2d(int depth, F&& f) {
    if constexpr (Depth < max_compiled_depth_2d<T, Op, WarpTiles>) {
      if (depth > Depth) return dispatch_2d<Depth + 1>(depth, f);
    }
    return f(std::integral_constant<int, Depth>{});
  }
  /// The deepest blocking this device's shared memory holds (and this build
  /// compiled without spills), keeping at least half of every block's
  /// columns valid.
  static int max_depth(DeviceLimits const& device, int prefetch) {
    if constexpr (rank == 1) {
      int const by_halo =
          Op::radius == 0 ? 1 << 20 : tile_cells_1d / (4 * Op::radius);
      return shared_memory_fits(function(1, 0), shared_bytes(1, 0), device)
                 ? std::min(by_halo, max_depth_1d)
                 : 0;
    } else {
      for (int depth = max_compiled_depth_2d<T, Op, WarpTiles>; depth >= 1;
           --depth) {
        if (fits(depth, prefetch, device)) return depth;
      }
      return 0;
    }
  }
  /// Whether `depth` runs on `device`: its shared memory fits, at least
  /// half of the tile's columns are valid, the kernel takes `prefetch`
  /// stages, and it does not spill
  /// registers to local memory (registers grow with the depth: a window per
  /// level).
  static bool fits(int depth, int prefetch, DeviceLimits const& device) {
    if constexpr (rank == 1) {
      return depth >= 1 && depth <= max_depth(device, 0);
    } else {
      return depth >= 1 && depth <= max_compiled_depth_2d<T, Op, WarpTiles> &&
             prefetch <= max_prefetch &&
             4 * depth * Op::radius <= block_width(depth) &&
             !spills(depth, prefetch) &&
             shared_memory_fits(function(depth, prefetch),
                                shared_bytes(depth, prefetch), device);
    }
  }
  /// Where the plan chooses the depth itself (depth = 0). Rank 2:
  /// - a radius-1 star takes the deepest depth that fits: its few shared
  ///   reads per cell make deep blocking pay even on a narrower block
  ///   (j2d5pt-prescaled: 12 on 256 columns, 9% ahead of 8 on 384 in
  ///   double; 12 on 512 columns in float);
  /// - one whose update divides (Op::divisions, stencil/traits.hpp) takes
  ///   the deepest on a block of at least 384 columns, and at most
  ///   max_divided_star_depth: the division's dependent operations make a
  ///   level issue-bound, and wider blocks bring the warps that hide them
  ///   (j2d5pt: 8 on 384 columns in double, 11-13% ahead of 12 on 256; 10 in
  ///   float, 5-10% ahead of 12);
  /// - where threads can own column pairs (double radius-2 boxes, see
  ///   deepest_pair_depth_2d), the deepest pair depth;
  /// - other stencils the deepest on a block of at least 384 columns (their
  ///   halo grows faster with the depth), else the deepest;
  /// - warp tiles warp_tile_default_depth, or the deepest below it that
  ///   fits.
  /// Rank 1: 12 (EBISU used 4 to 12). Measured per suite stencil
  /// (docs/decisions/temporal-blocking-2d-depth.md).
  /// `prefetch` -1: where the plan chooses the prefetch as well, among the
  /// depths that fit at some prefetch (least_fitting_prefetch).
  static int default_depth(DeviceLimits const& device, int prefetch) {
    if constexpr (rank == 1) {
      return std::min(12, max_depth(device, 0));
    } else if constexpr (warp_tiles) {
      return std::min(warp_tile_default_depth,
                      max_depth(device, std::max(0, prefetch)));
    } else {
      bool const radius1_star = Op::shape == Shape::star && Op::radius == 1;
      bool const divides = stencil::detail::divisions_of<Op>() > 0;
      int deepest = 0, deepest_wide = 0, deepest_pair = 0;
      for (int depth = 1; depth <= max_compiled_depth_2d<T, Op, WarpTiles>;
           ++depth) {
        if (prefetch < 0 ? least_fitting_prefetch(depth, device) < 0
                         : !fits(depth, prefetch, device)) {
          continue;
        }
        deepest = depth;
        if (block_width(depth) >= 384) deepest_wide = depth;
        if (pairs_2d_at<T, Op>(depth)) deepest_pair = depth;
      }
      if (deepest_pair > 0) return deepest_pair;
      if (radius1_star && !divides) return deepest;
      int const depth = deepest_wide == 0 ? deepest : deepest_wide;
      return radius1_star ? std::min(depth, max_divided_star_depth) : depth;
    }
  }
  /// The prefetch the plan takes for `depth` where it chooses (-1): plain
  /// loads into registers an iteration ahead where that kernel fits, else
  /// one cp.async stage where the staged kernel does; -1 where neither
  /// does. The temporal kernels read DRAM once per `depth` steps, so a
  /// load's latency is a small part of an iteration, and staging costs the
  /// shared memory of the deepest depths. But the staged kernel holds one
  /// iteration's input rows fewer in registers, so it can fit where the
  /// plain one spills (j2d25pt-prescaled's depth-3 pairs, summed by row;
  /// docs/decisions/temporal-prefetch-default.md).
  static int least_fitting_prefetch(int depth, DeviceLimits const& device) {
    if (fits(depth, 0, device)) return 0;
    // Before compute capability 8.0 a stage is a plain copy: not chosen.
    bool const staging = max_prefetch > 0 && device.compute_capability >= 80;
    return staging && fits(depth, 1, device) ? 1 : -1;
  }
  static bool spills(int depth, int prefetch) {
    cudaFuncAttributes attributes{};
    STENCIL_CUDA_CHECK(
        cudaFuncGetAttributes(&attributes, function(depth, prefetch)));
    return attributes.localSizeBytes > 0;
  }
};

template <class T, class Op, bool WarpTiles>
auto Kernel<T, Op, WarpTiles>::function(int depth, int prefetch) -> Function {
  if constexpr (rank == 1) {
    (void)depth;
    (void)prefetch;
    return &temporal_blocking_1d<T, Op>;
  } else {
    return function_2d<1>(depth, prefetch > 0);
  }
}

struct Geometry {
  int valid_width;
  int strips;
  int blocks;
  int rows_per_block;  // rank 2: of the strips' rows laid end to end, per
                       // tile (a block, or a warp with warp tiles)
  std::size_t shared_bytes;
  int blocks_per_sm = 0;  // resident at once
};

template <class K, class Op = typename K::Operator>
Geometry geometry(int depth, int prefetch, int nx, int ny,
                  int resident_blocks) {
  // Tiles a block streams side by side: its warps with warp tiles.
  constexpr int tiles_per_block = K::warp_tiles ? warp_tiles_per_block : 1;
  Geometry g{};
  g.valid_width = K::block_width(depth) - 2 * depth * Op::radius;
  g.strips = (nx + g.valid_width - 1) / g.valid_width;
  g.shared_bytes = K::shared_bytes(depth, prefetch);
  if constexpr (Op::rank == 1) {
    g.blocks = g.strips;
    g.rows_per_block = 1;
  } else {
    // Equal shares of all strips' rows, one per resident tile: no SM idles
    // at the end, whatever the extents. A share that crosses into the next
    // strip restarts the pipeline there (depth*(lag + 2r) rows of extra
    // work), which is why there are no more shares than resident tiles.
    long const total = static_cast<long>(g.strips) * ny;
    long const tiles =
        std::min<long>(total, static_cast<long>(std::max(1, resident_blocks)) *
                                  tiles_per_block);
    g.rows_per_block = static_cast<int>((total + tiles - 1) / tiles);
    long const shares = (total + g.rows_per_block - 1) / g.rows_per_block;
    g.blocks =
        static_cast<int>((shares + tiles_per_block - 1) / tiles_per_block);
  }
  return g;
}

/// Blocks of the kernel for `depth` and `prefetch` that fit on one
/// multiprocessor at once.
template <class K>
int blocks_per_sm(int depth, int prefetch, std::size_t shared_bytes) {
  return resident_blocks_per_sm(K::function(depth, prefetch), K::threads(depth),
                                shared_bytes);
}

/// Opts the kernel for `depth` and `prefetch` into the shared memory it
/// needs (above the default 48 KiB); cheap, so done before every launch.
template <class K>
void prepare_kernel(int depth, int prefetch, std::size_t shared_bytes) {
  allow_dynamic_shared(K::function(depth, prefetch), shared_bytes);
}

/// Prepares the kernel for `depth` and returns its launch geometry on a
/// device with `multiprocessors` SMs.
template <class K>
Geometry ready_geometry(int depth, int prefetch, int nx, int ny,
                        int multiprocessors) {
  std::size_t const shared_bytes = K::shared_bytes(depth, prefetch);
  prepare_kernel<K>(depth, prefetch, shared_bytes);
  int const per_sm = blocks_per_sm<K>(depth, prefetch, shared_bytes);
  Geometry g = geometry<K>(depth, prefetch, nx, ny,
                           std::max(1, per_sm) * multiprocessors);
  g.blocks_per_sm = per_sm;
  return g;
}

/// Resolves a TemporalBlocking policy into `p` with the kernels `K` (can_run:
/// refuses what the device or the kernel cannot do, before anything runs).
/// A requested depth of 0 or prefetch of -1 is the plan's choice.
template <class T, class Op, class K>
void plan_with(Plan& p, int requested_depth, int requested_prefetch,
               bool tiles_chosen) {
  DeviceLimits const device = current_device_limits();
  expect_native_policy_applies(device, "TemporalBlocking", p.sides, p.rank,
                               requested_depth);
  STENCIL_EXPECT(
      K::max_prefetch > 0 || requested_prefetch <= 0,
      "TemporalBlocking: prefetch ", requested_prefetch,
      Op::rank == 1
          ? " on a rank-1 grid: its kernel loads each tile once per launch, "
            "so there is nothing to prefetch"
      : tiles_chosen
          ? " with this stencil and value type, which the plan runs in warp "
            "tiles (Tiles2D::automatic): they load their input rows into "
            "registers 2 x radius iterations ahead and have no cp.async "
            "stages; ask for Tiles2D::shared_memory to prefetch"
          : " with Tiles2D::warp_registers: warp tiles load their input rows "
            "into registers 2 x radius iterations ahead and have no cp.async "
            "stages",
      "; use prefetch 0 or -1");
  expect_prefetch_runs(device, "TemporalBlocking", requested_prefetch,
                       K::max_prefetch);
  int depth = requested_depth;
  int prefetch = requested_prefetch;
  if (prefetch < 0) {
    // The plan's choice: the depth first (its own or the user's), then the
    // fewest stages at which that depth's kernel fits.
    if (depth == 0) depth = K::default_depth(device, -1);
    prefetch = std::max(0, K::least_fitting_prefetch(depth, device));
  }
  int const max_depth = K::max_depth(device, prefetch);
  if (prefetch == 0) {
    expect_some_depth_fits(max_depth, device, "TemporalBlocking", Op::radius,
                           sizeof(T));
  }
  STENCIL_EXPECT_SUPPORTED(
      max_depth >= 1, "TemporalBlocking: prefetch ", prefetch, " with radius ",
      Op::radius, " and ", sizeof(T),
      "-byte values leaves no room for depth 1 in the ",
      device.shared_per_block_optin, " bytes of shared memory of ", device.name,
      "; use less prefetch");
  if (depth == 0) depth = K::default_depth(device, prefetch);
  // A refusal names the depths that fit as the plan would run them: where
  // it chooses the prefetch, plain or with one stage.
  bool const planned_prefetch = requested_prefetch < 0 && K::max_prefetch > 0 &&
                                device.compute_capability >= 80;
  auto const fits_as_planned = [&](int d) {
    return planned_prefetch ? K::least_fitting_prefetch(d, device) >= 0
                            : K::fits(d, prefetch, device);
  };
  auto const largest_fitting = [&] {
    int largest = 0;
    for (int d = 1; d <= K::compiled_depth(); ++d) {
      if (fits_as_planned(d)) largest = d;
    }
    return largest;
  };
  std::string const compiled = std::to_string(K::compiled_depth());
  std::string const needs =
      K::warp_tiles
          ? " in warp tiles (a depth needs at least half of a warp's "
            "columns valid, a compiled kernel (this build has depths up to " +
                compiled +
                ", those whose levels take at most 192 registers) and no "
                "register spills; Tiles2D::shared_memory runs others)"
          : " (a depth needs its shared memory, staging included, within "
            "the " +
                std::to_string(device.shared_per_block_optin) +
                " bytes per block the device allows and accepted by CUDA "
                "for its kernel, at least half of the block's columns "
                "valid, a compiled kernel (this build has depths up to " +
                compiled + ") and no register spills)";
  STENCIL_EXPECT_SUPPORTED(
      K::fits(depth, prefetch, device), "TemporalBlocking: depth ", depth,
      " at prefetch ", prefetch,
      planned_prefetch ? " or 1 (the plan's choices)" : "", " does not fit on ",
      device.name, " for radius ", Op::radius, " and ", sizeof(T),
      "-byte values", needs,
      "; the largest depth that fits at this prefetch is ", largest_fitting(),
      " (all that fit: ", fitting_depths(K::compiled_depth(), fits_as_planned),
      ")");

  Geometry const g = ready_geometry<K>(depth, prefetch, p.extents[2],
                                       p.extents[1], device.multiprocessors);
  cudaFuncAttributes attributes{};
  STENCIL_CUDA_CHECK(
      cudaFuncGetAttributes(&attributes, K::function(depth, prefetch)));

  p.backend = Backend::native_cuda;
  p.policy = PolicyKind::temporal_blocking;
  p.depth = depth;
  p.prefetch = prefetch;
  p.tile = Tile{g.valid_width, Op::rank == 2 ? g.rows_per_block : 1, 1};
  typename K::ThreadShape const shape = K::thread_shape(depth);
  p.team_size = shape.threads;
  p.native_cuda.rows_per_thread = shape.rows;
  p.native_cuda.columns_per_thread = shape.columns;
  p.native_cuda.plane_sums = shape.sums_rows;
  p.native_cuda.warp_tiles = K::warp_tiles;
  p.scratch_bytes = g.shared_bytes;
  p.registers = attributes.numRegs;
  p.local_memory_bytes = static_cast<int>(attributes.localSizeBytes);
  p.blocks = g.blocks;
  p.blocks_per_sm = g.blocks_per_sm;
  p.device = device.name;
}

/// Resolves a TemporalBlocking policy into `p`: rank 1, or rank 2 in the
/// tiles `tiles` asks for (automatic: prefers_warp_tiles_2d).
template <class T, class Op>
void plan(Plan& p, int requested_depth, int requested_prefetch,
          Tiles2D tiles = Tiles2D::automatic) {
  static_assert(Op::rank <= 2,
                "temporal_blocking::plan is for rank 1 and 2; rank 3 runs the "
                "device-tiling kernel on isolated tiles (plan_sm_tiling)");
  if constexpr (Op::rank == 1) {
    STENCIL_EXPECT(tiles != Tiles2D::warp_registers,
                   "TemporalBlocking: Tiles2D::warp_registers on a rank-1 "
                   "grid: warp tiles are rank 2 only; use Tiles2D::automatic "
                   "or shared_memory");
    plan_with<T, Op, Kernel<T, Op>>(p, requested_depth, requested_prefetch,
                                    false);
  } else {
    bool const chosen = tiles == Tiles2D::automatic;
    bool const warps = chosen ? prefers_warp_tiles_2d<T, Op>
                              : tiles == Tiles2D::warp_registers;
    if (warps) {
      plan_with<T, Op, Kernel<T, Op, true>>(p, requested_depth,
                                            requested_prefetch, chosen);
    } else {
      plan_with<T, Op, Kernel<T, Op, false>>(p, requested_depth,
                                             requested_prefetch, chosen);
    }
  }
}

/// Advances `grid` by `steps` with the kernels `K` through the time loop:
/// blocks of `p.depth` steps, one launch each, the remainder last.
/// Asynchronous on the space's stream.
template <class K, class T, int Rank, class MemorySpace, class Op>
void run_with(Kokkos::Cuda const& space, Grid<T, Rank, MemorySpace>& grid,
              Op const& op, int steps, Plan const& p,
              stencil::detail::LoopHooks const& hooks) {
  int const multiprocessors = space.cuda_device_prop().multiProcessorCount;
  int const nx = grid.extent(Rank - 1);
  int const ny = Rank == 2 ? grid.extent(0) : 1;
  // Every block but a shorter one has the plan's depth: its kernel is
  // prepared and its geometry computed once.
  Geometry const full =
      ready_geometry<K>(p.depth, p.prefetch, nx, ny, multiprocessors);
  auto const run_block = [&](int depth) {
    Geometry const g =
        depth == p.depth
            ? full
            : ready_geometry<K>(depth, p.prefetch, nx, ny, multiprocessors);
    T const* const in = grid.current().data();
    T* const out = grid.next().data();
    if constexpr (Rank == 1) {
      Params1D<T, Op> const params{in,          out,   op,           nx,
                                   grid.halo(), depth, g.valid_width};
      // Through function(), as every launch: naming the kernel here would
      // compile a second copy of it in this translation unit, not the one
      // whose attributes prepare_kernel set.
      K::function(depth,
                  p.prefetch)<<<g.strips, threads_per_block, g.shared_bytes,
                                space.cuda_stream()>>>(params);
    } else {
      Params2D<T, Op> const params{in,
                                   out,
                                   op,
                                   nx,
                                   ny,
                                   grid.halo(),
                                   grid.padded_extent(1),
                                   g.valid_width,
                                   g.strips,
                                   g.rows_per_block,
                                   p.prefetch};
      K::function(depth,
                  p.prefetch)<<<g.blocks, K::threads(depth), g.shared_bytes,
                                space.cuda_stream()>>>(params);
    }
    STENCIL_CUDA_CHECK(cudaGetLastError());
    grid.swap();
  };
  stencil::detail::time_loop(
      space, grid, stencil::detail::step_blocks(steps, p.depth, hooks),
      run_block, hooks);
}

/// Advances `grid` by `steps` as plan `p` says (warp tiles or not).
template <class T, int Rank, class MemorySpace, class Op>
void run(Kokkos::Cuda const& space, Grid<T, Rank, MemorySpace>& grid,
         Op const& op, int steps, Plan const& p,
         stencil::detail::LoopHooks const& hooks = {}) {
  if constexpr (Rank == 2) {
    if (p.native_cuda.warp_tiles) {
      run_with<Kernel<T, Op, true>>(space, grid, op, steps, p, hooks);
      return;
    }
  }
  run_with<Kernel<T, Op>>(space, grid, op, steps, p, hooks);
}

}  // namespace stencil::native_cuda::temporal_blocking
