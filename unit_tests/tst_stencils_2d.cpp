// SPDX-License-Identifier: Apache-2.0
#include "check_stencil.hpp"

#include <stencil/suite.hpp>

namespace {

template <class Space>
class Stencils2D : public ::testing::Test {};
TYPED_TEST_SUITE(Stencils2D, stencil_test::ExecutionSpaces);

constexpr std::array<int, 2> small{37, 53};
constexpr std::array<int, 2> large{301, 517};

// Each in both forms, exact division and prescaled weights.
TYPED_TEST(Stencils2D, J2d5pt) {
  stencil_test::check_both_forms<TypeParam, stencil::suite::J2d5ptForm>(small,
                                                                        large);
}
TYPED_TEST(Stencils2D, J2d9pt) {
  stencil_test::check_both_forms<TypeParam, stencil::suite::J2d9ptForm>(small,
                                                                        large);
}
TYPED_TEST(Stencils2D, J2d9ptGol) {
  stencil_test::check_both_forms<TypeParam, stencil::suite::J2d9ptGolForm>(
      small, large);
}
TYPED_TEST(Stencils2D, J2d25pt) {
  stencil_test::check_both_forms<TypeParam, stencil::suite::J2d25ptForm>(small,
                                                                         large);
}

}  // namespace
