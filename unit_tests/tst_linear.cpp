// SPDX-License-Identifier: Apache-2.0
// stencil::Linear: the table order, the size check, and that tables written
// from STENCILS.md compute what the suite's functors compute.
#include "check_stencil.hpp"

#include <stencil/linear.hpp>
#include <stencil/suite.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace {

using stencil::Shape;

template <int Rank, Shape S, int R>
std::vector<std::array<int, 3>> offsets() {
  std::vector<std::array<int, 3>> out;
  constexpr int n = stencil::detail::linear_table_size(Rank, S, R);
  for (int i = 0; i < n; ++i) {
    auto const o = stencil::detail::linear_table_offset(Rank, S, R, i);
    out.push_back({o.d[0], o.d[1], o.d[2]});
  }
  return out;
}

TEST(Linear, StarTableOrderIsLexicographic) {
  using V = std::vector<std::array<int, 3>>;
  EXPECT_EQ((offsets<2, Shape::star, 1>()),
            (V{{0, -1, 0}, {0, 0, -1}, {0, 0, 0}, {0, 0, 1}, {0, 1, 0}}));
  EXPECT_EQ((offsets<1, Shape::star, 2>()),
            (V{{0, 0, -2}, {0, 0, -1}, {0, 0, 0}, {0, 0, 1}, {0, 0, 2}}));
  auto const star3 = offsets<3, Shape::star, 2>();
  ASSERT_EQ(star3.size(), 13u);
  EXPECT_EQ(star3.front(), (std::array<int, 3>{-2, 0, 0}));
  EXPECT_EQ(star3[2], (std::array<int, 3>{0, -2, 0}));
  EXPECT_EQ(star3[6], (std::array<int, 3>{0, 0, 0}));
  EXPECT_EQ(star3.back(), (std::array<int, 3>{2, 0, 0}));
  EXPECT_TRUE(std::is_sorted(star3.begin(), star3.end()));
}

TEST(Linear, BoxTableOrderIsRowMajor) {
  auto const box = offsets<3, Shape::box, 1>();
  ASSERT_EQ(box.size(), 27u);
  EXPECT_EQ(box[0], (std::array<int, 3>{-1, -1, -1}));
  EXPECT_EQ(box[1], (std::array<int, 3>{-1, -1, 0}));
  EXPECT_EQ(box[13], (std::array<int, 3>{0, 0, 0}));
  EXPECT_EQ(box[26], (std::array<int, 3>{1, 1, 1}));
}

TEST(Linear, WrongTableSizeIsRefused) {
  using L = stencil::Linear<2, Shape::star, 1, double>;
  try {
    L bad({1.0, 2.0, 3.0});
    ADD_FAILURE() << "expected stencil::error";
  } catch (stencil::error const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("has 3 entries"), std::string::npos) << what;
    EXPECT_NE(what.find("exactly 5"), std::string::npos) << what;
  }
  EXPECT_THROW((L({1, 2, 3, 4, 5}, 0.0)), stencil::error);
  EXPECT_NO_THROW((L({1, 2, 3, 4, 5}, 2.0)));
}

template <class Space>
class LinearRuns : public ::testing::Test {};
TYPED_TEST_SUITE(LinearRuns, stencil_test::ExecutionSpaces);

/// Runs `table` and `functor` from the same data and compares.
template <class Space, class T, int Rank, class Table, class Functor>
void expect_same(Table const& table, Functor const& functor,
                 std::array<int, Rank> extents) {
  using Memory = typename Space::memory_space;
  int const steps = 3;
  auto const init = stencil_test::random_field<T, Rank>(
      extents, Functor::radius, functor, steps, 7);
  stencil::Grid<T, Rank, Memory> a("a", extents, {.halo = Functor::radius});
  stencil::Grid<T, Rank, Memory> b("b", extents, {.halo = Functor::radius});
  stencil_test::load(a, init);
  stencil_test::load(b, init);
  stencil::iterate(Space{}, a, table, steps, stencil::Naive{});
  stencil::iterate(Space{}, b, functor, steps, stencil::SpatialBlocking{});
  Space{}.fence();
  EXPECT_TRUE(stencil_test::matches(stencil_test::read_back(a),
                                    stencil_test::read_back(b), init,
                                    stencil::Boundary::fixed, steps));
  // And both against the reference loop on the table form.
  EXPECT_TRUE(stencil_test::matches(
      stencil_test::read_back(a),
      stencil_test::reference(init, table, steps, stencil::Boundary::fixed),
      init, stencil::Boundary::fixed, steps));
}

TYPED_TEST(LinearRuns, J2d5ptTable) {
  stencil::Linear<2, Shape::star, 1, double> table({5, 12, 15, 12, 5}, 118);
  expect_same<TypeParam, double, 2>(table, stencil::suite::J2d5pt{}, {31, 45});
}

TYPED_TEST(LinearRuns, J2d25ptTable) {
  stencil::Linear<2, Shape::box, 2, float> table(
      {1, 2, 3, 4, 5, 7, 7, 5, 7, 6, 8, 12, 15, 12, 12, 9, 9, 5, 7, 15, 10, 11,
       12, 13, 14},
      118);
  expect_same<TypeParam, float, 2>(table, stencil::suite::J2d25pt{}, {29, 33});
}

TYPED_TEST(LinearRuns, J3d27ptTable) {
  stencil::Linear<3, Shape::box, 1, double> table(
      {0.5,  0.7,  0.9,  1.2,  1.5,  1.2,  0.9,  0.7,  0.5,
       0.51, 0.71, 0.91, 1.21, 1.51, 1.21, 0.91, 0.71, 0.51,
       0.52, 0.72, 0.92, 1.22, 1.52, 1.22, 0.92, 0.72, 0.52},
      159);
  expect_same<TypeParam, double, 3>(table, stencil::suite::J3d27pt{},
                                    {11, 13, 17});
}

}  // namespace
