// SPDX-License-Identifier: Apache-2.0
// The native CUDA backend's single entry point, included by
// stencil/backend.hpp only when Kokkos has CUDA and the build enables
// STENCIL_ENABLE_NATIVE_CUDA. It declares the backend available for
// Kokkos::Cuda and routes the native policies to their mechanism, one folder
// each (temporal_blocking/, device_tiling/, streaming_sweep/; the prefetch
// they share in common/).
#pragma once

#include <native_cuda/common/calibration.hpp>
#include <native_cuda/device_tiling/launch.hpp>
#include <native_cuda/streaming_sweep/launch.hpp>
#include <native_cuda/temporal_blocking/launch.hpp>

#include <stencil/detail/backend_trait.hpp>
#include <stencil/detail/plan_data.hpp>
#include <stencil/grid.hpp>
#include <stencil/model.hpp>
#include <stencil/policy.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <string>

namespace stencil {

template <>
inline constexpr bool native_available_v<Kokkos::Cuda> = true;

namespace detail {

template <>
struct Native<Kokkos::Cuda> {
  /// The SM-tiling depth cap of a set of `Kinds` (the kernel clamps it to
  /// the depths compiled).
  template <class T, class Op, PolicyKinds Kinds>
  static constexpr int sm_tiling_depths =
      (Kinds & auto_depths_only) != 0
          ? auto_sm_tiling_depths
          : native_cuda::device_tiling::all_compiled_depths;

  /// The device-tiling depth cap of a set of `Kinds`.
  template <class T, class Op, PolicyKinds Kinds>
  static constexpr int device_tiling_depths =
      (Kinds & auto_depths_only) != 0
          ? auto_device_tiling_depths
          : native_cuda::device_tiling::all_compiled_depths;

  /// `Kinds`: the kernels the plan may use (auto_depths_only caps rank-3
  /// depths at Auto's).
  template <class T, class Op, PolicyKinds Kinds = native_kinds>
  static void plan_temporal_blocking(Plan& p, TemporalBlocking const& policy) {
    if constexpr (Op::rank == 3) {
      // SM tiling: the device-tiling kernel on isolated, overlapped tiles.
      native_cuda::device_tiling::plan_isolated<T, Op,
                                                sm_tiling_depths<T, Op, Kinds>>(
          p, policy.depth, policy.prefetch);
    } else {
      native_cuda::temporal_blocking::plan<T, Op>(p, policy.depth,
                                                  policy.prefetch);
    }
  }

  template <class T, class Op, PolicyKinds Kinds = native_kinds>
  static void plan_device_tiling(Plan& p, DeviceTiling const& policy) {
    native_cuda::device_tiling::plan<T, Op, device_tiling_depths<T, Op, Kinds>>(
        p, policy.depth, policy.prefetch, policy.l2_window);
  }

  template <class T, class Op>
  static void plan_streaming_sweep(Plan& p, StreamingSweep const& policy) {
    native_cuda::streaming_sweep::plan<T, Op>(p, policy.prefetch,
                                              policy.bulk_copy);
  }

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

  /// Runs plan `p`, whose policy must be one of `Kinds`: the kernels of
  /// the other native policies are not instantiated.
  template <PolicyKinds Kinds, class T, int Rank, class MemorySpace, class Op>
  static void run(Kokkos::Cuda const& space, Grid<T, Rank, MemorySpace>& grid,
                  Op const& op, int steps, Plan const& p) {
    auto const runs = [&p](PolicyKind kind) {
      return p.policy == kind && (Kinds & kind_bit(kind)) != 0;
    };
    if constexpr (Rank >= 2 &&
                  (Kinds & kind_bit(PolicyKind::streaming_sweep)) != 0) {
      if (runs(PolicyKind::streaming_sweep)) {
        native_cuda::streaming_sweep::run(space, grid, op, steps, p);
        return;
      }
    }
    if constexpr (Rank <= 2 &&
                  (Kinds & kind_bit(PolicyKind::temporal_blocking)) != 0) {
      if (runs(PolicyKind::temporal_blocking)) {
        native_cuda::temporal_blocking::run(space, grid, op, steps, p);
        return;
      }
    }
    if constexpr (Rank == 3 &&
                  (Kinds & kind_bit(PolicyKind::device_tiling)) != 0) {
      if (runs(PolicyKind::device_tiling)) {
        native_cuda::device_tiling::run<T, MemorySpace, Op,
                                        native_cuda::device_tiling::Exchange<T>,
                                        device_tiling_depths<T, Op, Kinds>>(
            space, grid, op, steps, p);
        return;
      }
    }
    if constexpr (Rank == 3 &&
                  (Kinds & kind_bit(PolicyKind::temporal_blocking)) != 0) {
      if (runs(PolicyKind::temporal_blocking)) {
        native_cuda::device_tiling::run_isolated<
            sm_tiling_depths<T, Op, Kinds>>(space, grid, op, steps, p);
        return;
      }
    }
    throw_error(
        "the native CUDA backend has no kernel for this plan's "
        "policy; make the plan with stencil::plan");
  }
};

}  // namespace detail
}  // namespace stencil

// The suite's kernels come compiled in the library.
#include <native_cuda/suite_kernels.hpp>
