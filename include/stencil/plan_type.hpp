// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/backend.hpp>
#include <stencil/boundary.hpp>
#include <stencil/grid.hpp>
#include <stencil/model.hpp>
#include <stencil/policy.hpp>
#include <stencil/traits.hpp>

#include <array>
#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>

namespace stencil {

/// What `iterate` will run: the backend and policy, with every parameter
/// resolved. Made by `stencil::plan`, printable, and reusable for any grid of
/// the same extents, value type and boundary kinds on the same execution
/// space.
struct Plan {
  std::string execution_space;          ///< Kokkos name of the execution space
  Backend backend = Backend::portable;  ///< the backend that runs the plan
  Backend space_backend = Backend::portable;  ///< backend_for<ExecSpace>
  PolicyKind policy = PolicyKind::naive;
  bool chosen_by_auto = false;
  std::string reason;  ///< why Auto chose this, or empty
  /// Auto{.tune = true}: the plans timed and their GCells/s, or the cache
  /// the choice was read from; empty otherwise.
  std::string tuning;

  int rank = 0;
  int radius = 0;
  Shape shape = Shape::star;
  std::array<int, 3> extents{1, 1, 1};  ///< (z, y, x); unused dims are 1
  int halo = 0;
  /// The boundary kind of every side, (z, y, x) like `extents`, low side
  /// first; unused dims are fixed. detail::sides_text says it in words.
  /// A dirichlet side's function is the grid's, not the plan's: a plan runs
  /// any grid whose sides have these kinds.
  detail::BoundarySides sides{};
  int value_size = 0;  ///< sizeof(T)
  /// A multi-field stencil on a stencil::State: its fields, each with its
  /// radius, levels and whether it is written; empty for a single grid.
  std::string fields;

  /// SpatialBlocking: cells per team (1 where unused). TemporalBlocking:
  /// x = valid output columns per block (the block computes
  /// x + 2*depth*radius), y = output rows per streaming partition.
  /// DeviceTiling: the xy tile of one block, z = the planes it streams.
  Tile tile{1, 1, 1};
  /// Time steps per kernel launch. RegisterResident: 1, since a launch
  /// runs a whole call's steps (its exchanges every native_cuda.grid_halo
  /// steps).
  int depth = 1;
  int team_size = 0;              ///< threads per team or block, 0 where none
  std::size_t scratch_bytes = 0;  ///< scratch (shared) memory per team

  // Native kernels only (0 otherwise): the compiled kernel's resources and
  // the launch's shape.
  int registers = 0;           ///< registers per thread
  int local_memory_bytes = 0;  ///< per thread; non-zero means spills
  int blocks = 0;              ///< blocks per launch
  int blocks_per_sm = 0;       ///< resident blocks per multiprocessor
  /// Native kernels: loads in flight as asynchronous copies into shared
  /// memory (lines or planes ahead of the one computed); 0 = plain loads.
  int prefetch = 0;
  /// What the native CUDA mechanisms decided beyond the fields above: the
  /// shape of their kernels and launches. Their runs read it; the plan
  /// prints it. Another backend's details would sit beside it.
  struct NativeCuda {
    /// Temporal kernels (rank 2 and 3): output rows one thread computes per
    /// level and iteration, and adjacent columns it owns (rank 2: 1, or a
    /// pair that shares its neighbours' loads).
    int rows_per_thread = 0;
    int columns_per_thread = 0;
    /// DeviceTiling: launches per `depth` steps (regions of the xy plane run
    /// one after another) and how the blocks exchange their tiles' rims.
    int regions = 0;
    /// DeviceTiling: z segments streamed side by side, each a device tile of
    /// its own (tile.z planes each), so that an SM holds a block of each.
    int z_segments = 0;
    std::string exchange;
    /// DeviceTiling: the kernel sums a linear double box plane by plane,
    /// reading each streamed plane's taps once per level and carrying 2r
    /// unfinished sums per cell in registers. TemporalBlocking on rank 2: the
    /// same row by row, on pairs of columns.
    bool plane_sums = false;
    /// Rank-2 TemporalBlocking: each warp is a tile of its own, held in
    /// registers, its lanes exchanging neighbours by warp shuffles (no
    /// shared memory): Tiles2D::warp_registers, or automatic where measured
    /// faster. `rows_per_thread` is 1 and `columns_per_thread` a lane's.
    bool warp_tiles = false;
    /// DeviceTiling: every tile lies inside the grid in x and y, and the
    /// launches run the kernel for that (no per-cell boundary selects).
    bool inside_kernel = false;
    /// Multi-field kernels: the tile a block loads (the valid `tile` and a
    /// rim of radius x depth cells on each side).
    Tile loaded_tile{1, 1, 1};
    /// StreamingSweep: the prefetch moves whole lines with cp.async.bulk.
    bool bulk_copy = false;
    /// Rank-3 TemporalBlocking and DeviceTiling with prefetch 0, double: each
    /// input plane is copied with cp.async straight into its ring slot in the
    /// iteration that stores it, not loaded into registers an iteration ahead.
    bool input_to_ring = false;
    /// DeviceTiling: bytes of the exchange buffer its launches keep in L2 as
    /// persisting lines (DeviceTiling::l2_window); 0 for none.
    std::size_t l2_window_bytes = 0;
    /// RegisterResident: the cells each thread keeps in registers, and the
    /// steps between refreshes of the overlap of adjacent warps (through
    /// shared memory) and of adjacent blocks (through L2).
    int cells_per_thread = 0;
    int block_halo = 0;
    int grid_halo = 0;
  };
  NativeCuda native_cuda;
  std::string device;  ///< the GPU the plan was made for

  /// stencil::model's prediction for this plan, where it makes one: a
  /// native CUDA build (the model's device figures come from its
  /// calibration) and a functor that declares `flops`. Empty otherwise,
  /// and `model_note` says why.
  std::optional<model::Prediction> prediction;
  /// The device figures the prediction used and where they came from, or
  /// why there is no prediction.
  std::string model_note;
};

std::ostream& operator<<(std::ostream& out, Plan const& plan);
std::string to_string(Backend backend);
std::string to_string(PolicyKind policy);
std::string to_string(Boundary boundary);
std::string to_string(Shape shape);

}  // namespace stencil
