// SPDX-License-Identifier: Apache-2.0
// The randomized check's rank-3 cases of random linear stencils
// (random_cases.hpp): this unit compiles their kernels, native ones
// included, in parallel with the other units.
#include "random_cases.hpp"

namespace stencil_test::randomized {

void run_rank3_random(Case const& c, Tally& tally, Outcome& outcome) {
  run_in(Random3Ops{}, Suite3Ops::size, c, tally, outcome);
}

}  // namespace stencil_test::randomized
