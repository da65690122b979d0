// SPDX-License-Identifier: Apache-2.0
// The device path of the Naive policy (the vector kernel at every width the
// value type allows, and the scalar kernel) run on a host space against the
// reference. On a GPU the stencil tests run this path for real; here its
// index arithmetic, bounds and halo handling are checked on any machine, at
// sizes chosen to hit every edge: rows of 1 to 3 cells, padded rows of every
// residue mod 4, halos wider than the radius, rows needing several warps.
#include "reference.hpp"
#include "test_support.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <sstream>

namespace {

using Host = Kokkos::DefaultHostExecutionSpace;
using stencil::detail::make_layout;
using stencil::detail::naive_vector_width;
using stencil::detail::PaddedLayout;

/// `steps` steps of the device path with vector width V (1: scalar kernel)
/// and index type Index, as run_portable does them.
template <int V, class Index, class T, int Rank, class Op>
void device_path_steps(stencil::Grid<T, Rank, Kokkos::HostSpace>& grid,
                       Op const& op, int steps) {
  PaddedLayout const layout = make_layout<Rank>(grid.extents(), grid.halo());
  Host space;
  for (int s = 0; s < steps; ++s) {
    T* const in = grid.current().data();
    T* const out = grid.next().data();
    stencil::detail::refresh_boundaries<Host, T, Rank>(
        space, in, layout, grid.boundaries(), grid.time());
    stencil::detail::naive_device_step_as<V, Host, T, Rank, Op, Index>(
        space, in, out, layout, op);
    grid.swap();
  }
  space.fence();
}

/// Every width the grid allows, on both boundaries, against the reference.
/// Index: the kernels' index type (64-bit is used past 2^30 padded cells).
template <class T, class Op, class Index = int>
void check_size(Op const& op, std::array<int, Op::rank> const& extents,
                int halo) {
  constexpr int Rank = Op::rank;
  constexpr int steps = 3;
  for (auto boundary :
       {stencil::Boundary::fixed, stencil::Boundary::periodic}) {
    auto const initial =
        stencil_test::random_field<T, Rank>(extents, halo, op, steps, 77);
    auto const expected = stencil_test::reference(initial, op, steps, boundary);
    auto run = [&](auto width) {
      constexpr int V = decltype(width)::value;
      stencil::Grid<T, Rank, Kokkos::HostSpace> grid(
          "u", extents, {.halo = halo, .boundary = boundary});
      PaddedLayout const layout = make_layout<Rank>(extents, halo);
      int const allowed = naive_vector_width<T, Rank>(
          grid.current().data(), grid.next().data(), layout);
      if (V > allowed) return;
      std::ostringstream where;
      where << stencil_test::name_of<Op>() << ' '
            << (sizeof(T) == 4 ? "float" : "double") << " V=" << V
            << " (allowed " << allowed << ") index " << 8 * sizeof(Index)
            << "-bit " << stencil::to_string(boundary) << " halo=" << halo
            << " extents=";
      for (int e : extents) where << e << ' ';
      SCOPED_TRACE(where.str());
      stencil_test::load(grid, initial);
      device_path_steps<V, Index>(grid, op, steps);
      EXPECT_TRUE(stencil_test::matches(stencil_test::read_back(grid), expected,
                                        initial, boundary, steps));
    };
    run(std::integral_constant<int, 1>{});
    run(std::integral_constant<int, 2>{});
    if constexpr (sizeof(T) == 4) run(std::integral_constant<int, 4>{});
  }
}

template <class Op>
void check_sizes(Op const& op, std::initializer_list<int> outer,
                 std::initializer_list<int> xs) {
  for (int extra_halo : {0, 1, 2}) {
    int const halo = Op::radius + extra_halo;
    for (int o : outer) {
      for (int x : xs) {
        std::array<int, Op::rank> extents;
        extents.fill(o);
        extents[Op::rank - 1] = x;
        check_size<double>(op, extents, halo);
        check_size<float>(op, extents, halo);
      }
    }
  }
}

// Rank 2: 1 to 9 rows (partial row groups), rows of 1 to 300 cells (300
// floats need three warps at width 4).
constexpr std::initializer_list<int> rows_2d{1, 6, 9};
constexpr std::initializer_list<int> xs_2d{1, 2, 3, 6, 37, 70, 300};

TEST(NaiveDevicePath, J2d5pt) {
  check_sizes(stencil::suite::J2d5pt{}, rows_2d, xs_2d);
}
TEST(NaiveDevicePath, J2d9pt) {
  check_sizes(stencil::suite::J2d9pt{}, rows_2d, xs_2d);
}
TEST(NaiveDevicePath, J2d9ptGol) {
  check_sizes(stencil::suite::J2d9ptGol{}, rows_2d, xs_2d);
}
TEST(NaiveDevicePath, J2d25pt) {
  check_sizes(stencil::suite::J2d25pt{}, rows_2d, xs_2d);
}

// Rank 3: nz = ny in {1, 3, 6}, and deep grids whose planes span several
// runs of the streaming kernel (16 planes for radius 1, 24 for radius 2)
// and end partway through a run and partway through a ring turn, with runs
// going up and down.
constexpr std::initializer_list<int> outer_3d{1, 3, 6};
constexpr std::initializer_list<int> xs_3d{1, 2, 3, 6, 37, 70};

template <class Op>
void check_sizes_3d(Op const& op) {
  check_sizes(op, outer_3d, xs_3d);
  for (int extra_halo : {0, 2}) {
    int const halo = Op::radius + extra_halo;
    for (std::array<int, 3> extents :
         {std::array<int, 3>{53, 5, 37}, std::array<int, 3>{71, 2, 6},
          std::array<int, 3>{17, 9, 70}}) {
      check_size<double>(op, extents, halo);
      check_size<float>(op, extents, halo);
      check_size<double, Op, std::int64_t>(op, extents, halo);
      check_size<float, Op, std::int64_t>(op, extents, halo);
    }
  }
}

TEST(NaiveDevicePath, J3d7pt) { check_sizes_3d(stencil::suite::J3d7pt{}); }
TEST(NaiveDevicePath, J3d13pt) { check_sizes_3d(stencil::suite::J3d13pt{}); }
TEST(NaiveDevicePath, J3d17pt) { check_sizes_3d(stencil::suite::J3d17pt{}); }
TEST(NaiveDevicePath, J3d27pt) { check_sizes_3d(stencil::suite::J3d27pt{}); }
TEST(NaiveDevicePath, Poisson19pt) {
  check_sizes_3d(stencil::suite::Poisson19pt{});
}

// Rank 1: two vectors 32 apart per thread, so a warp spans 64 vectors.
constexpr std::initializer_list<int> xs_1d{1, 2, 3, 5, 63, 64, 129, 1000};

TEST(NaiveDevicePath, Heat1D) {
  check_sizes(stencil::suite::Heat1D<1>{}, {1}, xs_1d);
  check_sizes(stencil::suite::Heat1D<2>{}, {1}, xs_1d);
  check_sizes(stencil::suite::Heat1D<3>{}, {1}, xs_1d);
}

TEST(NaiveDevicePath, Linear) {
  // A stencil given as data goes through the same window accessor.
  stencil::Linear<2, stencil::Shape::box, 1, double> box(
      {1, 2, 3, 4, 5, 6, 7, 8, 9}, 45);
  for (int x : {1, 6, 37, 70}) check_size<double>(box, {5, x}, 1);
}

/// The width is the widest whose accesses are all aligned and in bounds:
/// both buffers aligned to it, and padded rows (rank 1: the whole padded
/// array) a whole number of vectors.
TEST(NaiveDevicePath, VectorWidthChoice) {
  alignas(16) static float f[64];
  alignas(16) static double d[64];
  PaddedLayout const rows_of_8 = make_layout<2>({3, 6}, 1);  // 8
  PaddedLayout const rows_of_6 = make_layout<2>({3, 4}, 1);  // 6
  PaddedLayout const rows_of_7 = make_layout<2>({3, 5}, 1);  // 7
  EXPECT_EQ((naive_vector_width<float, 2>(f, f + 32, rows_of_8)), 4);
  EXPECT_EQ((naive_vector_width<float, 2>(f, f + 32, rows_of_6)), 2);
  EXPECT_EQ((naive_vector_width<float, 2>(f, f + 32, rows_of_7)), 1);
  EXPECT_EQ((naive_vector_width<double, 2>(d, d + 32, rows_of_8)), 2);
  EXPECT_EQ((naive_vector_width<double, 2>(d, d + 32, rows_of_6)), 2);
  EXPECT_EQ((naive_vector_width<double, 2>(d, d + 32, rows_of_7)), 1);
  // Misaligned buffers: 8-byte aligned floats take width 2, less takes 1.
  EXPECT_EQ((naive_vector_width<float, 2>(f + 2, f + 32, rows_of_8)), 2);
  EXPECT_EQ((naive_vector_width<float, 2>(f, f + 33, rows_of_8)), 1);
  EXPECT_EQ((naive_vector_width<double, 2>(d, d + 33, rows_of_8)), 1);
  // Rank 3: a plane of whole rows; rank 1: the whole padded array.
  EXPECT_EQ(
      (naive_vector_width<float, 3>(f, f + 32, make_layout<3>({2, 3, 6}, 1))),
      4);
  EXPECT_EQ((naive_vector_width<float, 1>(f, f + 32, make_layout<1>({6}, 1))),
            4);
  EXPECT_EQ((naive_vector_width<float, 1>(f, f + 32, make_layout<1>({7}, 1))),
            1);
  EXPECT_EQ((naive_vector_width<double, 1>(d, d + 32, make_layout<1>({4}, 1))),
            2);
  // Types without a 16-byte vector of them take the scalar kernel.
  alignas(16) static char c[64];
  EXPECT_EQ((naive_vector_width<char, 2>(c, c + 32, rows_of_8)), 1);
}

}  // namespace
