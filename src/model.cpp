// SPDX-License-Identifier: Apache-2.0
#include <stencil/detail/cache_file.hpp>
#include <stencil/error.hpp>
#include <stencil/model.hpp>
#include <stencil/plan_type.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace stencil::model {

using detail::concat;
using detail::throw_error;

namespace {

constexpr double unbounded = std::numeric_limits<double>::infinity();

int points(Stencil const& s) {
  int const width = 2 * s.radius + 1;
  if (s.shape == Shape::star) return 2 * s.rank * s.radius + 1;
  int n = 1;
  for (int d = 0; d < s.rank; ++d) n *= width;
  return n;
}

// The points the update reads: what the functor declares, else its shape's.
int taps(Stencil const& s) { return s.taps > 0 ? s.taps : points(s); }

bool blocks_in_time(PolicyKind kind) {
  return kind == PolicyKind::temporal_blocking ||
         kind == PolicyKind::device_tiling;
}

// On-chip accesses per cell and level: the store of the new value and
// the loads of the taps the kernel does not hold in registers. The native
// temporal kernels keep a thread's own column in registers (2D: the taps
// with dx = 0; 3D: the z column, dx = dy = 0) and load the other taps line
// by line along y, where `rows` adjacent output rows share each line: a
// line of taps spanning `span` rows costs (span + rows - 1) / rows loads
// per output cell, and in 2D the `columns` a thread owns share it too. The
// single-step sweeps load every tap.
double shared_accesses(Stencil const& s, Config const& c) {
  switch (c.policy) {
    case PolicyKind::naive:
      // Every tap through L1, which on NVIDIA GPUs is the same on-chip
      // array as shared memory, at the same bandwidth.
      return taps(s);
    case PolicyKind::spatial_blocking:
    case PolicyKind::streaming_sweep:
      return taps(s) + 1;
    case PolicyKind::temporal_blocking:
    case PolicyKind::device_tiling:
    case PolicyKind::register_resident:  // refused by validate
      break;
  }
  int const r = s.radius;
  if (s.rank == 1) return 2 * r + 1;
  if (c.warp_tiles) {
    // Values shuffled per cell: r per side of each row read across a lane's
    // edge (a star's own row, a box's 2r + 1), for all the lane's columns;
    // nothing stored. A shuffle moves 4 bytes per lane through the crossbar
    // shared memory uses, at its bandwidth, so shuffled bytes count as
    // on-chip accesses.
    int const rows = s.shape == Shape::star ? 1 : 2 * r + 1;
    return 2.0 * r * rows / c.columns;
  }
  double loads = 0;
  // Lines along y, one per (dz, dx); 2D grids have dz = 0 only.
  int const z_reach = s.rank == 3 ? r : 0;
  for (int dz = -z_reach; dz <= z_reach; ++dz) {
    for (int dx = -r; dx <= r; ++dx) {
      int low = 1, high = -1;  // the line's dy span, empty so far
      for (int dy = -r; dy <= r; ++dy) {
        int const off_axis = (dz != 0) + (dy != 0) + (dx != 0);
        bool const tap = s.shape == Shape::box || off_axis <= 1;
        bool const in_registers = dx == 0 && (s.rank == 2 ? true : dy == 0);
        if (!tap || in_registers) continue;
        low = std::min(low, dy);
        high = std::max(high, dy);
      }
      if (high < low) continue;
      loads += static_cast<double>(high - low + c.rows) / c.rows;
    }
  }
  // A 2D thread that owns `columns` adjacent columns loads each line once
  // for all of them (counted in values, though a pair loads them as
  // 16-byte vectors, half the instructions).
  if (s.rank == 2) loads /= c.columns;
  return loads + 1;
}

// What one division in the update (Stencil::divisions) costs a cell: with
// stencil::Divisor a multiply and two FMAs, FP instructions in the FMA pipe.
constexpr int division_fp_instructions = 3;

// Instructions a native 1D or 2D kernel issues per computed cell and level
// besides its shared-memory accesses and one FMA per tap: addressing, the
// global loads and stores, the ring's index arithmetic and the boundary
// selects, and for each division in the update its instructions and what
// they keep the scheduler from issuing. Fitted by hand, one figure per
// kernel family and one per division, so each also carries the family's
// shortfall from one instruction per scheduler and clock: 2D
// TemporalBlocking 16 + 10 per division (fitted to the default rows of the
// 2D suite in both forms, float and double), 1D TemporalBlocking 30, the 2D
// sweep 70 (docs/decisions/model-fitted-figures.md). 0 for the portable
// policies: the model bounds them by DRAM and L1 only, with no issue
// ceiling.
// Warp tiles: no ring addresses or barrier, but guards and the loads of
// rows 2r iterations ahead. Fitted on the radius-1 float rows; the
// radius-2 rows run well below the model, which does not see that their
// registers leave two warps per scheduler
// (docs/decisions/temporal-blocking-2d-warp-tiles.md,
// docs/decisions/model-fitted-figures.md).
constexpr double warp_tile_overhead = 14;

double overhead_instructions(Stencil const& s, Config const& c) {
  switch (c.policy) {
    case PolicyKind::streaming_sweep:
      return 70;
    case PolicyKind::temporal_blocking:
      if (s.rank == 1) return 30;
      return (c.warp_tiles ? warp_tile_overhead : 16) + 10 * s.divisions;
    default:
      return 0;
  }
}

// The native 3D kernels, by family: the instructions a computed cell costs
// (fixed + shared accesses + per_tap x taps) and the fraction of the
// device's issue rate their warps reach at one block per SM. They run one
// to three blocks of eight warps per SM, too few to hide a cell's chain of
// shared loads and FMAs, so their schedulers issue in well under half of
// the cycles (Nsight Compute). The figures are rounded from a fit (least
// squares on the logarithm of the rate, perf_tests/scripts/fit_model_3d.py)
// to measured rows of one GPU and checked on another; the rows, the fit and
// the check are in docs/decisions/model-fitted-figures.md.
struct Rank3Family {
  double fixed_double, fixed_float;
  double per_tap;
  double issued_double, issued_float;
  /// The share of the copy bandwidth its DRAM term gets (the sweeps').
  double dram_share_double = 1, dram_share_float = 1;
};
// SM tiling: the kernel of DeviceTiling on isolated, overlapped tiles.
constexpr Rank3Family sm_tiling_3d{30, 24, 1.3, 0.40, 0.50};
constexpr Rank3Family device_tiling_3d{37, 37, 0.4, 0.265, 0.465};
// The 3D sweep through its shared tile. Its DRAM share: its rims and
// segment starts are read again from L2, whose busiest unit it loads
// further, so its memory-bound row (j3d7pt) stays well below the DRAM-bound
// ceiling (docs/decisions/model-fitted-figures.md).
constexpr Rank3Family sweep_3d{8, 0, 2.85, 0.345, 0.45, 0.76, 0.60};
// The 3D sweep without a shared tile (prefetch 0): the blocks running at
// once cover a few consecutive planes, and the second read of each plane
// comes from L2. Its issue figures are fitted by hand to the rates of the
// radius-2 star and the boxes, which fall linearly with the taps, and
// checked with fit_model_3d.py --model --check
// (docs/decisions/model-fitted-figures.md).
constexpr Rank3Family direct_sweep_3d{28.5, 8, 0.7, 0.24, 0.25, 0.92, 0.83};

// Of a tagged rim exchange's calibrated round trip, the part DeviceTiling
// waits for per streamed plane (its time per plane is this plus depth x the
// level's time; the rest hides behind the level's computation). Fitted with
// device_tiling_3d's figures; a device-wide barrier, where the exchange is
// not calibrated, is waited for whole.
constexpr double exchange_wait_per_plane = 0.48;

Rank3Family const* rank3_family(Stencil const& s, Config const& c) {
  if (s.rank != 3) return nullptr;
  switch (c.policy) {
    case PolicyKind::temporal_blocking:
      return &sm_tiling_3d;
    case PolicyKind::device_tiling:
      return &device_tiling_3d;
    case PolicyKind::streaming_sweep:
      return c.prefetch == 0 ? &direct_sweep_3d : &sweep_3d;
    default:
      return nullptr;
  }
}

// Instructions per computed cell and level, of which `accesses` are
// shared-memory accesses; 0 where the model does not count them (the
// portable policies).
double instructions(Stencil const& s, Config const& c, double accesses) {
  if (Rank3Family const* family = rank3_family(s, c)) {
    double const fixed =
        s.value_size == 8 ? family->fixed_double : family->fixed_float;
    return fixed + accesses + family->per_tap * taps(s);
  }
  double const overhead = overhead_instructions(s, c);
  // A shuffle moves 4 bytes: an 8-byte value takes two.
  double const issued = c.warp_tiles ? accesses * s.value_size / 4 : accesses;
  return overhead > 0 ? issued + taps(s) + overhead : 0;
}

// The fraction of the issue rate a native kernel reaches: 1 in 2D (its
// fitted overheads carry the shortfall), its family's in 3D. For SM tiling
// it grows with the square root of the blocks per SM (fitted exponent
// 0.50), which its depth moves between one and three; so for DeviceTiling,
// whose family was fitted at one block per SM and which runs two to four at
// depths 1-3 (z segments): the factor brought its float rows there from
// well above the model to around it (docs/decisions/model-fitted-figures.md).
// The sweep's fraction was fitted at its usual two to four.
double issued_fraction(Stencil const& s, Config const& c) {
  Rank3Family const* family = rank3_family(s, c);
  if (family == nullptr) return 1;
  double f = s.value_size == 8 ? family->issued_double : family->issued_float;
  if (c.policy == PolicyKind::temporal_blocking ||
      c.policy == PolicyKind::device_tiling) {
    f *= std::sqrt(static_cast<double>(std::max(1, c.blocks_per_sm)));
  }
  return std::min(1.0, f);
}

// Valid cells over computed cells: an overlapped tile computes `depth *
// radius` halo cells on each side that its neighbours compute too. Device
// tiles exchange their rims instead.
double valid_fraction(Stencil const& s, Config const& c) {
  if (c.policy != PolicyKind::temporal_blocking) return 1;
  int const halo = 2 * s.radius * c.depth;
  double f = static_cast<double>(c.tile_x - halo) / c.tile_x;
  if (s.rank == 3) f *= static_cast<double>(c.tile_y - halo) / c.tile_y;
  return f;
}

void check(Stencil const& s, Config const& c, std::array<int, 3> const& extents,
           Device const& d) {
  STENCIL_EXPECT(s.rank >= 1 && s.rank <= 3, "model: stencil rank is ", s.rank,
                 "; valid ranks are 1, 2 and 3");
  STENCIL_EXPECT(s.radius >= 1 && s.radius <= max_radius,
                 "model: stencil radius is ", s.radius,
                 "; the model describes radii 1 to ", max_radius);
  STENCIL_EXPECT(s.flops >= 1, "model: the stencil does ", s.flops,
                 " floating-point operations per cell; give at least 1");
  STENCIL_EXPECT(s.taps >= 0 && s.taps <= points(s),
                 "model: the stencil reads ", s.taps, " points; a ",
                 s.shape == Shape::box ? "box" : "star", " of rank ", s.rank,
                 " and radius ", s.radius, " has ", points(s), ": give 1 to ",
                 points(s), ", or 0 for all of them");
  STENCIL_EXPECT(s.divisions >= 0, "model: the stencil divides ", s.divisions,
                 " times per update; give 0 or more");
  STENCIL_EXPECT(s.value_size == 4 || s.value_size == 8,
                 "model: value size is ", s.value_size,
                 " bytes; the model knows float (4) and double (8)");
  int const width = 2 * s.radius + 1;
  for (int k = 0; k < s.rank; ++k) {
    STENCIL_EXPECT(extents[k] >= width, "model: extent ", k, " is ", extents[k],
                   " cells; a radius-", s.radius, " stencil needs at least ",
                   width, " in each of its ", s.rank, " dimensions");
  }
  STENCIL_EXPECT(c.depth >= 1, "model: depth is ", c.depth,
                 "; give 1 or more time steps per pass");
  STENCIL_EXPECT(c.rows >= 1, "model: rows per thread is ", c.rows,
                 "; give 1 or more");
  STENCIL_EXPECT(c.columns >= 1, "model: columns per thread is ", c.columns,
                 "; give 1 or more");
  STENCIL_EXPECT(c.policy != PolicyKind::register_resident,
                 "model: RegisterResident keeps the domain in registers, "
                 "where the roofline's DRAM and shared-memory terms do not "
                 "apply; model::predict_resident gives its ceiling (paper "
                 "004's eq. 7)");
  STENCIL_EXPECT(blocks_in_time(c.policy) || c.depth == 1,
                 "model: ", to_string(c.policy),
                 " takes one step per pass, not ", c.depth,
                 "; use depth 1, or TemporalBlocking or DeviceTiling");
  STENCIL_EXPECT(
      c.policy != PolicyKind::device_tiling || s.rank == 3,
      "model: DeviceTiling tiles rank-3 grids, this stencil is rank ", s.rank,
      "; use TemporalBlocking");
  STENCIL_EXPECT(c.policy != PolicyKind::streaming_sweep || s.rank >= 2,
                 "model: StreamingSweep streams rank-2 and rank-3 grids, this "
                 "stencil is rank 1; use Naive or TemporalBlocking");
  if (blocks_in_time(c.policy)) {
    int const needed = c.policy == PolicyKind::temporal_blocking
                           ? 2 * s.radius * c.depth + 1
                           : 1;
    bool const fits = c.tile_x >= needed && (s.rank < 3 || c.tile_y >= needed);
    STENCIL_EXPECT(fits, "model: ", to_string(c.policy), " tile ", c.tile_x,
                   "x", c.tile_y, " at depth ", c.depth, " with radius ",
                   s.radius, " leaves no valid cell; tile extents",
                   s.rank == 3 ? " (x and y)" : " (x)", " must be at least ",
                   needed);
  }
  STENCIL_EXPECT(d.compute_units >= 1 && d.copy_gbs > 0, "model: device '",
                 d.name, "' has ", d.compute_units, " compute units and ",
                 d.copy_gbs,
                 " GB/s copy bandwidth; both must be positive (calibrate it)");
  double const fp = s.value_size == 4 ? d.fp32_gflops : d.fp64_gflops;
  STENCIL_EXPECT(fp > 0, "model: device '", d.name, "' has no FP",
                 s.value_size * 8, " throughput; give fp", s.value_size * 8,
                 "_gflops > 0");
  STENCIL_EXPECT(c.policy == PolicyKind::naive || d.shared_tbs > 0,
                 "model: ", to_string(c.policy),
                 " works through shared memory, but device '", d.name,
                 "' has no shared-memory bandwidth; give shared_tbs > 0");
  STENCIL_EXPECT(
      c.policy != PolicyKind::device_tiling || d.barrier_us > 0 ||
          d.exchange_us > 0,
      "model: DeviceTiling waits for its neighbours' rims once per plane, "
      "but device '",
      d.name,
      "' has neither an exchange nor a barrier latency; give exchange_us > 0 "
      "or barrier_us > 0");
}

// The ceilings at a valid fraction `f`; the lowest is the prediction.
Prediction ceilings(Stencil const& s, Config const& c,
                    std::array<int, 3> const& extents, Device const& d,
                    double f) {
  Prediction p;
  p.valid_fraction = f;
  p.shared_accesses = shared_accesses(s, c);
  double const size = s.value_size;
  Rank3Family const* const family = rank3_family(s, c);
  // Per valid cell and step: the tile (valid cells and halo) is read and the
  // valid cells written once per pass of `depth` steps. SM tiling's 3D tiles
  // find most of their halos in L2, loaded by the neighbour that owns them:
  // Nsight Compute counts 2.1-2.2 values of DRAM traffic per valid cell and
  // pass at depth 3, not 1/f + 1 = 2.5.
  double const reads = family == &sm_tiling_3d ? 1.0 : 1 / f;
  p.dram_gcells = d.copy_gbs * c.depth / (size * (reads + 1));
  if (family != nullptr) {
    p.dram_gcells *= s.value_size == 8 ? family->dram_share_double
                                       : family->dram_share_float;
  }
  // Naive on a device whose on-chip bandwidth is unknown: DRAM only.
  p.shared_gcells = d.shared_tbs == 0
                        ? unbounded
                        : d.shared_tbs * 1e3 * f / (p.shared_accesses * size);
  double const fp = s.value_size == 4 ? d.fp32_gflops : d.fp64_gflops;
  // One FMA (2 FLOPs) per tap at least: the suite's published FLOP counts
  // are lower for some stencils (j2d25pt: 25 for 25 taps). They count a
  // division as one FLOP; it takes division_fp_instructions.
  p.fp_gcells = fp * f /
                (std::max(s.flops, 2 * taps(s)) +
                 2 * division_fp_instructions * s.divisions);
  // Device tiles: one block per tile of a plane, so a plane of fewer tiles
  // than the device has SMs leaves the others idle. `resident`: the cells
  // computed at once; `occupied`: the share of the device that computes.
  double resident = 0, occupied = 1;
  if (c.policy == PolicyKind::device_tiling) {
    double const slots =
        static_cast<double>(d.compute_units) * c.tile_x * c.tile_y;
    resident = std::min(static_cast<double>(extents[1]) * extents[2], slots);
    occupied = resident / slots;
  }
  p.issue_gcells = unbounded;
  p.instructions = instructions(s, c, p.shared_accesses);
  if (p.instructions > 0 && d.issue_gips > 0) {
    p.issue_gcells =
        d.issue_gips * issued_fraction(s, c) * occupied * f / p.instructions;
  }
  p.barrier_gcells = unbounded;
  if (c.policy == PolicyKind::device_tiling) {
    // Levels lag each other by whole planes (lazy streaming), so one
    // exchange round per streamed plane serves every level: each advances
    // one plane of the cells resident at once.
    double const wait_us = d.exchange_us > 0
                               ? exchange_wait_per_plane * d.exchange_us
                               : d.barrier_us;
    p.barrier_gcells = resident * c.depth / (wait_us * 1e3);
  }
  // Times that add up rather than overlap (see Prediction::serial_gcells),
  // and the limit the larger of them names.
  p.serial_gcells = unbounded;
  Limit serial_limit = Limit::dram;
  auto const in_series = [&](double a, Limit a_limit, double b, Limit b_limit) {
    p.serial_gcells = 1 / (1 / a + 1 / b);
    serial_limit = a <= b ? a_limit : b_limit;
  };
  Limit const issue_limit =
      family != nullptr ? Limit::latency : Limit::instruction_issue;
  Limit const on_chip_limit =
      c.warp_tiles ? Limit::warp_shuffles : Limit::shared_memory;
  if (family == &sm_tiling_3d) {
    in_series(p.issue_gcells, issue_limit, p.dram_gcells, Limit::dram);
  } else if (family == &device_tiling_3d) {
    in_series(p.issue_gcells, issue_limit, p.barrier_gcells,
              Limit::barrier_latency);
  } else if (blocks_in_time(c.policy)) {
    in_series(p.shared_gcells, on_chip_limit, p.fp_gcells, Limit::fp);
  }
  p.gcells = p.dram_gcells;
  p.limit = Limit::dram;
  auto const lower = [&p](double gcells, Limit limit) {
    if (gcells < p.gcells) {
      p.gcells = gcells;
      p.limit = limit;
    }
  };
  lower(p.shared_gcells, on_chip_limit);
  lower(p.fp_gcells, Limit::fp);
  lower(p.serial_gcells, serial_limit);
  lower(p.issue_gcells, issue_limit);
  lower(p.barrier_gcells, Limit::barrier_latency);
  return p;
}

}  // namespace

std::string to_string(Limit limit) {
  switch (limit) {
    case Limit::dram:
      return "DRAM bandwidth";
    case Limit::shared_memory:
      return "shared-memory bandwidth";
    case Limit::warp_shuffles:
      return "warp-shuffle bandwidth";
    case Limit::fp:
      return "FP throughput";
    case Limit::barrier_latency:
      return "barrier latency";
    case Limit::instruction_issue:
      return "instruction issue";
    case Limit::halo_redundancy:
      return "halo redundancy";
    case Limit::latency:
      return "latency (few warps per SM)";
  }
  return "unknown";
}

Prediction predict(Stencil const& stencil, Config const& config,
                   std::array<int, 3> const& extents, Device const& device) {
  check(stencil, config, extents, device);
  double const f = valid_fraction(stencil, config);
  Prediction p = ceilings(stencil, config, extents, device, f);
  if (f < 1) {
    Prediction const whole = ceilings(stencil, config, extents, device, 1);
    if (whole.gcells >= 1.5 * p.gcells) p.limit = Limit::halo_redundancy;
  }
  return p;
}

std::ostream& operator<<(std::ostream& out, Prediction const& p) {
  auto const ceiling = [&out](char const* separator, char const* name,
                              double gcells) {
    out << separator << name << ' ';
    if (gcells == unbounded) {
      out << "none";
    } else {
      out << gcells;
    }
  };
  out << "predicted " << p.gcells << " GCells/s, bound by "
      << to_string(p.limit) << " (ceilings in GCells/s:";
  ceiling(" ", "DRAM", p.dram_gcells);
  ceiling(", ", "shared", p.shared_gcells);
  ceiling(", ", "FP", p.fp_gcells);
  ceiling(", ", "shared and FP in series", p.serial_gcells);
  ceiling(", ", "issue", p.issue_gcells);
  ceiling(", ", "barrier", p.barrier_gcells);
  out << "; valid fraction " << p.valid_fraction << ", " << p.shared_accesses
      << " shared accesses";
  if (p.instructions > 0) out << " and " << p.instructions << " instructions";
  return out << " per cell and level)";
}

std::string to_string(ResidentLimit limit) {
  switch (limit) {
    case ResidentLimit::fp_peak:
      return "measured FMA peak";
    case ResidentLimit::l2:
      return "L2 bandwidth (halo exchange)";
    case ResidentLimit::shared_memory:
      return "shared-memory bandwidth (thread edges)";
    case ResidentLimit::synchronisation:
      return "neighbour synchronisation latency";
  }
  return "unknown";
}

ResidentPrediction predict_resident(Stencil const& s, ResidentDomain const& d,
                                    Device const& device) {
  STENCIL_EXPECT(s.rank == 1,
                 "model: a register-resident domain is rank 1; "
                 "this stencil is rank ",
                 s.rank);
  STENCIL_EXPECT(
      s.radius >= 1 && s.flops >= 1 && (s.value_size == 4 || s.value_size == 8),
      "model: the stencil needs a radius >= 1 (", s.radius, "), flops >= 1 (",
      s.flops, ") and 4- or 8-byte values (", s.value_size, ")");
  STENCIL_EXPECT(d.blocks >= 1 && d.cells >= d.blocks &&
                     d.cells_per_thread >= 1 && d.steps_per_sync >= 1 &&
                     d.levels >= 1,
                 "model: a register-resident domain needs blocks >= 1 (",
                 d.blocks, "), at least one cell per block (", d.cells,
                 " cells), cells per thread >= 1 (", d.cells_per_thread,
                 "), steps per sync >= 1 (", d.steps_per_sync,
                 ") and levels >= 1 (", d.levels, ")");
  double const fp = s.value_size == 4 ? device.fp32_measured_gflops
                                      : device.fp64_measured_gflops;
  STENCIL_EXPECT(fp > 0 && device.l2_gbs > 0 && device.shared_tbs > 0 &&
                     device.neighbour_flag_us > 0,
                 "model: device '", device.name,
                 "' lacks a figure of eq. (7): give fp", s.value_size * 8,
                 "_measured_gflops, l2_gbs, shared_tbs and neighbour_flag_us "
                 "> 0 (stencil_calibrate --force measures them)");
  ResidentPrediction p;
  // Every block recomputes radius x steps_per_sync cells on either side.
  double const halo = 2.0 * s.radius * d.steps_per_sync * d.blocks;
  p.valid_fraction = static_cast<double>(d.cells) / (d.cells + halo);
  p.peak_gcells = fp / s.flops * p.valid_fraction;
  // Per sync each block writes, and a neighbour reads, the radius x H
  // cells next to either edge of every level.
  double const l2_bytes_per_sync = 2.0 * d.blocks * 2 * s.radius *
                                   d.steps_per_sync * d.levels * s.value_size;
  double const sync_updates = static_cast<double>(d.cells) * d.steps_per_sync;
  p.l2_gcells = sync_updates / (l2_bytes_per_sync / device.l2_gbs);
  // Every step each thread stores its 2r edge values and loads the 2r of
  // its neighbours: 4r values per cells_per_thread computed cells.
  double const shared_bytes_per_update =
      4.0 * s.radius * s.value_size / d.cells_per_thread;
  p.shared_gcells =
      device.shared_tbs * 1e3 / shared_bytes_per_update * p.valid_fraction;
  p.sync_gcells = sync_updates / (device.neighbour_flag_us * 1e3);
  p.gcells = p.peak_gcells;
  auto lower = [&p](double gcells, ResidentLimit limit) {
    if (gcells < p.gcells) {
      p.gcells = gcells;
      p.limit = limit;
    }
  };
  lower(p.l2_gcells, ResidentLimit::l2);
  lower(p.shared_gcells, ResidentLimit::shared_memory);
  lower(p.sync_gcells, ResidentLimit::synchronisation);
  return p;
}

namespace {

// Bumped when a field changes meaning or a calibration kernel changes what
// it measures: older files are then recalibrated, not misread.
constexpr int cache_format = 3;

// The fields of a cache file, in the order they are written.
struct Field {
  char const* name;
  bool required;
  void (*read)(Device&, std::string const&);
  std::string (*write)(Device const&);
};

std::string number(double v) {
  std::ostringstream out;
  out.precision(std::numeric_limits<double>::max_digits10);
  out << v;
  return out.str();
}

double parse_number(std::string const& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (std::exception const&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !(v >= 0) ||
      v == std::numeric_limits<double>::infinity()) {
    throw std::invalid_argument("'" + text +
                                "' is not a finite, non-negative number");
  }
  return v;
}

#define STENCIL_MODEL_NUMBER_FIELD(member, required)                     \
  Field {                                                                \
#member, required,                                                     \
        [](Device& d, std::string const& v) { d.member = parse_number(v); }, \
        [](Device const& d) { return number(d.member); } \
  }

std::vector<Field> const& fields() {
  static std::vector<Field> const all = {
      {"name", true, [](Device& d, std::string const& v) { d.name = v; },
       [](Device const& d) { return d.name; }},
      {"key", false, [](Device& d, std::string const& v) { d.key = v; },
       [](Device const& d) { return d.key; }},
      {"compute_units", true,
       [](Device& d, std::string const& v) {
         double const n = parse_number(v);
         if (n < 1 || n != static_cast<int>(n)) {
           throw std::invalid_argument("'" + v +
                                       "' is not a whole number >= 1");
         }
         d.compute_units = static_cast<int>(n);
       },
       [](Device const& d) { return std::to_string(d.compute_units); }},
      STENCIL_MODEL_NUMBER_FIELD(copy_gbs, true),
      STENCIL_MODEL_NUMBER_FIELD(shared_tbs, true),
      STENCIL_MODEL_NUMBER_FIELD(fp32_gflops, true),
      STENCIL_MODEL_NUMBER_FIELD(fp64_gflops, true),
      STENCIL_MODEL_NUMBER_FIELD(barrier_us, true),
      STENCIL_MODEL_NUMBER_FIELD(exchange_us, false),
      STENCIL_MODEL_NUMBER_FIELD(issue_gips, true),
      STENCIL_MODEL_NUMBER_FIELD(fp32_measured_gflops, false),
      STENCIL_MODEL_NUMBER_FIELD(fp64_measured_gflops, false),
      STENCIL_MODEL_NUMBER_FIELD(l2_gbs, false),
      STENCIL_MODEL_NUMBER_FIELD(neighbour_flag_us, false),
      {"source", false, [](Device& d, std::string const& v) { d.source = v; },
       [](Device const& d) { return d.source; }},
  };
  return all;
}

#undef STENCIL_MODEL_NUMBER_FIELD

}  // namespace

std::filesystem::path cache_directory() {
  auto const env = [](char const* name) -> std::string {
    char const* v = std::getenv(name);
    return v == nullptr ? std::string() : std::string(v);
  };
  if (std::string const dir = env("STENCIL_CACHE_DIR"); !dir.empty()) {
    return dir;
  }
  if (std::string const xdg = env("XDG_CACHE_HOME"); !xdg.empty()) {
    return std::filesystem::path(xdg) / "stencil";
  }
  if (std::string const home = env("HOME"); !home.empty()) {
    return std::filesystem::path(home) / ".cache" / "stencil";
  }
  throw_error(
      "model: no directory to cache device calibrations in: set "
      "STENCIL_CACHE_DIR (or XDG_CACHE_HOME or HOME) to a writable directory");
}

void write_device(Device const& device, std::filesystem::path const& file) {
  for (std::string const& text : {device.name, device.key, device.source}) {
    STENCIL_EXPECT(text.find('\n') == std::string::npos,
                   "model: cannot cache '", text,
                   "': a device's name, key and source are one line each");
  }
  std::ostringstream text;
  text << "# stencil: calibration of one device for stencil::model. Delete "
          "this file to calibrate again.\n"
       << "format = " << cache_format << '\n';
  for (Field const& f : fields())
    text << f.name << " = " << f.write(device) << '\n';
  detail::write_cache_file(file, text.str(), "the model's calibration cache");
}

Device read_device(std::filesystem::path const& file) {
  std::ifstream in(file);
  STENCIL_EXPECT(in.good(), "model: cannot read the calibration cache ", file,
                 ": ", std::strerror(errno));
  Device d;
  std::vector<std::string> seen;
  int format = 0;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string const text = detail::trim_blanks(line);
    if (text.empty() || text.front() == '#') continue;
    std::size_t const eq = text.find('=');
    STENCIL_EXPECT(eq != std::string::npos, "model: ", file, " line ", number,
                   ": '", text, "' is not 'name = value'");
    std::string const name = detail::trim_blanks(text.substr(0, eq));
    std::string const value = detail::trim_blanks(text.substr(eq + 1));
    if (name == "format") {
      STENCIL_EXPECT(value == std::to_string(cache_format), "model: ", file,
                     " line ", number, ": format ", value,
                     " is not this library's (", cache_format,
                     "); delete the file to calibrate again");
      format = cache_format;
      continue;
    }
    auto const f = std::find_if(fields().begin(), fields().end(),
                                [&](Field const& f) { return name == f.name; });
    STENCIL_EXPECT(f != fields().end(), "model: ", file, " line ", number,
                   ": unknown field '", name, "'");
    STENCIL_EXPECT(std::find(seen.begin(), seen.end(), name) == seen.end(),
                   "model: ", file, " line ", number, ": '", name,
                   "' appears twice");
    try {
      f->read(d, value);
    } catch (std::invalid_argument const& e) {
      throw_error(concat("model: ", file, " line ", number, ": ", name, ": ",
                         e.what()));
    }
    seen.push_back(name);
  }
  STENCIL_EXPECT(format == cache_format, "model: ", file,
                 " has no 'format = ", cache_format,
                 "' line; it was not written by this library's "
                 "write_device; delete it to calibrate again");
  for (Field const& f : fields()) {
    STENCIL_EXPECT(!f.required || std::find(seen.begin(), seen.end(), f.name) !=
                                      seen.end(),
                   "model: ", file, " has no '", f.name,
                   "'; delete it to calibrate again");
  }
  return d;
}

std::ostream& operator<<(std::ostream& out, Device const& d) {
  out << d.name << ": " << d.compute_units << " compute units, copy "
      << d.copy_gbs << " GB/s, shared memory " << d.shared_tbs << " TB/s, FP64 "
      << d.fp64_gflops << " / FP32 " << d.fp32_gflops << " GFLOP/s, barrier "
      << d.barrier_us << " us";
  if (d.exchange_us > 0) out << ", exchange " << d.exchange_us << " us";
  if (d.issue_gips > 0)
    out << ", issue " << d.issue_gips << " G instructions/s";
  if (d.fp64_measured_gflops > 0 || d.fp32_measured_gflops > 0)
    out << ", FMA measured FP64 " << d.fp64_measured_gflops << " / FP32 "
        << d.fp32_measured_gflops << " GFLOP/s";
  if (d.l2_gbs > 0) out << ", L2 " << d.l2_gbs << " GB/s";
  if (d.neighbour_flag_us > 0)
    out << ", neighbour flags " << d.neighbour_flag_us << " us";
  if (!d.source.empty()) out << " (" << d.source << ")";
  return out;
}

}  // namespace stencil::model
