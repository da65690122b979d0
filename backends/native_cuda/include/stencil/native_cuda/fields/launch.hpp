// SPDX-License-Identifier: Apache-2.0
// Host side of the native multi-field kernels: the overlapped-tile kernel
// (fields/kernels.hpp) of the single-step sweep (StreamingSweep, every rank
// and boundary) and of rank-1 temporal blocking, and the runs of temporal
// blocking (TemporalBlocking, every rank, fixed and periodic boundaries),
// whose rank-2 and rank-3 kernel streams slices (stream_launch.hpp).
#pragma once

#include <stencil/native_cuda/common/cuda_check.hpp>
#include <stencil/native_cuda/common/device.hpp>
#include <stencil/native_cuda/fields/kernels.hpp>
#include <stencil/native_cuda/fields/stream_launch.hpp>

#include <stencil/detail/fields/time_loop.hpp>
#include <stencil/detail/memory.hpp>
#include <stencil/detail/padded.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/time_loop.hpp>
#include <stencil/error.hpp>
#include <stencil/fields/state.hpp>
#include <stencil/plan_type.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace stencil::native_cuda::fields {

/// Shared memory a block may take: half of what a block can have, so that
/// two blocks share a multiprocessor and one loads while the other computes.
inline std::size_t shared_budget(DeviceLimits const& device) {
  return device.shared_per_block_optin / 2;
}

/// Valid cells per tile that the plan aims for: rank 2 rows 128 cells
/// wide loaded (whole 128-byte lines of floats, two of doubles); the sweep
/// 32 valid rows per block, temporal blocking as many as the budget holds,
/// since its rims are recomputed and a taller tile wastes less.
inline constexpr int rank1_valid = 2048;
inline constexpr int rank2_loaded_x = 128;
inline constexpr int sweep_rows = 32;
inline constexpr int rank3_valid_x = 32;
inline constexpr int rank3_valid_y = 8;
inline constexpr int rank3_valid_z = 8;
/// The fewest valid rows (rank 2) or cells (rank 1) a temporal tile may
/// keep; below it most of the work is rims.
inline constexpr int fewest_valid = 8;

struct TileShape {
  Tile loaded{1, 1, 1};
  Tile valid{1, 1, 1};
  std::size_t bytes = 0;
  bool fits = false;
};

/// The tile of a `depth`-step launch of a rank-`rank` stencil whose cells
/// take `bytes_per_cell` of shared memory (every slot of every field).
inline TileShape tile_shape(int rank, int radius, int depth,
                            std::size_t bytes_per_cell, std::size_t budget) {
  TileShape t;
  int const reach = radius * depth;
  std::size_t const budget_cells = budget / bytes_per_cell;
  auto finish = [&] {
    t.bytes = static_cast<std::size_t>(t.loaded.x) * t.loaded.y * t.loaded.z *
              bytes_per_cell;
    t.fits =
        t.valid.x >= 1 && t.valid.y >= 1 && t.valid.z >= 1 && t.bytes <= budget;
    return t;
  };
  if (rank == 1) {
    int const most =
        static_cast<int>(std::min<std::size_t>(budget_cells, 1 << 20));
    t.loaded.x = std::min(rank1_valid + 2 * reach, most);
    t.valid.x = t.loaded.x - 2 * reach;
    if (depth > 1 && t.valid.x < fewest_valid) t.valid.x = 0;
    return finish();
  }
  if (rank == 2) {
    t.loaded.x = rank2_loaded_x;
    while (t.loaded.x - 2 * reach < 4 * fewest_valid && t.loaded.x < 1024) {
      t.loaded.x *= 2;
    }
    t.valid.x = t.loaded.x - 2 * reach;
    int const most_rows = static_cast<int>(budget_cells / t.loaded.x);
    t.loaded.y = depth == 1 ? std::min(sweep_rows + 2 * reach, most_rows)
                            : std::min(most_rows, 512);
    t.valid.y = t.loaded.y - 2 * reach;
    if (depth > 1 && t.valid.y < fewest_valid) t.valid.y = 0;
    return finish();
  }
  t.valid = {rank3_valid_x, rank3_valid_y, rank3_valid_z};
  t.loaded = {t.valid.x + 2 * reach, t.valid.y + 2 * reach, 1};
  int const most_planes = static_cast<int>(
      budget_cells / (static_cast<std::size_t>(t.loaded.x) * t.loaded.y));
  t.loaded.z = std::min(t.valid.z + 2 * reach, most_planes);
  t.valid.z = t.loaded.z - 2 * reach;
  return finish();
}

template <class T, class Op>
struct Kernel {
  using Fields = typename Op::fields;
  static constexpr std::size_t bytes_per_cell = total_slots<Fields> * sizeof(T);
  static auto function() { return &tile_steps<T, Op>; }
};

/// The multi-field kernel loads its tile with plain loads: a policy's
/// request for asynchronous copies is refused, not ignored.
inline void expect_plain_loads(std::string_view policy_name, int prefetch,
                               bool bulk_copy = false) {
  STENCIL_EXPECT_SUPPORTED(
      prefetch <= 0 && !bulk_copy, policy_name, ": ",
      bulk_copy ? std::string("bulk copies")
                : "prefetch " + std::to_string(prefetch),
      " are for single-field stencils; the multi-field kernel loads its "
      "tile once per launch with plain loads (use prefetch -1 or 0 and no "
      "bulk copies)");
}

inline int tiles_along(int n, int valid) { return (n + valid - 1) / valid; }

/// The multi-field plan of the native kernel for `policy_name` at `depth`
/// (0: the default for the radius): the tile, the launch and the
/// kernel's resources, or stencil::unsupported saying what fits.
template <class T, class Op>
void plan(Plan& p, std::string_view policy_name, PolicyKind kind,
          int requested_depth) {
  using K = Kernel<T, Op>;
  constexpr int radius = Op::fields::radius;
  DeviceLimits const device = current_device_limits();
  expect_native_gpu(device, policy_name);
  bool const temporal = kind == PolicyKind::temporal_blocking;
  if (temporal) {
    // A fixed halo never changes, and a periodic axis is read wrapped
    // (kernels.hpp); the other boundaries change the halo every step.
    for (int a = 3 - p.rank; a < 3; ++a) {
      for (int s = 0; s < 2; ++s) {
        Boundary const b = p.sides[a][s];
        STENCIL_EXPECT_SUPPORTED(
            b == Boundary::fixed || b == Boundary::periodic, policy_name,
            " of several fields runs fixed and periodic boundaries (it "
            "advances several steps per launch, and a Neumann, reflecting or "
            "Dirichlet halo changes every step); the ",
            s == 0 ? "low" : "high", " side of axis ", a - (3 - p.rank), " (",
            "zyx"[a], ") is ", stencil::detail::boundary_name(b),
            " (boundary: ", stencil::detail::sides_text(p.sides, p.rank),
            "); use StreamingSweep (one launch per step), Naive or "
            "SpatialBlocking");
      }
    }
    STENCIL_EXPECT(requested_depth >= 0, policy_name, ": depth is ",
                   requested_depth,
                   "; use 1 or more, or 0 to let the plan choose");
    if constexpr (Op::rank >= 2) {
      plan_stream<T, Op>(p, policy_name, requested_depth);
      return;
    }
  }
  // The default depth: a rim of 8 cells (radius x depth) per side.
  int const depth = !temporal ? 1
                    : requested_depth > 0
                        ? requested_depth
                        : std::max(1, 8 / std::max(1, radius));
  std::size_t const budget = shared_budget(device);
  TileShape const tile =
      tile_shape(p.rank, radius, depth, K::bytes_per_cell, budget);
  if (!tile.fits) {
    int deepest = 0;
    for (int d = 1; d <= 64; ++d) {
      if (tile_shape(p.rank, radius, d, K::bytes_per_cell, budget).fits)
        deepest = d;
    }
    STENCIL_EXPECT_SUPPORTED(
        false, policy_name, " of these fields: at depth ", depth,
        " a block's tile (every level of every field, ", K::bytes_per_cell,
        " bytes per cell, with a rim of radius x depth = ", radius * depth,
        " cells) leaves fewer than ", fewest_valid, " valid ",
        p.rank == 1 ? "cells" : "rows", " in the ", budget,
        " bytes of shared memory a block may take on ", device.name,
        deepest > 0 ? "; depths 1 to " + std::to_string(deepest) + " fit"
                    : "; no depth fits (use Naive or SpatialBlocking)");
  }
  auto const function = K::function();
  STENCIL_EXPECT_SUPPORTED(shared_memory_fits(function, tile.bytes, device),
                           policy_name, ": CUDA refused ", tile.bytes,
                           " bytes of shared memory for the "
                           "multi-field kernel on ",
                           device.name);
  cudaFuncAttributes attributes{};
  STENCIL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, function));

  int const nx = p.extents[2], ny = p.extents[1], nz = p.extents[0];
  long long const blocks =
      static_cast<long long>(tiles_along(nx, tile.valid.x)) *
      (p.rank >= 2 ? tiles_along(ny, tile.valid.y) : 1) *
      (p.rank == 3 ? tiles_along(nz, tile.valid.z) : 1);
  STENCIL_EXPECT_SUPPORTED(blocks <= 0x7fffffffLL, policy_name, ": ", blocks,
                           " tiles exceed one launch's 2^31-1 blocks");
  p.backend = Backend::native_cuda;
  p.policy = kind;
  p.depth = depth;
  p.tile = tile.valid;
  p.native_cuda.loaded_tile = tile.loaded;
  p.team_size = threads_per_block;
  p.scratch_bytes = tile.bytes;
  p.blocks = static_cast<int>(blocks);
  p.blocks_per_sm =
      resident_blocks_per_sm(function, threads_per_block, tile.bytes);
  p.registers = attributes.numRegs;
  p.local_memory_bytes = static_cast<int>(attributes.localSizeBytes);
  p.device = device.name;
}

/// The launch of `depth` steps from the state's current levels to `out`.
template <class T, int Rank, class MemorySpace, class Op>
void launch(Kokkos::Cuda const& space, State<T, Rank, MemorySpace> const& state,
            Op const& op, Plan const& p, int depth, Params<T, Op>& params) {
  using Fields = typename Op::fields;
  params.op = op;
  params.layout =
      stencil::detail::make_layout<Rank>(state.extents(), state.halo());
  params.depth = depth;
  params.lx = p.native_cuda.loaded_tile.x;
  params.ly = p.native_cuda.loaded_tile.y;
  params.lz = p.native_cuda.loaded_tile.z;
  // A shallower block (the last of a call, or one cut short by a hook)
  // keeps the plan's loaded tile: its valid centre only grows.
  int const reach = Fields::radius * depth;
  params.tiles_x = tiles_along(params.layout.nx, params.lx - 2 * reach);
  params.tiles_y =
      Rank >= 2 ? tiles_along(params.layout.ny, params.ly - 2 * reach) : 1;
  int const tiles_z =
      Rank == 3 ? tiles_along(params.layout.nz, params.lz - 2 * reach) : 1;
  params.t0 = state.time();
  params.dt = state.dt();
  for (int f = 0; f < Fields::count; ++f) {
    for (int k = 0; k < Fields::levels[f]; ++k) {
      params.in[f][k] = state.level(f, -k).data();
    }
  }
  dim3 const threads = Rank == 1 ? dim3(threads_per_block, 1, 1)
                                 : dim3(32, threads_per_block / 32, 1);
  auto const function = Kernel<T, Op>::function();
  allow_dynamic_shared(function, p.scratch_bytes);
  function<<<static_cast<unsigned>(params.tiles_x * params.tiles_y * tiles_z),
             threads, p.scratch_bytes, space.cuda_stream()>>>(params);
  STENCIL_CUDA_CHECK(cudaGetLastError());
}

/// StreamingSweep: one launch per step, the new level of each written
/// field into the state's next buffer.
template <class T, int Rank, class MemorySpace, class Op>
void run_sweep(Kokkos::Cuda const& space, State<T, Rank, MemorySpace>& state,
               Op const& op, int steps, Plan const& p,
               stencil::detail::LoopHooks const& hooks) {
  using Fields = typename Op::fields;
  auto const one_step = [&](int) {
    Params<T, Op> params;
    params.write_levels = 1;
    for (int f = 0; f < Fields::count; ++f) {
      if (Fields::written[f]) params.out[f][0] = state.next(f).data();
    }
    launch(space, state, op, p, 1, params);
    stencil::detail::finish_step<Fields>(state);
  };
  stencil::detail::state_time_loop(
      space, state, stencil::detail::step_blocks(steps, 1, hooks), one_step,
      hooks);
}

/// Where each level -k of each written field goes after a launch.
template <class T, class Fields>
using OutBuffers =
    std::array<std::array<T*, Fields::most_levels>, Fields::count>;

/// Runs the blocks of `steps` (at most `depth` each, cut at hooks) with
/// `launch_block(steps, out)`, which advances the state's written fields
/// by that many steps from their current levels and writes every level
/// -k of field f to out[f][k]: a launch that runs several steps reads
/// cells other blocks write, so every level of a written field goes to a
/// second set of buffers, which then trade places with the state's. The
/// state keeps the second set for later calls (State::second_set_bytes):
/// allocating it fenced the device and freeing it waited for the device,
/// every call. Its halos are copied from the state's levels at the start
/// of every call and hold the same values; its interiors are not, since
/// every launch writes every interior cell of every level it outputs.
/// `policy_name` names the policy if the second set cannot be allocated.
template <class Fields, class T, int Rank, class MemorySpace, class LaunchBlock>
void run_with_second_set(Kokkos::Cuda const& space,
                         State<T, Rank, MemorySpace>& state, int steps,
                         int depth, stencil::detail::LoopHooks const& hooks,
                         std::string_view policy_name,
                         LaunchBlock&& launch_block) {
  using View = typename State<T, Rank, MemorySpace>::view_type;
  auto& second = stencil::detail::StateBuffers::second_set(state);
  // Levels of field f this run writes (another operator on the same state
  // may write other fields, whose kept buffers stay unused here).
  auto const written_levels = [](int f) {
    return Fields::written[f] ? Fields::levels[f] : 0;
  };
  second.resize(Fields::count);
  std::size_t bytes = 0;
  for (int f = 0; f < Fields::count; ++f) {
    if (static_cast<int>(second[f].size()) < written_levels(f)) {
      bytes += written_levels(f) * state.current(f).size() * sizeof(T);
    }
  }
  try {
    for (int f = 0; f < Fields::count; ++f) {
      while (static_cast<int>(second[f].size()) < written_levels(f)) {
        second[f].push_back(
            View(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                    state.label() + ":second:" + state.name(f)),
                 state.current(f).layout()));
      }
    }
  } catch (std::exception const& e) {
    stencil::detail::throw_out_of_memory(
        stencil::detail::concat(
            policy_name, " of state '", state.label(),
            "' keeps a second set of its written fields' levels (",
            stencil::detail::format_bytes(bytes),
            " more) and allocating it failed (", e.what(),
            "); free memory (State::release_second_set on other states) or "
            "use StreamingSweep, Naive or SpatialBlocking"),
        bytes, stencil::detail::available_bytes<MemorySpace>());
  }
  for (int f = 0; f < Fields::count; ++f) {
    for (int k = 0; k < written_levels(f); ++k) {
      stencil::detail::copy_halo(space, second[f][k], state.level(f, -k),
                                 state.halo());
    }
  }
  // Halos are fixed, but the L buffers of a field of L levels may hold
  // different ones, and they rotate: after s steps, level -k lies in the
  // buffer that was level -((k - s) mod L) at the start, and has its halo.
  // halo_of[f][j] is which of those halos second[f][j] holds; each launch
  // writes level -k into the second buffer with the halo level -k must
  // have after it, and the state's buffer it replaces keeps its own.
  auto const wrap = [](int i, int L) { return ((i % L) + L) % L; };
  std::vector<std::vector<int>> halo_of(Fields::count);
  for (int f = 0; f < Fields::count; ++f) {
    for (int j = 0; j < written_levels(f); ++j) halo_of[f].push_back(j);
  }
  int done = 0;
  auto const run_block = [&](int block) {
    OutBuffers<T, Fields> out{};
    std::vector<std::vector<int>> chosen(Fields::count);
    for (int f = 0; f < Fields::count; ++f) {
      int const L = written_levels(f);
      for (int k = 0; k < L; ++k) {
        int const wanted = wrap(k - done - block, L);
        int j = 0;
        while (halo_of[f][j] != wanted) ++j;
        chosen[f].push_back(j);
        out[f][k] = second[f][j].data();
      }
    }
    launch_block(block, out);
    for (int f = 0; f < Fields::count; ++f) {
      int const L = written_levels(f);
      for (int k = 0; k < L; ++k) {
        int const j = chosen[f][k];
        stencil::detail::StateBuffers::exchange(state, f, -k, second[f][j]);
        halo_of[f][j] = wrap(k - done, L);
      }
    }
    done += block;
    state.advance_time(block);
  };
  stencil::detail::state_time_loop(
      space, state, stencil::detail::step_blocks(steps, depth, hooks),
      run_block, hooks);
}

/// TemporalBlocking: `depth` steps per launch, into the second set. Rank 2
/// and 3 stream slices (stream_kernel.hpp), rank 1 runs the overlapped tile
/// (kernels.hpp).
template <class T, int Rank, class MemorySpace, class Op>
void run_temporal(Kokkos::Cuda const& space, State<T, Rank, MemorySpace>& state,
                  Op const& op, int steps, Plan const& p,
                  stencil::detail::LoopHooks const& hooks) {
  using Fields = typename Op::fields;
  bool periodic[3] = {false, false, false};
  for (int a = 0; a < Rank; ++a) {  // kernel axes run x, y, z
    periodic[a] =
        state.boundaries().kind(Rank - 1 - a, Side::low) == Boundary::periodic;
  }
  run_with_second_set<Fields>(
      space, state, steps, p.depth, hooks, "TemporalBlocking",
      [&](int block, OutBuffers<T, Fields> const& out) {
        std::conditional_t<Rank >= 2, StreamParams<T, Op>, Params<T, Op>>
            params;
        for (int f = 0; f < Fields::count; ++f) {
          for (int k = 0; k < Fields::most_levels; ++k) {
            params.out[f][k] = out[f][k];
          }
        }
        if constexpr (Rank >= 2) {
          params.wrap_x = periodic[0];
          params.wrap_y = periodic[1];
          params.wrap_z = periodic[2];
          launch_stream(space, state, op, p, block, params);
        } else {
          params.write_levels = Fields::most_levels;
          for (int a = 0; a < 3; ++a) params.wrap[a] = periodic[a];
          launch(space, state, op, p, block, params);
        }
      });
}

}  // namespace stencil::native_cuda::fields
