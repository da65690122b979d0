// SPDX-License-Identifier: Apache-2.0
// The native single-step sweep against the reference loop: every 2D and 3D
// suite stencil, float and double, fixed and periodic boundaries, every
// number of prefetch stages (0 = plain loads), the bulk copies on sm_90 and
// the plan's own choice of copies, sizes that are not multiples of the
// 1024-cell lines or 64x16 tiles, and grids long enough that thousands of
// segments follow each other.
#include "../reference.hpp"
#include "native_test.hpp"

#include <stencil/native_cuda/common/device.hpp>
#include <stencil/native_cuda/common/prefetch.hpp>

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <vector>

namespace {

using stencil::native_cuda::max_prefetch_stages;

/// Whether this GPU has cp.async.bulk (compute capability 9.0 or newer);
/// elsewhere the plan must refuse bulk copies, which RefusesWhatItCannotRun
/// checks.
bool bulk_copies_run() {
  return stencil::native_cuda::current_device_limits().compute_capability >= 90;
}

/// Whether a plan that leaves the copies to it should choose bulk copies:
/// rank 2 on sm_90, at least one stage, padded rows of whole 16-byte items.
template <class T, int Rank>
bool bulk_by_default(std::array<int, Rank> const& extents, int halo,
                     int stages) {
  return Rank == 2 && bulk_copies_run() && stages >= 1 &&
         (extents[Rank - 1] + 2 * halo) * sizeof(T) % 16 == 0;
}

/// `bulk` unset: the plan chooses, and must choose as bulk_by_default says.
template <class T, class Op>
void check(Op const& op, std::array<int, Op::rank> extents, int prefetch,
           stencil::Boundary boundary, std::initializer_list<int> step_counts,
           int halo = Op::radius, std::optional<bool> bulk = false) {
  stencil::StreamingSweep const policy{prefetch, bulk};
  constexpr int rank = Op::rank;
  unsigned seed = 31;
  for (int steps : step_counts) {
    std::ostringstream where;
    where << Op::name << ' ' << (sizeof(T) == 4 ? "float" : "double")
          << " prefetch=" << prefetch
          << (!bulk   ? " copies chosen by the plan"
              : *bulk ? " bulk"
                      : "")
          << ' ' << stencil::to_string(boundary) << " steps=" << steps
          << " halo=" << halo << " extents=";
    for (int e : extents) where << e << ' ';
    SCOPED_TRACE(where.str());
    auto const initial =
        stencil_test::random_field<T, rank>(extents, halo, op, steps, ++seed);
    auto const expected = stencil_test::reference(initial, op, steps, boundary);
    stencil::Grid<T, rank, Kokkos::CudaSpace> grid(
        "u", extents, {.halo = halo, .boundary = boundary});
    stencil_test::load(grid, initial);
    auto const p = stencil::plan(Kokkos::Cuda{}, grid, op, policy);
    ASSERT_EQ(p.backend, stencil::Backend::native_cuda);
    ASSERT_EQ(p.policy, stencil::PolicyKind::streaming_sweep);
    if (prefetch >= 0) ASSERT_EQ(p.prefetch, prefetch);
    ASSERT_EQ(p.native_cuda.bulk_copy, bulk.value_or(bulk_by_default<T, rank>(
                                           extents, halo, p.prefetch)));
    EXPECT_EQ(p.local_memory_bytes, 0) << "the kernel spills: " << p;
    // The policy, not the plan p: iterate plans it again (the same plan)
    // and compiles only this policy's kernels, where a Plan argument would
    // compile every native family for Op and T.
    stencil::iterate(Kokkos::Cuda{}, grid, op, steps, policy);
    Kokkos::fence();
    EXPECT_TRUE(stencil_test::matches(stencil_test::read_back(grid), expected,
                                      initial, boundary, steps));
  }
}

/// `extents` with x widened (by 0 to 3 cells) so that the padded rows of a
/// halo-radius grid are whole 16-byte items of floats, and so of doubles.
template <int Rank>
std::array<int, Rank> whole_items(std::array<int, Rank> extents, int radius) {
  extents[Rank - 1] += (4 - (extents[Rank - 1] + 2 * radius) % 4) % 4;
  return extents;
}

/// Every prefetch on the small grids, both boundaries and precisions; the
/// plan's default and plain loads on the long one.
template <class Op>
void check_all(Op const& op, std::array<int, Op::rank> small,
               std::array<int, Op::rank> tiled,
               std::array<int, Op::rank> long_grid) {
  for (auto boundary :
       {stencil::Boundary::fixed, stencil::Boundary::periodic}) {
    for (int prefetch = 0; prefetch <= max_prefetch_stages; ++prefetch) {
      check<double>(op, small, prefetch, boundary, {1, 4});
      check<float>(op, small, prefetch, boundary, {3});
    }
    check<double>(op, tiled, -1, boundary, {3});
    check<float>(op, tiled, 1, boundary, {2});
    // The plan's choice of copies: bulk copies for rank 2 on sm_90 where the
    // rows are whole 16-byte items (the widened grid), cp.async on ragged
    // rows. (On rank 3 the choice is cp.async, which the line above runs,
    // and the long grid checks the choice.)
    if constexpr (Op::rank == 2) {
      check<double>(op, whole_items<Op::rank>(tiled, Op::radius), -1, boundary,
                    {3}, Op::radius, std::nullopt);
    }
    check<float>(op, small, -1, boundary, {2}, Op::radius, std::nullopt);
    // A wider halo moves the tiles' 16-byte alignment.
    check<double>(op, tiled, 2, boundary, {2}, Op::radius + 1);
    check<float>(op, tiled, 3, boundary, {2}, Op::radius + 1);
    // Bulk copies, on the tiled grid widened to padded rows of whole
    // 16-byte items in both precisions.
    if (bulk_copies_run()) {
      for (int prefetch : {1, 2, max_prefetch_stages}) {
        check<double>(op, whole_items<Op::rank>(tiled, Op::radius), prefetch,
                      boundary, {1, 3}, Op::radius, true);
        check<float>(op, whole_items<Op::rank>(tiled, Op::radius), prefetch,
                     boundary, {2}, Op::radius, true);
      }
    }
  }
  if (stencil_test::small_only()) return;
  // The plan's choice of copies, then the other kind where it can run.
  auto const long_rows = whole_items<Op::rank>(long_grid, Op::radius);
  check<double>(op, long_rows, -1, stencil::Boundary::fixed, {2}, Op::radius,
                std::nullopt);
  // The plan's default has stages, so only rank, device and rows decide.
  bool const chose_bulk =
      bulk_by_default<double, Op::rank>(long_rows, Op::radius, 1);
  if (bulk_copies_run()) {
    check<double>(op, long_rows, -1, stencil::Boundary::fixed, {2}, Op::radius,
                  !chose_bulk);
  }
  check<double>(op, long_grid, 0, stencil::Boundary::periodic, {1});
  check<float>(op, long_grid, max_prefetch_stages, stencil::Boundary::fixed,
               {3});
}

// Rows whose padded length is a multiple of 16 bytes move 16-byte items,
// others single cells: 2D 37x53 (one partial tile, single cells), 301x2054
// (three tiles across x, 16-byte items in both precisions), 20001x1100
// (16-byte items in double only; 3334 segments of 6 lines per tile for a
// radius of 1, 2501 of 8 for a radius of 2: a segment reads 4r + 4 lines,
// more than the ring holds, 2r + 2 + stages, at all but 4 stages on radius
// 1, so the ring wraps within a segment); 3D 17x23x29 (one partial tile,
// single cells), 29x45x70 (2x3 partial tiles, 16-byte items), 900x45x70 (57
// segments of 16 planes per tile).
template <class Op>
void check_2d(Op const& op) {
  check_all(op, {37, 53}, {301, 2054}, {20001, 1100});
}
template <class Op>
void check_3d(Op const& op) {
  check_all(op, {17, 23, 29}, {29, 45, 70}, {900, 45, 70});
}

TEST(StreamingSweep, J2d5pt) {
  STENCIL_REQUIRE_GPU();
  check_2d(stencil::suite::J2d5pt{});
}
TEST(StreamingSweep, J2d9pt) {
  STENCIL_REQUIRE_GPU();
  check_2d(stencil::suite::J2d9pt{});
}
TEST(StreamingSweep, J2d9ptGol) {
  STENCIL_REQUIRE_GPU();
  check_2d(stencil::suite::J2d9ptGol{});
}
TEST(StreamingSweep, J2d25pt) {
  STENCIL_REQUIRE_GPU();
  check_2d(stencil::suite::J2d25pt{});
}
TEST(StreamingSweep, J3d7pt) {
  STENCIL_REQUIRE_GPU();
  check_3d(stencil::suite::J3d7pt{});
}
TEST(StreamingSweep, J3d13pt) {
  STENCIL_REQUIRE_GPU();
  check_3d(stencil::suite::J3d13pt{});
}
TEST(StreamingSweep, J3d17pt) {
  STENCIL_REQUIRE_GPU();
  check_3d(stencil::suite::J3d17pt{});
}
TEST(StreamingSweep, J3d27pt) {
  STENCIL_REQUIRE_GPU();
  check_3d(stencil::suite::J3d27pt{});
}
TEST(StreamingSweep, Poisson) {
  STENCIL_REQUIRE_GPU();
  check_3d(stencil::suite::Poisson19pt{});
}
TEST(StreamingSweep, Prescaled) {
  STENCIL_REQUIRE_GPU();
  check_2d(stencil::suite::J2d25ptPrescaled{});
  check_3d(stencil::suite::J3d27ptPrescaled{});
}

// Without a shared tile, blocks cover 2 planes each, and a launch has at
// most 65535 blocks along z: 131075 planes take two launches per step, the
// second starting at block 65535. Thin planes keep the grid small.
TEST(StreamingSweep, DirectLoadsPastOneLaunchAlongZ) {
  STENCIL_REQUIRE_GPU();
  for (auto boundary :
       {stencil::Boundary::fixed, stencil::Boundary::periodic}) {
    check<double>(stencil::suite::J3d7pt{}, {131075, 3, 6}, 0, boundary,
                  {1, 2});
    check<float>(stencil::suite::J3d27pt{}, {131075, 5, 9}, 0, boundary, {1});
  }
}

TEST(StreamingSweep, RefusesWhatItCannotRun) {
  STENCIL_REQUIRE_GPU();
  using stencil::suite::J3d7pt;
  stencil::Grid<double, 3, Kokkos::CudaSpace> grid("u", {20, 20, 20});
  stencil::fill(grid, [](int i, int j, int k) { return 0.5 * i + j - k; });
  auto const before = stencil_test::read_back(grid);
  for (int prefetch : {max_prefetch_stages + 1, -2}) {
    stencil_test::expect_refused_with(
        [&] {
          stencil::iterate(Kokkos::Cuda{}, grid, J3d7pt{}, 3,
                           stencil::StreamingSweep{prefetch});
        },
        "use 0 (plain loads) to " + std::to_string(max_prefetch_stages));
  }
  // Bulk copies: no stage of prefetch; padded rows of 23 doubles (not whole
  // 16-byte items); below sm_90, any request.
  bool const sm90 = bulk_copies_run();
  stencil_test::expect_refused_with(
      [&] {
        stencil::iterate(Kokkos::Cuda{}, grid, J3d7pt{}, 3,
                         stencil::StreamingSweep{0, true});
      },
      sm90 ? "needs at least one stage of prefetch, and prefetch is 0"
           : "bulk_copy needs compute capability 9.0");
  stencil::Grid<double, 3, Kokkos::CudaSpace> odd("odd", {20, 20, 21});
  stencil::fill(odd, [](int i, int j, int k) { return 0.5 * i + j - k; });
  auto const odd_before = stencil_test::read_back(odd);
  stencil_test::expect_refused_with(
      [&] {
        stencil::iterate(Kokkos::Cuda{}, odd, J3d7pt{}, 3,
                         stencil::StreamingSweep{2, true});
      },
      sm90 ? "= 23 values of 8 bytes) is not a multiple of 16 bytes; use an x "
             "extent that makes it one (e.g. 22)"
           : "bulk_copy needs compute capability 9.0");
  Kokkos::fence();
  EXPECT_EQ(stencil_test::read_back(grid).data, before.data);
  EXPECT_EQ(stencil_test::read_back(odd).data, odd_before.data);
}

TEST(StreamingSweep, PlanReportsTheLaunch) {
  STENCIL_REQUIRE_GPU();
  stencil::Grid<double, 3, Kokkos::CudaSpace> grid("u", {256, 288, 384});
  for (int prefetch : {0, 2, 3}) {
    bool const bulk = prefetch == 3;
    if (bulk && !bulk_copies_run()) continue;
    auto const p = stencil::plan(Kokkos::Cuda{}, grid, stencil::suite::J3d7pt{},
                                 stencil::StreamingSweep{prefetch, bulk});
    std::ostringstream text;
    text << p;
    // Without prefetch, the 3D sweep has no shared tile.
    std::vector<char const*> parts{"backend: native_cuda", "StreamingSweep",
                                   "registers", "blocks/SM"};
    if (prefetch == 0) {
      parts.insert(parts.end(),
                   {"block of 64x4x2 cells (x, y, z), no shared tile",
                    "prefetch off (every tap loaded directly, through L1)",
                    "shared 0 B/block"});
    } else {
      parts.insert(parts.end(),
                   {"tile 64x16", "16 planes per block",
                    prefetch == 2 ? "prefetch 2 (cp.async)"
                                  : "prefetch 3 (cp.async.bulk, one per line, "
                                    "on mbarriers)"});
    }
    for (char const* part : parts) {
      EXPECT_NE(text.str().find(part), std::string::npos) << text.str();
    }
    std::cout << text.str() << '\n';
  }
  // Left to the plan, a rank-2 grid whose padded rows are whole 16-byte
  // items gets bulk copies on sm_90; one whose rows are not gets cp.async.
  stencil::Grid<double, 2, Kokkos::CudaSpace> whole("whole", {300, 1022});
  stencil::Grid<float, 2, Kokkos::CudaSpace> ragged("ragged", {300, 1021});
  auto const chosen =
      stencil::plan(Kokkos::Cuda{}, whole, stencil::suite::J2d5pt{},
                    stencil::StreamingSweep{});
  auto const fallback =
      stencil::plan(Kokkos::Cuda{}, ragged, stencil::suite::J2d5pt{},
                    stencil::StreamingSweep{});
  EXPECT_EQ(chosen.native_cuda.bulk_copy, bulk_copies_run()) << chosen;
  EXPECT_FALSE(fallback.native_cuda.bulk_copy) << fallback;
  std::ostringstream chosen_text, fallback_text;
  chosen_text << chosen;
  fallback_text << fallback;
  for (char const* part : {"6 lines per block", "prefetch 3 ("}) {
    EXPECT_NE(chosen_text.str().find(part), std::string::npos)
        << chosen_text.str();
  }
  if (bulk_copies_run()) {
    EXPECT_NE(chosen_text.str().find("cp.async.bulk"), std::string::npos)
        << chosen_text.str();
  }
  EXPECT_NE(fallback_text.str().find("prefetch 3 (cp.async)"),
            std::string::npos)
      << fallback_text.str();
}

}  // namespace
