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
/// blocking in 1D and 2D, the single-step sweep in 3D. iterate() with Auto
/// compiles the kernels of these only: the 3D temporal kernels are dozens
/// per functor and value type (one per depth and load path), too many to
/// compile into every call.
template <int Rank>
inline constexpr PolicyKinds auto_native_kinds =
    Rank <= 2 ? kind_bit(PolicyKind::temporal_blocking)
              : kind_bit(PolicyKind::streaming_sweep);

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
/// depths lie closer together than that. No rule on the stencil's traits
/// can rank them either: j2d5pt's divided and prescaled forms share every
/// trait, yet in double the divided form runs fastest at depth 8 (13% ahead of
/// depth 12) and the prescaled form at depth 12 (9% ahead of depth 8) (H200,
/// perf_tests/results/nvidia-h200-depth-j2d5pt.md); the reason points at
/// Auto{.tune = true}, which times the depths. Rank 3
/// stays on Naive: the model misses 3D rows by up to 2x either way, too
/// far to rank the 3D native policies, which beat Naive on some suite
/// stencils and lose on others. On an H200 Naive is the fastest 3D row, or
/// within 3% of it, for 8 of the 10 suite rows; the single-step sweep beats
/// it by 17% on j3d13pt double and SM tiling at depth 2 by 15% on poisson
/// double (perf_tests/results/nvidia-h200-depths-3d.md).
template <class ExecSpace, class T, class Op>
void choose_automatically(Plan& p) {
  p.chosen_by_auto = true;
  Plan naive = p;
  naive.policy = PolicyKind::naive;
  add_prediction<ExecSpace, T, Op>(naive);
  if constexpr (native_available_v<ExecSpace> &&
                (auto_native_kinds<Op::rank> &
                 kind_bit(PolicyKind::temporal_blocking)) != 0) {
    Plan native = p;
    std::string refused;
    try {
      Native<ExecSpace>::template plan_temporal_blocking<T, Op>(
          native, TemporalBlocking{});
    } catch (stencil::error const& e) {
      refused = e.what();
    }
    if (refused.empty()) {
      add_prediction<ExecSpace, T, Op>(native);
      bool const both = native.prediction && naive.prediction;
      if (!both || native.prediction->gcells >= naive.prediction->gcells) {
        native.chosen_by_auto = true;
        native.reason =
            "native temporal blocking keeps a strip on chip for `depth` "
            "steps, so DRAM traffic drops by the depth (measured on an "
            "H200: 2.5-3.7x Naive in 1D, 1.5-1.9x in 2D); depth: the "
            "plan's measured default, capped by shared memory (the best "
            "depth also depends on what the traits do not say, such as a "
            "division: Auto{.tune = true} times the depths); ";
        native.reason +=
            both ? "the model predicts " + gcells_text(native) +
                       " against Naive's " + gcells_text(naive)
                 : "no model prediction to compare (" + native.model_note + ")";
        p = std::move(native);
        return;
      }
      naive.reason = "the model predicts Naive at " + gcells_text(naive) +
                     ", native temporal blocking at " + gcells_text(native);
    } else {
      naive.reason =
          "one kernel per step; native temporal blocking cannot run this "
          "grid: " +
          refused;
    }
    naive.chosen_by_auto = true;
    p = std::move(naive);
    return;
  }
  naive.chosen_by_auto = true;
  naive.reason =
      "one kernel per step moves the fewest bytes without temporal "
      "blocking, and measured fastest among this space's policies for this "
      "rank and boundary (SpatialBlocking's tile reloads cost more than the "
      "caches it replaces)";
  if (native_available_v<ExecSpace> && p.rank == 3) {
    naive.reason +=
        "; the native 3D policies (DeviceTiling, TemporalBlocking's SM "
        "tiling) beat it on some suite stencils and lose on others, and the "
        "model cannot rank them yet: ask for one explicitly, or time the "
        "single-step sweep against Naive with Auto{.tune = true}";
  }
  p = std::move(naive);
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
