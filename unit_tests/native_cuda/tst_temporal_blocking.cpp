// SPDX-License-Identifier: Apache-2.0
// Native CUDA temporal blocking against the reference loop: every 1D and 2D
// suite stencil, float and double, sizes that are not multiples of the
// block width or the partition height, every depth from 1 to the largest
// that fits, and step counts that are and are not multiples of the depth;
// rank 2 in shared-memory rings with prefetch 0 (plain loads), 1 and 2
// (cp.async), and in warp tiles.
#include "../reference.hpp"
#include "native_test.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace {

using stencil::TemporalBlocking;
using stencil::Tiles2D;

/// A TemporalBlocking variant every test runs at each depth: shared-memory
/// rings with `prefetch` stages, or warp tiles (rank 2).
TemporalBlocking shared(int prefetch) {
  return {.depth = 0, .prefetch = prefetch, .tiles = Tiles2D::shared_memory};
}
TemporalBlocking warps() {
  return {.depth = 0, .prefetch = 0, .tiles = Tiles2D::warp_registers};
}
TemporalBlocking at_depth(TemporalBlocking variant, int depth) {
  variant.depth = depth;
  return variant;
}

/// f.template operator()<K>() with the kernels `variant` runs.
template <class T, class Op, class F>
auto with_kernels(TemporalBlocking const& variant, F&& f) {
  using stencil::native_cuda::temporal_blocking::Kernel;
  if constexpr (Op::rank == 2) {
    if (variant.tiles == Tiles2D::warp_registers) {
      return f.template operator()<Kernel<T, Op, true>>();
    }
  }
  return f.template operator()<Kernel<T, Op>>();
}

template <class T, class Op>
int max_depth(TemporalBlocking const& variant = shared(0)) {
  return with_kernels<T, Op>(variant, [&]<class K>() {
    return K::max_depth(stencil::native_cuda::current_device_limits(),
                        variant.prefetch);
  });
}

template <class T, class Op>
bool fits(int depth, TemporalBlocking const& variant) {
  return with_kernels<T, Op>(variant, [&]<class K>() {
    return K::fits(depth, variant.prefetch,
                   stencil::native_cuda::current_device_limits());
  });
}

template <class T, class Op>
int columns_per_thread(int depth, TemporalBlocking const& variant) {
  return with_kernels<T, Op>(
      variant, [&]<class K>() { return K::thread_shape(depth).columns; });
}

/// The variants every test runs: rank 2 with prefetch 0, 1 and 2 and in
/// warp tiles; rank 1 has nothing to prefetch and no warp tiles.
template <class Op>
std::vector<TemporalBlocking> variants() {
  if constexpr (Op::rank == 1) {
    return {shared(0)};
  } else {
    return {shared(0), shared(1), shared(2), warps()};
  }
}

std::string describe(TemporalBlocking const& variant) {
  return "prefetch=" + std::to_string(variant.prefetch) +
         (variant.tiles == Tiles2D::warp_registers ? " warp tiles"
                                                   : " shared-memory rings");
}

/// A depth below the largest can fail alone (its kernel spills registers
/// where a deeper one, on a narrower block, does not): the plan must refuse
/// it and say which depths fit.
template <class T, class Op>
void check_refused(Op const& op, std::array<int, Op::rank> extents, int depth,
                   TemporalBlocking const& variant) {
  stencil::Grid<T, Op::rank, Kokkos::CudaSpace> grid("u", extents,
                                                     {.halo = Op::radius});
  try {
    (void)stencil::plan(Kokkos::Cuda{}, grid, op, at_depth(variant, depth));
    ADD_FAILURE() << Op::name << " depth " << depth << ' ' << describe(variant)
                  << ": expected a refusal";
  } catch (stencil::error const& e) {
    EXPECT_NE(std::string(e.what()).find("all that fit: "), std::string::npos)
        << e.what();
  }
}

template <class T, class Op>
void check(Op const& op, std::array<int, Op::rank> extents, int depth,
           std::initializer_list<int> step_counts,
           TemporalBlocking const& variant = shared(0)) {
  constexpr int rank = Op::rank;
  unsigned seed = 77;
  TemporalBlocking const policy = at_depth(variant, depth);
  for (int steps : step_counts) {
    std::ostringstream where;
    where << Op::name << ' ' << (sizeof(T) == 4 ? "float" : "double")
          << " depth=" << depth << ' ' << describe(variant)
          << " steps=" << steps << " extents=";
    for (int e : extents) where << e << ' ';
    SCOPED_TRACE(where.str());
    auto const initial = stencil_test::random_field<T, rank>(
        extents, Op::radius, op, steps, ++seed);
    auto const expected =
        stencil_test::reference(initial, op, steps, stencil::Boundary::fixed);
    stencil::Grid<T, rank, Kokkos::CudaSpace> grid("u", extents,
                                                   {.halo = Op::radius});
    stencil_test::load(grid, initial);
    auto const p = stencil::plan(Kokkos::Cuda{}, grid, op, policy);
    ASSERT_EQ(p.backend, stencil::Backend::native_cuda);
    ASSERT_EQ(p.depth, depth);
    ASSERT_EQ(p.prefetch, variant.prefetch);
    ASSERT_EQ(p.native_cuda.warp_tiles,
              variant.tiles == Tiles2D::warp_registers);
    EXPECT_EQ(p.local_memory_bytes, 0) << "the kernel spills: " << p;
    // The policy, not the plan p: iterate plans it again (the same plan)
    // and compiles only this policy's kernels, where a Plan argument would
    // compile every native family for Op and T.
    stencil::iterate(Kokkos::Cuda{}, grid, op, steps, policy);
    Kokkos::fence();
    EXPECT_TRUE(stencil_test::matches(stencil_test::read_back(grid), expected,
                                      initial, stencil::Boundary::fixed,
                                      steps));
  }
}

template <class Op>
void check_all_depths(Op const& op, std::array<int, Op::rank> small,
                      std::array<int, Op::rank> large) {
  for (TemporalBlocking const& v : variants<Op>()) {
    for (int depth = 1; depth <= max_depth<double, Op>(v); ++depth) {
      if (!fits<double, Op>(depth, v)) {
        check_refused<double>(op, small, depth, v);
        continue;
      }
      check<double>(op, small, depth, {depth, 2 * depth + 1}, v);
    }
    for (int depth = 1; depth <= max_depth<float, Op>(v); ++depth) {
      if (!fits<float, Op>(depth, v)) {
        check_refused<float>(op, small, depth, v);
        continue;
      }
      check<float>(op, small, depth, {depth + 1}, v);
    }
  }
  if (stencil_test::small_only()) return;
  for (TemporalBlocking const& v : variants<Op>()) {
    if constexpr (Op::rank == 2) {
      // Depths whose threads own column pairs are shallower than the
      // deepest: run them across several strips too.
      for (int depth = 1; depth <= max_depth<double, Op>(v); ++depth) {
        if (v.tiles != Tiles2D::warp_registers && fits<double, Op>(depth, v) &&
            columns_per_thread<double, Op>(depth, v) > 1) {
          check<double>(op, large, depth, {2 * depth + 1}, v);
        }
      }
    }
    if (int const deepest = max_depth<double, Op>(v); deepest > 0) {
      check<double>(op, large, deepest, {1, deepest, 3 * deepest + 2}, v);
      if constexpr (Op::rank == 2) {
        // Tall and narrow: every block streams a long run of rows through
        // the pipeline (many periods of the ring and of the staging
        // slots), not only its start and end.
        check<double>(op, {9001, 45}, deepest, {deepest + 3}, v);
      }
    }
    if (int const deepest = max_depth<float, Op>(v); deepest > 0) {
      check<float>(op, large, deepest, {7}, v);
      if constexpr (Op::rank == 2) {
        if (v.tiles == Tiles2D::warp_registers) {
          check<float>(op, {9001, 45}, deepest, {deepest + 3}, v);
        }
      }
    }
  }
}

// 2D: 37x53 fits in one block; 301x1117 needs several strips of 256
// computed columns, none of them full, and blocks whose share of rows runs
// from one strip into the next.
TEST(TemporalBlocking, J2d5pt) {
  STENCIL_REQUIRE_GPU();
  check_all_depths(stencil::suite::J2d5pt{}, {37, 53}, {301, 1117});
}
TEST(TemporalBlocking, J2d9pt) {
  STENCIL_REQUIRE_GPU();
  check_all_depths(stencil::suite::J2d9pt{}, {37, 53}, {301, 1117});
}
TEST(TemporalBlocking, J2d9ptGol) {
  STENCIL_REQUIRE_GPU();
  check_all_depths(stencil::suite::J2d9ptGol{}, {37, 53}, {301, 1117});
}
TEST(TemporalBlocking, J2d25pt) {
  STENCIL_REQUIRE_GPU();
  check_all_depths(stencil::suite::J2d25pt{}, {37, 53}, {301, 1117});
}
TEST(TemporalBlocking, Prescaled2D) {
  STENCIL_REQUIRE_GPU();
  check_all_depths(stencil::suite::J2d5ptPrescaled{}, {37, 53}, {301, 1117});
  check_all_depths(stencil::suite::J2d9ptPrescaled{}, {37, 53}, {301, 1117});
  check_all_depths(stencil::suite::J2d9ptGolPrescaled{}, {37, 53}, {301, 1117});
  check_all_depths(stencil::suite::J2d25ptPrescaled{}, {37, 53}, {301, 1117});
}
TEST(TemporalBlocking, Heat1D) {
  STENCIL_REQUIRE_GPU();
  check_all_depths(stencil::suite::Heat1D<1>{}, {1001}, {100003});
  check_all_depths(stencil::suite::Heat1D<2>{}, {1001}, {100003});
  check_all_depths(stencil::suite::Heat1D<3>{}, {1001}, {100003});
}

TEST(TemporalBlocking, RefusesWhatItCannotRun) {
  STENCIL_REQUIRE_GPU();
  STENCIL_REQUIRE_ALL_DEPTHS();
  using stencil::suite::J2d5pt;
  stencil::Grid<double, 2, Kokkos::CudaSpace> grid("u", {64, 64});
  stencil::fill(grid, [](int i, int j) { return 0.5 * i + j; });
  auto const before = stencil_test::read_back(grid);
  int const deepest = max_depth<double, J2d5pt>();
  stencil_test::expect_refused_naming_deepest(
      [&] {
        stencil::iterate(Kokkos::Cuda{}, grid, J2d5pt{}, 5,
                         stencil::TemporalBlocking{deepest + 1});
      },
      deepest);
  EXPECT_THROW(stencil::iterate(Kokkos::Cuda{}, grid, J2d5pt{}, 5,
                                stencil::TemporalBlocking{-1}),
               stencil::error);
  stencil::Grid<double, 2, Kokkos::CudaSpace> periodic(
      "p", {64, 64}, {.boundary = stencil::Boundary::periodic});
  EXPECT_THROW(stencil::plan(Kokkos::Cuda{}, periodic, J2d5pt{},
                             stencil::TemporalBlocking{4}),
               stencil::error);
  // Prefetch outside -1..4, and any on rank 1 (nothing to prefetch).
  for (int prefetch : {-2, 5}) {
    stencil_test::expect_refused_with(
        [&] {
          stencil::iterate(Kokkos::Cuda{}, grid, J2d5pt{}, 5,
                           stencil::TemporalBlocking{4, prefetch});
        },
        "prefetch is " + std::to_string(prefetch));
  }
  stencil::Grid<double, 1, Kokkos::CudaSpace> line("l", {1000});
  stencil_test::expect_refused_with(
      [&] {
        (void)stencil::plan(Kokkos::Cuda{}, line, stencil::suite::Heat1D<1>{},
                            stencil::TemporalBlocking{4, 1});
      },
      "nothing to prefetch");
  // Nor have warp tiles any cp.async stages, and they are rank 2 only.
  stencil_test::expect_refused_with(
      [&] {
        (void)stencil::plan(
            Kokkos::Cuda{}, grid, J2d5pt{},
            TemporalBlocking{
                .depth = 4, .prefetch = 1, .tiles = Tiles2D::warp_registers});
      },
      "no cp.async stages");
  stencil_test::expect_refused_with(
      [&] {
        (void)stencil::plan(Kokkos::Cuda{}, line, stencil::suite::Heat1D<1>{},
                            at_depth(warps(), 4));
      },
      "warp tiles are rank 2 only");
  stencil::Grid<double, 3, Kokkos::CudaSpace> box("b", {16, 16, 16});
  stencil_test::expect_refused_with(
      [&] {
        (void)stencil::plan(Kokkos::Cuda{}, box, stencil::suite::J3d7pt{},
                            at_depth(warps(), 2));
      },
      "warp tiles are rank 2 only");
  // A warp-tile depth beyond those compiled (a double radius-2 level's
  // window takes 20 registers) is refused with what warp tiles need.
  stencil::Grid<double, 2, Kokkos::CudaSpace> wide("w", {64, 64}, {.halo = 2});
  stencil_test::expect_refused_with(
      [&] {
        (void)stencil::plan(Kokkos::Cuda{}, wide, stencil::suite::J2d25pt{},
                            at_depth(warps(), 12));
      },
      "in warp tiles (a depth needs at least half of a warp's columns");
  // The deepest depth without prefetch leaves no room for 4 stages of
  // staging: refused, naming the deepest that does fit with them.
  int const deepest_staged = max_depth<double, J2d5pt>(shared(4));
  ASSERT_LT(deepest_staged, deepest);
  stencil_test::expect_refused_with(
      [&] {
        stencil::iterate(Kokkos::Cuda{}, grid, J2d5pt{}, 5,
                         stencil::TemporalBlocking{deepest, 4});
      },
      "largest depth that fits at this prefetch is " +
          std::to_string(deepest_staged));
  Kokkos::fence();
  EXPECT_EQ(stencil_test::read_back(grid).data, before.data);
}

TEST(TemporalBlocking, PlanReportsTheNativeLaunch) {
  STENCIL_REQUIRE_GPU();
  STENCIL_REQUIRE_ALL_DEPTHS();
  stencil::Grid<double, 2, Kokkos::CudaSpace> grid("u", {8352, 8352});
  auto const p = stencil::plan(Kokkos::Cuda{}, grid, stencil::suite::J2d5pt{},
                               stencil::TemporalBlocking{6});
  std::ostringstream text;
  text << p;
  for (char const* part :
       {"backend: native_cuda", "TemporalBlocking", "depth 6", "threads 384",
        "registers", "blocks/SM 1", "prefetch off"}) {
    EXPECT_NE(text.str().find(part), std::string::npos) << text.str();
  }
  std::cout << text.str() << '\n';
  auto const staged =
      stencil::plan(Kokkos::Cuda{}, grid, stencil::suite::J2d5pt{},
                    stencil::TemporalBlocking{6, 2});
  std::ostringstream staged_text;
  staged_text << staged;
  EXPECT_NE(staged_text.str().find("prefetch 2 (cp.async)"), std::string::npos)
      << staged_text.str();
  EXPECT_GT(staged.scratch_bytes, p.scratch_bytes) << staged_text.str();
  EXPECT_NE(text.str().find("(1 column x 3 rows each)"), std::string::npos)
      << text.str();
  // A double radius-2 box: threads own column pairs at the default depth;
  // a star keeps a column per thread.
  auto const default_plan = [](auto const& op) {
    stencil::Grid<double, 2, Kokkos::CudaSpace> g("w", {64, 10560},
                                                  {.halo = 2});
    return stencil::plan(Kokkos::Cuda{}, g, op, stencil::TemporalBlocking{});
  };
  auto const pairs = default_plan(stencil::suite::J2d25pt{});
  std::ostringstream pairs_text;
  pairs_text << pairs;
  EXPECT_EQ(pairs.native_cuda.columns_per_thread, 2) << pairs_text.str();
  EXPECT_EQ(pairs.native_cuda.rows_per_thread, 2) << pairs_text.str();
  EXPECT_EQ(pairs.depth, 3) << pairs_text.str();
  EXPECT_EQ(pairs.tile.x + 2 * pairs.depth * 2, 2 * pairs.team_size)
      << pairs_text.str();
  EXPECT_NE(pairs_text.str().find("adjacent columns x 2 rows each"),
            std::string::npos)
      << pairs_text.str();
  auto const star = default_plan(stencil::suite::J2d9pt{});
  EXPECT_EQ(star.native_cuda.columns_per_thread, 1) << star;
  EXPECT_EQ(star.native_cuda.rows_per_thread, 3) << star;
  EXPECT_FALSE(star.native_cuda.warp_tiles) << star;
  // Warp tiles: 4 columns a lane in float, one row, no shared memory,
  // four warps (four tiles) a block.
  stencil::Grid<float, 2, Kokkos::CudaSpace> single("s", {8352, 8352});
  auto const tiles =
      stencil::plan(Kokkos::Cuda{}, single, stencil::suite::J2d5ptPrescaled{},
                    at_depth(warps(), 8));
  std::ostringstream tiles_text;
  tiles_text << tiles;
  EXPECT_TRUE(tiles.native_cuda.warp_tiles) << tiles_text.str();
  EXPECT_EQ(tiles.native_cuda.columns_per_thread, 4) << tiles_text.str();
  EXPECT_EQ(tiles.native_cuda.rows_per_thread, 1) << tiles_text.str();
  EXPECT_EQ(tiles.team_size, 128) << tiles_text.str();
  EXPECT_EQ(tiles.scratch_bytes, 0u) << tiles_text.str();
  EXPECT_EQ(tiles.tile.x + 2 * tiles.depth, 128) << tiles_text.str();
  for (char const* part :
       {"warp tiles", "2 x radius iterations ahead", "shared 0 B/block"}) {
    EXPECT_NE(tiles_text.str().find(part), std::string::npos)
        << tiles_text.str();
  }
  // In double 2 columns a lane: 64 per warp.
  stencil::Grid<double, 2, Kokkos::CudaSpace> wide("w", {64, 1000});
  auto const double_tiles =
      stencil::plan(Kokkos::Cuda{}, wide, stencil::suite::J2d5ptPrescaled{},
                    at_depth(warps(), 4));
  EXPECT_EQ(double_tiles.native_cuda.columns_per_thread, 2) << double_tiles;
  EXPECT_EQ(double_tiles.tile.x + 2 * 4, 64) << double_tiles;
  // The divided form is not linear: its pairs read whole neighbourhoods,
  // with plain loads.
  EXPECT_FALSE(pairs.native_cuda.plane_sums) << pairs_text.str();
  EXPECT_EQ(pairs.prefetch, 0) << pairs_text.str();
  EXPECT_EQ(pairs_text.str().find("rows summed"), std::string::npos)
      << pairs_text.str();
}

/// A linear radius-2 box with weights of both signs. Summed by row, the
/// kernel reads the rows a part leaves out as -0, which a positive weight
/// keeps at -0 (an exact no-op when added) and a negative one turns into +0:
/// both must still give the functor's sum.
struct SignedBox {
  static constexpr char const* name = "signed-box";
  static constexpr int rank = 2, radius = 2;
  static constexpr bool linear = true;
  static constexpr stencil::Shape shape = stencil::Shape::box;
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    T total = T(0.5) * in(0, 0);
#pragma unroll
    for (int dy = -2; dy <= 2; ++dy) {
#pragma unroll
      for (int dx = -2; dx <= 2; ++dx) {
        if (dy == 0 && dx == 0) continue;
        T const weight = ((dy + dx) & 1) != 0 ? T(-0.01) : T(0.03);
        total += weight * in(dy, dx);
      }
    }
    return total;
  }
};

TEST(TemporalBlocking, LinearBoxPairsAreSummedByRow) {
  STENCIL_REQUIRE_GPU();
  STENCIL_REQUIRE_ALL_DEPTHS();
  using stencil::suite::J2d25ptPrescaled;
  static_assert(stencil::detail::is_linear<J2d25ptPrescaled>());
  auto const plan_of = [](auto value, stencil::TemporalBlocking policy) {
    using T = decltype(value);
    stencil::Grid<T, 2, Kokkos::CudaSpace> g("s", {64, 10560}, {.halo = 2});
    return stencil::plan(Kokkos::Cuda{}, g, J2d25ptPrescaled{}, policy);
  };
  // The plan's own choice: pairs at depth 3, summed by row, input staged
  // with cp.async one iteration ahead (the plain-load kernel spills).
  auto const summed = plan_of(0.0, {});
  std::ostringstream text;
  text << summed;
  EXPECT_TRUE(summed.native_cuda.plane_sums) << text.str();
  EXPECT_EQ(summed.native_cuda.columns_per_thread, 2) << text.str();
  EXPECT_EQ(summed.depth, 3) << text.str();
  EXPECT_EQ(summed.prefetch, 1) << text.str();
  EXPECT_EQ(summed.local_memory_bytes, 0) << text.str();
  EXPECT_NE(text.str().find("rows summed in registers (linear box)"),
            std::string::npos)
      << text.str();
  // A column per thread (deeper) and float are not summed.
  auto const single = plan_of(0.0, stencil::TemporalBlocking{5, 0});
  EXPECT_EQ(single.native_cuda.columns_per_thread, 1) << single;
  EXPECT_FALSE(single.native_cuda.plane_sums) << single;
  auto const in_float = plan_of(0.0f, {});
  EXPECT_FALSE(in_float.native_cuda.plane_sums) << in_float;
  EXPECT_EQ(in_float.prefetch, 0) << in_float;
  // A user's linear box is summed too.
  stencil::Grid<double, 2, Kokkos::CudaSpace> signed_grid("b", {37, 53},
                                                          {.halo = 2});
  auto const signed_plan = stencil::plan(
      Kokkos::Cuda{}, signed_grid, SignedBox{}, stencil::TemporalBlocking{2});
  EXPECT_TRUE(signed_plan.native_cuda.plane_sums) << signed_plan;
  // Results, at every depth that sums where its kernel fits (on sm_90 this
  // functor's depth-3 kernels spill) and every prefetch; the suite's
  // prescaled j2d25pt is checked in Prescaled2D.
  for (int prefetch : {0, 1, 2}) {
    for (int depth = 1; depth <= 3; ++depth) {
      if (!fits<double, SignedBox>(depth, shared(prefetch))) {
        check_refused<double>(SignedBox{}, {37, 53}, depth, shared(prefetch));
        continue;
      }
      check<double>(SignedBox{}, {37, 53}, depth, {depth, 2 * depth + 1},
                    shared(prefetch));
      if (stencil_test::small_only()) continue;
      check<double>(SignedBox{}, {301, 1117}, depth, {2 * depth + 1},
                    shared(prefetch));
    }
  }
}

/// Where the plan chooses the prefetch, a depth takes plain loads if its
/// kernel fits with them, else one cp.async stage if the staged kernel fits
/// (it holds an iteration's input rows fewer in registers), else it is
/// refused. On sm_90, j2d25pt-prescaled's depth-3 pairs (summed by row)
/// spill with plain loads only, and SignedBox's with both.
template <class Op>
void check_prefetch_follows_the_depth() {
  using K = stencil::native_cuda::temporal_blocking::Kernel<double, Op>;
  stencil::Grid<double, 2, Kokkos::CudaSpace> g("p", {64, 2000},
                                                {.halo = Op::radius});
  for (int depth = 1; depth <= K::compiled_depth(); ++depth) {
    bool const plain = fits<double, Op>(depth, shared(0));
    bool const staged = fits<double, Op>(depth, shared(1));
    if (!plain && !staged) {
      check_refused<double>(Op{}, {64, 2000}, depth, shared(-1));
      stencil_test::expect_refused_with(
          [&] {
            (void)stencil::plan(Kokkos::Cuda{}, g, Op{},
                                stencil::TemporalBlocking{depth});
          },
          "at prefetch 0 or 1 (the plan's choices) does not fit");
      continue;
    }
    auto const p = stencil::plan(Kokkos::Cuda{}, g, Op{},
                                 stencil::TemporalBlocking{depth});
    EXPECT_EQ(p.prefetch, plain ? 0 : 1) << Op::name << '\n' << p;
    EXPECT_EQ(p.local_memory_bytes, 0) << Op::name << '\n' << p;
  }
  // The plan's own depth comes with the prefetch its kernel needs.
  auto const chosen =
      stencil::plan(Kokkos::Cuda{}, g, Op{}, stencil::TemporalBlocking{});
  bool const chosen_plain = fits<double, Op>(chosen.depth, shared(0));
  EXPECT_EQ(chosen.prefetch, chosen_plain ? 0 : 1) << Op::name << '\n'
                                                   << chosen;
}

TEST(TemporalBlocking, PrefetchFollowsTheDepth) {
  STENCIL_REQUIRE_GPU();
  check_prefetch_follows_the_depth<stencil::suite::J2d25ptPrescaled>();
  check_prefetch_follows_the_depth<SignedBox>();
  check_prefetch_follows_the_depth<stencil::suite::J2d9ptGol>();
}

TEST(TemporalBlocking, DefaultDepthFollowsTheDivision) {
  STENCIL_REQUIRE_GPU();
  STENCIL_REQUIRE_ALL_DEPTHS();
  // The depths below are those measured on sm_90's 227 KB of shared memory
  // per block (H100, H200); elsewhere fewer levels fit.
  int optin = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&optin,
                                   cudaDevAttrMaxSharedMemoryPerBlockOptin, 0),
            cudaSuccess);
  if (optin != 232448) GTEST_SKIP() << "shared memory per block " << optin;
  auto const default_plan = [](auto const& op, auto value) {
    using T = decltype(value);
    stencil::Grid<T, 2, Kokkos::CudaSpace> g("d", {64, 8352});
    return stencil::plan(Kokkos::Cuda{}, g, op, shared(-1));
  };
  using stencil::suite::J2d5pt;
  using stencil::suite::J2d5ptPrescaled;
  static_assert(stencil::detail::divisions_of<J2d5pt>() == 1 &&
                stencil::detail::divisions_of<J2d5ptPrescaled>() == 0);
  // Without a division the deepest depth, on a narrow block in double.
  auto const prescaled = default_plan(J2d5ptPrescaled{}, 0.0);
  EXPECT_EQ(prescaled.depth, 12) << prescaled;
  EXPECT_EQ(prescaled.team_size, 256) << prescaled;
  EXPECT_EQ(default_plan(J2d5ptPrescaled{}, 0.0f).depth, 12);
  // With one, the deepest on at least 384 columns, at most 10.
  auto const divided = default_plan(J2d5pt{}, 0.0);
  EXPECT_EQ(divided.depth, 8) << divided;
  EXPECT_EQ(divided.team_size, 384) << divided;
  auto const divided_float = default_plan(J2d5pt{}, 0.0f);
  EXPECT_EQ(divided_float.depth,
            stencil::native_cuda::temporal_blocking::max_divided_star_depth)
      << divided_float;
  EXPECT_EQ(divided_float.team_size, 512) << divided_float;
  // Warp tiles take their own default depth.
  stencil::Grid<float, 2, Kokkos::CudaSpace> g("w", {64, 8352});
  auto const tiles =
      stencil::plan(Kokkos::Cuda{}, g, J2d5ptPrescaled{}, warps());
  EXPECT_EQ(tiles.depth,
            stencil::native_cuda::temporal_blocking::warp_tile_default_depth)
      << tiles;
}

/// Tiles2D::automatic runs the tiles measured faster for the stencil and
/// value type (prefers_warp_tiles_2d), and the plan says which.
template <class T, class Op>
void check_automatic_tiles() {
  stencil::Grid<T, 2, Kokkos::CudaSpace> g("a", {64, 2000},
                                           {.halo = Op::radius});
  auto const p = stencil::plan(Kokkos::Cuda{}, g, Op{}, TemporalBlocking{});
  constexpr bool prefers =
      stencil::native_cuda::temporal_blocking::prefers_warp_tiles_2d<T, Op>;
  EXPECT_EQ(p.native_cuda.warp_tiles, prefers) << Op::name << '\n' << p;
}

TEST(TemporalBlocking, AutomaticTilesFollowTheMeasurements) {
  STENCIL_REQUIRE_GPU();
  STENCIL_REQUIRE_ALL_DEPTHS();
  using namespace stencil::suite;
  [&]<class... Op>(Op...) {
    (check_automatic_tiles<float, Op>(), ...);
    (check_automatic_tiles<double, Op>(), ...);
  }(J2d5pt{}, J2d9pt{}, J2d9ptGol{}, J2d25pt{}, J2d5ptPrescaled{},
    J2d9ptPrescaled{}, J2d9ptGolPrescaled{}, J2d25ptPrescaled{});
  // Of the suite, only the float prescaled Game-of-Life box ran faster in
  // warp tiles; its divided form and every star did not.
  using stencil::native_cuda::temporal_blocking::prefers_warp_tiles_2d;
  static_assert(prefers_warp_tiles_2d<float, J2d9ptGolPrescaled>);
  static_assert(!prefers_warp_tiles_2d<double, J2d9ptGolPrescaled> &&
                !prefers_warp_tiles_2d<float, J2d9ptGol> &&
                !prefers_warp_tiles_2d<float, J2d5ptPrescaled> &&
                !prefers_warp_tiles_2d<float, J2d25ptPrescaled>);
  stencil::Grid<float, 2, Kokkos::CudaSpace> g("g", {64, 2000});
  auto const gol = stencil::plan(Kokkos::Cuda{}, g, J2d9ptGolPrescaled{},
                                 TemporalBlocking{});
  EXPECT_TRUE(gol.native_cuda.warp_tiles) << gol;
  EXPECT_EQ(gol.depth,
            stencil::native_cuda::temporal_blocking::warp_tile_default_depth)
      << gol;
  std::ostringstream text;
  text << gol;
  EXPECT_NE(text.str().find("warp tiles"), std::string::npos) << text.str();
}

}  // namespace
