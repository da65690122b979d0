// SPDX-License-Identifier: Apache-2.0
// Host side of device tiling: checks, the cut of the xy plane into regions,
// cooperative launches, steps beyond the depth by relaunching.
#pragma once

#include <stencil/native_cuda/common/cuda_check.hpp>
#include <stencil/native_cuda/common/device.hpp>
#include <stencil/native_cuda/common/grid_barrier.hpp>
#include <stencil/native_cuda/common/kept_between_calls.hpp>
#include <stencil/native_cuda/common/l2_window.hpp>
#include <stencil/native_cuda/device_tiling/kernels.hpp>

#include <stencil/detail/time_loop.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>
#include <stencil/plan_type.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace stencil::native_cuda::device_tiling {

/// The deepest blocking compiled: what fits in the largest shared memory a
/// block can have today, at most 12, and shallow enough that an SM-tiling
/// tile keeps a cell of output. One kernel per depth, so that the level
/// loop unrolls. Counted with the rings of SM tiling, which are never
/// smaller than device tiling's.
template <class T, class Op>
inline constexpr int max_compiled_depth = [] {
  int const fit = static_cast<int>(
      max_shared_per_block / shared_bytes_per_level<T, Op, NoExchange<T>>());
  int const valid = (tile_x - 1) / (2 * Op::radius);
  return std::min({fit, valid, max_depth_compiled});
}();

/// How rims reach the neighbouring blocks: tagged words, no barrier
/// (exchange.hpp). It beat the grid-sync exchange wherever the exchange is
/// a large part of an iteration (docs/decisions/tagged-exchange.md).
template <class T>
using Exchange = TaggedExchange<T>;

/// A depth cap that keeps every depth compiled (max_compiled_depth). A
/// value of its own rather than max_compiled_depth itself, so that a capped
/// set of kernels is a different type from the full set even where the cap
/// reaches the deepest depth, and both can be instantiated explicitly in one
/// translation unit (native_cuda/instantiation.hpp).
inline constexpr int all_compiled_depths = 0;

/// The kernels of one exchange and every depth up to `DepthCap` (at most
/// max_compiled_depth; all_compiled_depths for every depth). Auto caps SM
/// tiling at the depths it may choose, so that iterate(..., Auto{}) does not
/// compile the deeper ones.
template <class T, class Op, class X = Exchange<T>,
          int DepthCap = all_compiled_depths>
struct Kernel {
  using Function = void (*)(Params3D<T, Op, X>);
  static constexpr int deepest =
      DepthCap == all_compiled_depths
          ? max_compiled_depth<T, Op>
          : std::min(DepthCap, max_compiled_depth<T, Op>);
  static_assert(deepest >= 1);

  /// The kernel for `depth` and `prefetch`: per depth one with plain loads
  /// and one staged, and where two blocks fit in an SM's shared memory one
  /// with plain loads compiled for two blocks per SM, chosen where it does
  /// not spill. `inside`: every tile of the launch lies inside the grid in
  /// x and y; where Op and T have a kernel for that (has_inside_kernel), it
  /// takes the two-block kernel's place if it does not spill either.
  /// The one member that names the kernels, defined out of line so that it
  /// is not inline: a translation unit that sees the suite's explicit
  /// instantiation declarations (native_cuda/instantiation.hpp) compiles none
  /// of them.
  static Function function(int depth, int prefetch, bool inside = false);
  template <int Depth>
  static Function function_at(int depth, bool staged, bool inside) {
    if constexpr (Depth < deepest) {
      if (depth > Depth) return function_at<Depth + 1>(depth, staged, inside);
    }
    if (staged) return &device_tiling_3d<T, Op, Depth, X, true>;
    if constexpr (two_blocks_fit<T, Op, Depth, X>) {
      static bool const two_spill =
          local_bytes(&device_tiling_3d<T, Op, Depth, X, false, 2>) > 0;
      if constexpr (has_inside_kernel<T, Op, X>) {
        constexpr auto inside_kernel =
            &device_tiling_3d<T, Op, Depth, X, false, 2, threads_per_block,
                              true>;
        static bool const inside_spills = local_bytes(inside_kernel) > 0;
        if (inside && !two_spill && !inside_spills) return inside_kernel;
      }
      if (!two_spill) return &device_tiling_3d<T, Op, Depth, X, false, 2>;
    }
    return &device_tiling_3d<T, Op, Depth, X, false>;
  }
  static std::size_t local_bytes(Function f) {
    cudaFuncAttributes attributes{};
    STENCIL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, f));
    return attributes.localSizeBytes;
  }
  static std::size_t shared(int depth, int prefetch) {
    return shared_bytes<T, Op, X>(depth) +
           staging_bytes<T, Op::radius>(prefetch);
  }
  static bool spills(int depth, int prefetch) {
    return local_bytes(function(depth, prefetch)) > 0;
  }
  static bool fits(int depth, int prefetch, DeviceLimits const& device) {
    return depth >= 1 && depth <= deepest && !spills(depth, prefetch) &&
           shared_memory_fits(function(depth, prefetch),
                              shared(depth, prefetch), device);
  }
  static int max_depth(DeviceLimits const& device, int prefetch) {
    for (int depth = deepest; depth >= 1; --depth) {
      if (fits(depth, prefetch, device)) return depth;
    }
    return 0;
  }
  /// Blocks of the kernel for `depth` that one SM holds.
  static int blocks_per_sm(int depth, int prefetch) {
    auto const kernel = function(depth, prefetch);
    std::size_t const bytes = shared(depth, prefetch);
    allow_dynamic_shared(kernel, bytes);
    return resident_blocks_per_sm(kernel, threads_per_block, bytes);
  }
  /// The deepest depth up to `deepest` whose kernel runs two blocks per SM;
  /// 0 if none.
  static int deepest_with_two_blocks(int deepest, DeviceLimits const& device,
                                     int prefetch) {
    for (int depth = deepest; depth >= 1; --depth) {
      if (fits(depth, prefetch, device) &&
          blocks_per_sm(depth, prefetch) >= 2) {
        return depth;
      }
    }
    return 0;
  }
  /// Where two blocks fit in an SM, one block's iteration hides behind the
  /// other's, which pays more than the DRAM passes a deeper single block
  /// saves (docs/decisions/device-tiling-default-depth.md):
  ///  - float, and double boxes: the deepest depth that runs two blocks
  ///    per SM (z segments side by side); linear double boxes, summed by
  ///    plane, at 2;
  ///  - double stars: the deepest depth with two blocks per SM if it is 2
  ///    or more, else the deepest that fits, at most 6 (j3d7pt at 7 and 8
  ///    takes 254 registers).
  static int default_depth(DeviceLimits const& device, int prefetch) {
    int const deepest = max_depth(device, prefetch);
    int const two = deepest_with_two_blocks(deepest, device, prefetch);
    if constexpr (sizeof(T) == 8 && Op::shape == Shape::star) {
      return two >= 2 ? two : std::min(deepest, 6);
    }
    return two > 0 ? two : deepest;
  }
};

template <class T, class Op, class X, int DepthCap>
auto Kernel<T, Op, X, DepthCap>::function(int depth, int prefetch, bool inside)
    -> Function {
  return function_at<1>(depth, prefetch > 0, inside);
}

/// Prefetch stages where the plan chooses (prefetch = -1): plain loads into
/// registers an iteration ahead. An iteration waits for the rim exchange
/// anyway, which hides the input plane's load
/// (docs/decisions/temporal-prefetch-default.md).
inline constexpr int default_prefetch = 0;

/// Refuses a depth that leaves no room for `prefetch` stages of staging.
inline void expect_prefetch_leaves_a_depth(int max_depth, int prefetch,
                                           DeviceLimits const& device,
                                           std::string_view policy, int radius,
                                           std::size_t value_size) {
  if (prefetch == 0) {
    expect_some_depth_fits(max_depth, device, policy, radius, value_size);
  }
  STENCIL_EXPECT_SUPPORTED(
      max_depth >= 1, policy, ": prefetch ", prefetch, " with radius ", radius,
      " and ", value_size, "-byte values leaves no room for depth 1 in the ",
      device.shared_per_block_optin, " bytes of shared memory of ", device.name,
      "; use less prefetch");
}

/// Refuses a depth beyond those a capped set of kernels `K` (Auto's)
/// compiles: a plan Auto read from its tuning cache, say.
template <class K, class T, class Op>
void expect_compiled_for_auto(int depth, std::string_view policy,
                              std::string_view mechanism) {
  constexpr bool capped = K::deepest < max_compiled_depth<T, Op>;
  STENCIL_EXPECT(!capped || depth <= K::deepest, policy, ": Auto runs ",
                 mechanism, " at depths 1 to ", K::deepest, ", not ", depth,
                 "; ask for stencil::", policy, "{.depth = ", depth,
                 "} to run it");
}

/// Blocks resident at once for the kernel of `depth`: the most tiles a
/// region can have.
template <class T, class Op, class X = Exchange<T>,
          int DepthCap = all_compiled_depths>
int resident_blocks(int depth, int prefetch) {
  return Kernel<T, Op, X, DepthCap>::blocks_per_sm(depth, prefetch) *
         Kokkos::Cuda{}.cuda_device_prop().multiProcessorCount;
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
  // Cells of output a region `tiles` tiles of `tile` cells wide writes
  // along an axis it does not cover whole.
  auto core_cells = [&](int tiles, int tile) {
    return tiles * tile - 2 * overlap;
  };
  // How many regions of `tiles` tiles an axis of `all` tiles (n cells)
  // needs; 0: they cannot cover it.
  auto regions_along = [&](int tiles, int all, int n, int tile) {
    if (tiles >= all) return 1;
    int const core = core_cells(tiles, tile);
    return core <= 0 ? 0 : (n + core - 1) / core;
  };
  long best_work = -1;
  int best_x = 0, best_y = 0;
  for (int tx = 1; tx <= std::min(all_x, blocks); ++tx) {
    int const ty = std::min(all_y, blocks / tx);
    int const rx = regions_along(tx, all_x, nx, tile_x);
    int const ry = regions_along(ty, all_y, ny, tile_y);
    if (ty < 1 || rx == 0 || ry == 0) continue;
    long const work = static_cast<long>(rx) * ry * tx * ty;
    if (best_work < 0 || work < best_work) {
      best_work = work;
      best_x = tx;
      best_y = ty;
    }
  }
  STENCIL_EXPECT_SUPPORTED(best_work > 0, "DeviceTiling: at depth ", depth,
                           " and radius ", radius, " a region of at most ",
                           blocks, " tiles of ", tile_x, "x", tile_y,
                           " cells is all overlap; use a smaller depth");
  std::vector<Region> regions;
  auto cores = [&](int tiles, int all, int n, int tile) {
    // (first output cell, output cells), or (0, 0) for the whole axis.
    std::vector<std::pair<int, int>> c;
    if (tiles >= all) {
      c.push_back({0, 0});
      return c;
    }
    int const core = core_cells(tiles, tile);
    for (int begin = 0; begin < n; begin += core) c.push_back({begin, core});
    return c;
  };
  for (auto const [y_begin, y_core] : cores(best_y, all_y, ny, tile_y)) {
    for (auto const [x_begin, x_core] : cores(best_x, all_x, nx, tile_x)) {
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

/// Planes per z segment when `resident` blocks run a region of
/// `region_tiles` tiles over `nz` planes at `depth`: as many segments as
/// the resident blocks hold whole copies of the region, so that an SM that
/// holds two blocks gets two (docs/decisions/device-tiling-default-depth.md),
/// and a plane
/// of fewer tiles than SMs leaves none idle that segments can use. Each
/// segment streams depth*(2r + lag) planes it does not write (its
/// neighbours' planes it depends on, and the levels' pipeline fill), so a
/// segment is at least 8 times that long.
inline int z_segment_length(int nz, int region_tiles, int resident, int depth,
                            int radius) {
  int const warm_up = depth * (3 * radius + 1);
  int const by_blocks = std::max(1, resident / std::max(1, region_tiles));
  int const by_length = std::max(1, nz / (8 * warm_up));
  int const segments = std::min(by_blocks, by_length);
  return (nz + segments - 1) / segments;
}

/// How a launch of `depth` levels covers an nz x ny x nx grid with
/// `resident` blocks: the regions of the xy plane, run one after another,
/// and the z segments each region's blocks stream side by side.
struct LaunchShape {
  std::vector<Region> regions;
  int z_segment = 0;  ///< planes per segment
  int segments = 0;

  int blocks() const {
    return regions.front().tiles_x * regions.front().tiles_y * segments;
  }
};

/// Whether every tile of `region` lies inside an nx-wide, ny-high plane.
inline bool tiles_inside(Region const& region, int nx, int ny) {
  return region.x0 >= 0 && region.y0 >= 0 &&
         region.x0 + region.tiles_x * tile_x <= nx &&
         region.y0 + region.tiles_y * tile_y <= ny;
}

/// The kernel a launch of `blocks` blocks runs: the one for tiles inside
/// the grid where they are (`inside`) and Kernel::function has one, if it
/// holds all `blocks` resident at once; else the kernel for every launch,
/// whose occupancy the launch shape was cut for. The two may differ in
/// registers, and so in blocks per SM (sm_90, float j3d7pt at depth 1: 66
/// registers and 3 blocks per SM against 4).
template <class T, class Op, class X, int DepthCap>
auto launch_kernel(int depth, int prefetch, bool inside, int blocks) {
  using K = Kernel<T, Op, X, DepthCap>;
  auto const general = K::function(depth, prefetch);
  auto const kernel = K::function(depth, prefetch, inside);
  if (kernel == general) return general;
  std::size_t const bytes = K::shared(depth, prefetch);
  allow_dynamic_shared(kernel, bytes);
  long const resident = static_cast<long>(resident_blocks_per_sm(
                            kernel, threads_per_block, bytes)) *
                        Kokkos::Cuda{}.cuda_device_prop().multiProcessorCount;
  return resident >= blocks ? kernel : general;
}

inline LaunchShape launch_shape(int nz, int ny, int nx, int resident, int depth,
                                int radius) {
  LaunchShape s;
  s.regions = cut_regions(nx, ny, resident, depth, radius);
  s.z_segment = z_segment_length(
      nz, s.regions.front().tiles_x * s.regions.front().tiles_y, resident,
      depth, radius);
  s.segments = (nz + s.z_segment - 1) / s.z_segment;
  return s;
}

/// Bytes of exchange buffer the launches of depth `depth` in `shape` use:
/// levels 1..depth-1, `exchange_parities` planes each, the edge cells of
/// every tile of a region, for each z segment.
template <class T, class Op, class X>
std::size_t exchange_bytes(int depth, LaunchShape const& shape) {
  return static_cast<std::size_t>(exchange_parities<Op, X>) * (depth - 1) *
         shape.blocks() * TileShapeOf<T, Op, X>::edge_cells * X::cell_bytes;
}

/// The L2 window over `bytes` of exchange buffer: as much of it as the
/// device can keep persisting.
inline std::size_t l2_window_bytes(std::size_t bytes,
                                   DeviceLimits const& device) {
  return std::min(
      {bytes, device.persisting_l2_max, device.access_policy_window_max});
}

/// Resolves a DeviceTiling policy into `p` with the kernels of depths up to
/// `DepthCap`; refuses what the device or the kernel cannot do before
/// anything runs.
template <class T, class Op, int DepthCap = all_compiled_depths>
void plan(Plan& p, int requested_depth, int requested_prefetch,
          bool l2_window = false) {
  static_assert(Op::rank == 3,
                "stencil::DeviceTiling is for rank-3 grids; rank 1 and 2 use "
                "TemporalBlocking");
  static_assert(Op::radius >= 1 && Op::radius <= 2,
                "stencil::DeviceTiling supports radius 1 and 2");
  using K = Kernel<T, Op, Exchange<T>, DepthCap>;
  DeviceLimits const device = current_device_limits();
  expect_native_policy_applies(device, "DeviceTiling", p.sides, p.rank,
                               requested_depth);
  expect_plane_indexable("DeviceTiling", p.extents[1], p.extents[2], p.halo);
  int const prefetch = resolve_prefetch(device, "DeviceTiling",
                                        requested_prefetch, default_prefetch);
  int const max_depth = K::max_depth(device, prefetch);
  expect_prefetch_leaves_a_depth(max_depth, prefetch, device, "DeviceTiling",
                                 Op::radius, sizeof(T));
  int const depth = requested_depth == 0 ? K::default_depth(device, prefetch)
                                         : requested_depth;
  expect_compiled_for_auto<K, T, Op>(depth, "DeviceTiling", "device tiling");
  STENCIL_EXPECT_SUPPORTED(
      K::fits(depth, prefetch, device), "DeviceTiling: depth ", depth,
      " at prefetch ", prefetch, " does not fit on ", device.name,
      " for radius ", Op::radius, " and ", sizeof(T),
      "-byte values (each level keeps ",
      shared_bytes_per_level<T, Op, Exchange<T>>(),
      " bytes of shared memory per block, the prefetch ",
      staging_bytes<T, Op::radius>(prefetch), ", within the ",
      device.shared_per_block_optin,
      " bytes the device allows and CUDA accepts for the kernel, without "
      "register spills; this build has depths up to ",
      K::deepest, "); the largest depth that fits at this prefetch is ",
      max_depth, " (all that fit: ",
      fitting_depths(K::deepest,
                     [&](int d) { return K::fits(d, prefetch, device); }),
      ")");
  int const blocks =
      resident_blocks<T, Op, Exchange<T>, DepthCap>(depth, prefetch);
  STENCIL_EXPECT_SUPPORTED(blocks >= 1, "DeviceTiling: no block of the depth-",
                           depth, " kernel can be resident on ", device.name);
  LaunchShape const shape = launch_shape(
      p.extents[0], p.extents[1], p.extents[2], blocks, depth, Op::radius);
  if (l2_window) {
    STENCIL_EXPECT_SUPPORTED(
        device.persisting_l2_max > 0 && device.access_policy_window_max > 0,
        "DeviceTiling: l2_window needs a GPU that can set L2 aside "
        "for persisting accesses (compute capability 8.0 or "
        "newer); ",
        device.name, " cannot. Use l2_window = false");
    STENCIL_EXPECT(depth > 1,
                   "DeviceTiling: l2_window at depth 1: a launch "
                   "of depth 1 exchanges nothing to keep in L2. "
                   "Use a depth of 2 or more, or l2_window = false");
  }
  // The kernel the launches run: the one for tiles inside the grid where
  // every region's tiles are and it has one.
  bool const all_inside = std::all_of(
      shape.regions.begin(), shape.regions.end(), [&](Region const& region) {
        return tiles_inside(region, p.extents[2], p.extents[1]);
      });
  auto const kernel = launch_kernel<T, Op, Exchange<T>, DepthCap>(
      depth, prefetch, all_inside, shape.blocks());
  cudaFuncAttributes attributes{};
  STENCIL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));

  p.backend = Backend::native_cuda;
  p.policy = PolicyKind::device_tiling;
  p.depth = depth;
  p.prefetch = prefetch;
  p.tile = Tile{tile_x, tile_y, shape.z_segment};
  p.team_size = threads_per_block;
  p.native_cuda.rows_per_thread = rows_per_thread<threads_per_block>;
  p.native_cuda.columns_per_thread = 1;
  p.scratch_bytes = K::shared(depth, prefetch);
  p.registers = attributes.numRegs;
  p.local_memory_bytes = static_cast<int>(attributes.localSizeBytes);
  p.blocks = shape.blocks();
  p.blocks_per_sm = blocks / device.multiprocessors;
  p.native_cuda.regions = static_cast<int>(shape.regions.size());
  p.native_cuda.z_segments = shape.segments;
  p.native_cuda.exchange = std::string(name(Exchange<T>::kind));
  p.native_cuda.plane_sums = sums_planes<T, Op, Exchange<T>>;
  p.native_cuda.input_to_ring = copies_input_to_ring<T> && prefetch == 0;
  p.native_cuda.inside_kernel = kernel != K::function(depth, prefetch, false);
  p.native_cuda.l2_window_bytes =
      l2_window ? l2_window_bytes(
                      exchange_bytes<T, Op, Exchange<T>>(depth, shape), device)
                : 0;
  p.device = device.name;
}

/// Iterations of one launch of depth `depth` over `nz` planes: the tags it
/// publishes with.
template <class T, class Op, class X>
int iterations(int nz, int depth) {
  using S = TileShapeOf<T, Op, X>;
  return (nz + S::radius + depth * S::lag + S::ring - 1) / S::ring * S::ring;
}

/// The exchange buffer, kept from one call to the next (zeroing 10-20 MB and
/// allocating it cost more than a short run), with the first tag not yet
/// published into it. Released when Kokkos finalizes.
struct ExchangeBuffer {
  Kokkos::View<unsigned char*, Kokkos::CudaSpace> bytes;
  unsigned next_tag = 0;
  /// The instance whose stream last used it: a call on another stream
  /// waits for it first.
  Kokkos::Cuda space;
};

/// At least `bytes` bytes of zeroed (or tag-clean) buffer, with room for
/// `tags` more tags, ready for use on `space`'s stream.
inline ExchangeBuffer& exchange_buffer(Kokkos::Cuda const& space,
                                       std::size_t bytes, std::size_t tags) {
  ExchangeBuffer& b = kept_between_calls<ExchangeBuffer>();
  hand_over_stream(b.space, space, b.bytes.extent(0) > 0,
                   "stencil::device_tiling: exchange buffer changes stream");
  if (b.bytes.extent(0) < bytes) {
    b.bytes = Kokkos::View<unsigned char*, Kokkos::CudaSpace>();
    b.bytes = Kokkos::View<unsigned char*, Kokkos::CudaSpace>(
        Kokkos::view_alloc(space, "stencil::device_tiling::exchange"), bytes);
    b.next_tag = 0;
  } else if (b.next_tag + tags < b.next_tag ||
             b.next_tag + tags > 0xffffffffu) {
    // Tags would wrap around to ones still in the buffer.
    Kokkos::deep_copy(space, b.bytes, static_cast<unsigned char>(0));
    b.next_tag = 0;
  }
  return b;
}

/// Advances `grid` by `steps` through the time loop: blocks of `p.depth`
/// steps (a shorter one where the remainder or a hook falls), one
/// cooperative launch per region each, with the kernels of depths up to
/// `DepthCap` (the plan's). `X` other than the default is for tests and
/// measurements.
template <class T, class MemorySpace, class Op, class X = Exchange<T>,
          int DepthCap = all_compiled_depths>
void run(Kokkos::Cuda const& space, Grid<T, 3, MemorySpace>& grid, Op const& op,
         int steps, Plan const& p,
         stencil::detail::LoopHooks const& hooks = {}) {
  using K = Kernel<T, Op, X, DepthCap>;
  int const nx = grid.extent(2), ny = grid.extent(1), nz = grid.extent(0);
  // A launch shape and the kernel of each of its regions for every block
  // length the call runs, chosen once rather than at every launch (the
  // choice asks CUDA for the occupancy).
  struct Launches {
    LaunchShape shape;
    std::vector<typename K::Function> kernels;
  };
  std::vector<int> const blocks =
      stencil::detail::step_blocks(steps, p.depth, hooks);
  std::map<int, Launches> by_depth;
  std::size_t bytes = X::cell_bytes;
  std::size_t tags = 0;
  for (int depth : blocks) {
    auto [it, added] = by_depth.try_emplace(depth);
    Launches& l = it->second;
    if (added) {
      l.shape = launch_shape(
          nz, ny, nx, resident_blocks<T, Op, X, DepthCap>(depth, p.prefetch),
          depth, Op::radius);
      for (Region const& region : l.shape.regions) {
        l.kernels.push_back(launch_kernel<T, Op, X, DepthCap>(
            depth, p.prefetch, tiles_inside(region, nx, ny), l.shape.blocks()));
      }
      bytes = std::max(bytes, exchange_bytes<T, Op, X>(depth, l.shape));
    }
    tags += l.shape.regions.size() *
            static_cast<std::size_t>(iterations<T, Op, X>(nz, depth));
  }
  ExchangeBuffer& buffer = exchange_buffer(space, bytes, tags);
  X exchange{};
  exchange.buffer =
      reinterpret_cast<decltype(exchange.buffer)>(buffer.bytes.data());
  L2Window window(space.cuda_stream(), buffer.bytes.data(),
                  p.native_cuda.l2_window_bytes > 0
                      ? l2_window_bytes(bytes, current_device_limits())
                      : 0);
  auto const run_block = [&](int depth) {
    Launches const& l = by_depth.at(depth);
    for (std::size_t k = 0; k < l.shape.regions.size(); ++k) {
      Params3D<T, Op, X> const params{
          grid.current().data(),
          grid.next().data(),
          exchange,
          buffer.next_tag,
          op,
          nx,
          ny,
          nz,
          grid.halo(),
          grid.padded_extent(2),
          grid.padded_extent(2) * grid.padded_extent(1),
          l.shape.regions[k],
          SmTiles{},
          p.prefetch,
          l.shape.z_segment};
      launch_cooperative(l.kernels[k], l.shape.blocks(), threads_per_block,
                         K::shared(depth, p.prefetch), space.cuda_stream(),
                         params);
      buffer.next_tag += static_cast<unsigned>(iterations<T, Op, X>(nz, depth));
    }
    grid.swap();
  };
  stencil::detail::time_loop(space, grid, blocks, run_block, hooks);
  window.close();
}

// SM tiling: TemporalBlocking on rank-3 grids. The device-tiling kernel
// with isolated tiles (SmTiles): no exchange, no barrier, ordinary
// launches, at the price of recomputing the tiles' overlap.

template <class T, class Op, int DepthCap = all_compiled_depths>
using SmTilingKernel = Kernel<T, Op, NoExchange<T>, DepthCap>;

/// Output cells per isolated tile and axis at `depth`.
constexpr int sm_tiling_core(int depth, int radius) {
  return tile_x - 2 * depth * radius;
}

/// The default SM-tiling depth: the deepest whose tiles keep at least 60%
/// of their cells valid, and at most 2 for box stencils; deeper, the
/// recomputed overlap costs more than the DRAM passes it saves, and more
/// for boxes (docs/decisions/sm-tiling-default-depth.md). Radius 1: depth 3 for
/// stars, 26x26 of 32x32, depth 2 for boxes, 28x28; radius 2: depth 1.
template <class T, class Op, int DepthCap = all_compiled_depths>
int sm_tiling_default_depth(DeviceLimits const& device, int prefetch) {
  using K = SmTilingKernel<T, Op, DepthCap>;
  int const deepest_default =
      Op::shape == Shape::box ? std::min(2, K::deepest) : K::deepest;
  int best = 0;
  for (int depth = 1; depth <= deepest_default; ++depth) {
    int const core = sm_tiling_core(depth, Op::radius);
    if (10 * core * core < 6 * tile_x * tile_y) break;
    if (K::fits(depth, prefetch, device)) best = depth;
  }
  return best > 0 ? best : K::max_depth(device, prefetch);
}

/// Tiles and z segments of an SM-tiling launch on `resident` resident
/// blocks. Every segment recomputes depth*(lag + 2r) planes of warm-up, so
/// segments are only as many as filling the last wave of blocks pays for.
inline SmTiles sm_tiles(int nx, int ny, int nz, int depth, int radius,
                        int resident) {
  SmTiles t;
  t.core = sm_tiling_core(depth, radius);
  t.columns = (nx + t.core - 1) / t.core;
  t.tiles = t.columns * ((ny + t.core - 1) / t.core);
  int const warm_up = depth * (radius + 1) + 2 * depth * radius;
  long best_cost = -1;
  for (int segments = 1; segments <= std::min(nz, 256); ++segments) {
    int const length = (nz + segments - 1) / segments;
    long const blocks = static_cast<long>(t.tiles) * segments;
    long const cost = (blocks + resident - 1) / resident * (length + warm_up);
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      t.z_segment = length;
    }
  }
  return t;
}

inline int sm_tiling_blocks(SmTiles const& t, int nz) {
  return t.tiles * ((nz + t.z_segment - 1) / t.z_segment);
}

/// Resolves a TemporalBlocking policy on a rank-3 grid into `p`, with the
/// kernels of depths up to `DepthCap`.
template <class T, class Op, int DepthCap = all_compiled_depths>
void plan_sm_tiling(Plan& p, int requested_depth, int requested_prefetch) {
  static_assert(Op::rank == 3);
  static_assert(Op::radius >= 1 && Op::radius <= 2,
                "stencil::TemporalBlocking on rank-3 grids supports radius 1 "
                "and 2");
  using K = SmTilingKernel<T, Op, DepthCap>;
  DeviceLimits const device = current_device_limits();
  expect_native_policy_applies(device, "TemporalBlocking", p.sides, p.rank,
                               requested_depth);
  expect_plane_indexable("TemporalBlocking", p.extents[1], p.extents[2],
                         p.halo);
  int const prefetch = resolve_prefetch(device, "TemporalBlocking",
                                        requested_prefetch, default_prefetch);
  int const max_depth = K::max_depth(device, prefetch);
  expect_prefetch_leaves_a_depth(max_depth, prefetch, device,
                                 "TemporalBlocking", Op::radius, sizeof(T));
  int const depth =
      requested_depth == 0
          ? sm_tiling_default_depth<T, Op, DepthCap>(device, prefetch)
          : requested_depth;
  expect_compiled_for_auto<K, T, Op>(depth, "TemporalBlocking", "SM tiling");
  // Shared memory bounds the depth before the overlap eats the tile.
  static_assert(sm_tiling_core(max_compiled_depth<T, Op>, Op::radius) >= 1);
  STENCIL_EXPECT_SUPPORTED(
      K::fits(depth, prefetch, device), "TemporalBlocking: depth ", depth,
      " at prefetch ", prefetch, " does not fit on ", device.name,
      " for a rank-3 grid, radius ", Op::radius, " and ", sizeof(T),
      "-byte values (each level keeps ",
      shared_bytes_per_level<T, Op, NoExchange<T>>(),
      " bytes of shared memory per block, the prefetch ",
      staging_bytes<T, Op::radius>(prefetch), ", within the ",
      device.shared_per_block_optin,
      " bytes the device allows and CUDA accepts for the kernel, without "
      "register spills; this build has depths up to ",
      K::deepest, "); the largest depth that fits at this prefetch is ",
      max_depth, " (all that fit: ",
      fitting_depths(K::deepest,
                     [&](int d) { return K::fits(d, prefetch, device); }),
      ")");
  int const resident =
      resident_blocks<T, Op, NoExchange<T>, DepthCap>(depth, prefetch);
  STENCIL_EXPECT_SUPPORTED(resident >= 1,
                           "TemporalBlocking: no block of the depth-", depth,
                           " kernel can be resident on ", device.name);
  SmTiles const t = sm_tiles(p.extents[2], p.extents[1], p.extents[0], depth,
                             Op::radius, resident);
  cudaFuncAttributes attributes{};
  STENCIL_CUDA_CHECK(
      cudaFuncGetAttributes(&attributes, K::function(depth, prefetch)));

  p.backend = Backend::native_cuda;
  p.policy = PolicyKind::temporal_blocking;
  p.depth = depth;
  p.prefetch = prefetch;
  p.tile = Tile{t.core, t.core, t.z_segment};
  p.team_size = threads_per_block;
  p.native_cuda.rows_per_thread = rows_per_thread<threads_per_block>;
  p.native_cuda.columns_per_thread = 1;
  p.scratch_bytes = K::shared(depth, prefetch);
  p.registers = attributes.numRegs;
  p.local_memory_bytes = static_cast<int>(attributes.localSizeBytes);
  p.blocks = sm_tiling_blocks(t, p.extents[0]);
  p.blocks_per_sm = resident / device.multiprocessors;
  p.native_cuda.exchange = std::string(name(NoExchange<T>::kind));
  p.native_cuda.plane_sums = sums_planes<T, Op, NoExchange<T>>;
  p.native_cuda.input_to_ring = copies_input_to_ring<T> && prefetch == 0;
  p.device = device.name;
}

/// Advances `grid` by `steps` with isolated tiles through the time loop:
/// blocks of `p.depth` steps (a shorter one where the remainder or a hook
/// falls), one launch each.
template <int DepthCap, class T, class MemorySpace, class Op>
void run_sm_tiling(Kokkos::Cuda const& space, Grid<T, 3, MemorySpace>& grid,
                   Op const& op, int steps, Plan const& p,
                   stencil::detail::LoopHooks const& hooks = {}) {
  using K = SmTilingKernel<T, Op, DepthCap>;
  int const nx = grid.extent(2), ny = grid.extent(1), nz = grid.extent(0);
  auto tiles_for = [&](int depth) {
    return sm_tiles(
        nx, ny, nz, depth, Op::radius,
        resident_blocks<T, Op, NoExchange<T>, DepthCap>(depth, p.prefetch));
  };
  SmTiles const full = tiles_for(p.depth);
  auto const run_block = [&](int depth) {
    SmTiles const t = depth == p.depth ? full : tiles_for(depth);
    Params3D<T, Op, NoExchange<T>> const params{
        grid.current().data(),
        grid.next().data(),
        NoExchange<T>{},
        0u,
        op,
        nx,
        ny,
        nz,
        grid.halo(),
        grid.padded_extent(2),
        grid.padded_extent(2) * grid.padded_extent(1),
        Region{},
        t,
        p.prefetch,
        0};
    K::function(
        depth,
        p.prefetch)<<<sm_tiling_blocks(t, nz), threads_per_block,
                      K::shared(depth, p.prefetch), space.cuda_stream()>>>(
        params);
    STENCIL_CUDA_CHECK(cudaGetLastError());
    grid.swap();
  };
  stencil::detail::time_loop(
      space, grid, stencil::detail::step_blocks(steps, p.depth, hooks),
      run_block, hooks);
}

}  // namespace stencil::native_cuda::device_tiling
