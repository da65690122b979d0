// SPDX-License-Identifier: Apache-2.0
#include "check_stencil.hpp"

#include <stencil/suite.hpp>

namespace {

template <class Space>
class Stencils1D : public ::testing::Test {};
TYPED_TEST_SUITE(Stencils1D, stencil_test::ExecutionSpaces);

TYPED_TEST(Stencils1D, Heat1DRadius1) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::Heat1D<1>{},
                                         std::array{1001}, std::array{100003});
}
TYPED_TEST(Stencils1D, Heat1DRadius2) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::Heat1D<2>{},
                                         std::array{1001}, std::array{100003});
}
TYPED_TEST(Stencils1D, Heat1DRadius3) {
  stencil_test::check_stencil<TypeParam>(stencil::suite::Heat1D<3>{},
                                         std::array{1001}, std::array{100003});
}

}  // namespace
