// SPDX-License-Identifier: Apache-2.0
// The randomized check's rank-2 cases (random_cases.hpp): this unit compiles
// their kernels, in parallel with the other ranks' units.
#include "random_cases.hpp"

namespace stencil_test::randomized {

void run_rank2(Case const& c, Tally& tally, Outcome& outcome) {
  run_in(Rank2Ops{}, 0, c, tally, outcome);
}

}  // namespace stencil_test::randomized
