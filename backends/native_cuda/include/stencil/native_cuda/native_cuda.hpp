// SPDX-License-Identifier: Apache-2.0
// The native CUDA backend's single entry point, included by
// stencil/detail/native_dispatch.hpp only when Kokkos has CUDA and the build
// enables STENCIL_ENABLE_NATIVE_CUDA. It declares the backend available for
// Kokkos::Cuda and routes the native policies to their mechanism, one folder
// each (temporal_blocking/, device_tiling/, streaming_sweep/,
// register_resident/; the prefetch and flags they share in common/).
#pragma once

#include <stencil/native_cuda/common/calibration.hpp>
#include <stencil/native_cuda/device_tiling/launch.hpp>
#include <stencil/native_cuda/fields/launch.hpp>
#include <stencil/native_cuda/register_resident/launch.hpp>
#include <stencil/native_cuda/streaming_sweep/launch.hpp>
#include <stencil/native_cuda/temporal_blocking/launch.hpp>

#include <stencil/backend.hpp>
#include <stencil/detail/mechanism.hpp>
#include <stencil/detail/native_dispatch.hpp>
#include <stencil/detail/time_loop.hpp>
#include <stencil/detail/tuning_cache.hpp>
#include <stencil/fields/state.hpp>
#include <stencil/grid.hpp>
#include <stencil/model.hpp>
#include <stencil/plan_type.hpp>
#include <stencil/policy.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <string>
#include <vector>

namespace stencil {

template <>
inline constexpr bool native_available_v<Kokkos::Cuda> = true;

namespace native_cuda {

/// The SM-tiling depth cap of a set of `Kinds` (the kernel clamps it to
/// the depths compiled): Auto's cap where the caller compiles Auto's kernels.
template <stencil::detail::PolicyKinds Kinds>
inline constexpr int sm_tiling_depths =
    (Kinds & stencil::detail::auto_depths_only) != 0
        ? stencil::detail::auto_sm_tiling_depths
        : device_tiling::all_compiled_depths;

/// The device-tiling depth cap of a set of `Kinds`.
template <stencil::detail::PolicyKinds Kinds>
inline constexpr int device_tiling_depths =
    (Kinds & stencil::detail::auto_depths_only) != 0
        ? stencil::detail::auto_device_tiling_depths
        : device_tiling::all_compiled_depths;

/// What Auto{.tune = true} times on rank 3 besides Naive, the sweep and SM
/// tiling, said in each rank-3 reason.
inline std::string rank3_tuning_note() {
  return "Auto{.tune = true} times Naive against the native sweep, SM "
         "tiling at depths 1-" +
         std::to_string(stencil::detail::auto_sm_tiling_depths) +
         " and device tiling at depths 1-" +
         std::to_string(stencil::detail::auto_device_tiling_depths);
}

}  // namespace native_cuda

namespace detail {

/// The native backend's services beside its mechanisms: the device's name
/// for Auto's tuning cache and the model's prediction.
template <>
struct Native<Kokkos::Cuda> {
  /// Names this GPU in Auto's tuning cache: its UUID (which needs no
  /// cache directory, unlike the calibration file's name).
  static std::string device_key() { return "cuda-" + native_cuda::gpu_uuid(); }

  /// Adds the model's prediction for `p` on this GPU (calibrated on first
  /// use, see model::cuda_device), or a note saying why there is none.
  static void predict(Plan& p, model::Stencil const& stencil) {
    try {
      model::Device const& device = model::cuda_device();
      std::array<int, 3> extents{1, 1, 1};
      for (int d = 0; d < p.rank; ++d) extents[d] = p.extents[3 - p.rank + d];
      p.prediction = model::predict(stencil, native_cuda::model_config(p),
                                    extents, device);
      p.model_note = "device figures " + device.source;
    } catch (stencil::error const& e) {
      p.prediction.reset();
      p.model_note = std::string("no prediction: ") + e.what();
    }
  }
};

/// TemporalBlocking on the GPU: rank 1 and 2 keep a strip of the grid on
/// chip for `depth` steps (temporal_blocking/); rank 3 runs the
/// device-tiling kernel on isolated, overlapped tiles (SM tiling).
template <>
struct Mechanism<TemporalBlocking, Kokkos::Cuda> {
  static constexpr bool available = true;

  template <class T, class Op, PolicyKinds Kinds>
  static void plan(Plan& p, TemporalBlocking const& policy) {
    if constexpr (Op::rank == 3) {
      STENCIL_EXPECT(policy.tiles != Tiles2D::warp_registers,
                     "TemporalBlocking: Tiles2D::warp_registers on a rank-3 "
                     "grid: warp tiles are rank 2 only (rank 3 streams 32x32 "
                     "tiles through shared memory); use Tiles2D::automatic "
                     "or shared_memory");
      native_cuda::device_tiling::plan_sm_tiling<
          T, Op, native_cuda::sm_tiling_depths<Kinds>>(p, policy.depth,
                                                       policy.prefetch);
    } else {
      native_cuda::temporal_blocking::plan<T, Op>(
          p, policy.depth, policy.prefetch, policy.tiles);
    }
  }
  template <PolicyKinds Kinds, class T, int Rank, class MemorySpace, class Op>
  static void run(Kokkos::Cuda const& space, Grid<T, Rank, MemorySpace>& grid,
                  Op const& op, int steps, Plan const& p,
                  LoopHooks const& hooks) {
    if constexpr (Rank == 3) {
      native_cuda::device_tiling::run_sm_tiling<
          native_cuda::sm_tiling_depths<Kinds>>(space, grid, op, steps, p,
                                                hooks);
    } else {
      native_cuda::temporal_blocking::run(space, grid, op, steps, p, hooks);
    }
  }
  /// Multi-field stencils on a State, every rank, fixed and periodic
  /// boundaries, `depth` steps per launch (fields/): rank 2 and 3 stream
  /// rows or planes through a ring per level in shared memory, rank 1 keeps
  /// an overlapped tile of every field's levels.
  static constexpr bool runs_fields = true;
  template <class T, class Op>
  static void plan_fields(Plan& p, TemporalBlocking const& policy) {
    native_cuda::fields::expect_plain_loads("TemporalBlocking",
                                            policy.prefetch);
    STENCIL_EXPECT(policy.tiles != Tiles2D::warp_registers,
                   "TemporalBlocking: Tiles2D::warp_registers with several "
                   "fields: their kernels keep each level's rows in shared "
                   "memory only; use Tiles2D::automatic or shared_memory");
    native_cuda::fields::plan<T, Op>(
        p, "TemporalBlocking", PolicyKind::temporal_blocking, policy.depth);
  }
  template <class T, int Rank, class MemorySpace, class Op>
  static void run_fields(Kokkos::Cuda const& space,
                         State<T, Rank, MemorySpace>& state, Op const& op,
                         int steps, Plan const& p, LoopHooks const& hooks) {
    native_cuda::fields::run_temporal(space, state, op, steps, p, hooks);
  }
  /// Rank 1 and 2: Auto takes temporal blocking at its plan's default depth
  /// where the plan accepts the grid (fixed boundaries, a depth that fits),
  /// unless the model predicts Naive faster; the depth is the plan's
  /// measured default, not the model's, since neighbouring depths lie
  /// closer together than the model's error
  /// (docs/decisions/auto-2d-temporal-blocking.md). Rank 3: SM tiling is
  /// timed by Auto{.tune = true} only.
  template <class T, class Op>
  static AutoPreference auto_preference() {
    if constexpr (Op::rank == 3) {
      return {};
    } else {
      return {.preferred = true,
              .model_may_veto = true,
              .what = "native temporal blocking",
              .why =
                  "native temporal blocking keeps a strip on chip for "
                  "`depth` steps, so DRAM traffic drops by the depth "
                  "(docs/decisions/auto-2d-temporal-blocking.md); depth: "
                  "the plan's measured default for the stencil's shape, "
                  "radius, value type and divisions, capped by shared "
                  "memory (Auto{.tune = true} times the depths, and in 2D "
                  "both kernels)",
              .why_not = {}};
    }
  }
  /// Auto{.tune = true}: every depth Auto compiles (rank 1: a spread up to
  /// 32, one kernel serves them all; rank 2: every compiled depth of both
  /// tiles, shared-memory rings and warp tiles; rank 3: SM tiling up to
  /// Auto's cap), at the plan's prefetch.
  template <class T, class Op>
  static std::vector<TunedChoice> tuning_candidates() {
    std::vector<TunedChoice> choices;
    auto const add = [&](int depth, Tiles2D tiles) {
      choices.push_back(
          {PolicyKind::temporal_blocking, depth, -1, Tile{}, 0.0, tiles});
    };
    if constexpr (Op::rank == 1) {
      for (int d : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32}) {
        add(d, Tiles2D::automatic);
      }
    } else if constexpr (Op::rank == 2) {
      // Both kernels at every depth compiled: which wins depends on the
      // grid as well (docs/decisions/temporal-blocking-2d-warp-tiles.md).
      namespace tb = native_cuda::temporal_blocking;
      for (int d = 1; d <= tb::Kernel<T, Op>::compiled_depth(); ++d) {
        add(d, Tiles2D::shared_memory);
      }
      for (int d = 1; d <= tb::Kernel<T, Op, true>::compiled_depth(); ++d) {
        add(d, Tiles2D::warp_registers);
      }
    } else {
      for (int d = 1; d <= auto_sm_tiling_depths; ++d) {
        add(d, Tiles2D::automatic);
      }
    }
    return choices;
  }
};

/// DeviceTiling on the GPU (rank 3): every block holds a tile of the xy
/// plane, all stream along z together and exchange their tiles' rims.
template <>
struct Mechanism<DeviceTiling, Kokkos::Cuda> {
  static constexpr bool available = true;

  template <class T, class Op, PolicyKinds Kinds>
  static void plan(Plan& p, DeviceTiling const& policy) {
    native_cuda::device_tiling::plan<T, Op,
                                     native_cuda::device_tiling_depths<Kinds>>(
        p, policy.depth, policy.prefetch, policy.l2_window);
  }
  template <PolicyKinds Kinds, class T, int Rank, class MemorySpace, class Op>
  static void run(Kokkos::Cuda const& space, Grid<T, Rank, MemorySpace>& grid,
                  Op const& op, int steps, Plan const& p,
                  LoopHooks const& hooks) {
    native_cuda::device_tiling::run<T, MemorySpace, Op,
                                    native_cuda::device_tiling::Exchange<T>,
                                    native_cuda::device_tiling_depths<Kinds>>(
        space, grid, op, steps, p, hooks);
  }
  /// Device tiling where it ran fastest of the native policies, or level
  /// with the fastest, on the suite: double radius-1 stencils and radius-2
  /// stars, float radius-1 stars; Naive for the float rest, which device
  /// tiling only matched on the suite's sustained domain. Other radii and
  /// shapes are unmeasured and stay on Naive
  /// (docs/decisions/auto-3d-rule.md). Not the model: the 3D policies lie
  /// closer together than its error.
  template <class T, class Op>
  static AutoPreference auto_preference() {
    constexpr bool dbl = sizeof(T) == 8;
    constexpr bool radius1_star = Op::shape == Shape::star && Op::radius == 1;
    constexpr bool measured =
        Op::radius == 1 || (Op::shape == Shape::star && Op::radius == 2);
    if constexpr (dbl ? measured : radius1_star) {
      return {.preferred = true,
              .model_may_veto = false,
              .what = "device tiling (DeviceTiling)",
              .why =
                  "device tiling streams every tile of the xy plane along "
                  "z together, `depth` steps deep, exchanging the tiles' "
                  "edge cells through L2; at its default depth it ran "
                  "fastest of the native policies, or level with the "
                  "fastest, for this shape, radius and value type "
                  "(docs/decisions/auto-3d-rule.md); " +
                  native_cuda::rank3_tuning_note(),
              .why_not = {}};
    } else {
      return {
          .preferred = false,
          .model_may_veto = false,
          .what = "device tiling (DeviceTiling)",
          .why = {},
          .why_not = std::string("one kernel per step: ") +
                     (dbl ? "no native plan was measured for this shape and "
                            "radius in double"
                          : "for float grids other than radius-1 stars Naive "
                            "ran level with device tiling or ahead of it") +
                     " (docs/decisions/auto-3d-rule.md); " +
                     native_cuda::rank3_tuning_note()};
    }
  }
  template <class T, class Op>
  static std::vector<TunedChoice> tuning_candidates() {
    std::vector<TunedChoice> choices;
    for (int depth = 1; depth <= auto_device_tiling_depths; ++depth) {
      choices.push_back({PolicyKind::device_tiling, depth, -1, Tile{}, 0.0});
    }
    return choices;
  }
};

/// StreamingSweep on the GPU (rank 2 and 3): one kernel per step, each
/// block streaming a tile through shared memory with asynchronous copies.
template <>
struct Mechanism<StreamingSweep, Kokkos::Cuda> {
  static constexpr bool available = true;

  template <class T, class Op, PolicyKinds Kinds>
  static void plan(Plan& p, StreamingSweep const& policy) {
    native_cuda::streaming_sweep::plan<T, Op>(p, policy.prefetch,
                                              policy.bulk_copy);
  }
  template <PolicyKinds Kinds, class T, int Rank, class MemorySpace, class Op>
  static void run(Kokkos::Cuda const& space, Grid<T, Rank, MemorySpace>& grid,
                  Op const& op, int steps, Plan const& p,
                  LoopHooks const& hooks) {
    native_cuda::streaming_sweep::run(space, grid, op, steps, p, hooks);
  }
  /// Multi-field stencils on a State, every rank and boundary: the
  /// overlapped-tile kernel of fields/ one step per launch.
  static constexpr bool runs_fields = true;
  template <class T, class Op>
  static void plan_fields(Plan& p, StreamingSweep const& policy) {
    native_cuda::fields::expect_plain_loads("StreamingSweep", policy.prefetch,
                                            policy.bulk_copy.value_or(false));
    native_cuda::fields::plan<T, Op>(p, "StreamingSweep",
                                     PolicyKind::streaming_sweep, 1);
  }
  template <class T, int Rank, class MemorySpace, class Op>
  static void run_fields(Kokkos::Cuda const& space,
                         State<T, Rank, MemorySpace>& state, Op const& op,
                         int steps, Plan const& p, LoopHooks const& hooks) {
    native_cuda::fields::run_sweep(space, state, op, steps, p, hooks);
  }
  /// Timed by Auto{.tune = true} only.
  template <class T, class Op>
  static AutoPreference auto_preference() {
    return {};
  }
  template <class T, class Op>
  static std::vector<TunedChoice> tuning_candidates() {
    std::vector<TunedChoice> choices;
    for (int prefetch = 0; prefetch <= 4; ++prefetch) {
      choices.push_back(
          {PolicyKind::streaming_sweep, 0, prefetch, Tile{}, 0.0});
    }
    return choices;
  }
};

/// RegisterResident on the GPU (rank 1): the whole domain in registers for
/// the whole call (register_resident/), for a single-field Grid (as a
/// stencil of one field) and for a multi-field State.
template <>
struct Mechanism<RegisterResident, Kokkos::Cuda> {
  static constexpr bool available = true;

  template <class T, class Op, PolicyKinds Kinds>
  static void plan(Plan& p, RegisterResident const& policy) {
    native_cuda::register_resident::plan<
        T, native_cuda::register_resident::SingleField<Op>>(p, policy);
  }
  template <PolicyKinds Kinds, class T, int Rank, class MemorySpace, class Op>
  static void run(Kokkos::Cuda const& space, Grid<T, Rank, MemorySpace>& grid,
                  Op const& op, int steps, Plan const& p,
                  LoopHooks const& hooks) {
    static_assert(Rank == 1, "RegisterResident runs rank-1 grids");
    native_cuda::register_resident::run(space, grid, op, steps, p, hooks);
  }
  static constexpr bool runs_fields = true;
  template <class T, class Op>
  static void plan_fields(Plan& p, RegisterResident const& policy) {
    native_cuda::register_resident::plan<T, Op>(p, policy);
  }
  template <class T, int Rank, class MemorySpace, class Op>
  static void run_fields(Kokkos::Cuda const& space,
                         State<T, Rank, MemorySpace>& state, Op const& op,
                         int steps, Plan const& p, LoopHooks const& hooks) {
    if constexpr (Rank == 1 && native_cuda::register_resident::compiled_v<Op>) {
      native_cuda::register_resident::run_fields(space, state, op, steps, p,
                                                 hooks);
    } else {
      STENCIL_EXPECT_SUPPORTED(
          false, "RegisterResident does not run this stencil: ",
          native_cuda::register_resident::not_compiled<Op>());
    }
  }
  /// Auto on a rank-1 grid takes it where the plan accepts the domain,
  /// and temporal blocking (next in the policy table) otherwise
  /// (docs/decisions/register-resident.md); on a multi-field State,
  /// fields/iterate.hpp does the same.
  template <class T, class Op>
  static AutoPreference auto_preference() {
    return {.preferred = true,
            .model_may_veto = false,
            .what = "register-resident blocking (RegisterResident)",
            .why =
                "the domain fits in the device's registers, where "
                "register-resident blocking ran 3x temporal blocking "
                "(docs/decisions/register-resident.md)",
            .why_not = {}};
  }
  template <class T, class Op>
  static std::vector<TunedChoice> tuning_candidates() {
    return {{PolicyKind::register_resident, 1, -1, Tile{}, 0.0}};
  }
};

}  // namespace detail
}  // namespace stencil
