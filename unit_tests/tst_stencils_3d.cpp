// SPDX-License-Identifier: Apache-2.0
#include "check_stencil.hpp"

#include <stencil/suite.hpp>

namespace {

template <class Space>
class Stencils3D : public ::testing::Test {};
TYPED_TEST_SUITE(Stencils3D, stencil_test::ExecutionSpaces);

constexpr std::array<int, 3> small{17, 23, 29};
constexpr std::array<int, 3> large{37, 71, 131};

TYPED_TEST(Stencils3D, J3d7pt) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::J3d7pt{}, small,
                                         large);
}
TYPED_TEST(Stencils3D, J3d13pt) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::J3d13pt{}, small,
                                         large);
}
// In both forms, exact division and prescaled weights.
TYPED_TEST(Stencils3D, J3d17pt) {
  stencil_test::check_both_forms<TypeParam, stencil::suite::J3d17ptForm>(small,
                                                                         large);
}
TYPED_TEST(Stencils3D, J3d27pt) {
  stencil_test::check_both_forms<TypeParam, stencil::suite::J3d27ptForm>(small,
                                                                         large);
}
TYPED_TEST(Stencils3D, Poisson19pt) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::Poisson19pt{}, small,
                                         large);
}

}  // namespace
