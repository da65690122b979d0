// SPDX-License-Identifier: Apache-2.0
// What the benchmarks run on and the ceilings they are measured against,
// measured or read in the same run as the benchmarks (docs/performance/).
#pragma once

#include <stencil/model.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stencil_perf {

/// Bandwidth of a device copy kernel, one item type.
struct CopyBandwidth {
  double median_gbs = 0;  ///< bytes read + written per second / 1e9
  double best_gbs = 0;
  std::size_t bytes_per_array = 0;
  int samples = 0;
};

struct Ceilings {
  /// The DRAM bandwidth: a copy that moves 16 bytes per work item. On an
  /// H200 a Kokkos copy of one double or float per work item tops out at
  /// about 210 G items/s (3.3 and 1.7 TB/s), well below the 4.2 TB/s that
  /// wider items and cudaMemcpy reach: that is an item-rate limit, not DRAM.
  CopyBandwidth copy;
  /// Copies of one double / one float per work item. Not ceilings: they show
  /// the item-rate limit that a one-cell-per-work-item kernel also meets.
  CopyBandwidth copy_double;
  CopyBandwidth copy_float;
  /// Peaks from the device properties; 0 where unknown (host builds, GPUs
  /// missing from the table in machine.cpp).
  double fp64_gflops = 0;
  double fp32_gflops = 0;
  double shared_gbs = 0;  ///< shared-memory bandwidth, all SMs
  /// Microseconds per device-wide barrier (native CUDA builds; 0 where not
  /// measured), one 256-thread block per SM: CUDA's grid sync and the
  /// native backend's counter barrier (native_cuda/common/grid_barrier.hpp).
  double barrier_us_grid_sync = 0;
  double barrier_us_counter = 0;
  /// Microseconds per round of device tiling's tagged exchange (publish,
  /// wait for four neighbours; native_cuda/device_tiling/exchange.hpp).
  double exchange_us_tagged = 0;
  /// stencil::model's calibration of this GPU, run afresh (and cached) by
  /// measure_ceilings in native CUDA builds: the figures the plans'
  /// predictions use.
  std::optional<stencil::model::Device> model_device;

  double fp_gflops(std::size_t value_size) const {
    return value_size == sizeof(float) ? fp32_gflops : fp64_gflops;
  }
  /// GCells/s of a sweep that reads and writes every cell once from DRAM
  /// per kernel launch: the bound of every one-kernel-per-step policy. A
  /// solver moves `values_per_cell` values per cell and step (the wave
  /// three: u at n and n-1 read, u at n+1 written).
  double dram_gcells(std::size_t value_size, int values_per_cell = 2) const {
    return copy.median_gbs /
           (values_per_cell * static_cast<double>(value_size));
  }
};

using Facts = std::vector<std::pair<std::string, std::string>>;

/// The machine as (key, value) pairs for the JSON context, in the order they
/// are recorded, and a one-line summary for the console.
struct Machine {
  std::string device;   ///< GPU name, or the CPU model
  std::string summary;  ///< e.g. "NVIDIA H100 (132 SMs, 1980 MHz), Cuda"
  Facts facts;
};

/// Reads the device properties (GPU) or /proc/cpuinfo (host) and the Kokkos
/// configuration. Requires Kokkos to be initialised.
Machine describe_machine();

/// Measures the copy bandwidth of Kokkos::DefaultExecutionSpace (warm-up,
/// then the median of several samples) and reads the peak rates. `quick`
/// uses smaller arrays. Requires Kokkos to be initialised.
Ceilings measure_ceilings(bool quick);

/// The ceilings as context entries (the JSON's context).
Facts ceiling_facts(Ceilings const& c);

}  // namespace stencil_perf
