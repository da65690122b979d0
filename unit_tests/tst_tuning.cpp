// SPDX-License-Identifier: Apache-2.0
// Auto{.tune = true}: it times plans on a copy of the grid, never the grid,
// takes one that runs correctly, caches it per device, functor and grid,
// and refuses a cache it did not write.
#include "reference.hpp"
#include "stencil_test_spaces.hpp"
#include "test_support.hpp"

#include <stencil/detail/tuning.hpp>
#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using stencil::suite::J2d5pt;
using stencil::suite::J3d7pt;

using stencil_test::expect_error;
using stencil_test::ScopedEnv;

std::string read_text(fs::path const& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

template <class Space>
class Tuning : public ::testing::Test {
 protected:
  using Memory = typename Space::memory_space;
  template <int Rank>
  using Grid = stencil::Grid<double, Rank, Memory>;

  void SetUp() override {
    dir = stencil_test::scratch_directory("stencil-tuning");
    cache_dir.emplace("STENCIL_CACHE_DIR", dir.string());
    auto_tune.emplace("STENCIL_AUTO_TUNE", std::nullopt);
  }
  void TearDown() override {
    auto_tune.reset();
    cache_dir.reset();
    fs::remove_all(dir);
  }
  fs::path cache_file() const { return dir / "tuning.txt"; }

  /// Runs `steps` of `op` from the same random values as `how` says (a
  /// plan or a policy) and with Naive, and expects the same result.
  template <int Rank, class Op, class How>
  void expect_runs_like_naive(std::array<int, Rank> const& extents,
                              Op const& op, How const& how, int steps,
                              stencil::GridOptions options = {}) {
    Grid<Rank> g("g", extents, options), h("h", extents, options);
    auto const init = stencil_test::random_field<double, Rank>(
        g.extents(), g.halo(), op, 1, 7);
    stencil_test::load(g, init);
    stencil_test::load(h, init);
    stencil::iterate(Space{}, g, op, steps, how);
    stencil::iterate(Space{}, h, op, steps, stencil::Naive{});
    Space{}.fence();
    EXPECT_TRUE(stencil_test::matches(stencil_test::read_back(g),
                                      stencil_test::read_back(h), init,
                                      options.boundary, steps));
  }

  fs::path dir;
  std::optional<ScopedEnv> cache_dir, auto_tune;
};
TYPED_TEST_SUITE(Tuning, stencil_test::ExecutionSpaces);

TYPED_TEST(Tuning, TimesCopiesLeavesTheGridAndCachesTheWinner) {
  typename TestFixture::template Grid<2> g("g", {123, 157});
  auto const init = stencil_test::random_field<double, 2>(g.extents(), g.halo(),
                                                          J2d5pt{}, 1, 3);
  stencil_test::load(g, init);
  auto const tuned =
      stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{.tune = true});
  EXPECT_TRUE(tuned.chosen_by_auto);
  EXPECT_EQ(tuned.reason.rfind("tuned: fastest of ", 0), 0u) << tuned.reason;
  EXPECT_NE(tuned.tuning.find("Naive"), std::string::npos) << tuned.tuning;
  EXPECT_NE(tuned.tuning.find("SpatialBlocking"), std::string::npos)
      << tuned.tuning;
  EXPECT_NE(tuned.tuning.find("cached in " + this->cache_file().string()),
            std::string::npos)
      << tuned.tuning;
  if constexpr (stencil::native_available_v<TypeParam>) {
    EXPECT_NE(tuned.tuning.find("TemporalBlocking depth 1 prefetch 0"),
              std::string::npos)
        << tuned.tuning;
  }
  // Both buffers of the grid are as they were: the plans ran on a copy.
  TypeParam{}.fence();
  EXPECT_EQ(stencil_test::read_back(g).data, init.data);

  std::string const cache = read_text(this->cache_file());
  EXPECT_NE(cache.find("format = 2"), std::string::npos) << cache;
  // The tiles a rank-2 TemporalBlocking winner ran, automatic otherwise.
  EXPECT_NE(cache.find(" tiles "), std::string::npos) << cache;
  if (tuned.policy != stencil::PolicyKind::temporal_blocking) {
    EXPECT_NE(cache.find(" tiles automatic measured "), std::string::npos)
        << cache;
  }
  EXPECT_NE(cache.find(" | 123x157 | halo 1 | fixed | 8-byte values = " +
                       stencil::to_string(tuned.policy)),
            std::string::npos)
      << cache;

  // Asked again, Auto reads the cache and makes the same plan.
  auto const again =
      stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{.tune = true});
  EXPECT_EQ(again.tuning.rfind("read from " + this->cache_file().string(), 0),
            0u)
      << again.tuning;
  EXPECT_EQ(again.policy, tuned.policy);
  EXPECT_EQ(again.depth, tuned.depth);
  EXPECT_EQ(again.prefetch, tuned.prefetch);
  EXPECT_EQ(again.tile.x, tuned.tile.x);
  EXPECT_EQ(again.tile.y, tuned.tile.y);
  EXPECT_EQ(again.native_cuda.warp_tiles, tuned.native_cuda.warp_tiles);

  // A grid of another shape is tuned on its own and both stay cached.
  typename TestFixture::template Grid<2> other("other", {40, 33});
  auto const second =
      stencil::plan(TypeParam{}, other, J2d5pt{}, stencil::Auto{.tune = true});
  EXPECT_EQ(second.reason.rfind("tuned: fastest of ", 0), 0u) << second.reason;
  std::string const both = read_text(this->cache_file());
  EXPECT_NE(both.find("123x157"), std::string::npos) << both;
  EXPECT_NE(both.find("40x33"), std::string::npos) << both;

  // The tuned plans compute what Naive computes, over a step count that is
  // not a multiple of a temporal plan's depth.
  this->template expect_runs_like_naive<2>({123, 157}, J2d5pt{}, tuned, 13);
  this->template expect_runs_like_naive<2>({40, 33}, J2d5pt{}, second, 13);
}

TYPED_TEST(Tuning, IterateWithTunedAutoMatchesNaiveIn3D) {
  // In 3D on the native backend the single-step sweep's prefetch depths,
  // SM tiling's and device tiling's depths are among the candidates.
  std::array<int, 3> const extents{17, 23, 29};
  this->template expect_runs_like_naive<3>(extents, J3d7pt{},
                                           stencil::Auto{.tune = true}, 5);
  typename TestFixture::template Grid<3> g("g", extents);
  auto const tuned =
      stencil::plan(TypeParam{}, g, J3d7pt{}, stencil::Auto{.tune = true});
  EXPECT_EQ(tuned.tuning.rfind("read from", 0), 0u) << tuned.tuning;
  if constexpr (stencil::native_available_v<TypeParam>) {
    typename TestFixture::template Grid<3> fresh("fresh", {18, 23, 29});
    auto const timed = stencil::plan(TypeParam{}, fresh, J3d7pt{},
                                     stencil::Auto{.tune = true});
    EXPECT_NE(timed.tuning.find("StreamingSweep prefetch 2"), std::string::npos)
        << timed.tuning;
    // ... SM tiling and device tiling at Auto's depths.
    auto const timed_depths = [&](std::string const& policy, int deepest) {
      for (int depth = 1; depth <= deepest; ++depth) {
        EXPECT_NE(timed.tuning.find(policy + " depth " + std::to_string(depth) +
                                    " prefetch 0"),
                  std::string::npos)
            << timed.tuning;
      }
    };
    // A build capped by STENCIL_NATIVE_MAX_DEPTH has no deeper kernels.
    int const compiled = STENCIL_NATIVE_MAX_DEPTH > 0 ? STENCIL_NATIVE_MAX_DEPTH
                                                      : stencil::detail::auto_device_tiling_depths;
    timed_depths("TemporalBlocking",
                 std::min(stencil::detail::auto_sm_tiling_depths, compiled));
    timed_depths("DeviceTiling",
                 std::min(stencil::detail::auto_device_tiling_depths, compiled));
  }
}

// Auto compiles SM tiling (rank-3 TemporalBlocking) at depths 1 to
// auto_sm_tiling_depths only: a cached plan of such a depth runs through
// those kernels, a deeper one is refused and tuned again.
TYPED_TEST(Tuning, ACachedSmTilingPlanRunsAndADeeperOneIsTunedAgain) {
  if constexpr (!stencil::native_available_v<TypeParam>) {
    GTEST_SKIP() << "SM tiling is a native CUDA policy";
  } else {
#if defined(KOKKOS_ENABLE_CUDA) && STENCIL_ENABLE_NATIVE_CUDA
    // The refusal checked below is Auto's cap; a build capped below it
    // (STENCIL_NATIVE_MAX_DEPTH) refuses the deeper plan for that first.
    if (stencil::native_cuda::max_depth_compiled <=
        stencil::detail::auto_sm_tiling_depths) {
      GTEST_SKIP() << "this build compiles native depths up to "
                   << stencil::native_cuda::max_depth_compiled;
    }
#endif
    std::array<int, 3> const extents{17, 23, 29};
    typename TestFixture::template Grid<3> g("g", extents);
    (void)stencil::plan(TypeParam{}, g, J3d7pt{}, stencil::Auto{.tune = true});
    auto const cache_with = [&](std::string const& policy_depth_prefetch) {
      std::string cache = read_text(this->cache_file());
      std::size_t const from = cache.find(" = ", cache.find("| rank 3 |"));
      std::size_t const to = cache.find(" tile ", from);
      ASSERT_NE(to, std::string::npos) << cache;
      cache.replace(from + 3, to - from - 3, policy_depth_prefetch);
      std::ofstream(this->cache_file()) << cache;
    };
    cache_with("TemporalBlocking depth 2 prefetch 1");
    auto const cached =
        stencil::plan(TypeParam{}, g, J3d7pt{}, stencil::Auto{.tune = true});
    EXPECT_EQ(cached.tuning.rfind("read from", 0), 0u) << cached.tuning;
    EXPECT_EQ(cached.policy, stencil::PolicyKind::temporal_blocking);
    EXPECT_EQ(cached.depth, 2);
    EXPECT_EQ(cached.prefetch, 1);
    // 7 steps: three launches of depth 2 and one of the remainder.
    this->template expect_runs_like_naive<3>(extents, J3d7pt{},
                                             stencil::Auto{.tune = true}, 7);

    int const deeper = stencil::detail::auto_sm_tiling_depths + 1;
    cache_with("TemporalBlocking depth " + std::to_string(deeper) +
               " prefetch 0");
    auto const again =
        stencil::plan(TypeParam{}, g, J3d7pt{}, stencil::Auto{.tune = true});
    EXPECT_EQ(again.reason.rfind("tuned: fastest of ", 0), 0u) << again.reason;
    EXPECT_NE(again.tuning.find("the cached plan no longer runs"),
              std::string::npos)
        << again.tuning;
    EXPECT_NE(again.tuning.find("Auto runs SM tiling at depths 1 to " +
                                std::to_string(deeper - 1)),
              std::string::npos)
        << again.tuning;
    EXPECT_LE(again.depth, deeper - 1);
  }
}

TYPED_TEST(Tuning, PeriodicGridsGetAPlanThatWrapsAround) {
  // Native temporal blocking refuses periodic grids, so the tuned plan is
  // one that wraps: it must match Naive, which refreshes the halo.
  std::array<int, 2> const extents{45, 38};
  stencil::GridOptions const wrap{.halo = 1,
                                  .boundary = stencil::Boundary::periodic};
  typename TestFixture::template Grid<2> g("g", extents, wrap);
  auto const tuned =
      stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{.tune = true});
  EXPECT_EQ(tuned.reason.rfind("tuned: fastest of ", 0), 0u) << tuned.reason;
  EXPECT_NE(tuned.policy, stencil::PolicyKind::temporal_blocking);
  if constexpr (stencil::native_available_v<TypeParam>) {
    EXPECT_NE(tuned.tuning.find("did not fit"), std::string::npos)
        << "the refused temporal plans are counted: " << tuned.tuning;
  }
  this->template expect_runs_like_naive<2>(extents, J2d5pt{}, tuned, 6, wrap);
}

TYPED_TEST(Tuning, ACachedPlanThatNoLongerRunsIsTunedAgain) {
  typename TestFixture::template Grid<2> g("g", {64, 70});
  auto const tuned =
      stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{.tune = true});
  // Auto never runs device tiling on a 2D grid, whatever the file says.
  std::string cache = read_text(this->cache_file());
  std::string const chosen = "= " + stencil::to_string(tuned.policy) + " ";
  std::size_t const at = cache.find(chosen);
  ASSERT_NE(at, std::string::npos) << cache;
  cache.replace(at, chosen.size(), "= DeviceTiling ");
  std::ofstream(this->cache_file()) << cache;
  auto const again =
      stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{.tune = true});
  EXPECT_EQ(again.reason.rfind("tuned: fastest of ", 0), 0u) << again.reason;
  EXPECT_NE(again.tuning.find("the cached plan no longer runs (stencil: "
                              "Auto does not run DeviceTiling on a rank-2"),
            std::string::npos)
      << again.tuning;
  // ... and the file holds a plan that runs again.
  EXPECT_EQ(read_text(this->cache_file()).find("DeviceTiling"),
            std::string::npos);
}

TYPED_TEST(Tuning, RefusesACacheItDidNotWrite) {
  typename TestFixture::template Grid<2> g("g", {64, 70});
  auto const expect_refused = [&](std::string const& text,
                                  std::string const& fragment) {
    fs::create_directories(this->dir);
    std::ofstream(this->cache_file()) << text;
    SCOPED_TRACE("cache holding: " + text);
    expect_error(
        [&] {
          (void)stencil::plan(TypeParam{}, g, J2d5pt{},
                              stencil::Auto{.tune = true});
        },
        {fragment, this->cache_file().string(), "delete"});
  };
  expect_refused("format = 7\n", "line 1: format 7 is not this library's");
  expect_refused("# comment\nformat = 2\nnot an entry\n",
                 "line 3: 'not an entry' is not 'key = value'");
  expect_refused("format = 2\nkey = Naive depth x\n",
                 "line 2: 'Naive depth x' is not '<policy> depth D");
  expect_refused(
      "format = 2\nkey = Fast depth 1 prefetch 0 tile 1 1 1 tiles automatic "
      "measured 2 GCells/s\n",
      "line 2: 'Fast depth 1 prefetch 0 tile 1 1 1 tiles automatic measured 2 "
      "GCells/s' "
      "is not '<policy> depth D");
  expect_refused(
      "key = Naive depth 1 prefetch 0 tile 1 1 1 measured 2 "
      "GCells/s\n",
      "line 1: an entry before the 'format = 2' line");
  expect_refused(
      "format = 2\nkey = Naive depth 1 prefetch 0 tile 1 1 1 tiles rings "
      "measured 2 GCells/s\n",
      "tiles automatic|shared|warps measured");
}

// A cache of an earlier format (before an upgrade) is tuned again and
// rewritten in this one, whatever its entries say.
TYPED_TEST(Tuning, AnEarlierFormatIsTunedAgainAndReplaced) {
  typename TestFixture::template Grid<2> g("g", {64, 70});
  fs::create_directories(this->dir);
  std::ofstream(this->cache_file())
      << "format = 1\nold key = Naive depth 1 prefetch -1 tile 1 1 1 "
         "measured 2 GCells/s\n";
  auto const tuned =
      stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{.tune = true});
  EXPECT_EQ(tuned.reason.rfind("tuned: fastest of ", 0), 0u) << tuned.reason;
  std::string const cache = read_text(this->cache_file());
  EXPECT_NE(cache.find("format = 2"), std::string::npos) << cache;
  EXPECT_EQ(cache.find("old key"), std::string::npos) << cache;
}

TYPED_TEST(Tuning, AnUnwritableCacheStillTunesAndSaysSo) {
  fs::create_directories(this->dir);
  std::ofstream(this->dir / "file") << "x";
  ScopedEnv const below_a_file("STENCIL_CACHE_DIR",
                               (this->dir / "file" / "cache").string());
  typename TestFixture::template Grid<2> g("g", {50, 61});
  auto const tuned =
      stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{.tune = true});
  EXPECT_EQ(tuned.reason.rfind("tuned: fastest of ", 0), 0u) << tuned.reason;
  EXPECT_NE(tuned.tuning.find("not cached: stencil: cannot create the "
                              "directory of Auto's tuning cache"),
            std::string::npos)
      << tuned.tuning;
  this->template expect_runs_like_naive<2>({50, 61}, J2d5pt{}, tuned, 9);
}

TYPED_TEST(Tuning, WithoutACacheDirectoryItStillTunesAndSaysSo) {
  // Neither the device's name in the key nor the timing needs the cache.
  ScopedEnv const cache("STENCIL_CACHE_DIR", std::nullopt);
  ScopedEnv const xdg("XDG_CACHE_HOME", std::nullopt);
  ScopedEnv const home("HOME", std::nullopt);
  typename TestFixture::template Grid<2> g("g", {41, 36});
  auto const tuned =
      stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{.tune = true});
  EXPECT_EQ(tuned.reason.rfind("tuned: fastest of ", 0), 0u) << tuned.reason;
  EXPECT_NE(tuned.tuning.find("not cached: stencil: model: no directory to "
                              "cache"),
            std::string::npos)
      << tuned.tuning;
}

TYPED_TEST(Tuning, TheEnvironmentTurnsItOn) {
  typename TestFixture::template Grid<2> g("g", {64, 70});
  auto const untimed = stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{});
  EXPECT_TRUE(untimed.tuning.empty()) << untimed.tuning;
  {
    ScopedEnv const on("STENCIL_AUTO_TUNE", "1");
    auto const tuned = stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{});
    EXPECT_EQ(tuned.reason.rfind("tuned: ", 0), 0u) << tuned.reason;
  }
  {
    ScopedEnv const off("STENCIL_AUTO_TUNE", "0");
    auto const untimed_again =
        stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{});
    EXPECT_TRUE(untimed_again.tuning.empty()) << untimed_again.tuning;
  }
  ScopedEnv const wrong("STENCIL_AUTO_TUNE", "yes");
  expect_error(
      [&] { (void)stencil::plan(TypeParam{}, g, J2d5pt{}, stencil::Auto{}); },
      {"STENCIL_AUTO_TUNE is 'yes'; it must be 1"});
}

TEST(TuningCache, KeepsEveryKeyAndReplacesOne) {
  fs::path const file =
      stencil_test::scratch_directory("stencil-tuning-cache") / "tuning.txt";
  using stencil::detail::TunedChoice;
  TunedChoice a{stencil::PolicyKind::temporal_blocking, 8, 1, {}, 737.25};
  TunedChoice b{stencil::PolicyKind::spatial_blocking, 0, -1, {32, 4, 16}, 3};
  stencil::detail::write_tuned_choice(file, "gpu | a", a);
  stencil::detail::write_tuned_choice(file, "gpu | b", b);
  auto const back_a = stencil::detail::read_tuned_choice(file, "gpu | a");
  ASSERT_TRUE(back_a.has_value());
  EXPECT_EQ(back_a->policy, a.policy);
  EXPECT_EQ(back_a->depth, 8);
  EXPECT_EQ(back_a->prefetch, 1);
  EXPECT_DOUBLE_EQ(back_a->gcells, 737.25);
  auto const back_b = stencil::detail::read_tuned_choice(file, "gpu | b");
  ASSERT_TRUE(back_b.has_value());
  EXPECT_EQ(back_b->tile.x, 32);
  EXPECT_EQ(back_b->tile.y, 4);
  EXPECT_EQ(back_b->tile.z, 16);
  EXPECT_FALSE(stencil::detail::read_tuned_choice(file, "gpu | c"));
  a.depth = 6;
  stencil::detail::write_tuned_choice(file, "gpu | a", a);
  EXPECT_EQ(stencil::detail::read_tuned_choice(file, "gpu | a")->depth, 6);
  EXPECT_EQ(stencil::detail::read_tuned_choice(file, "gpu | b")->tile.x, 32);
  EXPECT_THROW(stencil::detail::write_tuned_choice(file, "a = b", a),
               stencil::error);
  // Nothing but the file is left in its directory.
  int files = 0;
  for (auto const& entry : fs::directory_iterator(file.parent_path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
  fs::remove_all(file.parent_path());
}

}  // namespace
