// SPDX-License-Identifier: Apache-2.0
// stencil::model on the CPU: the ceilings it computes, that it never
// predicts a slower run from a faster device, that deeper overlapped
// blocking recomputes more, and that it refuses what it cannot describe.
#include <stencil/error.hpp>
#include <stencil/model.hpp>
#include <stencil/suite.hpp>

#include <gtest/gtest.h>

#include <array>
#include <functional>
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
// bandwidth with 16-byte items and the grid-sync cost; the shared-memory
// and FP64/FP32 figures are 132 SMs at 1.98 GHz (128 B/clock, 64/128 FMA
// per clock).
Device h200() {
  return {.name = "H200",
          .compute_units = 132,
          .copy_gbs = 4236,
          .shared_tbs = 33.4,
          .fp32_gflops = 66900,
          .fp64_gflops = 33450,
          .barrier_us = 0.98};
}

constexpr Stencil j2d5pt = Stencil::of<stencil::suite::J2d5pt, double>();
constexpr Stencil j2d25pt_float = Stencil::of<stencil::suite::J2d25pt, float>();
constexpr Stencil j3d7pt = Stencil::of<stencil::suite::J3d7pt, double>();
constexpr Stencil j3d27pt = Stencil::of<stencil::suite::J3d27pt, double>();

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
}

TEST(Model, NaiveIsBoundByCopyBandwidth) {
  auto const p = predict(j2d5pt, {PolicyKind::naive}, {8352, 8352, 0}, h200());
  // One read and one write of 8 bytes per cell and step.
  EXPECT_DOUBLE_EQ(p.gcells, 4236.0 / 16);
  EXPECT_EQ(p.limit, Limit::dram);
  EXPECT_EQ(p.shared_accesses, 0);
  EXPECT_EQ(p.valid_fraction, 1);
  std::ostringstream text;
  text << p;
  EXPECT_NE(text.str().find("bound by DRAM bandwidth"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("shared none"), std::string::npos) << text.str();
}

TEST(Model, TemporalBlockingCountsItsSharedTraffic) {
  // Deep 2D blocking moves the bottleneck off DRAM: j2d5pt at depth 12 on a
  // 256-column strip, 3 rows per thread, loads its 2 horizontal neighbours
  // from shared memory and stores 1 value per cell.
  auto const p = predict(j2d5pt, {PolicyKind::temporal_blocking, 12, 256, 0, 3},
                         {8352, 8352, 0}, h200());
  EXPECT_EQ(p.shared_accesses, 3);
  EXPECT_DOUBLE_EQ(p.valid_fraction, (256.0 - 24) / 256);
  EXPECT_EQ(p.limit, Limit::shared_memory);
  EXPECT_GT(p.dram_gcells, p.shared_gcells);
  EXPECT_DOUBLE_EQ(p.gcells, p.shared_gcells);
  // j2d25pt: 4 off-centre columns of 5 taps; 4 rows per thread load 8
  // values of each column, 2 per output cell.
  auto const box =
      predict(j2d25pt_float, {PolicyKind::temporal_blocking, 4, 384, 0, 4},
              {8640, 8640, 0}, h200());
  EXPECT_EQ(box.shared_accesses, 4 * 2 + 1);
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
      {"units", [](Device& d) { d.compute_units *= 2; }},
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

TEST(Model, SmallPlanesAreBoundByTheExchange) {
  // 8x8 cells per plane cannot hide a microsecond per plane.
  for (int depth : {1, 2, 6}) {
    auto const p = predict(j3d7pt, {PolicyKind::device_tiling, depth, 32, 32},
                           {4096, 8, 8}, h200());
    EXPECT_EQ(p.limit, Limit::barrier_latency);
    EXPECT_DOUBLE_EQ(p.gcells, 64.0 * depth / (0.98 * 1e3));
  }
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
  expect_refused(j2d5pt, naive, {100, 2, 0}, h200(), "needs at least 3");
  expect_refused(j2d5pt, {PolicyKind::temporal_blocking, 0, 256}, d2, h200(),
                 "give 1 or more");
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
                 d, "give barrier_us > 0");
}

}  // namespace
