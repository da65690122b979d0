// SPDX-License-Identifier: Apache-2.0
// Host side of RegisterResident (kernel.hpp): which functors it compiles,
// how the domain is shared among blocks, the plan (which refuses a domain
// the device's registers cannot hold, saying how large one may be), and
// the runs of a multi-field State and of a single-field Grid, one
// cooperative launch per block of steps between hooks.
#pragma once

#include <stencil/native_cuda/common/cuda_check.hpp>
#include <stencil/native_cuda/common/device.hpp>
#include <stencil/native_cuda/common/kept_between_calls.hpp>
#include <stencil/native_cuda/fields/launch.hpp>
#include <stencil/native_cuda/register_resident/kernel.hpp>

#include <stencil/boundary.hpp>
#include <stencil/detail/time_loop.hpp>
#include <stencil/error.hpp>
#include <stencil/fields/declare.hpp>
#include <stencil/fields/state.hpp>
#include <stencil/grid.hpp>
#include <stencil/plan_type.hpp>
#include <stencil/policy.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <string>
#include <vector>

namespace stencil::native_cuda::register_resident {

/// A single-field functor as a stencil of one written field of one level,
/// so that a Grid runs the same kernel as a State.
template <class Op>
struct SingleField {
  static constexpr int rank = Op::rank;
  static constexpr auto shape = Op::shape;
  using fields = stencil::fields<stencil::field<Op::radius>>;
  Op op;
  template <class In>
  __device__ __forceinline__ auto operator()(In const& in) const {
    return op(stencil::read<0>(in));
  }
};

/// Why the kernel does not compile for a multi-field functor, or empty.
template <class Op>
constexpr char const* not_compiled() {
  if constexpr (Op::rank != 1) {
    return "it runs rank-1 domains (the domain is one row of registers "
           "across the device)";
  } else if constexpr (Op::fields::radius < 1) {
    return "it runs stencils of radius 1 or more";
  } else if constexpr (Op::fields::most_levels > 2) {
    return "it keeps 1 or 2 time levels per field in registers";
  } else {
    return "";
  }
}
template <class Op>
inline constexpr bool compiled_v = not_compiled<Op>()[0] == '\0';

/// The cells each block owns (Params::starts): whole lanes of
/// `cells_per_thread` cells each, spread evenly, and the remainder of n in
/// block 0 (so at least two blocks where there is one), so that the
/// domain's ends start lanes: the kernel keeps the fixed halo cells there,
/// and wraps a periodic halo lane by lane. Every block owns at least the
/// `grid_halo_cells` its neighbours read and a lane more, which a lane
/// that holds block 0's unaligned end reads past them.
struct Partition {
  int blocks = 0;
  /// Block 0 owns `first` cells (its share of lanes and the remainder of
  /// n), every other block `share` lanes, and blocks 1 to `extra` one lane
  /// more.
  int first = 0, share = 0, extra = 0, lane = 1;
  /// The first cell block b owns; start(blocks) is n.
  int start(int b) const {
    if (b == 0) return 0;
    int const k = b - 1;
    return first + (k * share + std::min(k, extra)) * lane;
  }
  int cells(int b) const { return start(b + 1) - start(b); }
  bool operator==(Partition const&) const = default;
};

inline Partition partition(int n, int owned_most, int cells_per_thread) {
  int blocks = (n + owned_most - 1) / owned_most;
  if (blocks == 1 && n % cells_per_thread != 0) blocks = 2;
  int const lanes = n / cells_per_thread, rest = n % cells_per_thread;
  int const share = lanes / blocks;
  // Block 0 takes the smallest share of lanes and the remainder.
  return {blocks, share * cells_per_thread + rest, share, lanes % blocks,
          cells_per_thread};
}

inline bool partition_fits(Partition const& part, int owned_most,
                           int grid_halo_cells, int cells_per_thread) {
  for (int b = 0; b < part.blocks; ++b) {
    int const own = part.cells(b);
    if (own < grid_halo_cells + cells_per_thread || own > owned_most)
      return false;
  }
  return true;
}

/// The deepest grid halo the plan chooses by itself, in block halos.
inline constexpr int deepest_default_grid_halo = 8;

template <class T, class Op, int G>
auto kernel_function() {
  return &resident_steps<T, Op, G>;
}

/// Blocks of the shape of G cells per thread that fit on each
/// multiprocessor of `device` at once; 0 where CUDA refuses their shared
/// memory.
template <class T, class Op, int G>
int shape_blocks_per_sm(DeviceLimits const& device) {
  using S = Shape<T, Op, G>;
  auto const function = kernel_function<T, Op, G>();
  if (!shared_memory_fits(function, S::shared_bytes, device)) return 0;
  return resident_blocks_per_sm(function, S::threads, S::shared_bytes);
}

/// The most cells the shape of G cells per thread holds on `device`: every
/// block it fits on the device, each owning its span less a grid halo of
/// one block halo on each side (the shallowest); 0 where it does not fit.
template <class T, class Op, int G>
long long shape_capacity(DeviceLimits const& device) {
  using S = Shape<T, Op, G>;
  return static_cast<long long>(shape_blocks_per_sm<T, Op, G>(device)) *
         device.multiprocessors *
         (S::span - 2 * S::grid_halo_cells(S::block_halo));
}

/// The plan of the shape of G cells per thread.
template <class T, class Op, int G>
void plan_shape(Plan& p, RegisterResident const& policy,
                DeviceLimits const& device) {
  constexpr std::string_view name = "RegisterResident";
  using S = Shape<T, Op, G>;
  constexpr int radius = Op::fields::radius;
  STENCIL_EXPECT(policy.block_halo == 0 || policy.block_halo == S::block_halo,
                 name, ": block_halo is ", policy.block_halo,
                 "; this stencil's kernel refreshes its warps' overlap "
                 "every ",
                 S::block_halo, " steps (whole lanes of ", S::cells_per_thread,
                 " cells at radius ", radius, "); use 0 or ", S::block_halo);
  int const n = p.extents[2];
  auto const function = kernel_function<T, Op, G>();
  STENCIL_EXPECT_SUPPORTED(
      shared_memory_fits(function, S::shared_bytes, device), name,
      ": CUDA refused ", S::shared_bytes,
      " bytes of shared memory for the warp halos on ", device.name);
  cudaFuncAttributes attributes{};
  STENCIL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, function));
  int const per_sm = shape_blocks_per_sm<T, Op, G>(device);
  long long const most_blocks =
      static_cast<long long>(per_sm) * device.multiprocessors;

  // The default: the fewest blocks per multiprocessor, since every block
  // computes its whole span whatever it owns, and then the deepest grid
  // halo, up to `deepest_default_grid_halo` block halos, that shares the
  // domain among that many blocks. Every exchange between blocks waits
  // for a flag's round trip through L2 between block barriers; a deeper
  // halo pays it less often and recomputes more of the neighbours' cells
  // in between, and up to that depth the first outweighed the second
  // (docs/decisions/register-resident.md). A domain no depth fits gets
  // one block halo, which holds the most, and the refusal below.
  auto const fits = [&](int steps, long long blocks) {
    int const cells = S::grid_halo_cells(steps), most = S::span - 2 * cells;
    if (most < cells) return false;
    Partition const part = partition(n, most, S::cells_per_thread);
    return part.blocks <= blocks &&
           partition_fits(part, most, cells, S::cells_per_thread);
  };
  int grid_halo = policy.grid_halo;
  for (int per = 1; grid_halo == 0 && per <= per_sm; ++per) {
    for (int k = deepest_default_grid_halo; grid_halo == 0 && k >= 1; --k) {
      if (fits(k * S::block_halo,
               static_cast<long long>(per) * device.multiprocessors)) {
        grid_halo = k * S::block_halo;
      }
    }
  }
  if (grid_halo == 0) grid_halo = S::block_halo;
  int const hb = S::grid_halo_cells(grid_halo);
  int const owned_most = S::span - 2 * hb;
  int most_grid_halo = S::block_halo;
  while (3 * S::grid_halo_cells(most_grid_halo + S::block_halo) <= S::span) {
    most_grid_halo += S::block_halo;
  }
  STENCIL_EXPECT(
      grid_halo > 0 && grid_halo % S::block_halo == 0 && owned_most >= hb, name,
      ": grid_halo is ", policy.grid_halo,
      "; blocks exchange their overlap at a multiple of the "
      "block halo (",
      S::block_halo,
      " steps) that leaves a block more cells "
      "than its neighbours read: use 0 or a multiple of ",
      S::block_halo, " up to ", most_grid_halo);
  long long const capacity = most_blocks * owned_most;
  STENCIL_EXPECT_SUPPORTED(
      per_sm >= 1 && n <= capacity, name,
      " holds the whole domain in "
      "registers: ",
      most_blocks, " blocks of ", S::threads, " threads x ",
      S::cells_per_thread, " cells, ", owned_most,
      " of them each a block's own, hold at most ", capacity,
      " cells of this stencil on ", device.name, "; this domain has ", n,
      " (use TemporalBlocking, which streams any size; Auto does)");
  Partition const part = partition(n, owned_most, S::cells_per_thread);
  STENCIL_EXPECT_SUPPORTED(
      part.blocks <= most_blocks &&
          partition_fits(part, owned_most, hb, S::cells_per_thread),
      name, ": a domain of ", n,
      " cells cannot be shared among blocks "
      "that each own the ",
      hb,
      " cells (radius x grid_halo, in whole lanes) their neighbours read and "
      "a lane of ",
      S::cells_per_thread, " more, in whole lanes; use at least ",
      2 * (hb + 2 * S::cells_per_thread), " cells, or a smaller grid_halo");
  p.backend = Backend::native_cuda;
  p.policy = PolicyKind::register_resident;
  p.depth = 1;  // a launch runs the call; see native_cuda.grid_halo
  p.tile = {owned_most, 1, 1};
  p.native_cuda.cells_per_thread = S::cells_per_thread;
  p.native_cuda.block_halo = S::block_halo;
  p.native_cuda.grid_halo = grid_halo;
  p.team_size = S::threads;
  p.scratch_bytes = S::shared_bytes;
  p.blocks = part.blocks;
  p.blocks_per_sm = per_sm;
  p.registers = attributes.numRegs;
  p.local_memory_bytes = static_cast<int>(attributes.localSizeBytes);
  p.device = device.name;
}

/// The plan of RegisterResident for the multi-field functor `Op` (a
/// single-field one comes as SingleField<Op>), or stencil::unsupported
/// saying what would run.
template <class T, class Op>
void plan(Plan& p, RegisterResident const& policy) {
  constexpr std::string_view name = "RegisterResident";
  DeviceLimits const device = current_device_limits();
  expect_native_gpu(device, name);
  if constexpr (!compiled_v<Op>) {
    (void)policy;
    STENCIL_EXPECT_SUPPORTED(false, name,
                             " does not run this stencil: ", not_compiled<Op>(),
                             "; use TemporalBlocking, Naive or Auto");
  } else {
    Boundary const low = p.sides[2][0], high = p.sides[2][1];
    STENCIL_EXPECT_SUPPORTED(
        (low == Boundary::fixed || low == Boundary::periodic) && low == high,
        name,
        " runs fixed and periodic boundaries (it advances every step of a "
        "call in one launch, and other halos change every step); this "
        "domain's are ",
        stencil::detail::sides_text(p.sides, 1),
        "; use StreamingSweep, Naive or SpatialBlocking");
    using C = ShapeChoices<T, Op>;
    int const asked = policy.cells_per_thread;
    std::string const compiled =
        C::wide > 0
            ? std::to_string(C::narrow) + " or " + std::to_string(C::wide)
            : std::to_string(C::narrow);
    STENCIL_EXPECT(
        asked == 0 || asked == C::narrow || (C::wide > 0 && asked == C::wide),
        name, ": cells_per_thread is ", asked,
        "; this stencil's kernels are compiled for ", compiled,
        " cells per thread (registers hold two arrays of them per written "
        "field and one per coefficient); use 0 or ",
        compiled);
    if constexpr (C::wide > 0) {
      // The default: the narrowest shape that holds the domain. Every
      // block computes its whole span whatever it owns, so a domain the
      // narrow shape holds runs on more multiprocessors with it; beyond
      // it, the wide one (or, past both, the refusal of the one that holds
      // more).
      long long const n = p.extents[2];
      long long const narrow = shape_capacity<T, Op, C::narrow>(device);
      long long const wide = shape_capacity<T, Op, C::wide>(device);
      bool const take_wide = asked == C::wide || (asked == 0 && n > narrow &&
                                                  (n <= wide || wide > narrow));
      if (take_wide) {
        plan_shape<T, Op, C::wide>(p, policy, device);
        return;
      }
    }
    plan_shape<T, Op, C::narrow>(p, policy, device);
  }
}

/// The edge buffers and flags of the exchanges between blocks, kept from
/// one call to the next (allocating, zeroing and freeing them took as
/// long as hundreds of steps), with the last round any launch published
/// into the flags. Released when Kokkos finalizes.
struct Scratch {
  Kokkos::View<unsigned char*, Kokkos::CudaSpace> edges;
  Kokkos::View<unsigned*, Kokkos::CudaSpace> flags;
  unsigned last_round = 0;
  /// The partition's starts (Params::starts), and the partition they hold.
  Kokkos::View<int*, Kokkos::CudaSpace> starts;
  Partition partition;
  /// The instance whose stream last used it: a call on another stream
  /// waits for it first.
  Kokkos::Cuda space;
};

/// At least `edge_bytes` of edge buffer and `blocks` flags, ready for use
/// on `space`'s stream, with room for `rounds` more rounds.
inline Scratch& scratch(Kokkos::Cuda const& space, std::size_t edge_bytes,
                        int blocks, unsigned rounds) {
  Scratch& s = kept_between_calls<Scratch>();
  hand_over_stream(s.space, space, s.flags.extent(0) > 0,
                   "stencil::register_resident: scratch changes stream");
  if (s.edges.extent(0) < edge_bytes) {
    s.edges = {};  // free before allocating more
    s.edges = Kokkos::View<unsigned char*, Kokkos::CudaSpace>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                           "stencil::register_resident::edges"),
        edge_bytes);
  }
  if (s.flags.extent(0) < static_cast<std::size_t>(blocks)) {
    s.flags = {};
    s.flags = Kokkos::View<unsigned*, Kokkos::CudaSpace>(
        Kokkos::view_alloc(space, "stencil::register_resident::flags"), blocks);
    s.last_round = 0;
  } else if (s.last_round + rounds < s.last_round) {
    // Rounds would wrap around below values the flags still hold.
    Kokkos::deep_copy(space, s.flags, 0u);
    s.last_round = 0;
  }
  return s;
}

/// The partition's block starts on the device, copied only when they
/// change (a copy from the host waits for the stream).
inline int const* device_starts(Kokkos::Cuda const& space, Scratch& s,
                                Partition const& part) {
  if (s.starts.extent(0) == 0 || !(s.partition == part)) {
    std::vector<int> host(std::size_t(part.blocks) + 1);
    for (int b = 0; b <= part.blocks; ++b) host[std::size_t(b)] = part.start(b);
    s.starts = {};
    s.starts = Kokkos::View<int*, Kokkos::CudaSpace>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                           "stencil::register_resident::starts"),
        host.size());
    Kokkos::deep_copy(
        space, s.starts,
        Kokkos::View<int const*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
            host.data(), host.size()));
    space.fence("stencil::register_resident: starts copied from the stack");
    s.partition = part;
  }
  return s.starts.data();
}

/// One cooperative launch of `params.steps` steps: every block must be
/// resident at once, since each waits for its neighbours.
template <class T, class Op, int G>
void launch_shape(Kokkos::Cuda const& space, Plan const& p,
                  Params<T, Op>& params) {
  using S = Shape<T, Op, G>;
  int const hb = S::grid_halo_cells(p.native_cuda.grid_halo);
  params.grid_halo_cells = hb;
  Partition const part =
      partition(params.n, S::span - 2 * hb, S::cells_per_thread);
  unsigned const rounds =
      static_cast<unsigned>(params.steps / p.native_cuda.grid_halo);
  Scratch& s =
      scratch(space, std::size_t{2} * S::exchanged * params.n * sizeof(T),
              part.blocks, rounds);
  params.starts = device_starts(space, s, part);
  params.edges = reinterpret_cast<T*>(s.edges.data());
  params.flags = NeighbourFlags{s.flags.data()};
  params.first_round = s.last_round;
  s.last_round += rounds;
  auto const function = kernel_function<T, Op, G>();
  allow_dynamic_shared(function, S::shared_bytes);
  void* arguments[] = {&params};
  STENCIL_CUDA_CHECK(cudaLaunchCooperativeKernel(
      reinterpret_cast<void const*>(function),
      dim3(static_cast<unsigned>(part.blocks)), dim3(S::threads), arguments,
      S::shared_bytes, space.cuda_stream()));
}

/// The launch of the shape the plan chose.
template <class T, class Op>
void launch(Kokkos::Cuda const& space, Plan const& p, Params<T, Op>& params) {
  using C = ShapeChoices<T, Op>;
  if constexpr (C::wide > 0) {
    if (p.native_cuda.cells_per_thread == C::wide) {
      launch_shape<T, Op, C::wide>(space, p, params);
      return;
    }
  }
  launch_shape<T, Op, C::narrow>(space, p, params);
}

/// A multi-field State: the written fields' levels go to a second set of
/// buffers that trades places with the state's (fields/launch.hpp), one
/// launch per block of steps between hooks.
template <class T, class MemorySpace, class Op>
void run_fields(Kokkos::Cuda const& space, State<T, 1, MemorySpace>& state,
                Op const& op, int steps, Plan const& p,
                stencil::detail::LoopHooks const& hooks) {
  using Fields = typename Op::fields;
  bool const periodic =
      state.boundaries().kind(0, Side::low) == Boundary::periodic;
  fields::run_with_second_set<Fields>(
      space, state, steps, INT_MAX, hooks, "RegisterResident",
      [&](int block, fields::OutBuffers<T, Fields> const& out) {
        Params<T, Op> params;
        params.op = op;
        params.n = state.extent(0);
        params.halo = state.halo();
        params.steps = block;
        params.grid_halo = p.native_cuda.grid_halo;
        params.periodic = periodic;
        params.t0 = state.time();
        params.dt = state.dt();
        for (int f = 0; f < Fields::count; ++f) {
          for (int k = 0; k < Fields::levels[f]; ++k) {
            params.in[f][k] = state.level(f, -k).data();
            params.out[f][k] = out[f][k];
          }
        }
        launch(space, p, params);
      });
}

/// A single-field Grid: the new level into the grid's next buffer, which
/// then becomes current.
template <class T, class MemorySpace, class Op>
void run(Kokkos::Cuda const& space, Grid<T, 1, MemorySpace>& grid, Op const& op,
         int steps, Plan const& p, stencil::detail::LoopHooks const& hooks) {
  using Fields = SingleField<Op>;
  bool const periodic =
      grid.boundaries().kind(0, Side::low) == Boundary::periodic;
  auto const run_block = [&](int block) {
    Params<T, Fields> params;
    params.op = Fields{op};
    params.n = grid.extent(0);
    params.halo = grid.halo();
    params.steps = block;
    params.grid_halo = p.native_cuda.grid_halo;
    params.periodic = periodic;
    params.in[0][0] = grid.current().data();
    params.out[0][0] = grid.next().data();
    launch(space, p, params);
    grid.swap();
  };
  stencil::detail::time_loop(
      space, grid, stencil::detail::step_blocks(steps, INT_MAX, hooks),
      run_block, hooks);
}

}  // namespace stencil::native_cuda::register_resident
