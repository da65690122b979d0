// SPDX-License-Identifier: Apache-2.0
// A roofline model of the library's policies (EBISU, sections 5-6; the
// performance-limits paper, section 2): the attainable GCells/s of a plan is
// the lowest of its DRAM, on-chip memory, arithmetic and barrier ceilings,
// each scaled by the fraction of computed cells that are valid (overlapped
// tiles recompute their halos). It names the ceiling that binds, so a
// measured row can be read against it, and it is what Auto will rank plans
// by. Plain data in, plain data out: no Kokkos, no device.
#pragma once

#include <stencil/policy.hpp>
#include <stencil/traits.hpp>

#include <array>
#include <iosfwd>
#include <string>

namespace stencil::model {

/// A device as the model sees it: its throughputs, measured where a
/// datasheet figure would mislead (copy bandwidth, shared-memory bandwidth,
/// barrier latency).
struct Device {
  std::string name;
  int compute_units = 0;   ///< SMs (GPU) or cores (CPU)
  double copy_gbs = 0;     ///< DRAM copy: bytes read + written, GB/s
  double shared_tbs = 0;   ///< on-chip (shared) memory, whole device, TB/s
  double fp32_gflops = 0;  ///< FP32 peak (an FMA counts as 2), GFLOP/s
  double fp64_gflops = 0;  ///< FP64 peak, GFLOP/s
  double barrier_us = 0;   ///< one device-wide barrier, microseconds
};

/// A stencil as the model sees it.
struct Stencil {
  int rank = 0;
  int radius = 0;
  Shape shape = Shape::star;
  int flops = 0;       ///< floating-point operations per cell update
  int value_size = 0;  ///< bytes per value: 4 or 8

  /// The description of functor `Op` on values of type `T`; `Op` declares
  /// `flops` besides the stencil traits (the suite's functors do).
  template <class Op, class T>
  static constexpr Stencil of() {
    return {Op::rank, Op::radius, Op::shape, Op::flops,
            static_cast<int>(sizeof(T))};
  }
};

/// The parameters of a plan the model needs (stencil::Plan carries them).
struct Config {
  PolicyKind policy = PolicyKind::naive;
  int depth = 1;   ///< time steps per pass over the grid
  int tile_x = 0;  ///< cells a block computes across x, halo included
  int tile_y = 0;  ///< and across y (rank-3 tiles)
  /// Adjacent output rows one thread computes in the native temporal
  /// kernels (2D: 3 for stars, 4 for boxes; 3D: 4): the rows share the
  /// neighbour values they load from shared memory.
  int rows = 1;
};

/// What bounds a prediction.
enum class Limit {
  dram,             ///< DRAM bandwidth
  shared_memory,    ///< on-chip memory bandwidth
  fp,               ///< arithmetic throughput
  barrier_latency,  ///< one rim exchange or barrier per streamed plane
  halo_redundancy,  ///< recomputed halos: without them it would be >= 1.5x
};

std::string to_string(Limit limit);

struct Prediction {
  double gcells = 0;  ///< attainable GCells/s: the lowest ceiling below
  Limit limit = Limit::dram;
  double dram_gcells = 0;
  double shared_gcells = 0;  ///< infinity where nothing goes through it
  double fp_gcells = 0;
  double barrier_gcells = 0;   ///< infinity without device-wide barriers
  double valid_fraction = 1;   ///< valid cells / computed cells
  double shared_accesses = 0;  ///< per cell and level, loads and the store
};

/// Predicts `config` for `stencil` on a grid of `extents` (interior cells,
/// slowest dimension first, `stencil.rank` of them) on `device`. Throws
/// stencil::error, saying what is wrong and what is valid, for a stencil,
/// configuration, domain or device it cannot describe.
Prediction predict(Stencil const& stencil, Config const& config,
                   std::array<int, 3> const& extents, Device const& device);

std::ostream& operator<<(std::ostream& out, Prediction const& p);

}  // namespace stencil::model
