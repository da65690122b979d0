// SPDX-License-Identifier: Apache-2.0
// Host side of the native single-step sweep: checks, launch geometry, and
// one launch per step (with the periodic halo refreshed before each).
#pragma once

#include <stencil/native_cuda/common/cuda_check.hpp>
#include <stencil/native_cuda/common/device.hpp>
#include <stencil/native_cuda/common/prefetch.hpp>
#include <stencil/native_cuda/streaming_sweep/direct.hpp>
#include <stencil/native_cuda/streaming_sweep/kernels.hpp>

#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/time_loop.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>
#include <stencil/plan_type.hpp>
#include <stencil/traits.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace stencil::native_cuda::streaming_sweep {

/// Prefetch stages of the shared tile when the policy leaves the choice to
/// the plan (and of bulk copies, which need a stage, on every rank): 3
/// stages beat plain loads through the shared tile on every suite row
/// (docs/decisions/streaming-sweep-stages.md).
inline constexpr int tile_default_prefetch = 3;

/// Rank 3, radius 1: 0 for stars and in float. Without stages the 3D sweep
/// has no shared tile (direct.hpp) and loads every row of taps straight
/// through L1, which was faster for radius-1 stars and the float radius-1
/// boxes (docs/decisions/streaming-sweep-direct-3d.md).
template <class Op, class T>
inline constexpr int default_prefetch = (Op::rank == 3 && Op::radius == 1 &&
                                         (Op::shape == Shape::star ||
                                          sizeof(T) == 4))
                                            ? 0
                                            : tile_default_prefetch;

/// Whether a plan of `stages` runs the rank-3 sweep without a shared tile.
template <class Op>
constexpr bool direct_loads(int stages) {
  return Op::rank == 3 && stages == 0;
}

template <class T, class Op>
struct Kernel {
  static constexpr int rank = Op::rank;
  using Unit = UnitShape<T, rank, Op::radius>;
  using Function = void (*)(Params<T, Op>);

  /// The kernel for `stages`. This and direct_function are the members
  /// that name the kernels, defined out of line so that they are not
  /// inline: a translation unit that sees the suite's explicit instantiation
  /// declarations (native_cuda/instantiation.hpp) compiles none of them.
  static Function function(int stages);
  static std::size_t shared_bytes(int stages) {
    return direct_loads<Op>(stages)
               ? 0
               : streaming_sweep::shared_bytes<T, rank, Op::radius>(stages);
  }
  using DirectFunction = void (*)(direct::Params<T, Op>);
  /// The rank-3 kernel without a shared tile, loading `item` cells at once.
  static DirectFunction direct_function(int item);
  /// Whether `stages` fits in one block's shared memory on `device`.
  static bool fits(int stages, DeviceLimits const& device) {
    if (direct_loads<Op>(stages)) return true;  // no shared memory
    return stages >= 0 && stages <= max_prefetch_stages &&
           shared_memory_fits(function(stages), shared_bytes(stages), device);
  }
};

template <class T, class Op>
auto Kernel<T, Op>::function(int stages) -> Function {
  return dispatch_prefetch(stages, [](auto s) -> Function {
    return &streaming_sweep<T, Op, decltype(s)::value>;
  });
}

template <class T, class Op>
auto Kernel<T, Op>::direct_function(int item) -> DirectFunction {
  constexpr int cells = direct::run_cells<T>;
  if (item == cells) return &direct::sweep<T, Op, cells>;
  if constexpr (cells >= 4) {
    if (item == 2) return &direct::sweep<T, Op, 2>;
  }
  return &direct::sweep<T, Op, 1>;
}

/// The widest item (cells loaded or stored at once, at most 16 bytes) that
/// every padded row of x extent `nx` with `halo` is a whole number of, and
/// that `buffers` start at a boundary of: 16 bytes lets the tile copy and
/// store 16-byte items (and bulk-copy), and the direct kernel loads and
/// stores items of this many cells.
template <class T>
int widest_item(int nx, int halo, std::initializer_list<T const*> buffers) {
  int item = vector_cells<T>;
  auto aligned = [&](int cells) {
    for (T const* b : buffers) {
      if (reinterpret_cast<std::uintptr_t>(b) % (cells * sizeof(T)) != 0) {
        return false;
      }
    }
    return (nx + 2 * halo) % cells == 0;
  };
  while (item > 1 && !aligned(item)) item /= 2;
  return item;
}

/// Where the direct kernel's runs lie and how many blocks cover them.
struct DirectGeometry {
  int shift;                   ///< a run starts at x = run * run_cells - shift
  int runs_x;                  ///< runs per row, covering [-shift, nx)
  std::array<long, 3> blocks;  ///< along x, y and z
};

template <class T>
DirectGeometry direct_geometry(std::array<int, 3> const& extents, int halo) {
  constexpr int cells = direct::run_cells<T>;
  int const shift = halo % cells;
  int const runs = (extents[2] + shift + cells - 1) / cells;
  return {shift,
          runs,
          {(runs + direct::threads_x - 1) / direct::threads_x,
           (extents[1] + direct::threads_y - 1) / direct::threads_y,
           (extents[0] + direct::threads_z - 1) / direct::threads_z}};
}

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

/// Units (lines in 2D, planes in 3D) a block streams. Blocks take short
/// segments in many waves, which the hardware schedules in order, so that
/// the blocks running at any time read and write a few neighbouring slabs
/// of the grid (and each other's first and last 2r units from L2) rather
/// than places spread over all of it. Rank 2 takes 2r + 4 lines, rank 3
/// 16 planes (the 2r planes a segment reads again cost more in 3D, where a
/// unit is 18 rows of 68 cells for 16 of 64). The heavy j2d25pt would rather
/// have long ones, so the segment is for the model to choose per stencil,
/// as the stages are (docs/decisions/streaming-sweep-stages.md).
template <int Rank, int Radius>
constexpr int segment_length(Tiling const& t) {
  return std::min(t.units, Rank == 3 ? 16 : 2 * Radius + 4);
}

/// Why bulk copies cannot run for `p` with `prefetch` stages (-1: the
/// plan's default) on `device`; empty where they can: they need sm_90, a
/// stage of prefetch, and padded rows of whole 16-byte items.
template <class T>
std::string bulk_copy_obstacle(Plan const& p, DeviceLimits const& device,
                               int prefetch) {
  using stencil::detail::concat;
  if (device.compute_capability < 90) {
    return concat(
        "StreamingSweep: bulk_copy needs compute capability 9.0 or newer "
        "(cp.async.bulk); ",
        capability_of(device), "; use bulk_copy = false");
  }
  if (prefetch == 0) {
    return concat(
        "StreamingSweep: bulk_copy copies asynchronously, so it needs at "
        "least one stage of prefetch, and prefetch is 0; use 1 to ",
        max_prefetch_stages, ", or -1 for the plan's default");
  }
  if (widest_item<T>(p.extents[2], p.halo, {}) != vector_cells<T>) {
    int const padded = p.extents[2] + 2 * p.halo;
    constexpr int vector = vector_cells<T>;
    int const fitting = p.extents[2] + (vector - padded % vector);
    return concat(
        "StreamingSweep: bulk_copy moves whole 16-byte items of each padded "
        "row, but this grid's padded row (x extent ",
        p.extents[2], " + 2 x halo ", p.halo, " = ", padded, " values of ",
        sizeof(T),
        " bytes) is not a multiple of 16 bytes; use an x extent "
        "that makes it one (e.g. ",
        fitting, "), or bulk_copy = false");
  }
  return {};
}

/// Whether a plan that leaves the copies to it moves lines with
/// cp.async.bulk: on rank 2 wherever they can run. On rank 3 a unit is
/// 18-20 short lines, which one thread issues in turn, and bulk copies lost
/// (docs/decisions/streaming-sweep-bulk-copy-rank-2.md).
template <class T, class Op>
bool bulk_copy_by_default(Plan const& p, DeviceLimits const& device,
                          int stages) {
  return Op::rank == 2 && bulk_copy_obstacle<T>(p, device, stages).empty();
}

/// The rank-3 plan without a shared tile: the kernel's attributes, its
/// blocks and their shape.
template <class T, class Op>
void plan_direct(Plan& p, cudaFuncAttributes& attributes) {
  using K = Kernel<T, Op>;
  // The item the run will load if the buffers are aligned, as Kokkos
  // allocates them.
  auto const function =
      K::direct_function(widest_item<T>(p.extents[2], p.halo, {}));
  STENCIL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, function));
  auto const blocks = direct_geometry<T>(p.extents, p.halo).blocks;
  p.tile = Tile{direct::threads_x * direct::run_cells<T>, direct::threads_y,
                direct::threads_z};
  p.team_size = direct::threads;
  p.scratch_bytes = 0;
  p.blocks = static_cast<int>(
      std::min<long>(blocks[0] * blocks[1] * blocks[2], INT_MAX));
  p.blocks_per_sm = resident_blocks_per_sm(function, direct::threads, 0);
}

/// Resolves a StreamingSweep policy into `p`: refuses what the device
/// cannot run, before anything runs. `requested_prefetch` < 0: the
/// default; `requested_bulk` unset: bulk_copy_by_default.
template <class T, class Op>
void plan(Plan& p, int requested_prefetch,
          std::optional<bool> requested_bulk = std::nullopt) {
  static_assert(Op::rank == 2 || Op::rank == 3,
                "StreamingSweep streams lines of a rank-2 grid or planes of "
                "a rank-3 grid");
  using K = Kernel<T, Op>;
  DeviceLimits const device = current_device_limits();
  expect_native_gpu(device, "StreamingSweep");
  int const resolved = resolve_prefetch(
      device, "StreamingSweep", requested_prefetch,
      requested_bulk.value_or(false) ? tile_default_prefetch
                                     : default_prefetch<Op, T>);
  if (requested_bulk.value_or(false)) {
    std::string const obstacle =
        bulk_copy_obstacle<T>(p, device, requested_prefetch);
    if (!obstacle.empty()) stencil::detail::throw_unsupported(obstacle);
  }
  int largest = max_prefetch_stages;  // that fits; -1: none
  while (largest >= 0 && !K::fits(largest, device)) --largest;
  int const stages =
      requested_prefetch >= 0 ? resolved : std::min(resolved, largest);
  if (stages < 0 || !K::fits(stages, device)) {
    int const asked = std::max(stages, 0);
    stencil::detail::throw_unsupported(stencil::detail::concat(
        "StreamingSweep: prefetch ", asked, " with radius ", Op::radius,
        " and ", sizeof(T), "-byte values needs ", K::shared_bytes(asked),
        " bytes of shared memory per block; ", device.name, " allows ",
        device.shared_per_block_optin,
        " (and CUDA must accept it for the kernel)",
        largest >= 0 ? stencil::detail::concat(
                           "; the largest prefetch that fits is ", largest)
                     : std::string("; not even prefetch 0 fits")));
  }

  bool const bulk_copy = requested_bulk.has_value()
                             ? *requested_bulk
                             : bulk_copy_by_default<T, Op>(p, device, stages);
  STENCIL_EXPECT(!bulk_copy || stages >= 1,
                 "StreamingSweep: bulk_copy needs at least one stage of "
                 "prefetch, and with radius ",
                 Op::radius, " and ", sizeof(T),
                 "-byte values not even one fits in the shared memory of ",
                 device.name, "; use bulk_copy = false");

  p.backend = Backend::native_cuda;
  p.policy = PolicyKind::streaming_sweep;
  p.depth = 1;
  p.prefetch = stages;
  p.native_cuda.bulk_copy = bulk_copy;
  p.device = device.name;
  cudaFuncAttributes attributes{};
  bool direct = false;
  if constexpr (Op::rank == 3) {
    direct = direct_loads<Op>(stages);
    if (direct) plan_direct<T, Op>(p, attributes);
  }
  if (!direct) {
    auto const function = K::function(stages);
    std::size_t const shared_bytes = K::shared_bytes(stages);
    allow_dynamic_shared(function, shared_bytes);
    Tiling const t = tiling<T, Op>(p.extents, p.halo);
    int const segment = segment_length<Op::rank, Op::radius>(t);
    STENCIL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, function));
    p.tile = Tile{K::Unit::width, K::Unit::height, segment};
    p.team_size = threads_per_block;
    p.scratch_bytes = shared_bytes;
    p.blocks = t.tiles * ((t.units + segment - 1) / segment);
    p.blocks_per_sm =
        resident_blocks_per_sm(function, threads_per_block, shared_bytes);
  }
  p.registers = attributes.numRegs;
  p.local_memory_bytes = static_cast<int>(attributes.localSizeBytes);
}

/// One step of the rank-3 sweep without a shared tile: launches of at most
/// 65535 blocks along y and z (CUDA's limit there).
template <class T, class Op>
void run_direct_step(cudaStream_t stream, direct::Params<T, Op> params,
                     std::array<long, 3> const& blocks, int item) {
  constexpr long most = 65535;
  auto const function = Kernel<T, Op>::direct_function(item);
  dim3 const threads(direct::threads_x, direct::threads_y, direct::threads_z);
  for (long by = 0; by < blocks[1]; by += most) {
    for (long bz = 0; bz < blocks[2]; bz += most) {
      params.y_block0 = static_cast<int>(by);
      params.z_block0 = static_cast<int>(bz);
      dim3 const grid(static_cast<unsigned>(blocks[0]),
                      static_cast<unsigned>(std::min(most, blocks[1] - by)),
                      static_cast<unsigned>(std::min(most, blocks[2] - bz)));
      function<<<grid, threads, 0, stream>>>(params);
      STENCIL_CUDA_CHECK(cudaGetLastError());
    }
  }
}

/// Advances `grid` by `steps`, one launch per step, in the plan's tiles and
/// segments. Asynchronous on the space's stream.
template <class T, int Rank, class MemorySpace, class Op>
void run(Kokkos::Cuda const& space, Grid<T, Rank, MemorySpace>& grid,
         Op const& op, int steps, Plan const& p,
         stencil::detail::LoopHooks const& hooks = {}) {
  using K = Kernel<T, Op>;
  stencil::detail::PaddedLayout const layout =
      stencil::detail::make_layout<Rank>(grid.extents(), grid.halo());
  // The buffers swap every step, so one item suits both throughout.
  int const item = widest_item<T>(p.extents[2], grid.halo(),
                                  {grid.current().data(), grid.next().data()});
  // Blocks of one step through the time loop, which refreshes the halo.
  auto each_step = [&](auto const& launch) {
    stencil::detail::time_loop(
        space, grid, stencil::detail::step_blocks(steps, 1, hooks),
        [&](int) {
          launch(grid.current().data(), grid.next().data());
          grid.swap();
        },
        hooks);
  };
  if constexpr (Rank == 3) {
    if (direct_loads<Op>(p.prefetch)) {
      DirectGeometry const g = direct_geometry<T>(p.extents, grid.halo());
      each_step([&](T const* in, T* out) {
        direct::Params<T, Op> const params{in,
                                           out,
                                           op,
                                           p.extents[2],
                                           p.extents[1],
                                           p.extents[0],
                                           grid.halo(),
                                           layout.stride_y,
                                           static_cast<long>(layout.stride_z),
                                           g.shift,
                                           g.runs_x,
                                           0,
                                           0};
        run_direct_step(space.cuda_stream(), params, g.blocks, item);
      });
      return;
    }
  }
  auto const function = K::function(p.prefetch);
  allow_dynamic_shared(function, p.scratch_bytes);
  Tiling const t = tiling<T, Op>(p.extents, grid.halo());
  // 16-byte items need every padded row to start at a 16-byte boundary.
  bool const vector_rows = item == vector_cells<T>;
  STENCIL_EXPECT(!p.native_cuda.bulk_copy || vector_rows,
                 "StreamingSweep: bulk_copy needs the grid's buffers to start "
                 "at a 16-byte boundary, and these do not; use bulk_copy = "
                 "false");
  each_step([&](T const* in, T* out) {
    Params<T, Op> const params{in,
                               out,
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
                               p.native_cuda.bulk_copy};
    function<<<p.blocks, threads_per_block, p.scratch_bytes,
               space.cuda_stream()>>>(params);
    STENCIL_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace stencil::native_cuda::streaming_sweep
