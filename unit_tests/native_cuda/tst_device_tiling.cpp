// SPDX-License-Identifier: Apache-2.0
// Native CUDA device tiling against the reference loop: every 3D suite
// stencil, float and double, extents that are not multiples of the 32x32
// tile, every depth from 1 to the largest that fits, step counts that are
// and are not multiples of the depth, and an xy plane too large for one
// region (overlapping regions run one after another), z deep enough
// for several segments side by side, and a plane of whole tiles (the
// kernel for tiles inside the grid). The same for SM
// tiling (TemporalBlocking on rank-3 grids: isolated, overlapped tiles and
// z segments), and the grid-sync exchange kept for comparison. Each with
// prefetch 0 (plain loads), 1 and 2 (cp.async).
#include "../reference.hpp"
#include "native_test.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <sstream>
#include <string>
#include <type_traits>

namespace {

namespace dt = stencil::native_cuda::device_tiling;

// The kernels of DeviceTiling, or of TemporalBlocking: on rank-3 grids, SM
// tiling (the same kernel on isolated, overlapped tiles).
template <class T, class Op, class Policy>
using KernelFor =
    std::conditional_t<std::is_same_v<Policy, stencil::DeviceTiling>,
                       dt::Kernel<T, Op>, dt::SmTilingKernel<T, Op>>;

template <class T, class Op, class Policy = stencil::DeviceTiling>
int max_depth(int prefetch = 0) {
  return KernelFor<T, Op, Policy>::max_depth(
      stencil::native_cuda::current_device_limits(), prefetch);
}

// A random field, its reference result after `steps` steps (fixed
// boundaries) and a device grid loaded with the field.
template <class T, class Op>
struct Case {
  stencil_test::HostField<T, 3> initial, expected;
  stencil::Grid<T, 3, Kokkos::CudaSpace> grid;

  Case(Op const& op, std::array<int, 3> extents, int steps, unsigned seed)
      : initial(stencil_test::random_field<T, 3>(extents, Op::radius, op, steps,
                                                 seed)),
        expected(stencil_test::reference(initial, op, steps,
                                         stencil::Boundary::fixed)),
        grid("u", extents, {.halo = Op::radius}) {
    stencil_test::load(grid, initial);
  }
  bool matches(int steps) const {
    return stencil_test::matches(stencil_test::read_back(grid), expected,
                                 initial, stencil::Boundary::fixed, steps);
  }
};

// Whether `depth` at `prefetch` fits this device (shared memory, and a
// kernel without register spills).
template <class T, class Op, class Policy = stencil::DeviceTiling>
bool fits(int depth, int prefetch) {
  return KernelFor<T, Op, Policy>::fits(
      depth, prefetch, stencil::native_cuda::current_device_limits());
}

template <class T, class Policy = stencil::DeviceTiling, class Op>
stencil::Plan check(Op const& op, std::array<int, 3> extents, int depth,
                    std::initializer_list<int> step_counts, int prefetch = 0) {
  constexpr auto kind = std::is_same_v<Policy, stencil::DeviceTiling>
                            ? stencil::PolicyKind::device_tiling
                            : stencil::PolicyKind::temporal_blocking;
  auto where = [&](int steps) {
    std::ostringstream text;
    text << Op::name << ' ' << (sizeof(T) == 4 ? "float" : "double")
         << (kind == stencil::PolicyKind::device_tiling ? " device tiling"
                                                        : " SM tiling")
         << " depth=" << depth << " prefetch=" << prefetch << " steps=" << steps
         << " extents=";
    for (int e : extents) text << e << ' ';
    return text.str();
  };
  if (!fits<T, Op, Policy>(depth, prefetch)) {
    // The depths that fit need not be 1 to the deepest: register allocation
    // can spill at some depths and not at deeper ones (sm_90, float
    // j3d27pt-prescaled SM tiling with prefetch spills at depths 6-8, not at
    // 9-12). Such a depth is refused, naming the depths that fit, and the
    // grid is left as it was.
    SCOPED_TRACE(where(1));
    Case<T, Op> c(op, extents, 0, 91);
    try {
      stencil::iterate(Kokkos::Cuda{}, c.grid, op, 1, Policy{depth, prefetch});
      ADD_FAILURE() << "a depth that does not fit ran";
    } catch (stencil::error const& e) {
      EXPECT_NE(std::string(e.what()).find("all that fit: "), std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(c.matches(0));
    return stencil::Plan{};
  }
  unsigned seed = 91;
  stencil::Plan p;
  for (int steps : step_counts) {
    SCOPED_TRACE(where(steps));
    Case<T, Op> c(op, extents, steps, ++seed);
    p = stencil::plan(Kokkos::Cuda{}, c.grid, op, Policy{depth, prefetch});
    EXPECT_EQ(p.backend, stencil::Backend::native_cuda);
    EXPECT_EQ(p.policy, kind);
    EXPECT_EQ(p.depth, depth);
    EXPECT_EQ(p.prefetch, prefetch);
    EXPECT_EQ(p.local_memory_bytes, 0) << "the kernel spills: " << p;
    // The policy, not the plan p: iterate plans it again (the same plan)
    // and compiles only this policy's kernels, where a Plan argument would
    // compile every native family for Op and T.
    stencil::iterate(Kokkos::Cuda{}, c.grid, op, steps,
                     Policy{depth, prefetch});
    Kokkos::fence();
    EXPECT_TRUE(c.matches(steps));
  }
  return p;
}

// 17x23x29 fits in one tile; 13x70x45 needs 3x2 tiles, none of them full.
// Every depth with prefetch 0, 1 and 2 on the small grid; on the larger one
// every depth without prefetch and the deepest with it.
template <class Op>
void check_all_depths(Op const& op) {
  for (int prefetch : {0, 1, 2}) {
    for (int depth = 1; depth <= max_depth<double, Op>(prefetch); ++depth) {
      check<double>(op, {17, 23, 29}, depth, {depth, 2 * depth + 1}, prefetch);
    }
    for (int depth = 1; depth <= max_depth<float, Op>(prefetch); ++depth) {
      check<float>(op, {17, 23, 29}, depth, {depth + 1}, prefetch);
    }
  }
  if (stencil_test::small_only()) return;
  int const deepest = max_depth<double, Op>();
  for (int depth = 1; depth <= deepest; ++depth) {
    check<double>(op, {13, 70, 45}, depth, {2 * depth + 1});
  }
  for (int prefetch : {0, 1, 2}) {
    int const staged = max_depth<double, Op>(prefetch);
    check<double>(op, {13, 70, 45}, staged, {2 * staged + 1}, prefetch);
    check<float>(op, {13, 70, 45}, max_depth<float, Op>(prefetch), {5},
                 prefetch);
  }
  // Deep enough in z for two segments at every depth (a segment is at
  // least 8 * depth * (3r + 1) planes): segments side by side, each a
  // device tile with its own exchange, the last one shorter.
  auto segmented = [&](auto value, int depth, int steps) {
    using T = decltype(value);
    int const nz = 16 * depth * (3 * Op::radius + 1) + 5;
    auto const p = check<T>(op, {nz, 38, 45}, depth, {steps});
    EXPECT_GT(p.native_cuda.z_segments, 1) << p;
  };
  for (int depth = 1; depth <= deepest; ++depth) {
    if (fits<double, Op>(depth, 0)) segmented(double{}, depth, 2 * depth + 1);
  }
  segmented(float{}, max_depth<float, Op>(), 5);
  segmented(float{}, 2, 3);
}

// SM tiling: 17x23x29 is one tile at depth 1 and several overlapped ones
// deeper, and is cut into z segments; 61x70x45 needs tiles in both
// directions and z segments.
template <class Op>
void check_sm_tiling(Op const& op) {
  using stencil::TemporalBlocking;
  for (int prefetch : {0, 1, 2}) {
    int const deepest = max_depth<double, Op, TemporalBlocking>(prefetch);
    int const deepest_float = max_depth<float, Op, TemporalBlocking>(prefetch);
    if (stencil_test::small_only()) {
      // Under racecheck every launch takes seconds: the two ends only.
      for (int depth : {1, deepest}) {
        check<double, TemporalBlocking>(op, {17, 23, 29}, depth, {depth + 1},
                                        prefetch);
      }
      check<float, TemporalBlocking>(op, {17, 23, 29}, deepest_float,
                                     {deepest_float + 1}, prefetch);
      continue;
    }
    for (int depth = 1; depth <= deepest; ++depth) {
      check<double, TemporalBlocking>(op, {17, 23, 29}, depth,
                                      {depth, 2 * depth + 1}, prefetch);
    }
    for (int depth = 1; depth <= deepest_float; ++depth) {
      check<float, TemporalBlocking>(op, {17, 23, 29}, depth, {depth + 1},
                                     prefetch);
    }
    for (int depth : {1, deepest}) {
      check<double, TemporalBlocking>(op, {61, 70, 45}, depth, {2 * depth + 1},
                                      prefetch);
    }
  }
}

TEST(DeviceTiling, J3d7pt) {
  STENCIL_REQUIRE_GPU();
  check_all_depths(stencil::suite::J3d7pt{});
}
TEST(DeviceTiling, J3d13pt) {
  STENCIL_REQUIRE_GPU();
  check_all_depths(stencil::suite::J3d13pt{});
}
TEST(DeviceTiling, J3d17pt) {
  STENCIL_REQUIRE_GPU();
  check_all_depths(stencil::suite::J3d17pt{});
  check_all_depths(stencil::suite::J3d17ptPrescaled{});
}
TEST(DeviceTiling, J3d27pt) {
  STENCIL_REQUIRE_GPU();
  check_all_depths(stencil::suite::J3d27pt{});
  check_all_depths(stencil::suite::J3d27ptPrescaled{});
}
TEST(DeviceTiling, Poisson) {
  STENCIL_REQUIRE_GPU();
  check_all_depths(stencil::suite::Poisson19pt{});
}

TEST(SmTiling, EveryStencil) {
  STENCIL_REQUIRE_GPU();
  check_sm_tiling(stencil::suite::J3d7pt{});
  check_sm_tiling(stencil::suite::J3d13pt{});
  check_sm_tiling(stencil::suite::J3d17pt{});
  check_sm_tiling(stencil::suite::J3d27ptPrescaled{});
  check_sm_tiling(stencil::suite::Poisson19pt{});
}

TEST(SmTiling, PlanReportsTheLaunch) {
  STENCIL_REQUIRE_GPU();
  stencil::Grid<double, 3, Kokkos::CudaSpace> grid("u", {2560, 352, 384});
  auto const p = stencil::plan(Kokkos::Cuda{}, grid, stencil::suite::J3d7pt{},
                               stencil::TemporalBlocking{3});
  std::ostringstream text;
  text << p;
  for (char const* part :
       {"backend: native_cuda", "TemporalBlocking", "depth 3",
        "SM tiling: tile 32x32 per block, 26x26 valid", "z segments of",
        "registers"}) {
    EXPECT_NE(text.str().find(part), std::string::npos) << text.str();
  }
  EXPECT_EQ(p.local_memory_bytes, 0) << p;
  std::cout << text.str() << '\n';
}

TEST(SmTiling, RefusesWhatItCannotRun) {
  STENCIL_REQUIRE_GPU();
  using stencil::suite::J3d13pt;
  stencil::Grid<float, 3, Kokkos::CudaSpace> grid("u", {20, 30, 40},
                                                  {.halo = 2});
  stencil::fill(grid, [](int k, int i, int j) { return 0.5f * i + j - k; });
  auto const before = stencil_test::read_back(grid);
  int const deepest = max_depth<float, J3d13pt, stencil::TemporalBlocking>();
  stencil_test::expect_refused_naming_deepest(
      [&] {
        stencil::iterate(Kokkos::Cuda{}, grid, J3d13pt{}, 5,
                         stencil::TemporalBlocking{deepest + 1});
      },
      deepest);
  Kokkos::fence();
  EXPECT_EQ(stencil_test::read_back(grid).data, before.data);
}

// A plane of whole tiles (64x96, 2x3 tiles) that one region covers:
// radius-1 stars, float and double, run the kernel for tiles inside the
// grid wherever the kernel for two or more blocks per SM runs, at every
// depth and in z segments side by side. A plane not a whole number of tiles
// and radius 2 run the kernel for every launch.
template <class T>
void check_tiles_inside() {
  using stencil::suite::J3d7pt;
  J3d7pt const op;
  int const deepest = max_depth<T, J3d7pt>();
  bool ran_inside = false;
  for (int depth = 1; depth <= deepest; ++depth) {
    auto const p = check<T>(op, {29, 64, 96}, depth, {depth, 2 * depth + 1});
    if (p.native_cuda.inside_kernel) EXPECT_GE(p.blocks_per_sm, 2) << p;
    ran_inside = ran_inside || p.native_cuda.inside_kernel;
  }
  EXPECT_TRUE(ran_inside) << "no depth ran the kernel for tiles inside";
  // The default depth, deep enough in z for segments.
  stencil::Grid<T, 3, Kokkos::CudaSpace> const whole_tiles(
      "u", {29, 64, 96}, {.halo = J3d7pt::radius});
  int const depth =
      stencil::plan(Kokkos::Cuda{}, whole_tiles, op, stencil::DeviceTiling{})
          .depth;
  auto const segmented =
      check<T>(op, {16 * depth * 4 + 5, 64, 96}, depth, {depth + 1});
  std::ostringstream text;
  text << segmented;
  EXPECT_TRUE(segmented.native_cuda.inside_kernel) << segmented;
  EXPECT_NE(text.str().find("kernel for tiles inside the grid"),
            std::string::npos)
      << segmented;
  EXPECT_GT(segmented.native_cuda.z_segments, 1) << segmented;
  if (!stencil_test::small_only()) {
    // Depth 1 in as many z segments as the kernel for every launch holds
    // blocks (4 per SM on sm_90 in float): the kernel for tiles inside
    // holds fewer (3), so these launches keep the other one.
    check<T>(op, {3000, 64, 96}, 1, {1, 2});
  }
  auto const ragged = check<T>(op, {29, 63, 96}, depth, {depth + 1});
  EXPECT_FALSE(ragged.native_cuda.inside_kernel) << ragged;
}

TEST(DeviceTiling, TilesInsideTheGrid) {
  STENCIL_REQUIRE_GPU();
  check_tiles_inside<float>();
  check_tiles_inside<double>();
  auto const radius_two =
      check<float>(stencil::suite::J3d13pt{}, {29, 64, 96}, 2, {3});
  EXPECT_FALSE(radius_two.native_cuda.inside_kernel) << radius_two;
}

// More tiles than resident blocks: the plane is cut into regions that
// overlap by depth*radius cells and run one after another.
TEST(DeviceTiling, SeveralRegions) {
  STENCIL_REQUIRE_GPU();
  if (stencil_test::small_only()) GTEST_SKIP() << "large sizes only";
  using stencil::suite::J3d13pt;
  using stencil::suite::J3d27pt;
  int const d27 = max_depth<double, J3d27pt>();
  auto const p = check<double>(J3d27pt{}, {7, 601, 487}, d27, {d27 + 2});
  EXPECT_GT(p.native_cuda.regions, 1) << p;
  int const d13 = max_depth<float, J3d13pt>();
  auto const q = check<float>(J3d13pt{}, {6, 597, 555}, d13, {d13});
  EXPECT_GT(q.native_cuda.regions, 1) << q;
}

// The grid-sync exchange, measured against the default (tagged) one and
// kept for that: it must give the same results.
template <class T, class Op>
void check_grid_sync_exchange(Op const& op, std::array<int, 3> extents,
                              int depth, int steps) {
  SCOPED_TRACE(std::string(Op::name) + " grid-sync exchange, depth " +
               std::to_string(depth) + ", steps " + std::to_string(steps));
  Case<T, Op> c(op, extents, steps, 7);
  auto const p =
      stencil::plan(Kokkos::Cuda{}, c.grid, op, stencil::DeviceTiling{depth});
  dt::run<T, Kokkos::CudaSpace, Op,
          dt::BarrierExchange<T, stencil::native_cuda::GridSyncBarrier>>(
      Kokkos::Cuda{}, c.grid, op, steps, p);
  Kokkos::fence();
  EXPECT_TRUE(c.matches(steps));
}

TEST(DeviceTiling, GridSyncExchange) {
  STENCIL_REQUIRE_GPU();
  check_grid_sync_exchange<double>(stencil::suite::J3d7pt{}, {13, 70, 45}, 3,
                                   7);
  check_grid_sync_exchange<float>(stencil::suite::J3d13pt{}, {17, 23, 29}, 2,
                                  5);
}

// The exchange buffer kept in L2 as persisting lines (DeviceTiling's
// l2_window): the same results as the reference, a plan that says so, and
// the device's persisting limit and the stream's own window put back after
// the launches.
template <class T, class Op>
void check_l2_window(Op const& op, std::array<int, 3> extents, int depth,
                     int steps) {
  SCOPED_TRACE(std::string(Op::name) + (sizeof(T) == 4 ? " float" : " double") +
               " L2 window, depth " + std::to_string(depth) + ", steps " +
               std::to_string(steps));
  Case<T, Op> c(op, extents, steps, 11);
  stencil::DeviceTiling const policy{
      .depth = depth, .prefetch = 0, .l2_window = true};
  auto const p = stencil::plan(Kokkos::Cuda{}, c.grid, op, policy);
  // Every block's tile's edge cells, in every z segment, are exchanged.
  std::size_t const exchanged_cells =
      static_cast<std::size_t>(p.blocks) *
      dt::TileShapeOf<T, Op, dt::Exchange<T>>::edge_cells;
  auto const device = stencil::native_cuda::current_device_limits();
  EXPECT_EQ(
      p.native_cuda.l2_window_bytes,
      std::min({dt::exchange_parities<Op, dt::Exchange<T>> * (depth - 1) *
                    exchanged_cells * dt::Exchange<T>::cell_bytes,
                device.persisting_l2_max, device.access_policy_window_max}))
      << p;
  std::ostringstream text;
  text << p;
  EXPECT_NE(text.str().find("L2 window: "), std::string::npos) << text.str();
  // From no set-aside L2, so that the window has to raise the limit and the
  // check below sees it put back (a limit already above the buffer's size
  // would be left alone, and the check could not fail).
  ASSERT_EQ(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0), cudaSuccess);
  std::size_t limit_before = 1, limit_after = 1;
  ASSERT_EQ(cudaDeviceGetLimit(&limit_before, cudaLimitPersistingL2CacheSize),
            cudaSuccess);
  ASSERT_LT(limit_before, p.native_cuda.l2_window_bytes);
  stencil::iterate(Kokkos::Cuda{}, c.grid, op, steps, policy);
  Kokkos::fence();
  EXPECT_TRUE(c.matches(steps));
  // The device-wide limit is put back: left raised, it takes L2 from every
  // later kernel.
  ASSERT_EQ(cudaDeviceGetLimit(&limit_after, cudaLimitPersistingL2CacheSize),
            cudaSuccess);
  EXPECT_EQ(limit_after, limit_before);
  cudaStreamAttrValue after{};
  ASSERT_EQ(
      cudaStreamGetAttribute(Kokkos::Cuda{}.cuda_stream(),
                             cudaStreamAttributeAccessPolicyWindow, &after),
      cudaSuccess);
  EXPECT_EQ(after.accessPolicyWindow.num_bytes, 0u);
}

TEST(DeviceTiling, L2Window) {
  STENCIL_REQUIRE_GPU();
  auto const device = stencil::native_cuda::current_device_limits();
  if (device.persisting_l2_max == 0) {
    stencil::Grid<double, 3, Kokkos::CudaSpace> grid("u", {17, 23, 29});
    stencil_test::expect_refused_with(
        [&] {
          stencil::plan(Kokkos::Cuda{}, grid, stencil::suite::J3d7pt{},
                        stencil::DeviceTiling{.l2_window = true});
        },
        "cannot. Use l2_window = false");
    GTEST_SKIP() << device.name << " cannot set L2 aside";
  }
  check_l2_window<double>(stencil::suite::J3d7pt{}, {13, 70, 45}, 3, 7);
  check_l2_window<float>(stencil::suite::J3d27pt{}, {17, 23, 29}, 2, 5);
  check_l2_window<double>(stencil::suite::J3d13pt{}, {13, 70, 45}, 2, 4);
  // A depth-1 launch exchanges nothing: refused, the grid untouched.
  stencil::Grid<double, 3, Kokkos::CudaSpace> grid("u", {20, 30, 40});
  stencil::fill(grid, [](int k, int i, int j) { return 0.25 * i - j + k; });
  auto const before = stencil_test::read_back(grid);
  stencil_test::expect_refused_with(
      [&] {
        stencil::iterate(Kokkos::Cuda{}, grid, stencil::suite::J3d7pt{}, 3,
                         stencil::DeviceTiling{
                             .depth = 1, .prefetch = 0, .l2_window = true});
      },
      "l2_window at depth 1");
  Kokkos::fence();
  EXPECT_EQ(stencil_test::read_back(grid).data, before.data);
  // Off by default.
  auto const p = stencil::plan(Kokkos::Cuda{}, grid, stencil::suite::J3d7pt{},
                               stencil::DeviceTiling{});
  EXPECT_EQ(p.native_cuda.l2_window_bytes, 0u) << p;
}

TEST(DeviceTiling, RefusesWhatItCannotRun) {
  STENCIL_REQUIRE_GPU();
  STENCIL_REQUIRE_ALL_DEPTHS();
  using stencil::suite::J3d7pt;
  stencil::Grid<double, 3, Kokkos::CudaSpace> grid("u", {20, 30, 40});
  stencil::fill(grid, [](int k, int i, int j) { return 0.5 * i + j - k; });
  auto const before = stencil_test::read_back(grid);
  int const deepest = max_depth<double, J3d7pt>();
  stencil_test::expect_refused_naming_deepest(
      [&] {
        stencil::iterate(Kokkos::Cuda{}, grid, J3d7pt{}, 5,
                         stencil::DeviceTiling{deepest + 1});
      },
      deepest);
  EXPECT_THROW(stencil::iterate(Kokkos::Cuda{}, grid, J3d7pt{}, 5,
                                stencil::DeviceTiling{-1}),
               stencil::error);
  stencil::Grid<double, 3, Kokkos::CudaSpace> periodic(
      "p", {20, 30, 40}, {.boundary = stencil::Boundary::periodic});
  EXPECT_THROW(stencil::plan(Kokkos::Cuda{}, periodic, J3d7pt{},
                             stencil::DeviceTiling{2}),
               stencil::error);
  for (int prefetch : {-2, 5}) {
    stencil_test::expect_refused_with(
        [&] {
          stencil::iterate(Kokkos::Cuda{}, grid, J3d7pt{}, 5,
                           stencil::DeviceTiling{2, prefetch});
        },
        "prefetch is " + std::to_string(prefetch));
  }
  // Four stages of staging leave no room for the deepest depth without.
  int const deepest_staged = max_depth<double, J3d7pt>(4);
  ASSERT_LT(deepest_staged, deepest);
  stencil_test::expect_refused_with(
      [&] {
        stencil::iterate(Kokkos::Cuda{}, grid, J3d7pt{}, 5,
                         stencil::DeviceTiling{deepest, 4});
      },
      "largest depth that fits at this prefetch is " +
          std::to_string(deepest_staged));
  Kokkos::fence();
  EXPECT_EQ(stencil_test::read_back(grid).data, before.data);
  // An xy plane past the kernels' 32-bit plane offsets, and the largest
  // that fits with the same x extent: (46337 + 2) x (46341 + 2) cells with
  // the halo is 2^31 - 1 + 4630, (46336 + 2) x (46341 + 2) fits. Both plans
  // decide from the grid's description (no such grid fits in a test).
  stencil::Plan wide;
  wide.extents = {3, 46337, 46341};
  wide.halo = 1;
  wide.radius = 1;
  wide.value_size = 8;
  stencil::Plan fits = wide;
  fits.extents[1] = 46336;
  for (auto const plan :
       {+[](stencil::Plan& p) { dt::plan<double, J3d7pt>(p, 2, 0); },
        +[](stencil::Plan& p) {
          dt::plan_sm_tiling<double, J3d7pt>(p, 2, 0);
        }}) {
    stencil_test::expect_refused_with(
        [&] {
          stencil::Plan p = wide;
          plan(p);
        },
        "an xy plane of the grid with its halo has 2147488277 cells");
    stencil::Plan p = fits;
    EXPECT_NO_THROW(plan(p));
  }
}

TEST(DeviceTiling, PlanReportsTheLaunch) {
  STENCIL_REQUIRE_GPU();
  stencil::Grid<double, 3, Kokkos::CudaSpace> grid("u", {2560, 352, 384});
  auto const p = stencil::plan(Kokkos::Cuda{}, grid, stencil::suite::J3d7pt{},
                               stencil::DeviceTiling{3});
  std::ostringstream text;
  text << p;
  // 12x11 tiles, in as many z segments as the resident blocks hold.
  std::string const blocks =
      "regions 1 of " + std::to_string(12 * 11 * p.native_cuda.z_segments) +
      " blocks";
  for (std::string const part :
       {"backend: native_cuda", "DeviceTiling", "depth 3", "tile 32x32",
        " z segment", blocks.c_str(), "exchange tagged", "registers",
        "prefetch off"}) {
    EXPECT_NE(text.str().find(part), std::string::npos) << text.str();
  }
  // As many segments as the resident blocks hold copies of the 132 tiles
  // (the 2560 planes allow up to 26 at depth 3), covering z exactly.
  int const resident =
      p.blocks_per_sm *
      stencil::native_cuda::current_device_limits().multiprocessors;
  EXPECT_EQ(p.native_cuda.z_segments, std::max(1, resident / (12 * 11))) << p;
  EXPECT_GE(p.native_cuda.z_segments * p.tile.z, 2560) << p;
  EXPECT_LT((p.native_cuda.z_segments - 1) * p.tile.z, 2560) << p;
  EXPECT_EQ(p.blocks, 12 * 11 * p.native_cuda.z_segments) << p;
  EXPECT_LE(p.blocks, resident) << p;
  std::cout << text.str() << '\n';
  // The default depth of a double star: the deepest depth with two blocks
  // per SM if it is 2 or more (on an sm_90 GPU, 4 for j3d7pt and 2 for
  // j3d13pt), else the deepest that fits, at most 6.
  stencil::Grid<double, 3, Kokkos::CudaSpace> halo2("h", {2560, 352, 384},
                                                    {.halo = 2});
  auto double_star = [&](auto op, int sm_90_depth) {
    using Op = decltype(op);
    auto const chosen =
        stencil::plan(Kokkos::Cuda{}, halo2, op, stencil::DeviceTiling{});
    int const deepest = max_depth<double, Op>();
    int two_blocks = 0;
    for (int depth = deepest; depth >= 1 && two_blocks == 0; --depth) {
      auto const at = stencil::plan(Kokkos::Cuda{}, halo2, op,
                                    stencil::DeviceTiling{depth});
      if (at.blocks_per_sm >= 2) two_blocks = depth;
    }
    EXPECT_EQ(chosen.depth, two_blocks >= 2 ? two_blocks : std::min(6, deepest))
        << chosen;
    if (stencil::native_cuda::current_device_limits().compute_capability ==
        90) {
      EXPECT_EQ(chosen.depth, sm_90_depth) << chosen;
      EXPECT_EQ(chosen.blocks_per_sm, 2) << chosen;
    }
  };
  double_star(stencil::suite::J3d7pt{}, 4);
  double_star(stencil::suite::J3d13pt{}, 2);
  // Boxes in either precision and float stars: the deepest depth with two
  // blocks per SM, in z segments (on an sm_90 GPU, depth 2 for double
  // poisson, whose planes are summed in registers: at depth 3 their sums
  // leave room for one block per SM).
  // Halo 2: the radius-2 star plans on it too.
  stencil::Grid<float, 3, Kokkos::CudaSpace> single("b", {2560, 352, 384},
                                                    {.halo = 2});
  auto two_blocks_deepest = [&](auto const& g, auto op) {
    using T = typename std::remove_cvref_t<decltype(g)>::value_type;
    auto const chosen =
        stencil::plan(Kokkos::Cuda{}, g, op, stencil::DeviceTiling{});
    EXPECT_GE(chosen.blocks_per_sm, 2) << chosen;
    EXPECT_GT(chosen.native_cuda.z_segments, 1) << chosen;
    if (chosen.depth < max_depth<T, decltype(op)>()) {
      auto const deeper = stencil::plan(
          Kokkos::Cuda{}, g, op, stencil::DeviceTiling{chosen.depth + 1});
      EXPECT_EQ(deeper.blocks_per_sm, 1) << deeper;
    }
    return chosen;
  };
  auto const double_box =
      two_blocks_deepest(grid, stencil::suite::Poisson19pt{});
  if (stencil::native_cuda::current_device_limits().compute_capability == 90) {
    EXPECT_EQ(double_box.depth, 2) << double_box;
  }
  // Linear double boxes are summed by plane in device tiling, and the plan
  // says so; float boxes, functors that do not declare themselves linear
  // and SM tiling are not.
  auto says_summed = [](stencil::Plan const& p) {
    std::ostringstream s;
    s << p;
    return s.str().find("planes summed in registers") != std::string::npos;
  };
  EXPECT_TRUE(double_box.native_cuda.plane_sums && says_summed(double_box))
      << double_box;
  auto const float_box =
      two_blocks_deepest(single, stencil::suite::Poisson19pt{});
  EXPECT_FALSE(float_box.native_cuda.plane_sums || says_summed(float_box))
      << float_box;
  auto const divided = stencil::plan(
      Kokkos::Cuda{}, grid, stencil::suite::J3d27pt{}, stencil::DeviceTiling{});
  EXPECT_FALSE(divided.native_cuda.plane_sums || says_summed(divided))
      << divided;
  auto const sm_tiling =
      stencil::plan(Kokkos::Cuda{}, grid, stencil::suite::Poisson19pt{},
                    stencil::TemporalBlocking{});
  EXPECT_FALSE(sm_tiling.native_cuda.plane_sums || says_summed(sm_tiling))
      << sm_tiling;
  // With plain loads, double input planes are copied into their ring slot
  // (copies_input_to_ring) in device and SM tiling; float planes are not.
  EXPECT_TRUE(double_box.native_cuda.input_to_ring) << double_box;
  EXPECT_TRUE(sm_tiling.native_cuda.input_to_ring) << sm_tiling;
  EXPECT_FALSE(float_box.native_cuda.input_to_ring) << float_box;
  two_blocks_deepest(single, stencil::suite::J3d7pt{});
  two_blocks_deepest(single, stencil::suite::J3d13pt{});
  auto const staged =
      stencil::plan(Kokkos::Cuda{}, grid, stencil::suite::J3d7pt{},
                    stencil::DeviceTiling{3, 1});
  std::ostringstream staged_text;
  staged_text << staged;
  EXPECT_NE(staged_text.str().find("prefetch 1 (cp.async)"), std::string::npos)
      << staged_text.str();
}

}  // namespace
