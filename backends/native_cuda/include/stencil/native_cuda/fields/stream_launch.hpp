// SPDX-License-Identifier: Apache-2.0
// Host side of the streaming kernel of several fields, rank 2 and 3
// (stream_kernel.hpp): its plan (depth, tiles, how the slices are dealt to
// the blocks: shares of rows in 2D, bands of planes in 3D; resources) and
// its launch of `depth` steps.
#pragma once

#include <stencil/native_cuda/common/cuda_check.hpp>
#include <stencil/native_cuda/common/device.hpp>
#include <stencil/native_cuda/fields/stream_kernel.hpp>

#include <stencil/detail/portable/layout.hpp>
#include <stencil/error.hpp>
#include <stencil/fields/state.hpp>
#include <stencil/plan_type.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace stencil::native_cuda::fields {

/// The default depth, within the compiled levels. In 2D the widest at a
/// rim (radius x depth cells per side) of 8: a strip of 256 columns keeps
/// 15/16 of them. In 3D the rim eats the tile's 16 rows as well as its 32
/// columns: depth 3 at radius 1 (plan_stream takes 2 where 3 spills), 2 at
/// radius 2 and 1 beyond, the best depths measured on the 3D solvers
/// (docs/decisions/auto-fields.md).
template <class Fields, int Rank>
constexpr int stream_default_depth() {
  int const r = Fields::radius > 0 ? Fields::radius : 1;
  int const d = Rank == 3 ? (r == 1 ? 3 : r == 2 ? 2 : 1) : 8 / r;
  return std::clamp(d, 1, stream_max_depth<Rank>);
}

/// Output columns of a tile at `depth` along x (y: along the tile's y,
/// which has one row in 2D).
template <class Fields, int Rank>
constexpr int stream_valid_width(int depth) {
  return StreamTile<Rank>::x - 2 * depth * Fields::radius;
}
template <class Fields, int Rank>
constexpr int stream_valid_height(int depth) {
  return Rank == 3 ? StreamTile<Rank>::y - 2 * depth * Fields::radius : 1;
}

/// The kernel for `depth` steps (1 to stream_max_depth).
/// (A host-only fold: for_each_constant is __host__ __device__, and nvcc warns
/// when it calls a host lambda.)
template <class T, class Op>
auto stream_function(int depth) {
  using Function = void (*)(StreamParams<T, Op>);
  return [depth]<int... D>(std::integer_sequence<int, D...>) {
    Function function = nullptr;
    ((function = depth == D + 1 ? &stream_steps<T, Op, D + 1> : function), ...);
    return function;
  }
  (std::make_integer_sequence<int, stream_max_depth<Op::rank>>{});
}

/// The slices a block streams before its first output slice: radius x
/// depth of overlap and lag x depth to fill the pipeline.
template <class Fields, int Rank>
constexpr int stream_fill(int depth) {
  return depth * (Fields::radius + StreamShape<Fields, Rank>::lag);
}

/// How the slices are dealt: `blocks` blocks, each taking units of
/// `length` slices (2D: one share of the tiles' rows laid end to end; 3D:
/// bands of planes of one tile, band by band).
struct StreamWork {
  long long blocks = 1;
  int length = 1;
};

/// 2D: as many blocks as fit at once, each an equal share of the tiles'
/// rows, but none shorter than twice the fill, below which the fill
/// outweighs the output.
inline StreamWork stream_shares(long long rows, long long fill,
                                long long most_blocks) {
  long long const fewest = 2 * fill;
  long long const blocks =
      std::max(1LL, std::min(most_blocks, (rows + fewest - 1) / fewest));
  long long const share = (rows + blocks - 1) / blocks;
  return {(rows + share - 1) / share, static_cast<int>(share)};
}

/// 3D: bands of planes (stream_kernel.hpp's StreamParams::band). Each band
/// of a tile streams its fill again, and the last round of units leaves
/// blocks idle: the number of bands with the least time in the slowest
/// block, among bands of at most 16 fills. Longer bands let the blocks
/// resident at once spread over more planes, and ran slower
/// (docs/decisions/auto-fields.md).
inline StreamWork stream_bands(int nz, long long tiles, long long fill,
                               long long most_blocks) {
  long long const longest = 16 * fill;
  StreamWork work{std::min(most_blocks, tiles), nz};
  long long best = -1;
  for (int k = 1; k == 1 || nz / k >= 2 * fill; ++k) {
    int const band = (nz + k - 1) / k;
    if (band > longest && nz / (k + 1) >= 2 * fill) continue;
    long long const units = tiles * ((nz + band - 1) / band);
    long long const used = std::min(most_blocks, units);
    long long const time = (units + used - 1) / used * (band + fill);
    if (best < 0 || time < best) {
      best = time;
      work = {used, band};
    }
  }
  return work;
}

/// Plans TemporalBlocking of several fields (rank 2 or 3) on the streaming
/// kernel at `depth` (0: the default), or throws stencil::unsupported saying
/// what would run.
template <class T, class Op>
void plan_stream(Plan& p, std::string_view policy_name, int requested_depth) {
  using Fields = typename Op::fields;
  constexpr int rank = Op::rank;
  using S = StreamShape<Fields, rank>;
  constexpr int most = stream_max_depth<rank>;
  DeviceLimits const device = current_device_limits();
  int depth = requested_depth > 0 ? requested_depth
                                  : stream_default_depth<Fields, rank>();
  if (requested_depth == 0) {
    // The default: in 2D the deepest (up to the default above) at which
    // two blocks share a multiprocessor. One block alone leaves the latency
    // of its shared-memory and global loads exposed at every barrier, and
    // lost to a shallower depth with more blocks. In 3D a block has twice
    // the threads, and depth 2 alone beat depth 1 with two blocks
    // (wave3d-r2 double), so one block is enough there
    // (docs/decisions/auto-fields.md).
    int const fewest_blocks = rank == 3 ? 1 : 2;
    auto blocks_per_sm = [&](int d) {
      auto const function = stream_function<T, Op>(d);
      allow_dynamic_shared(function, device.shared_per_block_optin);
      return resident_blocks_per_sm(function, S::threads,
                                    S::template shared_bytes<T>(d));
    };
    while (depth > 1 && blocks_per_sm(depth) < fewest_blocks) --depth;
    // In 3D, a kernel that spills registers at depth 3 lost to depth 2
    // (heat-varcoef3d, whose coefficient ring adds its loads).
    auto spills = [&](int d) {
      cudaFuncAttributes a{};
      STENCIL_CUDA_CHECK(cudaFuncGetAttributes(&a, stream_function<T, Op>(d)));
      return a.localSizeBytes > 0;
    };
    if (rank == 3 && depth == 3 && spills(depth)) depth = 2;
  }
  int const rim_limit = (rank == 3 ? S::Tile::y : S::Tile::x);
  bool const rims_fit = stream_valid_height<Fields, rank>(depth) >= 1 &&
                        stream_valid_width<Fields, rank>(depth) >= 1;
  STENCIL_EXPECT_SUPPORTED(
      rims_fit, policy_name, ": at depth ", depth,
      " the rims of radius x depth = ", Fields::radius * depth,
      " columns on each side fill a tile of ", S::Tile::x,
      rank == 3 ? " x " : "",
      rank == 3 ? std::to_string(S::Tile::y) : std::string(),
      " columns; use a depth below ",
      (rim_limit + 2 * Fields::radius - 1) / std::max(1, 2 * Fields::radius));
  STENCIL_EXPECT_SUPPORTED(
      depth <= most, policy_name, " of several fields in ", rank,
      "D: at depth ", depth, " it would need more levels than the ", most,
      " compiled (each depth is a kernel of its own); it runs depths 1 to ",
      most);
  std::size_t const bytes = S::template shared_bytes<T>(depth);
  auto const function = stream_function<T, Op>(depth);
  if (!shared_memory_fits(function, bytes, device)) {
    int deepest = 0;
    for (int d = 1; d <= most; ++d) {
      if (S::template shared_bytes<T>(d) <= device.shared_per_block_optin)
        deepest = d;
    }
    STENCIL_EXPECT_SUPPORTED(
        false, policy_name, " of these fields: at depth ", depth, " the rings ",
        rank == 3 ? "of planes" : "of rows",
        " (a ring per level of each written field, one per coefficient) "
        "take ",
        bytes, " bytes of shared memory, more than the ",
        device.shared_per_block_optin, " a block may have on ", device.name,
        deepest > 0 ? "; depths 1 to " + std::to_string(deepest) + " fit"
                    : "; no depth fits (use StreamingSweep, Naive or "
                      "SpatialBlocking)");
  }
  cudaFuncAttributes attributes{};
  STENCIL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, function));
  int const per_sm = resident_blocks_per_sm(function, S::threads, bytes);
  STENCIL_EXPECT_SUPPORTED(per_sm >= 1, policy_name, ": ", bytes,
                           " bytes of shared memory and ", attributes.numRegs,
                           " registers per thread leave no room for a block "
                           "of the streaming kernel on ",
                           device.name);
  int const nx = p.extents[2], ny = p.extents[1], nz = p.extents[0];
  int const valid_x = stream_valid_width<Fields, rank>(depth);
  int const valid_y = stream_valid_height<Fields, rank>(depth);
  long long const tiles = static_cast<long long>((nx + valid_x - 1) / valid_x) *
                          (rank == 3 ? (ny + valid_y - 1) / valid_y : 1);
  long long const most_blocks =
      static_cast<long long>(per_sm) * device.multiprocessors;
  long long const fill = stream_fill<Fields, rank>(depth);
  StreamWork const work = rank == 3
                              ? stream_bands(nz, tiles, fill, most_blocks)
                              : stream_shares(tiles * ny, fill, most_blocks);
  p.backend = Backend::native_cuda;
  p.policy = PolicyKind::temporal_blocking;
  p.depth = depth;
  // tile: the valid columns, then the band of planes (3D) or the share of
  // rows (2D).
  if constexpr (rank == 3) {
    p.tile = {valid_x, valid_y, work.length};
  } else {
    p.tile = {valid_x, work.length, 1};
  }
  p.native_cuda.loaded_tile = {S::Tile::x, S::Tile::y, 1};
  p.native_cuda.rows_per_thread = S::rows;
  p.native_cuda.columns_per_thread = 1;
  p.team_size = S::threads;
  p.scratch_bytes = bytes;
  p.blocks = static_cast<int>(work.blocks);
  p.blocks_per_sm = per_sm;
  p.registers = attributes.numRegs;
  p.local_memory_bytes = static_cast<int>(attributes.localSizeBytes);
  p.device = device.name;
}

/// Launches `depth` steps (at most the plan's) from the state's current
/// levels into `params.out`.
template <class T, int Rank, class MemorySpace, class Op>
void launch_stream(Kokkos::Cuda const& space,
                   State<T, Rank, MemorySpace> const& state, Op const& op,
                   Plan const& p, int depth, StreamParams<T, Op>& params) {
  using Fields = typename Op::fields;
  using S = StreamShape<Fields, Rank>;
  static_assert(Rank >= 2,
                "the streaming kernel of several fields is 2D or 3D");
  params.op = op;
  params.layout =
      stencil::detail::make_layout<Rank>(state.extents(), state.halo());
  // A shallower launch (the last of a call, or one cut short by a hook)
  // keeps the plan's tiles: its rims are narrower, its output the same.
  params.valid_width = p.tile.x;
  params.strips_x = (params.layout.nx + p.tile.x - 1) / p.tile.x;
  if constexpr (Rank == 3) {
    params.valid_height = p.tile.y;
    params.strips =
        params.strips_x * ((params.layout.ny + p.tile.y - 1) / p.tile.y);
    params.band = p.tile.z;
  } else {
    params.strips = params.strips_x;
    params.share = p.tile.y;
  }
  params.t0 = state.time();
  params.dt = state.dt();
  for (int f = 0; f < Fields::count; ++f) {
    for (int k = 0; k < Fields::levels[f]; ++k) {
      params.in[f][k] = state.level(f, -k).data();
    }
  }
  // The plan's blocks: the plan is of this state's extents.
  auto const blocks = static_cast<unsigned>(p.blocks);
  std::size_t const bytes = S::template shared_bytes<T>(depth);
  auto const function = stream_function<T, Op>(depth);
  allow_dynamic_shared(function, bytes);
  function<<<blocks, S::threads, bytes, space.cuda_stream()>>>(params);
  STENCIL_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stencil::native_cuda::fields
