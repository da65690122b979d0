// SPDX-License-Identifier: Apache-2.0
#include "check_stencil.hpp"

#include <stencil/suite.hpp>

namespace {

template <class Space>
class Stencils2D : public ::testing::Test {};
TYPED_TEST_SUITE(Stencils2D, stencil_test::ExecutionSpaces);

constexpr std::array<int, 2> small{37, 53};
constexpr std::array<int, 2> large{301, 517};

TYPED_TEST(Stencils2D, J2d5pt) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::J2d5pt{}, small,
                                         large);
}
TYPED_TEST(Stencils2D, J2d9pt) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::J2d9pt{}, small,
                                         large);
}
TYPED_TEST(Stencils2D, J2d9ptGol) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::J2d9ptGol{}, small,
                                         large);
}
TYPED_TEST(Stencils2D, J2d25pt) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::J2d25pt{}, small,
                                         large);
}

// The forms with the weights divided beforehand: other arithmetic, the
// same checks.
TYPED_TEST(Stencils2D, J2d5ptPrescaled) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::J2d5ptPrescaled{},
                                         small, large);
}
TYPED_TEST(Stencils2D, J2d9ptPrescaled) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::J2d9ptPrescaled{},
                                         small, large);
}
TYPED_TEST(Stencils2D, J2d9ptGolPrescaled) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::J2d9ptGolPrescaled{},
                                         small, large);
}
TYPED_TEST(Stencils2D, J2d25ptPrescaled) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::J2d25ptPrescaled{},
                                         small, large);
}

}  // namespace
