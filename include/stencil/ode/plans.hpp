// SPDX-License-Identifier: Apache-2.0
// The plans of stencil::ode::integrate: how a Runge-Kutta step is laid out
// in kernels.
#pragma once

#include <string>
#include <type_traits>

namespace stencil::ode {

/// One kernel per stage, the linear combinations fused into it (every
/// execution space).
struct Unfused {};

/// How the blocks of a native Fused tile wait for each other and exchange
/// stage values: as a thread-block cluster (distributed shared memory and
/// cluster barriers, compute capability 9.0 and newer, up to 16 blocks), or
/// through a buffer and a counter in global memory (paper 001's
/// multi-workgroup tiles, compute capability 7.0 and newer, up to 64
/// blocks). `automatic`: a cluster where the GPU has them and the tile's
/// blocks fit in one, else global memory.
enum class TileBarrier { automatic, cluster, global_memory };

/// Every stage of a step over tiles, each loading y_n with rims of
/// stages x radius cells and running the stages on it alone.
///
/// On the native CUDA backend (2D) a tile spans a group of thread blocks,
/// one launch a step: a cluster, or blocks that meet in global memory
/// where there are no clusters (`barrier`). `cluster_x`, `cluster_y`: the
/// tile's blocks along x and y (0: the plan's choice). `resident`: where one
/// cluster holds the whole domain, it is the one tile (no rims), and the
/// state stays in its shared memory and registers from step to step: one
/// launch runs the fixed steps up to the next hook (an adaptive step, one
/// launch a step). On by default: wherever it applied it beat the tiled
/// kernel, which pays a launch a step and its rims
/// (docs/decisions/ode-fused-plan.md). It needs clusters; elsewhere, and
/// on host spaces, it does not apply and tiles run.
///
/// On host execution spaces (1D, 2D and 3D) a tile is one thread's, in its
/// scratch: `tile_x`, `tile_y` and `tile_z` are the cells it updates along
/// each axis (0: the plan's choice, a tile whose scratch stays in a core's
/// cache). The clusters and the barrier are the native backend's, the tile
/// sizes the host's: give each only where it applies.
struct Fused {
  int cluster_x = 0;
  int cluster_y = 0;
  bool resident = true;
  TileBarrier barrier = TileBarrier::automatic;
  int tile_x = 0;
  int tile_y = 0;
  int tile_z = 0;
};

/// Fused where it runs and its rims pay, else Unfused; the Report says
/// which and why. The rims pay on the native CUDA backend where
/// auto_takes_fused says so, on host spaces where the plan's tiles compute
/// at most detail::auto_host_recomputation cells per cell they update.
struct Auto {};

/// Whether Auto takes Fused for a 2D right-hand side read `radius_x` and
/// `radius_y` cells away on values of `value_bytes`: where the two sum to
/// at most 3 (radius 1, or 2 along one axis only), and to 4 on 8-byte
/// values. Fused recomputes rims of stages x radius cells along each axis
/// per tile, and its rate barely depends on the value size, while
/// Unfused's, bound by memory traffic, halves from 4- to 8-byte values; so
/// the recomputation is paid back in double before float
/// (docs/decisions/ode-fused-plan.md).
constexpr bool auto_takes_fused(int radius_x, int radius_y, int value_bytes) {
  int const rims = radius_x + radius_y;
  return rims <= 3 || (value_bytes >= 8 && rims <= 4);
}

inline char const* to_string(Unfused) { return "Unfused"; }
inline char const* to_string(Fused) { return "Fused"; }
inline char const* to_string(Auto) { return "Auto"; }

template <class P>
concept Plan = std::is_same_v<P, Unfused> || std::is_same_v<P, Fused> ||
    std::is_same_v<P, Auto>;

namespace detail {

/// What an integrate loop needs of a plan's run: one step of `dt` from the
/// state's time, leaving y_n+1 in the state and returning the root mean
/// square scaled error (0 where nothing is estimated); reject() takes the
/// state back to y_n.
class StepRun {
 public:
  virtual ~StepRun() = default;
  virtual double step(double dt, double absolute, double relative) = 0;
  /// Fixed steps of `dt` from step `first` (step n starts at t0 + n dt),
  /// at most `most` of them (>= 1) and as many as the run takes in one go;
  /// returns how many it took, the state's time left at their end.
  virtual int fixed_steps(double t0, long long first, int most, double dt) {
    (void)t0;
    (void)first;
    (void)most;
    step(dt, 0.0, 0.0);
    return 1;
  }
  virtual void reject() = 0;
  virtual long long evaluations() const = 0;
  /// The plan as it runs, e.g. "Fused (clusters of 1x8 blocks, ...)".
  virtual std::string description() const = 0;
};

/// The native integrators of `ExecSpace`: a native backend specialises it
/// (see native_cuda/ode/fused_launch.hpp) with `refusal` (why Fused cannot
/// run a problem, empty when it can) and `make` (its run).
template <class ExecSpace>
struct NativeOde {
  static constexpr bool available = false;
};

}  // namespace detail
}  // namespace stencil::ode
