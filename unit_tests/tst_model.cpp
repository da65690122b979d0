// SPDX-License-Identifier: Apache-2.0
// stencil::model on the CPU: the ceilings it computes, that it never
// predicts a slower run from a faster device, that deeper overlapped
// blocking recomputes more, and that it refuses what it cannot describe.
#include "test_support.hpp"

#include <stencil/error.hpp>
#include <stencil/model.hpp>
#include <stencil/suite.hpp>

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using stencil::PolicyKind;
using stencil::model::Config;
using stencil::model::Device;
using stencil::model::Limit;
using stencil::model::predict;
using stencil::model::Stencil;

// Figures of the H200 this project measures on (perf_tests/results): copy
// bandwidth with 16-byte items and the grid-sync cost; the shared-memory,
// FP64/FP32 and issue figures are 132 SMs at 1.98 GHz (128 B/clock, 64/128
// FMA per clock, 4 x 32 thread instructions per clock).
Device h200() {
  return {.name = "H200",
          .compute_units = 132,
          .copy_gbs = 4236,
          .shared_tbs = 33.4,
          .fp32_gflops = 66900,
          .fp64_gflops = 33450,
          .barrier_us = 0.98,
          .issue_gips = 33454};
}

constexpr Stencil j2d5pt = Stencil::of<stencil::suite::J2d5pt, double>();
constexpr Stencil j2d25pt_float = Stencil::of<stencil::suite::J2d25pt, float>();
constexpr Stencil j3d7pt = Stencil::of<stencil::suite::J3d7pt, double>();
constexpr Stencil j3d27pt = Stencil::of<stencil::suite::J3d27pt, double>();
constexpr Stencil poisson = Stencil::of<stencil::suite::Poisson19pt, float>();

struct Case {
  Stencil stencil;
  Config config;
  std::array<int, 3> extents;
};

std::vector<Case> cases() {
  std::array<int, 3> const d2{8352, 8352, 0};
  std::array<int, 3> const d3{2560, 288, 384};
  return {
      {j2d5pt, {PolicyKind::naive}, d2},
      {j2d5pt, {PolicyKind::streaming_sweep}, d2},
      {j2d5pt, {PolicyKind::temporal_blocking, 12, 256}, d2},
      {j2d25pt_float, {PolicyKind::temporal_blocking, 4, 384}, d2},
      {j3d7pt, {PolicyKind::temporal_blocking, 3, 32, 32}, d3},
      {j3d7pt, {PolicyKind::device_tiling, 8, 32, 32}, d3},
      {j3d27pt, {PolicyKind::device_tiling, 5, 32, 32}, d3},
      {j3d27pt, {PolicyKind::spatial_blocking}, d3},
  };
}

TEST(Model, DescribesSuiteFunctors) {
  EXPECT_EQ(j2d5pt.rank, 2);
  EXPECT_EQ(j2d5pt.radius, 1);
  EXPECT_EQ(j2d5pt.shape, stencil::Shape::star);
  EXPECT_EQ(j2d5pt.flops, stencil::suite::J2d5pt::flops);
  EXPECT_EQ(j2d5pt.value_size, 8);
  EXPECT_EQ(j2d25pt_float.value_size, 4);
  EXPECT_EQ(j3d27pt.shape, stencil::Shape::box);
  // Every point of the shape, unless the functor says how many it reads.
  EXPECT_EQ(j3d27pt.taps, 0);
  EXPECT_EQ(poisson.taps, 19);
  EXPECT_EQ((Stencil::of<stencil::suite::J3d17pt, double>().taps), 17);
}

TEST(Model, NaiveIsBoundByCopyBandwidth) {
  auto const p = predict(j2d5pt, {PolicyKind::naive}, {8352, 8352, 0}, h200());
  // One read and one write of 8 bytes per cell and step.
  EXPECT_DOUBLE_EQ(p.gcells, 4236.0 / 16);
  EXPECT_EQ(p.limit, Limit::dram);
  // Its 5 taps go through L1, the shared-memory array, far below its rate.
  EXPECT_EQ(p.shared_accesses, 5);
  EXPECT_DOUBLE_EQ(p.shared_gcells, 33.4e3 / (5 * 8));
  EXPECT_EQ(p.valid_fraction, 1);
  std::ostringstream text;
  text << p;
  EXPECT_NE(text.str().find("bound by DRAM bandwidth"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("issue none"), std::string::npos) << text.str();
  // 25 taps of 8 bytes per cell: L1 binds before DRAM.
  auto const box = predict(Stencil::of<stencil::suite::J2d25pt, double>(),
                           {PolicyKind::naive}, {8640, 8640, 0}, h200());
  EXPECT_EQ(box.limit, Limit::shared_memory);
  EXPECT_DOUBLE_EQ(box.gcells, 33.4e3 / (25 * 8));
}

TEST(Model, TemporalBlockingCountsItsSharedTraffic) {
  // Deep 2D blocking moves the bottleneck off DRAM: j2d5pt at depth 12 on a
  // 256-column strip, 3 rows per thread, loads its 2 horizontal neighbours
  // from shared memory and stores 1 value per cell.
  auto const p = predict(j2d5pt, {PolicyKind::temporal_blocking, 12, 256, 0, 3},
                         {8352, 8352, 0}, h200());
  EXPECT_EQ(p.shared_accesses, 3);
  EXPECT_DOUBLE_EQ(p.valid_fraction, (256.0 - 24) / 256);
  EXPECT_GT(p.dram_gcells, p.shared_gcells);
  // At one block per SM the loads and the FMAs take their turns: their
  // times add up.
  EXPECT_DOUBLE_EQ(p.serial_gcells,
                   1 / (1 / p.shared_gcells + 1 / p.fp_gcells));
  EXPECT_DOUBLE_EQ(p.fp_gcells, 33450 * p.valid_fraction / (10 + 2 * 3));
  EXPECT_EQ(p.limit, Limit::shared_memory);
  EXPECT_DOUBLE_EQ(p.gcells, p.serial_gcells);
  // 3 shared accesses, 5 FMAs, the kernel's 16 other instructions per cell
  // and 10 for the division.
  EXPECT_DOUBLE_EQ(p.instructions, 3 + 5 + 16 + 10);
  EXPECT_DOUBLE_EQ(p.issue_gcells, 33454 * p.valid_fraction / 34);
  // In float the loads and FMAs take half as long; the issue slots bind.
  auto const single = predict(Stencil::of<stencil::suite::J2d5pt, float>(),
                              {PolicyKind::temporal_blocking, 12, 512, 0, 3},
                              {8352, 8352, 0}, h200());
  EXPECT_EQ(single.limit, Limit::instruction_issue);
  EXPECT_DOUBLE_EQ(single.gcells, 33454 * single.valid_fraction / 34);
  // j2d25pt: 4 off-centre columns of 5 taps; 4 rows per thread load 8
  // values of each column, 2 per output cell.
  auto const box =
      predict(j2d25pt_float, {PolicyKind::temporal_blocking, 4, 384, 0, 4},
              {8640, 8640, 0}, h200());
  EXPECT_EQ(box.shared_accesses, 4 * 2 + 1);
  // The same on a column pair with 2 rows per thread: each off-centre
  // column's 6 values serve 2 rows of 2 cells.
  auto const pair =
      predict(j2d25pt_float, {PolicyKind::temporal_blocking, 3, 768, 0, 2, 2},
              {10560, 10560, 0}, h200());
  EXPECT_EQ(pair.shared_accesses, 4 * 6.0 / 4 + 1);
  EXPECT_GT(pair.shared_gcells, box.shared_gcells);
  // j3d7pt: the z taps in registers, the y line (3 values for 1 tap, 4
  // rows: 6/4) and the two x taps (one load each).
  auto const dt = predict(j3d7pt, {PolicyKind::device_tiling, 8, 32, 32, 4},
                          {2560, 288, 384}, h200());
  EXPECT_DOUBLE_EQ(dt.shared_accesses, 1.5 + 2 + 1);
  // A single-step sweep loads all of its taps.
  auto const sweep =
      predict(j3d7pt, {PolicyKind::streaming_sweep}, {2560, 288, 384}, h200());
  EXPECT_EQ(sweep.shared_accesses, 7 + 1);
}

TEST(Model, ChargesIssueToTheNativeKernelsOnly) {
  std::array<int, 3> const d2{8352, 8352, 0};
  std::array<int, 3> const d3{2560, 288, 384};
  auto const naive = predict(j2d5pt, {PolicyKind::naive}, d2, h200());
  EXPECT_EQ(naive.issue_gcells, std::numeric_limits<double>::infinity());
  EXPECT_EQ(naive.serial_gcells, std::numeric_limits<double>::infinity());
  EXPECT_EQ(naive.instructions, 0);
  // The 3D sweep: its family's fixed instructions, a load of every tap and
  // the store, 2.85 more per tap, at the 34.5% of the issue rate its warps
  // reach in double; no pipes in series.
  auto const sweep =
      predict(j3d27pt, {PolicyKind::streaming_sweep}, d3, h200());
  EXPECT_EQ(sweep.serial_gcells, std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(sweep.instructions, 8 + 28 + 2.85 * 27);
  EXPECT_DOUBLE_EQ(sweep.issue_gcells, 33454 * 0.345 / (8 + 28 + 2.85 * 27));
  EXPECT_LE(sweep.gcells, sweep.issue_gcells);
  // Device tiles: the level's instructions at a quarter of the issue rate,
  // on the 108 of 132 SMs that a 288x384 plane of 32x32 tiles occupies,
  // in series with a barrier per plane (this device has no exchange
  // figure).
  auto const dt =
      predict(j3d7pt, {PolicyKind::device_tiling, 6, 32, 32, 4}, d3, h200());
  EXPECT_DOUBLE_EQ(dt.instructions, 37 + 4.5 + 0.4 * 7);
  double const occupied = 288.0 * 384 / (132 * 32 * 32);
  EXPECT_DOUBLE_EQ(dt.issue_gcells, 33454 * 0.265 / dt.instructions * occupied);
  EXPECT_DOUBLE_EQ(dt.barrier_gcells, 288.0 * 384 * 6 / (0.98 * 1e3));
  EXPECT_DOUBLE_EQ(dt.serial_gcells,
                   1 / (1 / dt.issue_gcells + 1 / dt.barrier_gcells));
  EXPECT_DOUBLE_EQ(dt.gcells, dt.serial_gcells);
  EXPECT_EQ(dt.limit, Limit::latency);
  // Without an issue rate there is no issue ceiling, and nothing slower.
  Device unknown = h200();
  unknown.issue_gips = 0;
  auto const free_issue =
      predict(j3d7pt, {PolicyKind::device_tiling, 6, 32, 32, 4}, d3, unknown);
  EXPECT_EQ(free_issue.issue_gcells, std::numeric_limits<double>::infinity());
  EXPECT_GE(free_issue.gcells, dt.gcells);
}

TEST(Model, CountsAnFmaPerTap) {
  // j2d25pt publishes 25 FLOPs for 25 taps; it does at least 25 FMAs.
  auto const box =
      predict(j2d25pt_float, {PolicyKind::temporal_blocking, 4, 384, 0, 4},
              {8640, 8640, 0}, h200());
  // Its division takes a multiply and two FMAs more (stencil::Divisor).
  EXPECT_DOUBLE_EQ(box.fp_gcells, 66900 * box.valid_fraction / (50 + 6));
  // poisson reads 19 of its box's 27 points.
  auto const sweep =
      predict(poisson, {PolicyKind::streaming_sweep}, {2560, 288, 384}, h200());
  EXPECT_DOUBLE_EQ(sweep.fp_gcells, 66900.0 / 38);
  EXPECT_DOUBLE_EQ(sweep.shared_accesses, 19 + 1);
  EXPECT_DOUBLE_EQ(sweep.instructions, 0 + 20 + 2.85 * 19);
}

TEST(Model, ADivisionCostsInstructions) {
  constexpr Stencil prescaled =
      Stencil::of<stencil::suite::J2d5ptPrescaled, float>();
  constexpr Stencil divided = Stencil::of<stencil::suite::J2d5pt, float>();
  static_assert(prescaled.divisions == 0 && divided.divisions == 1);
  Config const config{PolicyKind::temporal_blocking, 10, 512, 0, 3};
  std::array<int, 3> const d2{8352, 8352, 0};
  auto const fast = predict(prescaled, config, d2, h200());
  auto const slow = predict(divided, config, d2, h200());
  EXPECT_DOUBLE_EQ(slow.instructions - fast.instructions, 10);
  EXPECT_LT(slow.fp_gcells, fast.fp_gcells);
  EXPECT_LT(slow.gcells, fast.gcells);
  // Naive is bound by DRAM and L1 either way.
  EXPECT_DOUBLE_EQ(predict(divided, {PolicyKind::naive}, d2, h200()).gcells,
                   predict(prescaled, {PolicyKind::naive}, d2, h200()).gcells);
}

TEST(Model, MoreRowsPerThreadShareMoreLoads) {
  double previous = 1e9;
  for (int rows = 1; rows <= 8; ++rows) {
    auto const p =
        predict(j3d27pt, {PolicyKind::device_tiling, 4, 32, 32, rows},
                {2560, 288, 384}, h200());
    EXPECT_LT(p.shared_accesses, previous) << rows << " rows";
    previous = p.shared_accesses;
  }
}

TEST(Model, FasterDeviceIsNeverSlower) {
  using Faster = std::function<void(Device&)>;
  std::vector<std::pair<char const*, Faster>> const upgrades{
      {"copy", [](Device& d) { d.copy_gbs *= 2; }},
      {"shared", [](Device& d) { d.shared_tbs *= 2; }},
      {"fp",
       [](Device& d) {
         d.fp32_gflops *= 2;
         d.fp64_gflops *= 2;
       }},
      {"barrier", [](Device& d) { d.barrier_us /= 2; }},
      {"issue", [](Device& d) { d.issue_gips *= 2; }},
      // More SMs issue more: the issue rate counts every SM's schedulers.
      {"units",
       [](Device& d) {
         d.compute_units *= 2;
         d.issue_gips *= 2;
       }},
  };
  for (auto const& c : cases()) {
    double const base = predict(c.stencil, c.config, c.extents, h200()).gcells;
    for (auto const& [what, upgrade] : upgrades) {
      Device faster = h200();
      upgrade(faster);
      EXPECT_GE(predict(c.stencil, c.config, c.extents, faster).gcells, base)
          << what << ", policy " << static_cast<int>(c.config.policy);
    }
  }
}

TEST(Model, DeeperOverlappedBlockingRecomputesMore) {
  double previous = 1;
  for (int depth = 1; depth <= 12; ++depth) {
    auto const p = predict(j2d5pt, {PolicyKind::temporal_blocking, depth, 256},
                           {8352, 8352, 0}, h200());
    EXPECT_LT(p.valid_fraction, previous) << "depth " << depth;
    previous = p.valid_fraction;
  }
  previous = 1;
  for (int depth = 1; depth <= 5; ++depth) {
    auto const p =
        predict(j3d27pt, {PolicyKind::temporal_blocking, depth, 32, 32},
                {2560, 288, 384}, h200());
    EXPECT_LT(p.valid_fraction, previous) << "depth " << depth;
    previous = p.valid_fraction;
  }
  // Device tiles exchange their rims: nothing is recomputed.
  auto const dt = predict(j3d27pt, {PolicyKind::device_tiling, 5, 32, 32},
                          {2560, 288, 384}, h200());
  EXPECT_EQ(dt.valid_fraction, 1);
}

TEST(Model, NamesHaloRedundancyWhenItCostsMost) {
  // 64 columns at depth 12 keep 40 valid: without the halo it would be 1.6x.
  auto const narrow = predict(j2d5pt, {PolicyKind::temporal_blocking, 12, 64},
                              {8352, 8352, 0}, h200());
  EXPECT_EQ(narrow.limit, Limit::halo_redundancy);
  auto const wide = predict(j2d5pt, {PolicyKind::temporal_blocking, 12, 512},
                            {8352, 8352, 0}, h200());
  EXPECT_NE(wide.limit, Limit::halo_redundancy);
  EXPECT_GT(wide.gcells, narrow.gcells);
}

TEST(Model, SmallPlanesWaitForTheExchangeAndTheirTile) {
  // 8x8 cells per plane: one block computes its 32x32 tile at every level
  // for 64 valid cells, and waits a microsecond per plane for its rims.
  for (int depth : {1, 2, 6}) {
    auto const p = predict(j3d7pt, {PolicyKind::device_tiling, depth, 32, 32},
                           {4096, 8, 8}, h200());
    double const wait = 64.0 * depth / (0.98 * 1e3);
    EXPECT_DOUBLE_EQ(p.barrier_gcells, wait);
    EXPECT_DOUBLE_EQ(p.gcells, 1 / (1 / p.issue_gcells + 1 / wait));
    // The wait dominates a single level; deeper, the tile's levels do.
    EXPECT_EQ(p.limit, depth == 1 ? Limit::barrier_latency : Limit::latency)
        << "depth " << depth;
  }
}

TEST(Model, NativeKernelsIn3DAreBoundByLatency) {
  std::array<int, 3> const d3{2560, 288, 384};
  // SM tiling: more resident blocks hide more latency, float's shorter
  // chains more than double's.
  double previous = 0;
  for (int blocks = 1; blocks <= 3; ++blocks) {
    Config c{PolicyKind::temporal_blocking, 3, 32, 32, 4};
    c.blocks_per_sm = blocks;
    auto const p = predict(j3d7pt, c, d3, h200());
    EXPECT_GT(p.gcells, previous) << blocks << " blocks per SM";
    EXPECT_EQ(p.limit, Limit::latency);
    previous = p.gcells;
  }
  Config const tiles{PolicyKind::temporal_blocking, 2, 32, 32, 4};
  EXPECT_GT(predict(poisson, tiles, d3, h200()).gcells,
            predict(Stencil::of<stencil::suite::Poisson19pt, double>(), tiles,
                    d3, h200())
                .gcells);
  // Each pass of SM tiling reads its valid cells from DRAM and writes
  // them, in series with the computation; the halo comes from L2.
  auto const sm = predict(j3d7pt, tiles, d3, h200());
  EXPECT_DOUBLE_EQ(sm.dram_gcells, 4236.0 * 2 / (8 * 2));
  EXPECT_DOUBLE_EQ(sm.serial_gcells,
                   1 / (1 / sm.issue_gcells + 1 / sm.dram_gcells));
  // Device tiling spreads each plane's exchange over more levels.
  previous = 0;
  for (int depth = 1; depth <= 8; ++depth) {
    auto const p = predict(j3d27pt, {PolicyKind::device_tiling, depth, 32, 32},
                           d3, h200());
    EXPECT_GT(p.gcells, previous) << "depth " << depth;
    previous = p.gcells;
  }
  // The double sweep of a 7-point star is bound by memory at 76% of the
  // copy bandwidth (L2 re-reads of its rims), the float one at 60%.
  auto const sweep = predict(j3d7pt, {PolicyKind::streaming_sweep}, d3, h200());
  EXPECT_EQ(sweep.limit, Limit::dram);
  EXPECT_DOUBLE_EQ(sweep.gcells, 0.76 * 4236 / 16);
  auto const sweep_float = predict(Stencil::of<stencil::suite::J3d7pt, float>(),
                                   {PolicyKind::streaming_sweep}, d3, h200());
  EXPECT_DOUBLE_EQ(sweep_float.dram_gcells, 0.60 * 4236 / 8);
  // Without prefetch the 3D sweep has no shared tile: the running blocks
  // share their planes through L2, and j3d7pt reaches 92% (double) and 83%
  // (float) of the copy bandwidth; a box pays for its taps in instructions.
  Config direct{PolicyKind::streaming_sweep};
  direct.prefetch = 0;
  // (On the H200's bandwidth its few instructions per cell bound it first.)
  auto const direct_star = predict(j3d7pt, direct, d3, h200());
  EXPECT_DOUBLE_EQ(direct_star.dram_gcells, 0.92 * 4236 / 16);
  EXPECT_EQ(direct_star.limit, Limit::latency);
  EXPECT_DOUBLE_EQ(direct_star.gcells, 33454 * 0.24 / (28.5 + 8 + 0.7 * 7));
  auto const direct_float =
      predict(Stencil::of<stencil::suite::J3d7pt, float>(), direct, d3, h200());
  EXPECT_DOUBLE_EQ(direct_float.dram_gcells, 0.83 * 4236 / 8);
  auto const direct_box = predict(j3d27pt, direct, d3, h200());
  EXPECT_EQ(direct_box.limit, Limit::latency);
  EXPECT_DOUBLE_EQ(direct_box.instructions, 28.5 + 28 + 0.7 * 27);
  EXPECT_DOUBLE_EQ(direct_box.issue_gcells,
                   33454 * 0.24 / (28.5 + 28 + 0.7 * 27));
}

void expect_refused(Stencil const& s, Config const& c,
                    std::array<int, 3> const& extents, Device const& d,
                    std::string const& text) {
  try {
    (void)predict(s, c, extents, d);
    ADD_FAILURE() << "expected stencil::error containing '" << text << "'";
  } catch (stencil::error const& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(Model, RefusesWhatItCannotDescribe) {
  std::array<int, 3> const d2{100, 100, 0};
  Config const naive{PolicyKind::naive};
  Stencil bad = j2d5pt;
  bad.rank = 4;
  expect_refused(bad, naive, {9, 9, 9}, h200(), "valid ranks are 1, 2 and 3");
  bad = j2d5pt;
  bad.radius = 0;
  expect_refused(bad, naive, d2, h200(), "radii 1 to 8");
  bad = j2d5pt;
  bad.value_size = 2;
  expect_refused(bad, naive, d2, h200(), "float (4) and double (8)");
  bad = j2d5pt;
  bad.flops = 0;
  expect_refused(bad, naive, d2, h200(), "give at least 1");
  bad = j2d5pt;
  bad.divisions = -1;
  expect_refused(bad, naive, d2, h200(), "divides -1 times per update");
  bad = j2d5pt;
  bad.taps = 6;
  expect_refused(bad, naive, d2, h200(), "has 5: give 1 to 5, or 0");
  bad.taps = -1;
  expect_refused(bad, naive, d2, h200(), "reads -1 points");
  expect_refused(j2d5pt, naive, {100, 2, 0}, h200(), "needs at least 3");
  expect_refused(j2d5pt, {PolicyKind::temporal_blocking, 0, 256}, d2, h200(),
                 "give 1 or more");
  expect_refused(j2d5pt, {PolicyKind::temporal_blocking, 4, 256, 0, 3, 0}, d2,
                 h200(), "columns per thread is 0; give 1 or more");
  expect_refused(j2d5pt, {PolicyKind::temporal_blocking, 4, 256, 0, 0}, d2,
                 h200(), "rows per thread is 0");
  expect_refused(j2d5pt, {PolicyKind::naive, 4}, d2, h200(),
                 "Naive takes one step per pass");
  expect_refused(j2d5pt, {PolicyKind::device_tiling, 4, 32, 32}, d2, h200(),
                 "DeviceTiling tiles rank-3 grids");
  expect_refused(Stencil::of<stencil::suite::Heat1D<1>, double>(),
                 {PolicyKind::streaming_sweep}, {1000, 0, 0}, h200(),
                 "StreamingSweep streams rank-2 and rank-3 grids");
  expect_refused(j2d5pt, {PolicyKind::temporal_blocking, 12, 24}, d2, h200(),
                 "must be at least 25");
  expect_refused(j3d7pt, {PolicyKind::temporal_blocking, 2, 32, 4},
                 {50, 50, 50}, h200(), "(x and y) must be at least 5");

  Device d = h200();
  d.copy_gbs = 0;
  expect_refused(j2d5pt, naive, d2, d, "must be positive");
  d = h200();
  d.fp64_gflops = 0;
  expect_refused(j2d5pt, naive, d2, d, "give fp64_gflops > 0");
  d = h200();
  d.shared_tbs = 0;
  EXPECT_NO_THROW((void)predict(j2d5pt, naive, d2, d));
  expect_refused(j2d5pt, {PolicyKind::streaming_sweep}, d2, d,
                 "give shared_tbs > 0");
  d = h200();
  d.barrier_us = 0;
  expect_refused(j3d7pt, {PolicyKind::device_tiling, 2, 32, 32}, {50, 50, 50},
                 d, "give exchange_us > 0 or barrier_us > 0");
  d.exchange_us = 0.75;
  EXPECT_NO_THROW((void)predict(j3d7pt, {PolicyKind::device_tiling, 2, 32, 32},
                                {50, 50, 50}, d));
}

TEST(Model, ChargesTheExchangeWhereItIsKnown) {
  Config const dt{PolicyKind::device_tiling, 8, 32, 32};
  std::array<int, 3> const small{512, 64, 64};
  Device d = h200();
  d.exchange_us = 0.5 * d.barrier_us;
  double const by_barrier = predict(j3d7pt, dt, small, h200()).barrier_gcells;
  double const by_exchange = predict(j3d7pt, dt, small, d).barrier_gcells;
  // A barrier is waited for whole; of an exchange round, the part that
  // does not hide behind the level's computation (0.48, fitted).
  EXPECT_DOUBLE_EQ(by_exchange, 2 * by_barrier / 0.48);
}

// --- paper 004's eq. (7): register-resident rank-1 domains ----------------

// The leapfrog wave at r = 1 as paper 004 counts it: 3 FMAs per update.
constexpr Stencil wave1d_float{.rank = 1,
                               .radius = 1,
                               .shape = stencil::Shape::star,
                               .flops = 6,
                               .value_size = 4};

Device h200_measured() {
  Device d = h200();
  d.fp32_measured_gflops = 60000;
  d.fp64_measured_gflops = 30000;
  d.l2_gbs = 10000;
  d.neighbour_flag_us = 1.0;
  return d;
}

TEST(ModelResident, EachTermOfEquationSeven) {
  using stencil::model::ResidentDomain;
  // 132 blocks of 256 threads x 32 cells, halos of r x H = 16 per side.
  ResidentDomain const domain{.cells = 132LL * 256 * 32,
                              .blocks = 132,
                              .cells_per_thread = 32,
                              .steps_per_sync = 16,
                              .levels = 2};
  auto const p =
      stencil::model::predict_resident(wave1d_float, domain, h200_measured());
  double const cells = 132.0 * 256 * 32;
  double const valid = cells / (cells + 2.0 * 16 * 132);
  EXPECT_DOUBLE_EQ(p.valid_fraction, valid);
  EXPECT_DOUBLE_EQ(p.peak_gcells, 60000.0 / 6 * valid);
  // Per sync: 132 blocks x 2 sides x 16 cells x 2 levels x 4 bytes, written
  // and read, against 10 TB/s; cells x 16 updates.
  double const l2_seconds = 2.0 * 132 * 2 * 16 * 2 * 4 / 10000e9;
  EXPECT_DOUBLE_EQ(p.l2_gcells, cells * 16 / l2_seconds / 1e9);
  // 4 values of 4 bytes per 32 updates through 33.4 TB/s.
  EXPECT_DOUBLE_EQ(p.shared_gcells, 33.4e12 / (16.0 / 32) / 1e9 * valid);
  EXPECT_DOUBLE_EQ(p.sync_gcells, cells * 16 / 1e-6 / 1e9);
  EXPECT_EQ(p.limit, stencil::model::ResidentLimit::fp_peak);
  EXPECT_DOUBLE_EQ(p.gcells, p.peak_gcells);
}

TEST(ModelResident, SynchronisingEveryStepBindsSmallDomains) {
  using stencil::model::ResidentDomain;
  using stencil::model::ResidentLimit;
  // One sync per step over a small domain: the flag latency binds, and
  // syncing every 32 steps lifts it 32 times over.
  ResidentDomain domain{.cells = 132LL * 256 * 4,
                        .blocks = 132,
                        .cells_per_thread = 4,
                        .steps_per_sync = 1,
                        .levels = 2};
  Device const d = h200_measured();
  auto const every = stencil::model::predict_resident(wave1d_float, domain, d);
  EXPECT_EQ(every.limit, ResidentLimit::synchronisation);
  domain.steps_per_sync = 32;
  auto const rarely = stencil::model::predict_resident(wave1d_float, domain, d);
  EXPECT_DOUBLE_EQ(rarely.sync_gcells, 32 * every.sync_gcells);
  EXPECT_GT(rarely.gcells, every.gcells);
  // Fewer cells per thread cross more edges through shared memory.
  domain.cells_per_thread = 1;
  auto const thin = stencil::model::predict_resident(wave1d_float, domain, d);
  EXPECT_DOUBLE_EQ(thin.shared_gcells, rarely.shared_gcells / 4);
}

TEST(ModelResident, RefusesWhatItCannotDescribe) {
  using stencil::model::ResidentDomain;
  ResidentDomain const domain{.cells = 1 << 20,
                              .blocks = 132,
                              .cells_per_thread = 32,
                              .steps_per_sync = 8,
                              .levels = 2};
  auto refused = [&](Stencil const& s, ResidentDomain const& dom,
                     Device const& d, std::string const& text) {
    try {
      (void)stencil::model::predict_resident(s, dom, d);
      ADD_FAILURE() << "accepted; expected: " << text;
    } catch (stencil::error const& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos)
          << e.what();
    }
  };
  refused(j2d5pt, domain, h200_measured(), "is rank 2");
  refused(wave1d_float, domain, h200(),
          "give fp32_measured_gflops, l2_gbs, shared_tbs and "
          "neighbour_flag_us > 0");
  ResidentDomain no_blocks = domain;
  no_blocks.blocks = 0;
  refused(wave1d_float, no_blocks, h200_measured(), "blocks >= 1 (0)");
  ResidentDomain no_steps = domain;
  no_steps.steps_per_sync = 0;
  refused(wave1d_float, no_steps, h200_measured(), "steps per sync >= 1 (0)");
}

// --- the calibration cache ------------------------------------------------

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
struct CacheDirectory : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    dir = stencil_test::scratch_directory("stencil-model");
  }
  void TearDown() override { fs::remove_all(dir); }

  void write_text(fs::path const& file, std::string const& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  void expect_unreadable(fs::path const& file, std::string const& fragment) {
    try {
      (void)stencil::model::read_device(file);
      ADD_FAILURE() << "read_device accepted " << file;
    } catch (stencil::error const& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos)
          << "the message names the file: " << e.what();
    }
  }
};

TEST_F(CacheDirectory, RoundTripsEveryFigure) {
  Device d = h200();
  d.exchange_us = 0.7461234567891;
  d.copy_gbs = 4253.0 + 1.0 / 3;
  d.fp32_measured_gflops = 60123.25;
  d.fp64_measured_gflops = 30061.5;
  d.l2_gbs = 11000.0 / 3;
  d.neighbour_flag_us = 0.8125;
  d.key = "GPU-18603c05-a9b7-355d-18ab-95b90ded7b0b";
  d.source = "calibrated 2026-11-23T15:40:02Z";
  fs::path const file = dir / "nested" / "cuda-x.txt";
  stencil::model::write_device(d, file);
  Device const back = stencil::model::read_device(file);
  EXPECT_EQ(back.name, d.name);
  EXPECT_EQ(back.key, d.key);
  EXPECT_EQ(back.source, d.source);
  EXPECT_EQ(back.compute_units, d.compute_units);
  EXPECT_EQ(back.copy_gbs, d.copy_gbs);
  EXPECT_EQ(back.shared_tbs, d.shared_tbs);
  EXPECT_EQ(back.fp32_gflops, d.fp32_gflops);
  EXPECT_EQ(back.fp64_gflops, d.fp64_gflops);
  EXPECT_EQ(back.barrier_us, d.barrier_us);
  EXPECT_EQ(back.exchange_us, d.exchange_us);
  EXPECT_EQ(back.issue_gips, d.issue_gips);
  EXPECT_EQ(back.fp32_measured_gflops, d.fp32_measured_gflops);
  EXPECT_EQ(back.fp64_measured_gflops, d.fp64_measured_gflops);
  EXPECT_EQ(back.l2_gbs, d.l2_gbs);
  EXPECT_EQ(back.neighbour_flag_us, d.neighbour_flag_us);
  // Nothing is left beside it.
  int files = 0;
  for (auto const& entry : fs::directory_iterator(file.parent_path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
  // Written again, it is replaced.
  d.copy_gbs = 3000;
  stencil::model::write_device(d, file);
  EXPECT_EQ(stencil::model::read_device(file).copy_gbs, 3000);
}

TEST_F(CacheDirectory, RefusesWhatItDidNotWrite) {
  expect_unreadable(dir / "missing.txt", "cannot read");
  std::string const good =
      "format = 3\nname = H200\ncompute_units = 132\ncopy_gbs = 4253\n"
      "shared_tbs = 30\nfp32_gflops = 66908\nfp64_gflops = 33454\n"
      "issue_gips = 33454\nbarrier_us = 0.9\n";
  write_text(dir / "good.txt", "# comment\n\n" + good);
  EXPECT_EQ(stencil::model::read_device(dir / "good.txt").copy_gbs, 4253);
  write_text(dir / "no-format.txt", good.substr(good.find('\n') + 1));
  expect_unreadable(dir / "no-format.txt", "no 'format = 3' line");
  write_text(dir / "format.txt", "format = 7\n" + good.substr(11));
  expect_unreadable(dir / "format.txt", "line 1: format 7");
  write_text(dir / "no-eq.txt", good + "copy_gbs 12\n");
  expect_unreadable(dir / "no-eq.txt", "line 10: 'copy_gbs 12' is not");
  write_text(dir / "twice.txt", good + "copy_gbs = 12\n");
  expect_unreadable(dir / "twice.txt", "'copy_gbs' appears twice");
  write_text(dir / "unknown.txt", good + "speed = 12\n");
  expect_unreadable(dir / "unknown.txt", "unknown field 'speed'");
  write_text(dir / "negative.txt",
             "format = 3\nname = H200\ncompute_units = 132\n"
             "copy_gbs = -3\n");
  expect_unreadable(dir / "negative.txt", "line 4: copy_gbs: '-3' is not");
  write_text(dir / "fraction.txt", "format = 3\ncompute_units = 1.5\n");
  expect_unreadable(dir / "fraction.txt", "'1.5' is not a whole number");
  write_text(dir / "missing-field.txt",
             good.substr(0, good.find("barrier_us")));
  expect_unreadable(dir / "missing-field.txt", "has no 'barrier_us'");
}

TEST_F(CacheDirectory, ComesFromTheEnvironment) {
  using stencil_test::ScopedEnv;
  ScopedEnv const cache("STENCIL_CACHE_DIR", "/a/stencil-cache");
  ScopedEnv const xdg("XDG_CACHE_HOME", "/b");
  ScopedEnv const home("HOME", "/c");
  EXPECT_EQ(stencil::model::cache_directory(), fs::path("/a/stencil-cache"));
  cache.set(std::nullopt);
  EXPECT_EQ(stencil::model::cache_directory(), fs::path("/b/stencil"));
  xdg.set(std::nullopt);
  EXPECT_EQ(stencil::model::cache_directory(), fs::path("/c/.cache/stencil"));
  home.set(std::nullopt);
  EXPECT_THROW((void)stencil::model::cache_directory(), stencil::error);
}

TEST_F(CacheDirectory, ReportsAnUnwritableDirectory) {
  // A regular file where the directory should be.
  write_text(dir / "file", "x");
  try {
    stencil::model::write_device(h200(), dir / "file" / "cuda-x.txt");
    ADD_FAILURE() << "write_device wrote below a regular file";
  } catch (stencil::error const& e) {
    EXPECT_NE(std::string(e.what()).find("STENCIL_CACHE_DIR"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
