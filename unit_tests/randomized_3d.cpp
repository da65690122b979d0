// SPDX-License-Identifier: Apache-2.0
// The randomized check's rank-3 cases of the suite's stencils
// (random_cases.hpp): this unit compiles their kernels, in parallel with the
// other units.
#include "random_cases.hpp"

namespace stencil_test::randomized {

void run_rank3_suite(Case const& c, Tally& tally, Outcome& outcome) {
  run_in(Suite3Ops{}, 0, c, tally, outcome);
}

}  // namespace stencil_test::randomized
