// SPDX-License-Identifier: Apache-2.0
// A roofline model of the library's policies (EBISU, sections 5-6; the
// performance-limits paper, section 2): the attainable GCells/s of a plan is
// the lowest of its DRAM, on-chip memory, arithmetic, instruction-issue and
// barrier ceilings, each scaled by the fraction of computed cells that are
// valid (overlapped tiles recompute their halos). The native temporal
// kernels run at low occupancy, so for them times add up instead of
// overlapping: in 2D a cell's shared-memory and FMA times; in 3D, where one
// to three blocks per SM leave most latency unhidden, the cell's
// instructions at the fraction of the issue rate the kernel family reaches,
// plus the pass's DRAM time (SM tiling) or the rim exchange per plane
// (DeviceTiling). It names the ceiling that binds, so a measured row can be
// read against it. Plain data in, plain data out: no Kokkos, no device.
#pragma once

#include <stencil/config.hpp>
#include <stencil/policy.hpp>
#include <stencil/traits.hpp>

#include <array>
#include <filesystem>
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
  /// Thread instructions the device issues per second, G/s (a GPU: SMs x
  /// schedulers x 32 lanes x clock); 0 = unknown, the model then has no
  /// issue ceiling.
  double issue_gips = 0;
  /// One round of DeviceTiling's rim exchange (publish the tile's rim, wait
  /// for the four neighbours'), microseconds; 0 = unknown, the model then
  /// charges a device-wide barrier per plane.
  double exchange_us = 0;
  /// FP32 and FP64 FMA rates a whole-GPU FMA loop reaches (an FMA counts
  /// as 2), GFLOP/s; 0 = not measured. Below fp32/fp64_gflops, which take
  /// the boost clock, by what the clock drops under that load: the peak a
  /// compute-bound kernel is held to (paper 004's Pi_peak).
  double fp32_measured_gflops = 0;
  double fp64_measured_gflops = 0;
  /// L2 read bandwidth (reads that hit in L2, past L1), GB/s; 0 = not
  /// measured.
  double l2_gbs = 0;
  /// One round of synchronising a block with its two neighbours through
  /// flags in L2 (common/neighbour_flags.hpp), microseconds: paper 004's
  /// Lambda_sync; 0 = not measured.
  double neighbour_flag_us = 0;
  /// Identifies the physical device (a GPU's UUID); names the cache file.
  std::string key;
  /// Where the figures come from, e.g. "calibrated 2026-11-23T15:40:02Z".
  std::string source;
};

/// The directory calibrations are cached in: $STENCIL_CACHE_DIR if set,
/// else $XDG_CACHE_HOME/stencil, else $HOME/.cache/stencil. Deleting a file
/// there (or the directory) makes the next run calibrate again. Throws
/// stencil::error when none of the three variables is set.
std::filesystem::path cache_directory();

/// Writes `device` as `key = value` lines to `file`, replacing it
/// atomically (written beside it, then renamed, so concurrent runs on one
/// node never read half a file); creates the directory. Throws
/// stencil::error naming the file when it cannot.
void write_device(Device const& device, std::filesystem::path const& file);

/// Reads a file written by write_device. Throws stencil::error naming the
/// file, and the line where there is one, for a missing or unreadable file,
/// a malformed line, an unknown format version or a missing figure.
Device read_device(std::filesystem::path const& file);

#if STENCIL_ENABLE_NATIVE_CUDA
/// The GPU Kokkos::Cuda runs on as the model sees it: read from its file in
/// cache_directory() (named by the GPU's UUID), or, where there is none or
/// it is unreadable or from another library version, calibrated now (under
/// a second of small kernels: a copy, reads from L2 and from shared memory,
/// FMA loops, a device-wide barrier, DeviceTiling's exchange and a round of
/// neighbour flags) and cached. The first call in a
/// process does this; later ones return the same object. Device::source
/// says which happened, and why a cache could not be written (the figures
/// then serve this process only). Needs Kokkos initialised.
Device const& cuda_device();

/// Calibrates the GPU now, whatever the cache holds, and writes the cache;
/// later cuda_device() calls in this process return the new figures.
Device const& recalibrate_cuda_device();

/// The cache file of the GPU Kokkos::Cuda runs on.
std::filesystem::path cuda_device_cache_file();
#endif

std::ostream& operator<<(std::ostream& out, Device const& device);

/// A stencil as the model sees it.
struct Stencil {
  int rank = 0;
  int radius = 0;
  Shape shape = Shape::star;
  int flops = 0;       ///< floating-point operations per cell update
  int value_size = 0;  ///< bytes per value: 4 or 8
  /// Points the update reads; 0 = every point of the shape. A box that
  /// reads only part of its cube (j3d17pt, poisson) says so here.
  int taps = 0;
  /// Divisions per update (the functor's optional `divisions` trait,
  /// stencil/traits.hpp): each is a chain of instructions after the sum.
  int divisions = 0;

  /// The description of functor `Op` on values of type `T`; `Op` declares
  /// `flops` besides the stencil traits (the suite's functors do), `taps`
  /// where it reads fewer points than its shape holds, and `divisions`
  /// where its update divides.
  template <class Op, class T>
  static constexpr Stencil of() {
    int taps = 0;
    if constexpr (requires { Op::taps; }) taps = Op::taps;
    return {Op::rank,
            Op::radius,
            Op::shape,
            Op::flops,
            static_cast<int>(sizeof(T)),
            taps,
            detail::divisions_of<Op>()};
  }
};

/// The parameters of a plan the model needs (stencil::Plan carries them).
struct Config {
  PolicyKind policy = PolicyKind::naive;
  int depth = 1;   ///< time steps per pass over the grid
  int tile_x = 0;  ///< cells a block computes across x, halo included
  int tile_y = 0;  ///< and across y (rank-3 tiles)
  /// Adjacent output rows one thread computes in the native temporal
  /// kernels (2D: 3 for stars, 4 for boxes, 2 for column pairs; 3D: 4),
  /// Plan::rows_per_thread: the rows share the
  /// neighbour values they load from shared memory.
  int rows = 1;
  /// Adjacent columns one thread owns in the native 2D temporal kernel: a
  /// pair loads the neighbouring columns once for both its cells.
  int columns = 1;
  /// 2D TemporalBlocking in warp tiles (Plan::warp_tiles): `tile_x` is a
  /// warp's columns, and the neighbours a lane does not hold come by warp
  /// shuffles instead of shared memory.
  bool warp_tiles = false;
  /// Blocks resident on one SM (Plan::blocks_per_sm): the native 3D tiles
  /// run one to three blocks of eight warps, and more warps hide more of
  /// each cell's latency.
  int blocks_per_sm = 1;
  /// Prefetch stages (Plan::prefetch). The rank-3 StreamingSweep with none
  /// has no shared tile and loads its taps directly, a kernel of its own.
  int prefetch = 3;
};

/// What bounds a prediction.
enum class Limit {
  dram,               ///< DRAM bandwidth
  shared_memory,      ///< on-chip memory bandwidth
  warp_shuffles,      ///< warp shuffles, through shared memory's crossbar
  fp,                 ///< arithmetic throughput
  barrier_latency,    ///< one rim exchange or barrier per streamed plane
  instruction_issue,  ///< the instructions per cell, at the device's issue rate
  halo_redundancy,    ///< recomputed halos: without them it would be >= 1.5x
  /// the instructions per cell at the fraction of the issue rate that the
  /// few warps of the native 3D kernels reach (their latencies unhidden)
  latency,
};

std::string to_string(Limit limit);

struct Prediction {
  double gcells = 0;  ///< attainable GCells/s: the lowest ceiling below
  Limit limit = Limit::dram;
  double dram_gcells = 0;
  double shared_gcells = 0;  ///< infinity where nothing goes through it
  double fp_gcells = 0;
  double barrier_gcells = 0;  ///< infinity without device-wide barriers
  /// Issue-bound rate: infinity for the portable policies and where the
  /// device's issue rate is unknown. For the native 3D kernels, at the
  /// fraction of the issue rate their warps reach (Limit::latency).
  double issue_gcells = 0;
  /// Times that do not overlap, added: the native temporal kernels run one
  /// to three blocks per SM, too few warps to keep two pipes busy at once.
  /// Rank 2: a cell's shared-memory and FMA times. Rank 3: the latency-bound
  /// issue time (issue_gcells) plus, for SM tiling, each pass's DRAM time and,
  /// for DeviceTiling, its rim exchange per plane. Infinity for the other
  /// policies.
  double serial_gcells = 0;
  double valid_fraction = 1;   ///< valid cells / computed cells
  double shared_accesses = 0;  ///< per cell and level, loads and the store
  double instructions = 0;     ///< issued per cell and level (0: not modelled)
};

/// Predicts `config` for `stencil` on a grid of `extents` (interior cells,
/// slowest dimension first, `stencil.rank` of them) on `device`. Throws
/// stencil::error, saying what is wrong and what is valid, for a stencil,
/// configuration, domain or device it cannot describe.
Prediction predict(Stencil const& stencil, Config const& config,
                   std::array<int, 3> const& extents, Device const& device);

std::ostream& operator<<(std::ostream& out, Prediction const& p);

/// A rank-1 domain held in registers for a whole run (paper 004's RDDhalo):
/// `blocks` blocks, one per SM, each holding its share of `cells` plus a
/// halo of radius x steps_per_sync cells on either side that it recomputes,
/// so that it synchronises with its neighbours once per `steps_per_sync`
/// steps; `levels` time levels per cell (2 for a leapfrog) and
/// `cells_per_thread` contiguous cells per thread, whose edges cross to the
/// neighbouring threads through shared memory every step.
struct ResidentDomain {
  long long cells = 0;
  int blocks = 0;
  int cells_per_thread = 0;
  int steps_per_sync = 1;
  int levels = 1;
};

/// What bounds a register-resident run (the terms of paper 004's eq. 7).
enum class ResidentLimit { fp_peak, l2, shared_memory, synchronisation };

std::string to_string(ResidentLimit limit);

/// Paper 004's ceiling (eq. 7) in G cell updates per second, each term
/// scaled by the valid fraction where it counts recomputed cells too.
struct ResidentPrediction {
  double gcells = 0;  ///< the lowest of the four below
  ResidentLimit limit = ResidentLimit::fp_peak;
  double peak_gcells = 0;    ///< measured FMA rate / flops per update
  double l2_gcells = 0;      ///< the edges exchanged through L2 per sync
  double shared_gcells = 0;  ///< each thread's 2r edge values per step
  double sync_gcells = 0;    ///< the cells' updates per Lambda_sync
  double valid_fraction = 1;
};

/// Predicts a register-resident run of a rank-1 `stencil` on `device`,
/// from its measured FMA rate, L2 bandwidth and neighbour-flag latency.
/// Throws stencil::error, saying what is missing or invalid, for a device
/// without those figures or a domain it cannot describe.
ResidentPrediction predict_resident(Stencil const& stencil,
                                    ResidentDomain const& domain,
                                    Device const& device);

}  // namespace stencil::model
