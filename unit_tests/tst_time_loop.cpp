// SPDX-License-Identifier: Apache-2.0
// The time loop every mechanism runs through: its blocks, and a hook that
// cuts them. Every policy this space has a mechanism for runs with a hook
// that falls inside its blocks, and must still match the reference.
#include "reference.hpp"
#include "stencil_test_spaces.hpp"

#include <stencil/detail/time_loop.hpp>
#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#include <gtest/gtest.h>

#include <array>
#include <sstream>
#include <string>
#include <vector>

namespace {

using stencil::detail::LoopHooks;
using stencil::detail::step_blocks;

TEST(TimeLoop, BlocksHoldTheDepthTheRemainderComesLast) {
  EXPECT_EQ(step_blocks(10, 4), (std::vector<int>{4, 4, 2}));
  EXPECT_EQ(step_blocks(8, 4), (std::vector<int>{4, 4}));
  EXPECT_EQ(step_blocks(3, 5), (std::vector<int>{3}));
  EXPECT_EQ(step_blocks(0, 5), (std::vector<int>{}));
  EXPECT_EQ(step_blocks(4, 1), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_THROW(step_blocks(4, 0), stencil::error);
}

TEST(TimeLoop, BlocksEndWhereAHookFallsDue) {
  LoopHooks const every_5{.hook_every = 5, .after_block = {}};
  // Depth 4, a hook every 5 steps: 4, 1 | 4, 1 | 3.
  EXPECT_EQ(step_blocks(13, 4, every_5), (std::vector<int>{4, 1, 4, 1, 3}));
  LoopHooks const every_2{.hook_every = 2, .after_block = {}};
  EXPECT_EQ(step_blocks(7, 6, every_2), (std::vector<int>{2, 2, 2, 1}));
}

template <class Space>
class TimeLoop : public ::testing::Test {};
TYPED_TEST_SUITE(TimeLoop, stencil_test::ExecutionSpaces);

// Runs `op` on every policy with a mechanism on `Space` for its rank,
// through run_plan with a hook every `every` steps, and checks the hook's
// calls and the result against the reference loop.
template <class Space, class T, class Op>
void check_every_policy_with_hooks(Op const& op,
                                   std::array<int, Op::rank> extents, int steps,
                                   int every) {
  constexpr int rank = Op::rank;
  using MemorySpace = typename Space::memory_space;
  auto const initial =
      stencil_test::random_field<T, rank>(extents, Op::radius, op, steps, 4242);
  auto const expected =
      stencil_test::reference(initial, op, steps, stencil::Boundary::fixed);
  stencil::detail::for_each_policy([&](auto policy) {
    using Policy = decltype(policy);
    if constexpr (stencil::policy_available_v<Policy, Space> &&
                  stencil::runs_rank_v<Policy, rank>) {
      std::ostringstream where;
      where << Op::name << ' ' << stencil::policy_traits<Policy>::name
            << " steps=" << steps << " hook every " << every;
      SCOPED_TRACE(where.str());
      stencil::Grid<T, rank, MemorySpace> grid("u", extents,
                                               {.halo = Op::radius});
      stencil_test::load(grid, initial);
      Space space{};
      stencil::Plan p;
      try {
        p = stencil::plan(space, grid, op, policy);
      } catch (stencil::error const& e) {
        ADD_FAILURE() << "no plan for this small fixed grid: " << e.what();
        return;
      }
      std::vector<int> calls;
      LoopHooks const hooks{.hook_every = every, .after_block = [&](int done) {
                              calls.push_back(done);
                            }};
      stencil::detail::run_plan<stencil::detail::all_kinds>(space, grid, op,
                                                            steps, p, hooks);
      space.fence();
      std::vector<int> due;
      for (int s = every; s <= steps; s += every) due.push_back(s);
      EXPECT_EQ(calls, due) << p;
      EXPECT_TRUE(stencil_test::matches(stencil_test::read_back(grid), expected,
                                        initial, stencil::Boundary::fixed,
                                        steps))
          << p;
    }
  });
}

TYPED_TEST(TimeLoop, EveryPolicyRunsHooksBetweenItsBlocks) {
  using namespace stencil::suite;
  // Steps that are not a multiple of the hook period nor of any depth.
  check_every_policy_with_hooks<TypeParam, double>(Heat1D<1>{}, {301}, 17, 5);
  check_every_policy_with_hooks<TypeParam, float>(J2d5pt{}, {37, 53}, 13, 5);
  check_every_policy_with_hooks<TypeParam, double>(J3d7pt{}, {17, 23, 29}, 11,
                                                   4);
}

}  // namespace
