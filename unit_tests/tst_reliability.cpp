// SPDX-License-Identifier: Apache-2.0
// The holes a misuse review found, each with the test that failed before its
// fix: a moved-from grid that aliased its owner, reads beyond the declared
// radius, failures that were not a stencil::error, and a plan mismatch
// message that did not say what differed. This unit is compiled with
// STENCIL_ENABLE_CHECKS=1 (unit_tests/CMakeLists.txt), so its kernels check
// every read against the radius.
#include "reference.hpp"
#include "stencil_test_spaces.hpp"
#include "test_support.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#if STENCIL_ENABLE_NATIVE_CUDA
#include <stencil/native_cuda/common/cuda_check.hpp>
#endif

#include <gtest/gtest.h>

#include <array>
#include <climits>
#include <string>
#include <utility>

static_assert(STENCIL_ENABLE_CHECKS == 1,
              "tst_reliability.cpp tests the checking build's offset checks");

namespace {

using stencil::suite::J2d5pt;
using stencil_test::expect_error;

/// Declares radius 1 but reads `reach` cells to the right: a run-time
/// offset, so that only the checking build can see it.
struct ReadsTooFar {
  static constexpr int rank = 2;
  static constexpr int radius = 1;
  static constexpr auto shape = stencil::Shape::star;
  int reach = 2;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    return in(0, 0) + in(0, reach);
  }
};

template <class Space>
class Reliability : public ::testing::Test {
 protected:
  using Memory = typename Space::memory_space;
  using Grid2 = stencil::Grid<double, 2, Memory>;

  static stencil_test::HostField<double, 2> seed(Grid2& g) {
    auto f = stencil_test::random_field<double, 2>(g.extents(), g.halo(),
                                                   J2d5pt{}, 1, 7);
    stencil_test::load(g, f);
    return f;
  }
  static bool same(stencil_test::HostField<double, 2> const& a,
                   stencil_test::HostField<double, 2> const& b) {
    return a.data == b.data;
  }
};
TYPED_TEST_SUITE(Reliability, stencil_test::ExecutionSpaces);

// --- 1. moves ---------------------------------------------------------------

TYPED_TEST(Reliability, MovedFromGridIsEmptyAndRefused) {
  using Grid2 = typename TestFixture::Grid2;
  Grid2 owner_source("u", {21, 17});
  auto const initial = TestFixture::seed(owner_source);
  Grid2 owner(std::move(owner_source));
  EXPECT_TRUE(owner_source.empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_FALSE(owner.empty());
  EXPECT_EQ(owner_source.interior_cells(), 0u);

  // Before the fix the moved-from grid shared the owner's buffers, and this
  // call changed the owner's data.
  expect_error(
      [&] { stencil::iterate(TypeParam{}, owner_source, J2d5pt{}, 3); },
      {"empty", "moved from"});
  expect_error(
      [&] {
        (void)stencil::plan(TypeParam{}, owner_source, J2d5pt{},
                            stencil::Auto{});
      },
      {"empty"});
  expect_error(
      [&] { stencil::fill(owner_source, [](int, int) { return 1.0; }); },
      {"fill", "empty"});
  EXPECT_TRUE(TestFixture::same(stencil_test::read_back(owner), initial));

  // Move assignment empties its source the same way, and the target runs.
  Grid2 target;
  EXPECT_TRUE(target.empty());
  target = std::move(owner);
  EXPECT_TRUE(owner.empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_THROW(stencil::iterate(TypeParam{}, owner, J2d5pt{}, 1),
               stencil::bad_input);
  stencil::iterate(TypeParam{}, target, J2d5pt{}, 3, stencil::Naive{});
  TypeParam{}.fence();
  auto const expected =
      stencil_test::reference(initial, J2d5pt{}, 3, stencil::Boundary::fixed);
  EXPECT_TRUE(stencil_test::matches(stencil_test::read_back(target), expected,
                                    initial, stencil::Boundary::fixed, 3));
}

TYPED_TEST(Reliability, DeepCopyCopiesValuesAndRefusesOtherShapes) {
  using Grid2 = typename TestFixture::Grid2;
  Grid2 a("a", {9, 13});
  auto const initial = TestFixture::seed(a);
  stencil::Grid<double, 2, Kokkos::HostSpace> b("b", {9, 13});
  stencil::deep_copy(b, a);
  EXPECT_TRUE(TestFixture::same(stencil_test::read_back(b), initial));
  stencil::iterate(Kokkos::DefaultHostExecutionSpace{}, b, J2d5pt{}, 1);
  Kokkos::fence();
  EXPECT_TRUE(TestFixture::same(stencil_test::read_back(a), initial))
      << "the copy must not share buffers with its source";

  Grid2 other("other", {9, 15});
  expect_error([&] { stencil::deep_copy(other, a); },
               {"deep_copy", "extents or halo"});
  Grid2 empty;
  expect_error([&] { stencil::deep_copy(empty, a); }, {"destination", "empty"});
}

// --- 2. reads beyond the radius -----------------------------------------

TYPED_TEST(Reliability, ReadBeyondRadiusStopsTheCheckingBuild) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  using Grid2 = typename TestFixture::Grid2;
  bool const host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                 typename TypeParam::memory_space>::accessible;
  // A device kernel prints the offsets on stdout, which the death test does
  // not see; its abort is what it checks there.
  std::string const message =
      host ? "in\\(0, 2\\) reads beyond the stencil's declared radius 1" : "";
  for (int reach : {2, 50000000}) {
    EXPECT_DEATH(
        {
          Grid2 g("u", {15, 15}, {.halo = 1});
          stencil::iterate(TypeParam{}, g, ReadsTooFar{reach}, 1,
                           stencil::Naive{});
          TypeParam{}.fence();
        },
        reach == 2 ? message : std::string(host ? "in\\(0, 50000000\\)" : ""));
  }
  // Within the radius the checked build runs and agrees with the reference.
  Grid2 g("u", {15, 15}, {.halo = 1});
  auto const initial = TestFixture::seed(g);
  stencil::iterate(TypeParam{}, g, ReadsTooFar{1}, 2,
                   stencil::SpatialBlocking{});
  TypeParam{}.fence();
  auto const expected = stencil_test::reference(initial, ReadsTooFar{1}, 2,
                                                stencil::Boundary::fixed);
  EXPECT_TRUE(stencil_test::matches(stencil_test::read_back(g), expected,
                                    initial, stencil::Boundary::fixed, 2));
}

// --- 3. one error family ----------------------------------------------------

TYPED_TEST(Reliability, HugeGridIsOutOfMemoryBeforeAllocating) {
  using Memory = typename TestFixture::Memory;
  try {
    stencil::Grid<double, 2, Memory> g("huge", {200000, 200000});
    ADD_FAILURE() << "a 200000^2 double grid (596 GiB) was allocated";
  } catch (stencil::out_of_memory const& e) {
    std::size_t const expected = 2ull * 200002ull * 200002ull * 8ull;
    EXPECT_EQ(e.requested_bytes(), expected);
    EXPECT_LT(e.available_bytes(), expected);
    std::string const what = e.what();
    EXPECT_NE(what.find("grid 'huge' needs"), std::string::npos) << what;
    EXPECT_NE(what.find("free"), std::string::npos) << what;
  }
}

TYPED_TEST(Reliability, ExtentOverflowIsRefusedBeforeAllocating) {
  using Memory = typename TestFixture::Memory;
  // INT_MAX plus two halos used to overflow int and ask Kokkos for 1.7e7 TiB.
  EXPECT_THROW((stencil::Grid<double, 1, Memory>("wide", {INT_MAX})),
               stencil::bad_input);
  expect_error(
      [] {
        stencil::Grid<float, 3, Memory>("wide", {3, INT_MAX - 1, 3},
                                        {.halo = 2});
      },
      {"extent 1 is 2147483646", "at most 2147483643"});
  // Fits int per dimension, but not the memory: out_of_memory, caught as
  // the base class too.
  EXPECT_THROW((stencil::Grid<double, 3, Memory>(
                   "big", {INT_MAX - 2, INT_MAX - 2, INT_MAX - 2})),
               stencil::error);
}

TYPED_TEST(Reliability, PlanMismatchSaysWhatDiffers) {
  using Grid2 = typename TestFixture::Grid2;
  Grid2 fixed("u", {16, 16});
  Grid2 periodic("u", {16, 16}, {.boundary = stencil::Boundary::periodic});
  auto const initial = TestFixture::seed(periodic);
  auto const p = stencil::plan(TypeParam{}, fixed, J2d5pt{}, stencil::Naive{});
  try {
    stencil::iterate(TypeParam{}, periodic, J2d5pt{}, 2, p);
    ADD_FAILURE() << "a plan for a fixed grid ran a periodic one";
  } catch (stencil::bad_input const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("boundary (plan: fixed, this call: periodic)"),
              std::string::npos)
        << what;
    EXPECT_EQ(what.find("halo ("), std::string::npos)
        << "only what differs is listed: " << what;
  }
  EXPECT_TRUE(TestFixture::same(stencil_test::read_back(periodic), initial));
}

TEST(ErrorFamily, EveryClassIsAStencilError) {
  auto catches_as_base = [](auto thrower) {
    try {
      thrower();
    } catch (stencil::error const& e) {
      return std::string(e.what()).rfind("stencil: ", 0) == 0;
    }
    return false;
  };
  EXPECT_TRUE(catches_as_base([] { stencil::detail::throw_bad_input("x"); }));
  EXPECT_TRUE(catches_as_base([] { stencil::detail::throw_unsupported("x"); }));
  EXPECT_TRUE(
      catches_as_base([] { stencil::detail::throw_out_of_memory("x", 2, 1); }));
  EXPECT_TRUE(catches_as_base([] {
    stencil::detail::throw_device_error("call()", "E (what)", "f:1");
  }));
  EXPECT_EQ(stencil::detail::format_bytes(640ull << 30), "640.0 GiB");
  EXPECT_EQ(stencil::detail::format_bytes(512), "512 bytes");
}

TEST(ErrorFamily, UnsupportedNamesWhatCanRun) {
  // A SpatialBlocking tile larger than a team's scratch: valid input that
  // this space cannot run.
  stencil::Grid<double, 2, Kokkos::HostSpace> g("u", {4099, 4099});
  try {
    (void)stencil::plan(Kokkos::DefaultHostExecutionSpace{}, g, J2d5pt{},
                        stencil::SpatialBlocking{{.x = 4099, .y = 4099}});
    GTEST_SKIP() << "this host space's team scratch holds a 4099^2 tile";
  } catch (stencil::unsupported const& e) {
    EXPECT_NE(std::string(e.what()).find("use a smaller tile"),
              std::string::npos)
        << e.what();
  }
}

#if STENCIL_ENABLE_NATIVE_CUDA
TEST(ErrorFamily, CudaFailureIsADeviceError) {
  try {
    STENCIL_CUDA_CHECK(cudaSetDevice(1 << 20));
    ADD_FAILURE() << "cudaSetDevice(1 << 20) succeeded";
  } catch (stencil::device_error const& e) {
    EXPECT_EQ(e.call(), "cudaSetDevice(1 << 20)");
    EXPECT_NE(e.device_message().find("cudaErrorInvalidDevice"),
              std::string::npos)
        << e.device_message();
  }
  (void)cudaGetLastError();
}

TEST(ErrorFamily, NativePolicyOnPeriodicGridIsUnsupported) {
  stencil::Grid<double, 2, Kokkos::CudaSpace> g(
      "u", {64, 64}, {.boundary = stencil::Boundary::periodic});
  EXPECT_THROW((void)stencil::plan(Kokkos::Cuda{}, g, J2d5pt{},
                                   stencil::TemporalBlocking{}),
               stencil::unsupported);
}
#endif

}  // namespace
