// SPDX-License-Identifier: Apache-2.0
// Grid, plan and iterate behaviour beyond numerics: bad input is refused
// with a message that names the problem, and refused calls change nothing.
#include "reference.hpp"
#include "stencil_test_spaces.hpp"
#include "test_support.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#include <gtest/gtest.h>

#include <array>
#include <sstream>
#include <string>

namespace {

using stencil::suite::J2d5pt;
using stencil::suite::J2d9pt;
using stencil::suite::J3d13pt;
using stencil::suite::J3d27pt;
using stencil::suite::J3d7pt;

using stencil_test::expect_error;

template <class Space>
class Api : public ::testing::Test {
 protected:
  using Memory = typename Space::memory_space;
  template <int Rank>
  using Grid = stencil::Grid<double, Rank, Memory>;

  /// A grid with distinct values everywhere, and its host copy.
  template <int Rank, class Op>
  stencil_test::HostField<double, Rank> seed(Grid<Rank>& g, Op const& op) {
    auto f = stencil_test::random_field<double, Rank>(g.extents(), g.halo(), op,
                                                      1, 99);
    stencil_test::load(g, f);
    return f;
  }
  template <int Rank>
  void expect_unchanged(Grid<Rank> const& g,
                        stencil_test::HostField<double, Rank> const& before) {
    EXPECT_EQ(stencil_test::read_back(g).data, before.data);
  }
};
TYPED_TEST_SUITE(Api, stencil_test::ExecutionSpaces);

TYPED_TEST(Api, GridShape) {
  typename TestFixture::template Grid<3> g("g", {4, 5, 6}, {.halo = 2});
  EXPECT_EQ(g.extent(0), 4);
  EXPECT_EQ(g.extent(2), 6);
  EXPECT_EQ(g.padded_extent(1), 9);
  EXPECT_EQ(g.current().extent(2), 10u);
  EXPECT_EQ(g.interior().extent(0), 4u);
  EXPECT_EQ(g.interior().extent(2), 6u);
  EXPECT_EQ(g.interior_cells(), 120u);
  auto const* a = g.current().data();
  g.swap();
  EXPECT_EQ(g.next().data(), a);
  EXPECT_NE(g.current().data(), a);
}

TYPED_TEST(Api, FillSetsHaloAndInteriorOfBothBuffers) {
  typename TestFixture::template Grid<2> g("g", {3, 4});
  stencil::fill(g, [](int i, int j) { return 10.0 * i + j; });
  for (auto const& view : {g.current(), g.next()}) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
    EXPECT_EQ(h(0, 0), -11.0);  // halo corner: interior (-1, -1)
    EXPECT_EQ(h(1, 1), 0.0);
    EXPECT_EQ(h(4, 5), 34.0);  // halo corner: interior (3, 4)
  }
}

TYPED_TEST(Api, BadGridConstruction) {
  using G2 = typename TestFixture::template Grid<2>;
  expect_error([] { G2("g", {0, 5}); }, {"extent 0 is 0", "positive"});
  expect_error([] { G2("g", {5, -3}); }, {"extent 1 is -3"});
  expect_error([] { G2("g", {5, 5}, {.halo = -1}); }, {"halo is -1"});
}

TYPED_TEST(Api, ExtentSmallerThanStencilIsRefusedAndGridUntouched) {
  typename TestFixture::template Grid<2> g("g", {4, 40}, {.halo = 2});
  auto const before = this->seed(g, J2d9pt{});
  expect_error([&] { stencil::iterate(TypeParam{}, g, J2d9pt{}, 3); },
               {"extent 0 is 4", "at least 5"});
  this->expect_unchanged(g, before);
}

TYPED_TEST(Api, HaloNarrowerThanRadiusIsRefusedAndGridUntouched) {
  typename TestFixture::template Grid<2> g("g", {20, 20});  // halo 1
  auto const before = this->seed(g, J2d5pt{});
  expect_error(
      [&] { stencil::iterate(TypeParam{}, g, J2d9pt{}, 3, stencil::Naive{}); },
      {"halo of 1", "radius is 2", ".halo = 2"});
  this->expect_unchanged(g, before);
}

TYPED_TEST(Api, NegativeStepsAreRefusedAndZeroStepsDoNothing) {
  typename TestFixture::template Grid<2> g("g", {9, 11});
  auto const before = this->seed(g, J2d5pt{});
  auto const* current = g.current().data();
  expect_error([&] { stencil::iterate(TypeParam{}, g, J2d5pt{}, -1); },
               {"steps is -1", "0 or more"});
  stencil::iterate(TypeParam{}, g, J2d5pt{}, 0);
  TypeParam{}.fence();
  EXPECT_EQ(g.current().data(), current);
  this->expect_unchanged(g, before);
}

TYPED_TEST(Api, ZeroTileIsRefusedAndGridUntouched) {
  typename TestFixture::template Grid<3> g("g", {6, 7, 8});
  auto const before = this->seed(g, J3d7pt{});
  for (stencil::Tile tile : {stencil::Tile{.x = 0, .y = 4, .z = 4},
                             stencil::Tile{.x = 8, .y = 0, .z = 4},
                             stencil::Tile{.x = 8, .y = 4, .z = 0}}) {
    expect_error(
        [&] {
          stencil::iterate(TypeParam{}, g, J3d7pt{}, 2,
                           stencil::SpatialBlocking{tile});
        },
        {"zero or negative", "at least 1"});
  }
  this->expect_unchanged(g, before);
}

TYPED_TEST(Api, PlanDescribesTheRunAndIsReusable) {
  typename TestFixture::template Grid<2> g("g", {64, 80});
  auto const p = stencil::plan(TypeParam{}, g, J2d5pt{},
                               stencil::SpatialBlocking{{.x = 32, .y = 4}});
  EXPECT_EQ(p.policy, stencil::PolicyKind::spatial_blocking);
  EXPECT_EQ(p.tile.x, 32);
  EXPECT_EQ(p.tile.y, 4);
  EXPECT_EQ(p.execution_space, TypeParam::name());
  std::ostringstream text;
  text << p;
  for (char const* part : {"policy: SpatialBlocking", "tile x=32 y=4",
                           "backend: portable", "64x80", "depth 1"}) {
    EXPECT_NE(text.str().find(part), std::string::npos) << text.str();
  }
  auto const automatic =
      stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{});
  EXPECT_TRUE(automatic.chosen_by_auto);
  std::ostringstream auto_text;
  auto_text << automatic;
  EXPECT_NE(auto_text.str().find("chosen by Auto"), std::string::npos);

  // The plan runs, and gives what the policy gives.
  typename TestFixture::template Grid<2> h("h", {64, 80});
  auto const init = this->seed(g, J2d5pt{});
  stencil_test::load(h, init);
  stencil::iterate(TypeParam{}, g, J2d5pt{}, 5, p);
  stencil::iterate(TypeParam{}, h, J2d5pt{}, 5, stencil::Naive{});
  TypeParam{}.fence();
  EXPECT_TRUE(stencil_test::matches(stencil_test::read_back(g),
                                    stencil_test::read_back(h), init,
                                    stencil::Boundary::fixed, 5));
}

// How a rank-3 native temporal plan says its input comes in, read from
// its text (all a user sees of it). Filled in by hand, so that it runs on
// every build: only a CUDA build makes native plans.
TEST(PlanText, SaysHowTheRank3TemporalKernelsLoadTheirInput) {
  auto text = [](stencil::Plan const& p) {
    std::ostringstream s;
    s << p;
    return s.str();
  };
  stencil::Plan p;
  p.backend = stencil::Backend::native_cuda;
  p.space_backend = stencil::Backend::native_cuda;
  p.rank = 3;
  p.depth = 4;
  for (auto const policy : {stencil::PolicyKind::device_tiling,
                            stencil::PolicyKind::temporal_blocking}) {
    p.policy = policy;
    p.prefetch = 0;
    p.native_cuda.input_to_ring = false;
    EXPECT_NE(text(p).find("prefetch off (plain loads, an iteration ahead)"),
              std::string::npos)
        << text(p);
    p.native_cuda.input_to_ring = true;
    EXPECT_NE(text(p).find("prefetch off (each input plane copied with "
                           "cp.async into its ring slot as its iteration "
                           "starts)"),
              std::string::npos)
        << text(p);
    EXPECT_EQ(text(p).find("an iteration ahead"), std::string::npos) << text(p);
    p.native_cuda.input_to_ring = false;
    p.prefetch = 2;
    EXPECT_NE(text(p).find("prefetch 2 (cp.async)"), std::string::npos)
        << text(p);
  }
}

// The model predicts where its device figures come from the native
// backend's calibration, and says why not elsewhere.
TYPED_TEST(Api, PlanCarriesTheModelsPrediction) {
  typename TestFixture::template Grid<2> g("g", {300, 301});
  auto const p = stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Naive{});
  std::ostringstream text;
  text << p;
  if constexpr (stencil::native_available_v<TypeParam>) {
    ASSERT_TRUE(p.prediction.has_value()) << text.str();
    EXPECT_GT(p.prediction->gcells, 0);
    EXPECT_EQ(p.prediction->limit, stencil::model::Limit::dram);
    EXPECT_NE(text.str().find("; model: "), std::string::npos) << text.str();
    EXPECT_NE(p.model_note.find("device figures"), std::string::npos)
        << p.model_note;
  } else {
    EXPECT_FALSE(p.prediction.has_value());
    EXPECT_NE(text.str().find("model: no prediction"), std::string::npos)
        << text.str();
  }
}

// Auto runs native temporal blocking on rank-2 grids with fixed boundaries
// where the native backend is there, and says what the model predicted;
// periodic grids, which it refuses, get Naive with the reason.
TYPED_TEST(Api, AutoSaysWhatItChoseAndWhy) {
  typename TestFixture::template Grid<2> g("g", {300, 301});
  auto const fixed = stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{});
  EXPECT_TRUE(fixed.chosen_by_auto);
  typename TestFixture::template Grid<2> wrapped(
      "wrapped", {300, 301}, {.boundary = stencil::Boundary::periodic});
  auto const periodic =
      stencil::plan(TypeParam{}, wrapped, J2d5pt{}, stencil::Auto{});
  EXPECT_TRUE(periodic.chosen_by_auto);
  EXPECT_EQ(periodic.policy, stencil::PolicyKind::naive);
  if constexpr (stencil::native_available_v<TypeParam>) {
    EXPECT_EQ(fixed.policy, stencil::PolicyKind::temporal_blocking);
    EXPECT_NE(fixed.reason.find("the model predicts"), std::string::npos)
        << fixed.reason;
    EXPECT_NE(periodic.reason.find("cannot run"), std::string::npos)
        << periodic.reason;
  } else {
    EXPECT_EQ(fixed.policy, stencil::PolicyKind::naive);
  }
  // Whatever it chose runs and matches Naive.
  auto const init = this->seed(g, J2d5pt{});
  typename TestFixture::template Grid<2> h("h", {300, 301});
  stencil_test::load(h, init);
  stencil::iterate(TypeParam{}, g, J2d5pt{}, 7, fixed);
  stencil::iterate(TypeParam{}, h, J2d5pt{}, 7, stencil::Naive{});
  TypeParam{}.fence();
  EXPECT_TRUE(stencil_test::matches(stencil_test::read_back(g),
                                    stencil_test::read_back(h), init,
                                    stencil::Boundary::fixed, 7));
}

// In 3D, untimed Auto follows a rule on the value type, shape and radius
// measured on the suite where the native backend is there: device tiling
// at its default depth for double radius 1 and double radius-2 stars and
// for float radius-1 stars, Naive otherwise; a grid the native plan refuses
// (periodic) gets Naive with the refusal. Whether each choice
// computes what the reference does is tst_stencils_3d's business (it runs Auto
// on every 3D stencil).
TYPED_TEST(Api, AutoIn3DChoosesByValueTypeShapeAndRadius) {
  using Memory = typename TypeParam::memory_space;
  std::array<int, 3> const extents{17, 23, 29};
  auto const auto_plan = [&]<class T, class Op>(T, Op op,
                                                stencil::Boundary boundary =
                                                    stencil::Boundary::fixed) {
    stencil::Grid<T, 3, Memory> g("g", extents,
                                  {.halo = Op::radius, .boundary = boundary});
    return stencil::plan(TypeParam{}, g, op, stencil::Auto{});
  };
  auto const box = auto_plan(double{}, J3d27pt{});
  auto const box_periodic =
      auto_plan(double{}, J3d27pt{}, stencil::Boundary::periodic);
  auto const box_float = auto_plan(float{}, J3d27pt{});
  auto const star2 = auto_plan(double{}, J3d13pt{});
  auto const star1 = auto_plan(double{}, J3d7pt{});
  auto const star1_float = auto_plan(float{}, J3d7pt{});
  auto const star1_float_periodic =
      auto_plan(float{}, J3d7pt{}, stencil::Boundary::periodic);
  auto const star2_float = auto_plan(float{}, J3d13pt{});
  for (auto const* p : {&box, &box_periodic, &box_float, &star2, &star1,
                        &star1_float, &star1_float_periodic, &star2_float}) {
    EXPECT_TRUE(p->chosen_by_auto);
    EXPECT_FALSE(p->reason.empty());
  }
  // Host spaces block rank-3 boxes in scratch (the measured host rule);
  // devices run them one kernel per step unless a native plan wins.
  constexpr bool host = stencil::detail::is_host_space_v<TypeParam>;
  auto const host_box =
      host ? stencil::PolicyKind::spatial_blocking : stencil::PolicyKind::naive;
  EXPECT_EQ(box_periodic.policy, host_box);
  EXPECT_EQ(star1_float_periodic.policy, stencil::PolicyKind::naive);
  EXPECT_EQ(star2_float.policy, stencil::PolicyKind::naive);
  EXPECT_EQ(box_float.policy, host_box);
  if constexpr (stencil::native_available_v<TypeParam>) {
    // Auto runs device tiling at the depth its plan chooses among the
    // depths Auto compiles (1 to auto_device_tiling_depths). That is what
    // is guaranteed: the plan's default itself depends on the registers
    // ptxas gave each depth's kernel (two blocks per SM or one), so an
    // uncapped DeviceTiling{} may choose a depth past Auto's cap.
    auto const device_tiling_default = [&]<class T, class Op>(T, Op) {
      stencil::Grid<T, 3, Memory> g("g", extents, {.halo = Op::radius});
      stencil::Plan p = stencil::detail::describe<Op>(TypeParam::name(), g);
      stencil::detail::plan_with<TypeParam, T, Op,
                                 stencil::detail::auto_kinds<3>>(
          p, stencil::DeviceTiling{});
      return p.depth;
    };
    for (auto const* p : {&star1, &box, &star2, &star1_float}) {
      EXPECT_EQ(p->policy, stencil::PolicyKind::device_tiling) << *p;
      EXPECT_LE(p->depth, stencil::detail::auto_device_tiling_depths) << *p;
      EXPECT_NE(p->reason.find("device tiling"), std::string::npos)
          << p->reason;
      EXPECT_NE(p->reason.find("the model predicts"), std::string::npos)
          << p->reason;
    }
    EXPECT_EQ(star1.depth, device_tiling_default(double{}, J3d7pt{}));
    EXPECT_EQ(box.depth, device_tiling_default(double{}, J3d27pt{}));
    EXPECT_EQ(star2.depth, device_tiling_default(double{}, J3d13pt{}));
    EXPECT_EQ(star1_float.depth, device_tiling_default(float{}, J3d7pt{}));
    EXPECT_NE(box_periodic.reason.find("cannot run"), std::string::npos)
        << box_periodic.reason;
    EXPECT_NE(star1_float_periodic.reason.find("cannot run"), std::string::npos)
        << star1_float_periodic.reason;
    for (auto const* p : {&box_float, &star2_float}) {
      EXPECT_NE(p->reason.find("float"), std::string::npos) << p->reason;
    }
  } else {
    EXPECT_EQ(star1.policy, stencil::PolicyKind::naive);
    EXPECT_EQ(star1_float.policy, stencil::PolicyKind::naive);
    EXPECT_EQ(box.policy, host_box);
    EXPECT_EQ(star2.policy, stencil::PolicyKind::naive);
    if constexpr (host) {
      EXPECT_NE(box.reason.find("scratch ring"), std::string::npos)
          << box.reason;
    }
  }
}

TYPED_TEST(Api, PlanForAnotherGridIsRefused) {
  typename TestFixture::template Grid<2> g("g", {64, 80});
  typename TestFixture::template Grid<2> other("other", {64, 81});
  auto const before = this->seed(other, J2d5pt{});
  auto const p = stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Naive{});
  expect_error([&] { stencil::iterate(TypeParam{}, other, J2d5pt{}, 1, p); },
               {"different run", "64x80", "64x81"});
  this->expect_unchanged(other, before);
}

TYPED_TEST(Api, PeriodicHaloWiderThanTheInterior) {
  // A step refreshes the input buffer's halo, which then becomes next().
  // Every halo cell, also those beyond the stencil's reach, must mirror
  // interior cell (i mod n), however many times the halo wraps around.
  using Op = stencil::suite::Heat1D<1>;
  for (int extent : {3, 4, 7}) {
    int const halo = 9;
    stencil::Grid<double, 1, typename TypeParam::memory_space> g(
        "g", {extent}, {.halo = halo, .boundary = stencil::Boundary::periodic});
    auto const init =
        stencil_test::random_field<double, 1>(g.extents(), halo, Op{}, 1, 21);
    stencil_test::load(g, init);
    stencil::iterate(TypeParam{}, g, Op{}, 1, stencil::Naive{});
    auto refreshed =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, g.next());
    for (int i = -halo; i < extent + halo; ++i) {
      int const source = ((i % extent) + extent) % extent;
      EXPECT_EQ(refreshed(i + halo), init.data[init.index(0, 0, source)])
          << "extent " << extent << ", cell " << i;
    }
    // And the step itself matches the reference.
    EXPECT_TRUE(stencil_test::matches(
        stencil_test::read_back(g),
        stencil_test::reference(init, Op{}, 1, stencil::Boundary::periodic),
        init, stencil::Boundary::periodic, 1));
  }
}

TYPED_TEST(Api, BackendTrait) {
  // Naive and SpatialBlocking run on the portable backend on every space.
  typename TestFixture::template Grid<1> g("g", {100});
  auto const p = stencil::plan(TypeParam{}, g, stencil::suite::Heat1D<1>{},
                               stencil::Naive{});
  EXPECT_EQ(p.backend, stencil::Backend::portable);
  EXPECT_EQ(p.space_backend, stencil::backend_for<TypeParam>);
  EXPECT_EQ(stencil::backend_for<Kokkos::Serial>, stencil::Backend::portable);
#if defined(KOKKOS_ENABLE_CUDA)
  EXPECT_EQ(stencil::backend_for<Kokkos::Cuda>,
            STENCIL_ENABLE_NATIVE_CUDA ? stencil::Backend::native_cuda
                                       : stencil::Backend::portable);
#endif
}

}  // namespace
