// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace stencil {

/// One kernel per time step over the interior, reading neighbours from global
/// memory (caches catch the reuse). Memory-bound by design.
struct Naive {};

/// Extents of a tile in cells. Dimensions the grid does not have are ignored
/// (a 2D grid uses x and y). For 3D spatial blocking, z is the number of
/// planes one team streams through.
struct Tile {
  int x = 64;
  int y = 8;
  int z = 32;
};

/// One kernel per time step; each team loads a tile plus its halo into
/// scratch (shared) memory and computes the tile from there. 3D grids stream
/// xy tiles through z with a ring of 2r+1 planes.
struct SpatialBlocking {
  Tile tile{};
};

/// Deep temporal blocking (native CUDA backend, fixed boundaries): each
/// launch advances `depth` steps with the tile on chip. Every block works on
/// its own tile, overlapped with its neighbours' by depth*radius cells that
/// both recompute (SM tiling): strips streamed along y for rank 2, 32x32
/// tiles streamed along z for rank 3 (radius 1 or 2). `depth = 0` lets the
/// plan choose; a depth whose queues do not fit in the device's shared
/// memory is refused with the largest one that fits. `prefetch` (rank 2
/// and 3): 0 loads the input plain, an iteration ahead; 1 to 4 copies it
/// that many iterations ahead with cp.async (staging costs shared memory,
/// so the deepest depths may not fit); -1 lets the plan choose: plain
/// loads, or on rank 2 one stage where the depth's plain-load kernel would
/// spill registers and the staged one does not.
///
/// `tiles` (rank 2): how a strip is held on chip. `shared_memory`: a block
/// is the tile, each level a ring of rows in shared memory.
/// `warp_registers`: each warp is a tile of its own, 128 columns in float
/// or 64 in double, each level's last 2r + 1 rows in registers and the
/// neighbours across a lane's edge by warp shuffles; no shared memory, so
/// no prefetch stages, and a narrower tile, so more recomputed halo.
/// `automatic`: the one measured faster for the stencil and value type
/// (docs/decisions/temporal-blocking-2d-warp-tiles.md); the plan says which.
enum class Tiles2D { automatic, shared_memory, warp_registers };

struct TemporalBlocking {
  int depth = 0;
  int prefetch = -1;
  Tiles2D tiles = Tiles2D::automatic;
};

/// Device tiling with deep temporal blocking (native CUDA backend, rank 3,
/// fixed boundaries, radius 1 or 2): every block holds a 32x32 tile of the
/// xy plane, all blocks stream along z together `depth` time levels deep
/// and exchange their tiles' rims through global memory behind a
/// device-wide barrier per plane. `depth = 0` lets the plan choose; a depth
/// that does not fit is refused with the largest one that does.
/// `prefetch` as for TemporalBlocking.
///
/// `l2_window = true` keeps the rim-exchange buffer in L2 as persisting
/// lines: the launches get an access policy window over it, with the
/// device's persisting L2 limit raised to the buffer's size (at most what
/// the device can set aside). The limit is device-wide, so iterate() then
/// waits for its launches and puts it back before it returns. Off by
/// default: the exchange buffer stays in L2 without a window, which only
/// adds that wait (docs/decisions/l2-window-off.md). Refused on devices that
/// cannot set L2 aside (compute capability below 8.0) and at depth 1, which
/// exchanges nothing.
struct DeviceTiling {
  int depth = 0;
  int prefetch = -1;
  bool l2_window = false;
};

/// The native single-step sweep (native CUDA backend, rank 2 and 3, fixed
/// or periodic boundaries, any radius): one kernel per time step, each
/// block streaming a tile along the slowest dimension through shared
/// memory, the next `prefetch` lines or planes copied in asynchronously
/// while the current one is computed. DRAM-bound by design, for what
/// temporal blocking cannot run. `prefetch` is the number of copies in
/// flight: 0 for plain loads, up to 4, or -1 to let the plan choose. On
/// rank 3, prefetch 0 runs a kernel without a shared tile: every thread
/// loads its taps directly (through L1), in blocks of 64x4x2 doubles or
/// 128x4x2 floats; the plan chooses it for radius-1 stars and for float
/// radius-1 grids, and 3 stages otherwise
/// (docs/decisions/streaming-sweep-direct-3d.md).
///
/// `bulk_copy = true` (compute capability 9.0 and newer) moves each line of
/// a unit with one `cp.async.bulk` issued by one thread and completed on an
/// mbarrier, instead of a 16-byte `cp.async` per thread; it needs at least
/// one stage of prefetch (-1 becomes the plan's default, 0 is refused) and
/// padded rows (x extent plus twice the halo) of a whole number of 16-byte
/// items. `false` always copies with `cp.async`. Left unset, the plan
/// chooses bulk copies for rank-2 grids where they can run and says so
/// (docs/decisions/streaming-sweep-bulk-copy-rank-2.md).
struct StreamingSweep {
  int prefetch = -1;
  std::optional<bool> bulk_copy = std::nullopt;
};

/// Register-resident blocking (native CUDA backend, rank 1, fixed or
/// periodic boundaries; paper 004's RDDhalo): the whole domain stays in
/// registers for the whole call, `cells_per_thread` adjacent cells of every
/// field per thread, one block per multiprocessor. Threads read their
/// neighbours' cells by warp shuffles; adjacent warps overlap by whole
/// lanes of at least radius x block_halo cells, refreshed through shared
/// memory every `block_halo` steps, and adjacent blocks by
/// radius x grid_halo cells rounded up to whole lanes, exchanged through
/// L2 every `grid_halo` steps behind flags only the two neighbours wait
/// on. Between refreshes the overlaps are recomputed. It
/// runs single-field stencils and multi-field ones whose fields keep one
/// or two time levels (a leapfrog). The plan refuses a domain the device's
/// registers cannot hold and says how large one may be. 0 lets the plan
/// choose; `cells_per_thread` is one of the shapes compiled per stencil
/// and value type (32, and 64 for a float stencil of one written field;
/// fewer cells for more fields or coefficients; the plan takes the
/// narrowest that holds the domain and the refusal names them),
/// `block_halo` follows from it, and `grid_halo` is any multiple of
/// `block_halo` that leaves blocks cells of their own.
struct RegisterResident {
  int cells_per_thread = 0;
  int block_halo = 0;
  int grid_halo = 0;
};

/// Let the library choose the backend, policy and parameters. The choice is
/// reported by `stencil::plan` (and printed with the plan).
///
/// Untimed (the default), Auto decides from measurements made when the
/// library was tuned and from stencil::model. `tune = true` (or
/// STENCIL_AUTO_TUNE=1 in the environment) times every plan Auto can run for
/// the grid on a scratch copy of it (the grid is left as it is; the copy
/// needs as much memory again) and takes the fastest, once per device,
/// functor and grid shape, since the winner is cached in
/// stencil::model::cache_directory()/tuning.txt (delete it to tune again).
/// The plan lists every time measured.
struct Auto {
  bool tune = false;
};

/// Which policy a plan runs.
enum class PolicyKind {
  naive,
  spatial_blocking,
  temporal_blocking,
  device_tiling,
  streaming_sweep,
  register_resident
};

namespace detail {

/// A set of PolicyKind values, one bit each.
using PolicyKinds = unsigned;

constexpr PolicyKinds kind_bit(PolicyKind kind) {
  return 1u << static_cast<unsigned>(kind);
}

/// Not a policy but a restriction on one: in a set with temporal_blocking,
/// rank-3 TemporalBlocking (SM tiling) compiles its kernels of depths 1 to
/// auto_sm_tiling_depths only, and DeviceTiling those of depths 1 to
/// auto_device_tiling_depths, the depths Auto chooses from, so that
/// iterate(..., Auto{}) does not compile a dozen deeper ones.
inline constexpr PolicyKinds auto_depths_only = 1u << 16;

/// The deepest SM tiling Auto runs: deeper, the recomputed overlap of a
/// 32x32 tile costs more than the DRAM passes it saves
/// (docs/decisions/auto-depth-caps.md).
inline constexpr int auto_sm_tiling_depths = 3;

/// The deepest device tiling Auto runs: the deepest of its plan's default
/// depths on the suite when it was set (double radius-1 stars;
/// docs/decisions/auto-depth-caps.md).
inline constexpr int auto_device_tiling_depths = 5;

}  // namespace detail

/// The one table of policy traits the frontend reads (plan, iterate, Auto,
/// tuning and the benchmarks): a policy's kind and name, the grid ranks it
/// runs, and the parameters it has. Which execution spaces run it is not
/// here but in the mechanisms registered for it (detail/mechanism.hpp).
template <class Policy>
struct policy_traits;

template <>
struct policy_traits<Naive> {
  static constexpr PolicyKind kind = PolicyKind::naive;
  static constexpr std::string_view name = "Naive";
  static constexpr int min_rank = 1, max_rank = 3;
  static constexpr bool has_depth = false, has_prefetch = false;
  /// Auto may choose it (untimed or tuned) for a rank-`rank` grid.
  static constexpr bool auto_candidate(int) { return true; }
};
template <>
struct policy_traits<SpatialBlocking> {
  static constexpr PolicyKind kind = PolicyKind::spatial_blocking;
  static constexpr std::string_view name = "SpatialBlocking";
  static constexpr int min_rank = 1, max_rank = 3;
  static constexpr bool has_depth = false, has_prefetch = false;
  static constexpr bool auto_candidate(int) { return true; }
};
template <>
struct policy_traits<TemporalBlocking> {
  static constexpr PolicyKind kind = PolicyKind::temporal_blocking;
  static constexpr std::string_view name = "TemporalBlocking";
  static constexpr int min_rank = 1, max_rank = 3;
  static constexpr bool has_depth = true, has_prefetch = true;
  static constexpr bool auto_candidate(int) { return true; }
};
template <>
struct policy_traits<DeviceTiling> {
  static constexpr PolicyKind kind = PolicyKind::device_tiling;
  static constexpr std::string_view name = "DeviceTiling";
  static constexpr int min_rank = 3, max_rank = 3;
  static constexpr bool has_depth = true, has_prefetch = true;
  static constexpr bool auto_candidate(int) { return true; }
};
template <>
struct policy_traits<StreamingSweep> {
  static constexpr PolicyKind kind = PolicyKind::streaming_sweep;
  static constexpr std::string_view name = "StreamingSweep";
  static constexpr int min_rank = 2, max_rank = 3;
  static constexpr bool has_depth = false, has_prefetch = true;
  /// Auto considers the sweep on rank 3 only: on rank 2 temporal blocking
  /// reads DRAM once per block of steps where the sweep reads it every step.
  static constexpr bool auto_candidate(int rank) { return rank == 3; }
};

template <>
struct policy_traits<RegisterResident> {
  static constexpr PolicyKind kind = PolicyKind::register_resident;
  static constexpr std::string_view name = "RegisterResident";
  static constexpr int min_rank = 1, max_rank = 1;
  static constexpr bool has_depth = false, has_prefetch = false;
  static constexpr bool auto_candidate(int) { return true; }
};

/// Every policy that names one way to run (Auto chooses among them), in the
/// order Auto and the benchmarks list them. Auto takes the first it
/// prefers that can run the grid: RegisterResident comes before temporal
/// blocking, which runs the rank-1 domains too large for the registers.
using Policies = std::tuple<Naive, SpatialBlocking, RegisterResident,
                            TemporalBlocking, DeviceTiling, StreamingSweep>;

template <class P>
inline constexpr bool is_policy_v = requires {
  policy_traits<P>::kind;
}
|| std::is_same_v<P, Auto>;

/// True where `Policy` runs grids of rank `Rank`.
template <class Policy, int Rank>
inline constexpr bool runs_rank_v =
    Rank >= policy_traits<Policy>::min_rank&& Rank <=
    policy_traits<Policy>::max_rank;

namespace detail {
/// f(Policy{}) for every policy of the table, in order.
template <class F>
constexpr void for_each_policy(F&& f) {
  std::apply([&](auto... policy) { (f(policy), ...); }, Policies{});
}
}  // namespace detail

}  // namespace stencil
