// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/backend.hpp>
#include <stencil/detail/plan_data.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/validate.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>
#include <stencil/policy.hpp>
#include <stencil/traits.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <iomanip>
#include <sstream>
#include <string>

namespace stencil {

namespace detail {

template <class Op, class T, int Rank, class MemorySpace>
Plan describe(std::string space_name, Grid<T, Rank, MemorySpace> const& grid) {
  Plan p;
  p.execution_space = std::move(space_name);
  p.rank = Rank;
  p.radius = Op::radius;
  p.shape = Op::shape;
  for (int d = 0; d < Rank; ++d) p.extents[3 - Rank + d] = grid.extent(d);
  p.halo = grid.halo();
  p.boundary = grid.boundary();
  p.value_size = static_cast<int>(sizeof(T));
  return p;
}

/// The native policies plan(..., Auto{}) may choose for a rank-`Rank` grid,
/// untimed (choose_automatically() below) or tuned (tuning.hpp): temporal
/// blocking in 1D and 2D; in 3D the single-step sweep, SM tiling at depths
/// 1 to auto_sm_tiling_depths and device tiling at depths 1 to
/// auto_device_tiling_depths. iterate() with Auto compiles the kernels of
/// these only: the 3D temporal kernels are dozens per functor and value type
/// (one per depth and load path), too many to compile into every call.
template <int Rank>
inline constexpr PolicyKinds auto_native_kinds =
    Rank <= 2 ? kind_bit(PolicyKind::temporal_blocking)
              : kind_bit(PolicyKind::streaming_sweep) |
                    kind_bit(PolicyKind::temporal_blocking) |
                    kind_bit(PolicyKind::device_tiling) | auto_depths_only;

/// Auto's untimed native choice for a rank-3 grid, from the stencil's traits.
enum class Auto3D { naive, device_tiling };

/// Measured on an H100 at 2560x288x384 (the suite's sustained domain) and
/// 2560x352x384, every native policy at its plan's default depth against
/// Naive, since device tiling exchanges only its tiles' edge cells
/// (perf_tests/results/nvidia-h100-auto-3d-device-tiling.md):
/// - double, radius-1 stars and boxes and radius-2 stars: device tiling is
///   the fastest row on both domains, or level with the fastest (poisson on
///   the sustained domain, 146.4 GCells/s against SM tiling's 146.6).
///   j3d7pt 236 and 273 against SM tiling's 225 and 231; j3d13pt 160 and
///   185 against the single-step sweep's 149 and 150; the boxes up to 16%
///   over SM tiling and 7-37% over Naive. On an H200
///   (nvidia-h200-auto-3d-device-tiling.md) device tiling leads every
///   double row of the larger domain too (1-20%), but on the sustained
///   one, whose 108 tiles leave a sixth of the resident blocks idle, SM
///   tiling is 1-4% ahead on the boxes and the sweep, DRAM-bound, 22% ahead
///   on j3d13pt: the rule follows the H100, whose figures the issue sets;
/// - float, radius-1 stars (j3d7pt): device tiling, 417 and 503 against
///   the sweep's 311 and 304 and Naive's 289 and 287;
/// - float, other stencils: Naive. Device tiling leads by 19-34% on the
///   larger domain but runs level with Naive on the sustained one
///   (j3d13pt 278 against 279, j3d27pt 254 against 258, poisson 292
///   against 277, j3d17pt 310 against 279), and an H200's 40% more
///   bandwidth puts Naive ahead (poisson 329 against 281 there,
///   nvidia-h100-edges-first.md).
/// Other radii and shapes are unmeasured and stay on Naive; Auto{.tune =
/// true} times every native policy.
template <class T, class Op>
constexpr Auto3D auto_3d_rule() {
  constexpr bool measured =
      Op::radius == 1 || (Op::shape == Shape::star && Op::radius == 2);
  if constexpr (sizeof(T) == 8) {
    return measured ? Auto3D::device_tiling : Auto3D::naive;
  } else {
    return Op::shape == Shape::star && Op::radius == 1 ? Auto3D::device_tiling
                                                       : Auto3D::naive;
  }
}

/// Scratch bytes one team of the portable SpatialBlocking sweep needs.
inline std::size_t blocked_scratch_bytes(int rank, int radius, Tile tile,
                                         int value_size) {
  std::size_t const halo_x = static_cast<std::size_t>(tile.x + 2 * radius);
  std::size_t const halo_y = static_cast<std::size_t>(tile.y + 2 * radius);
  std::size_t cells = halo_x;
  if (rank >= 2) cells *= halo_y;
  if (rank == 3) cells *= static_cast<std::size_t>(2 * radius + 1);
  return cells * static_cast<std::size_t>(value_size);
}

/// Adds stencil::model's prediction for plan `p` of functor `Op` on `T`
/// (or the reason there is none). The model is advisory: a device it
/// cannot calibrate or a plan it cannot describe leaves a note, never an
/// error.
template <class ExecSpace, class T, class Op>
void add_prediction(Plan& p) {
  if constexpr (!native_available_v<ExecSpace>) {
    p.model_note =
        "no prediction: the model's device figures come from the native "
        "CUDA backend's calibration, which this space does not have";
  } else if constexpr (!requires { Op::flops; }) {
    p.model_note =
        "no prediction: the functor declares no `static constexpr int "
        "flops` (floating-point operations per cell update)";
  } else {
    Native<ExecSpace>::predict(p, model::Stencil::of<Op, T>());
  }
}

inline std::string gcells_text(Plan const& p) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(p.prediction->gcells < 10 ? 2 : 0)
      << p.prediction->gcells << " GCells/s (" << to_string(p.prediction->limit)
      << ")";
  return out.str();
}

/// Auto: fills `p`, described but without a policy, with the plan the
/// library runs by default, and says why in p.reason.
///
/// Rank 1 and 2 on the native backend: temporal blocking at its plan's
/// default depth where its plan accepts the grid (fixed boundaries, a
/// depth that fits), unless the model predicts Naive
/// faster (it has not for any suite stencil: on an H200 the 1D suite ran
/// 2.5-3.7x and the 2D suite 1.5-1.9x faster than Naive). The depth is the
/// plan's measured default, not the model's: it predicts the 2D suite's
/// default rows within 25% (perf_tests/results/nvidia-h200-model.md), but
/// depths lie closer together than that. The default follows the shape,
/// radius, value type and the functor's `divisions` trait: j2d5pt's divided
/// and prescaled forms share every other trait, yet in double the divided
/// form runs fastest at depth 8 (11-13% ahead of depth 12) and the
/// prescaled form at depth 12 (9% ahead of depth 8) (H200,
/// perf_tests/results/nvidia-h200-depth-j2d5pt.md); what no trait says,
/// Auto{.tune = true} finds by timing the depths.
///
/// Rank 3 on the native backend: auto_3d_rule(), a rule on the value type,
/// shape and radius measured on the suite. Not the model: its 3D terms put
/// 28 of 30 default native rows within 25% on an H100
/// (perf_tests/results/nvidia-h100-model-3d.md), but the 3D policies lie
/// within 0-20% of each other, closer than that.
template <class ExecSpace, class T, class Op>
void choose_automatically(Plan& p) {
  Plan naive = p;
  naive.policy = PolicyKind::naive;
  naive.chosen_by_auto = true;
  add_prediction<ExecSpace, T, Op>(naive);
  // The native plan `make_plan` fills, chosen for `why` (the model's
  // predictions appended), unless its planner refuses the grid or, where
  // `model_may_veto`, the model predicts Naive faster: then Naive, saying so.
  [[maybe_unused]] auto const choose_native = [&](auto const& make_plan,
                                                  std::string const& what,
                                                  std::string const& why,
                                                  bool model_may_veto) {
    Plan native = p;
    try {
      make_plan(native);
    } catch (stencil::error const& e) {
      naive.reason =
          "one kernel per step; " + what + " cannot run this grid: " + e.what();
      p = std::move(naive);
      return;
    }
    add_prediction<ExecSpace, T, Op>(native);
    bool const both = native.prediction && naive.prediction;
    if (model_may_veto && both &&
        native.prediction->gcells < naive.prediction->gcells) {
      naive.reason = "the model predicts Naive at " + gcells_text(naive) +
                     ", " + what + " at " + gcells_text(native);
      p = std::move(naive);
      return;
    }
    native.chosen_by_auto = true;
    native.reason = why + (both ? "the model predicts " + gcells_text(native) +
                                      " against Naive's " + gcells_text(naive)
                                : "no model prediction to compare (" +
                                      native.model_note + ")");
    p = std::move(native);
  };
  if constexpr (!native_available_v<ExecSpace>) {
    naive.reason =
        "one kernel per step moves the fewest bytes without temporal "
        "blocking, and measured fastest among this space's policies for "
        "this rank and boundary (SpatialBlocking's tile reloads cost more "
        "than the caches it replaces)";
    p = std::move(naive);
  } else {
    // Temporal blocking at its plan's default depth.
    [[maybe_unused]] auto const plan_temporal = [](Plan& q) {
      Native<ExecSpace>::template plan_temporal_blocking<
          T, Op, auto_native_kinds<Op::rank>>(q, TemporalBlocking{});
    };
    if constexpr (Op::rank <= 2) {
      choose_native(
          plan_temporal, "native temporal blocking",
          "native temporal blocking keeps a strip on chip for `depth` "
          "steps, so DRAM traffic drops by the depth (measured on an "
          "H200: 2.5-3.7x Naive in 1D, 1.5-1.9x in 2D); depth: the "
          "plan's measured default for the stencil's shape, radius, value "
          "type and divisions, capped by shared memory (Auto{.tune = true} "
          "times the depths); ",
          true);
    } else {
      constexpr Auto3D rule = auto_3d_rule<T, Op>();
      std::string const tuned =
          "; Auto{.tune = true} times Naive against the native sweep, SM "
          "tiling at depths 1-" +
          std::to_string(auto_sm_tiling_depths) +
          " and device tiling at depths 1-" +
          std::to_string(auto_device_tiling_depths);
      if constexpr (rule == Auto3D::device_tiling) {
        choose_native(
            [](Plan& q) {
              Native<ExecSpace>::template plan_device_tiling<
                  T, Op, auto_native_kinds<3>>(q, DeviceTiling{});
            },
            "device tiling (DeviceTiling)",
            "device tiling streams every 32x32 tile of the xy plane along z "
            "together, `depth` steps deep, exchanging the tiles' edge cells "
            "through L2; at its default depth it ran fastest of the native "
            "policies, or level with the fastest, on an H100 for the double "
            "suite (j3d7pt 5-18% over SM "
            "tiling, j3d13pt 7-23% over the single-step sweep, the boxes "
            "7-37% over Naive) and for float j3d7pt (34-66% over the sweep)" +
                tuned + "; ",
            false);
      } else {
        naive.reason =
            std::string("one kernel per step: ") +
            (sizeof(T) != 8
                 ? "for float grids other than radius-1 stars Naive ran "
                   "level with device tiling on an H100's suite domain "
                   "(perf_tests/results/nvidia-h100-auto-3d-device-tiling.md) "
                   "and ahead of it on an H200 (poisson 329 against 281 "
                   "GCells/s), whose DRAM bandwidth favours Naive"
                 : "no native plan was measured for this shape and radius "
                   "in double "
                   "(perf_tests/results/nvidia-h200-auto-3d-rule.md)") +
            tuned;
        p = std::move(naive);
      }
    }
  }
}

template <class ExecSpace>
void resolve_spatial_blocking(Plan& p, Tile requested) {
  int const rank = p.rank;
  STENCIL_EXPECT(requested.x > 0 && (rank < 2 || requested.y > 0) &&
                     (rank < 3 || requested.z > 0),
                 "SpatialBlocking: tile {x=", requested.x, ", y=", requested.y,
                 ", z=", requested.z,
                 "} has a zero or negative extent in a "
                 "dimension a rank-",
                 rank,
                 " grid uses; every used tile "
                 "extent must be at least 1 cell");
  // A tile larger than the domain only wastes scratch: clip it.
  Tile t{std::min(requested.x, p.extents[2]), 1, 1};
  if (rank >= 2) t.y = std::min(requested.y, p.extents[1]);
  if (rank == 3) t.z = std::min(requested.z, p.extents[0]);
  std::size_t const bytes =
      blocked_scratch_bytes(rank, p.radius, t, p.value_size);
  std::size_t const limit = static_cast<std::size_t>(
      Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0));
  STENCIL_EXPECT(bytes <= limit, "SpatialBlocking: tile {x=", t.x, ", y=", t.y,
                 "} with radius ", p.radius, " needs ", bytes,
                 " bytes of scratch per team on ", p.execution_space,
                 ", which allows ", limit, "; use a smaller tile");
  p.policy = PolicyKind::spatial_blocking;
  p.tile = t;
  p.scratch_bytes = bytes;
  // Host spaces run a team per thread; device spaces cover the tile's cells
  // with up to 256 threads (whole warps) that stride over them.
  if constexpr (is_host_space_v<ExecSpace>) {
    p.team_size = 1;
  } else {
    int const cells = t.x * (rank >= 2 ? t.y : 1);
    p.team_size = std::min(256, (cells + 31) / 32 * 32);
  }
}

}  // namespace detail

}  // namespace stencil
