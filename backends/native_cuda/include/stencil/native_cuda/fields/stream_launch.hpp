// SPDX-License-Identifier: Apache-2.0
// Host side of the rank-2 streaming kernel of several fields
// (stream_kernel.hpp): its plan (depth, strips, shares of rows, resources)
// and its launch of `depth` steps.
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

/// The default depth: a rim of 8 cells (radius x depth) per side, within
/// the compiled levels.
template <class Fields>
constexpr int stream_default_depth() {
  int const d = 8 / (Fields::radius > 0 ? Fields::radius : 1);
  return std::clamp(d, 1, stream_max_depth);
}

/// Output columns of a strip at `depth`.
template <class Fields>
constexpr int stream_valid_width(int depth) {
  return stream_threads - 2 * depth * Fields::radius;
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
  (std::make_integer_sequence<int, stream_max_depth>{});
}

/// The fewest rows of a block's share: below it the rows streamed before
/// the first output row (radius x depth of overlap, lag x depth to fill the
/// pipeline) outweigh the output.
template <class Fields>
constexpr int stream_fewest_rows(int depth) {
  return 2 * depth * (Fields::radius + StreamShape<Fields>::lag);
}

/// Plans rank-2 TemporalBlocking of several fields on the streaming kernel
/// at `depth` (0: the default), or throws stencil::unsupported saying what
/// would run.
template <class T, class Op>
void plan_stream(Plan& p, std::string_view policy_name, int requested_depth) {
  using Fields = typename Op::fields;
  using S = StreamShape<Fields>;
  DeviceLimits const device = current_device_limits();
  int depth =
      requested_depth > 0 ? requested_depth : stream_default_depth<Fields>();
  if (requested_depth == 0) {
    // The default: the deepest (up to a rim of 8 cells) at which two
    // blocks share a multiprocessor. One block alone leaves the latency of
    // its shared-memory and global loads exposed at every barrier, and lost
    // to a shallower depth with more blocks (docs/decisions/auto-fields.md).
    auto blocks_per_sm = [&](int d) {
      auto const function = stream_function<T, Op>(d);
      allow_dynamic_shared(function, device.shared_per_block_optin);
      return resident_blocks_per_sm(function, stream_threads,
                                    S::template shared_bytes<T>(d));
    };
    while (depth > 1 && blocks_per_sm(depth) < 2) --depth;
  }
  STENCIL_EXPECT_SUPPORTED(
      depth <= stream_max_depth, policy_name,
      " of several fields in 2D: at depth ", depth,
      " it would need more levels than the ", stream_max_depth,
      " compiled (each depth is a kernel of its own); it runs depths 1 to ",
      stream_max_depth);
  STENCIL_EXPECT_SUPPORTED(
      stream_valid_width<Fields>(depth) >= 1, policy_name, ": at depth ", depth,
      " the rims of radius x depth = ", Fields::radius * depth,
      " columns on each side fill a strip of ", stream_threads,
      " columns; use a depth below ",
      (stream_threads + 2 * Fields::radius - 1) /
          std::max(1, 2 * Fields::radius));
  std::size_t const bytes = S::template shared_bytes<T>(depth);
  auto const function = stream_function<T, Op>(depth);
  if (!shared_memory_fits(function, bytes, device)) {
    int deepest = 0;
    for (int d = 1; d <= stream_max_depth; ++d) {
      if (S::template shared_bytes<T>(d) <= device.shared_per_block_optin)
        deepest = d;
    }
    STENCIL_EXPECT_SUPPORTED(
        false, policy_name, " of these fields: at depth ", depth,
        " the rings of rows (a ring per level of each written field, one per "
        "coefficient) take ",
        bytes, " bytes of shared memory, more than the ",
        device.shared_per_block_optin, " a block may have on ", device.name,
        deepest > 0 ? "; depths 1 to " + std::to_string(deepest) + " fit"
                    : "; no depth fits (use StreamingSweep, Naive or "
                      "SpatialBlocking)");
  }
  cudaFuncAttributes attributes{};
  STENCIL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, function));
  int const per_sm = resident_blocks_per_sm(function, stream_threads, bytes);
  STENCIL_EXPECT_SUPPORTED(per_sm >= 1, policy_name, ": ", bytes,
                           " bytes of shared memory and ", attributes.numRegs,
                           " registers per thread leave no room for a block "
                           "of the streaming kernel on ",
                           device.name);
  int const nx = p.extents[2], ny = p.extents[1];
  int const valid = stream_valid_width<Fields>(depth);
  long long const rows = static_cast<long long>((nx + valid - 1) / valid) * ny;
  // As many blocks as fit at once, each an equal share of the strips' rows,
  // but none shorter than the pipeline's fill.
  long long const most =
      static_cast<long long>(per_sm) * device.multiprocessors;
  long long const fewest = stream_fewest_rows<Fields>(depth);
  long long const blocks =
      std::max(1LL, std::min(most, (rows + fewest - 1) / fewest));
  long long const share = (rows + blocks - 1) / blocks;
  p.backend = Backend::native_cuda;
  p.policy = PolicyKind::temporal_blocking;
  p.depth = depth;
  p.tile = {valid, static_cast<int>(share), 1};
  p.native_cuda.loaded_tile = {stream_threads, 1, 1};
  p.native_cuda.rows_per_thread = S::rows;
  p.native_cuda.columns_per_thread = 1;
  p.team_size = stream_threads;
  p.scratch_bytes = bytes;
  p.blocks = static_cast<int>((rows + share - 1) / share);
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
  static_assert(Rank == 2, "the streaming kernel of several fields is 2D");
  params.op = op;
  params.layout =
      stencil::detail::make_layout<Rank>(state.extents(), state.halo());
  // A shallower launch (the last of a call, or one cut short by a hook)
  // keeps the plan's strips: its rims are narrower, its output the same.
  params.valid_width = p.tile.x;
  params.strips = (params.layout.nx + p.tile.x - 1) / p.tile.x;
  params.share = p.tile.y;
  params.t0 = state.time();
  params.dt = state.dt();
  for (int f = 0; f < Fields::count; ++f) {
    for (int k = 0; k < Fields::levels[f]; ++k) {
      params.in[f][k] = state.level(f, -k).data();
    }
  }
  long long const rows =
      static_cast<long long>(params.strips) * params.layout.ny;
  auto const blocks = static_cast<unsigned>((rows + p.tile.y - 1) / p.tile.y);
  std::size_t const bytes =
      StreamShape<Fields>::template shared_bytes<T>(depth);
  auto const function = stream_function<T, Op>(depth);
  allow_dynamic_shared(function, bytes);
  function<<<blocks, stream_threads, bytes, space.cuda_stream()>>>(params);
  STENCIL_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stencil::native_cuda::fields
