// SPDX-License-Identifier: Apache-2.0
// Native CUDA RegisterResident against plain host loops: the 1D leapfrog
// wave at radius 1 to 4, heat1d on a single-field Grid at radius 1 to 3,
// and a field with a read-only coefficient; float and double, fixed and
// periodic; sizes of one and of several blocks, odd ones, and the largest
// the device holds; step counts that are not multiples of the block or grid
// halo, and hooks that cut a call into several launches. Then the
// refusals, and Auto's choice on both sides of the registers' capacity,
// on States and on single-field grids.
// (A rank-2 grid is refused at compile time: policy_traits' ranks.)
#include "../fields_reference.hpp"
#include "../reference.hpp"
#include "native_test.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>
#include <stencil/suite/solvers.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <numbers>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using stencil::Boundary;
using stencil::RegisterResident;
using stencil_test::fields::HostField;

template <class T>
using Line = stencil::State<T, 1, Kokkos::CudaSpace>;

/// The plan of `op` on a state or grid of `n` cells.
template <class T, class Op>
stencil::Plan resident_plan(int n, Boundary boundary,
                            RegisterResident policy = {}) {
  if constexpr (stencil::detail::has_fields_v<Op>) {
    Line<T> s("u", {n}, stencil::field_specs<Op>(),
              {.halo = Op::fields::radius, .boundary = boundary});
    return stencil::plan(Kokkos::Cuda{}, s, Op{}, policy);
  } else {
    stencil::Grid<T, 1, Kokkos::CudaSpace> g(
        "u", {n}, {.halo = Op::radius, .boundary = boundary});
    return stencil::plan(Kokkos::Cuda{}, g, Op{}, policy);
  }
}

/// The cells per thread of the kernels compiled for `Op` in `T`: the
/// narrow shape, and the wide one where there is one.
template <class T, class Op>
std::vector<int> shapes() {
  namespace rr = stencil::native_cuda::register_resident;
  using Kernel = std::conditional_t<stencil::detail::has_fields_v<Op>, Op,
                                    rr::SingleField<Op>>;
  using C = rr::ShapeChoices<T, Kernel>;
  if (C::wide > 0) return {C::narrow, C::wide};
  return {C::narrow};
}

/// The most cells the shape of `cells_per_thread` (0: every compiled one)
/// holds for `Op` in `T`: blocks per multiprocessor x multiprocessors x
/// cells a block owns with a grid halo of one block halo, the shallowest,
/// which leaves each block the most.
template <class T, class Op>
int capacity(int cells_per_thread = 0) {
  int most = 0;
  for (int g : shapes<T, Op>()) {
    if (cells_per_thread != 0 && g != cells_per_thread) continue;
    int const block_halo =
        resident_plan<T, Op>(4096, Boundary::fixed, {.cells_per_thread = g})
            .native_cuda.block_halo;
    stencil::Plan const p =
        resident_plan<T, Op>(4096, Boundary::fixed,
                             {.cells_per_thread = g, .grid_halo = block_halo});
    most = std::max(
        most,
        p.blocks_per_sm *
            stencil::native_cuda::current_device_limits().multiprocessors *
            p.tile.x);
  }
  return most;
}

/// Error a run may gather over `steps` steps against a reference loop in
/// its own precision that rounds differently (a wrong cell is off by far
/// more).
template <class T>
double tolerance(int steps) {
  return (sizeof(T) == 4 ? 1e-6 : 1e-13) * (10 + steps);
}

template <class T, int R>
void check_wave(int n, Boundary boundary, int steps, RegisterResident policy,
                int hook_every = 0, int calls = 1) {
  using Op = stencil::suite::Wave<1, R>;
  std::ostringstream what;
  what << Op::name << (sizeof(T) == 4 ? " float" : " double") << " n=" << n
       << (boundary == Boundary::periodic ? " periodic" : " fixed")
       << " steps=" << steps << " grid_halo=" << policy.grid_halo
       << " hook every " << hook_every << " calls=" << calls;
  SCOPED_TRACE(what.str());
  Line<T> s("wave", {n}, stencil::field_specs<Op>({"u"}),
            {.halo = R + 1, .boundary = boundary});
  if (boundary == Boundary::periodic) {
    // Smooth across the wrap: a jump there makes float and the double
    // reference part by more than rounding (a plain float loop does too).
    for (int level : {0, -1}) {
      stencil::fill_level(s, 0, level, [n, level](int x) {
        double const phase = 2 * std::numbers::pi * x / n;
        // Level -1 a little behind: a slow wave whose values stay O(1).
        return std::sin(7 * phase + 0.02 * level) + 0.3 * std::cos(31 * phase);
      });
    }
  } else {
    // Different fixed halos in the two buffers: each level keeps its own.
    stencil_test::fields::fill_pattern(s, 0, 1, -1.0, 1.0, 0);
    stencil_test::fields::fill_pattern(s, 0, 2, -1.0, 1.0, -1);
  }
  HostField u = stencil_test::fields::to_host(s, 0, 0);
  HostField u_old = stencil_test::fields::to_host(s, 0, -1);
  // The reference loop runs in T with the weights in T, C^2 folded in as
  // the functor folds it: in float, any loop drifts from a double one by
  // far more than rounding over hundreds of steps (the weights round
  // differently), and only a wrong cell should fail the test.
  auto const w = stencil_test::fields::second_difference(R);
  double const c2 = Op::courant_squared;
  T const centre = static_cast<T>(2 + c2 * w[0]);
  for (int k = 0; k < steps; ++k) {
    if (boundary == Boundary::periodic) stencil_test::fields::wrap_halo(u);
    HostField next = u_old;
    stencil_test::fields::for_interior(u, [&](int z, int y, int x) {
      T sum = std::fma(centre, static_cast<T>(u(z, y, x)),
                       -static_cast<T>(u_old(z, y, x)));
      for (int d = 1; d <= R; ++d) {
        T const pair =
            static_cast<T>(u(z, y, x - d)) + static_cast<T>(u(z, y, x + d));
        sum = std::fma(static_cast<T>(c2 * w[d]), pair, sum);
      }
      next(z, y, x) = sum;
    });
    u_old = u;
    u = next;
  }
  stencil::Plan const p = stencil::plan(Kokkos::Cuda{}, s, Op{}, policy);
  ASSERT_EQ(p.policy, stencil::PolicyKind::register_resident) << p;
  // The narrow shapes keep every value in registers; the wide float
  // shape spills a few at 384 threads and still ran ahead of 256
  // (docs/decisions/register-resident.md).
  if (p.native_cuda.cells_per_thread <= 32) {
    EXPECT_EQ(p.local_memory_bytes, 0) << "the kernel spills: " << p;
  }
  int hooks = 0;
  if (hook_every > 0) {
    stencil::iterate(Kokkos::Cuda{}, s, Op{}, steps, policy,
                     stencil::every(hook_every, [&](int) { ++hooks; }));
    EXPECT_EQ(hooks, steps / hook_every);
  } else {
    // The second set stays with the state from one call to the next (and
    // is allocated again after a release), each call of a step count that
    // leaves the levels' buffers, and their halos, rotated.
    std::size_t const padded = static_cast<std::size_t>(n + 2 * (R + 1));
    EXPECT_EQ(s.second_set_bytes(), 0u);
    int done = 0;
    for (int call = 0; call < calls; ++call) {
      int const part = call + 1 < calls ? steps / calls : steps - done;
      stencil::iterate(Kokkos::Cuda{}, s, Op{}, part, policy);
      done += part;
      EXPECT_EQ(s.second_set_bytes(), 2 * padded * sizeof(T));
      if (call == 1) s.release_second_set();
    }
  }
  Kokkos::fence();
  HostField const got = stencil_test::fields::to_host(s, 0, 0);
  HostField const got_old = stencil_test::fields::to_host(s, 0, -1);
  double const tol = tolerance<T>(steps);
  int bad = 0;
  for (int x = -(R + 1); x < n + R + 1; ++x) {
    // The whole padded line: the fixed halos must hold too.
    if (boundary == Boundary::periodic && (x < 0 || x >= n)) continue;
    for (auto const& [g, e, level] :
         {std::tuple{got(0, 0, x), u(0, 0, x), 0},
          std::tuple{got_old(0, 0, x), u_old(0, 0, x), -1}}) {
      if (!(std::abs(g - e) <= tol * (1 + std::abs(e))) && ++bad <= 3) {
        ADD_FAILURE() << "level " << level << " cell " << x << " is " << g
                      << ", reference " << e;
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

/// Each compiled shape on small domains, then the whole device.
template <class T, int R>
void check_wave_sizes(Boundary boundary) {
  using Op = stencil::suite::Wave<1, R>;
  for (int g : shapes<T, Op>()) {
    SCOPED_TRACE("cells_per_thread " + std::to_string(g));
    RegisterResident const shape{.cells_per_thread = g};
    stencil::Plan const p = resident_plan<T, Op>(4096, boundary, shape);
    EXPECT_EQ(p.native_cuda.cells_per_thread, g) << p;
    int const block_halo = p.native_cuda.block_halo;
    int const grid_halo = p.native_cuda.grid_halo;
    // A domain with room to spare takes the deepest default grid halo.
    EXPECT_EQ(
        grid_halo,
        stencil::native_cuda::register_resident::deepest_default_grid_halo *
            block_halo);
    // One block, and a remainder of cells that is not a whole lane.
    check_wave<T, R>(1001, boundary, 2 * grid_halo + 3, shape);
    // Several blocks, steps that stop between exchanges.
    check_wave<T, R>(3 * p.tile.x + 17, boundary, grid_halo + block_halo + 1,
                     shape);
    // A grid halo of one block halo: exchanges every block_halo steps.
    check_wave<T, R>(2 * p.tile.x + 5, boundary, 3 * block_halo + 1,
                     {.cells_per_thread = g, .grid_halo = block_halo});
    // Hooks cut the call into launches of 7 steps.
    check_wave<T, R>(5003, boundary, 23, shape, 7);
  }
  if (stencil_test::small_only()) return;
  // The whole device, where only the shallowest grid halo fits, in the
  // widest shape.
  int const most = capacity<T, Op>();
  stencil::Plan const whole = resident_plan<T, Op>(most, boundary);
  int const widest = shapes<T, Op>().back();
  EXPECT_EQ(whole.native_cuda.cells_per_thread, widest) << whole;
  int const block_halo = whole.native_cuda.block_halo;
  EXPECT_EQ(whole.native_cuda.grid_halo, block_halo) << whole;
  check_wave<T, R>(most, boundary, 2 * block_halo + 1, {});
}

TEST(RegisterResident, LeapfrogWave) {
  STENCIL_REQUIRE_GPU();
  for (Boundary b : {Boundary::fixed, Boundary::periodic}) {
    check_wave_sizes<float, 1>(b);
    check_wave_sizes<double, 1>(b);
    check_wave_sizes<float, 2>(b);
    check_wave_sizes<double, 2>(b);
    check_wave_sizes<float, 3>(b);
    check_wave_sizes<double, 3>(b);
    check_wave_sizes<float, 4>(b);
    check_wave_sizes<double, 4>(b);
  }
}

/// A State keeps the second set of its written levels from one call to
/// the next: several calls of odd step counts, and a release between two.
TEST(RegisterResident, SecondSetKeptWithTheState) {
  STENCIL_REQUIRE_GPU();
  check_wave<float, 1>(5003, Boundary::fixed, 61, {}, 0, 4);
  check_wave<float, 1>(
      5003, Boundary::periodic, 61,
      {.cells_per_thread = shapes<float, stencil::suite::Wave<1, 1>>().back()},
      0, 4);
  check_wave<double, 1>(5003, Boundary::periodic, 61, {}, 0, 4);
  check_wave<float, 2>(70001, Boundary::fixed, 37, {}, 0, 3);
  check_wave<double, 3>(3001, Boundary::fixed, 29, {}, 0, 5);
}

/// A single-field Grid against the reference loop.
template <class T, class Op>
void check_grid(int n, Boundary boundary, int steps,
                Kokkos::Cuda const& space = Kokkos::Cuda{}) {
  std::ostringstream what;
  what << Op::name << (sizeof(T) == 4 ? " float" : " double") << " n=" << n
       << (boundary == Boundary::periodic ? " periodic" : " fixed")
       << " steps=" << steps;
  SCOPED_TRACE(what.str());
  auto const initial =
      stencil_test::random_field<T, 1>({n}, Op::radius, Op{}, steps, 91);
  auto const expected = stencil_test::reference(initial, Op{}, steps, boundary);
  stencil::Grid<T, 1, Kokkos::CudaSpace> grid(
      "u", {n}, {.halo = Op::radius, .boundary = boundary});
  stencil_test::load(grid, initial);
  stencil::iterate(space, grid, Op{}, steps, RegisterResident{});
  space.fence();
  EXPECT_TRUE(stencil_test::matches(stencil_test::read_back(grid), expected,
                                    initial, boundary, steps));
}

template <class Op>
void check_grid_sizes() {
  for (Boundary b : {Boundary::fixed, Boundary::periodic}) {
    for (int n : {1001, 70001}) {
      check_grid<double, Op>(n, b, 301);
      check_grid<float, Op>(n, b, 97);
    }
  }
}

TEST(RegisterResident, SingleFieldGrid) {
  STENCIL_REQUIRE_GPU();
  check_grid_sizes<stencil::suite::Heat1D<1>>();
  check_grid_sizes<stencil::suite::Heat1D<2>>();
  check_grid_sizes<stencil::suite::Heat1D<3>>();
}

/// The exchanges' edge buffers and flags stay from one call to the next:
/// calls on two streams, on a larger domain than the one before (a new
/// buffer) and a smaller one, and calls whose rounds take the flags'
/// counter past its largest value, all agree with the reference.
TEST(RegisterResident, ScratchKeptBetweenCalls) {
  STENCIL_REQUIRE_GPU();
  using Op = stencil::suite::Heat1D<1>;
  namespace rr = stencil::native_cuda::register_resident;
  auto const streams =
      Kokkos::Experimental::partition_space(Kokkos::Cuda{}, 1, 1);
  check_grid<float, Op>(70001, Boundary::fixed, 333, streams[0]);
  check_grid<double, Op>(300001, Boundary::periodic, 333, streams[1]);
  check_grid<float, Op>(5001, Boundary::periodic, 1001, streams[0]);
  Kokkos::fence();
  // The next call's rounds (a grid halo of 8 block halos, 512 steps, so
  // 5 of them) would run past the largest unsigned: the flags are reset
  // rather than left holding rounds above the new ones, which would let
  // blocks read their neighbours' edges before they are written.
  rr::scratch(Kokkos::Cuda{}, 0, 0, 0).last_round = UINT_MAX - 3;
  check_grid<float, Op>(70001, Boundary::fixed, 3001);
  EXPECT_LT(rr::scratch(Kokkos::Cuda{}, 0, 0, 0).last_round, 10u);
  check_grid<double, Op>(70001, Boundary::periodic, 3001);
}

/// A written field beside a read-only coefficient (its neighbours are
/// shuffled once).
template <class T>
void check_coefficient(int n, Boundary boundary, int steps) {
  using Op = stencil::suite::HeatVarCoef<1>;
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "float" : "double") +
               " n=" + std::to_string(n) + " steps=" + std::to_string(steps));
  Line<T> s("heat", {n}, stencil::field_specs<Op>({"u", "k"}),
            {.halo = 1, .boundary = boundary});
  stencil_test::fields::fill_pattern(s, 0, 3, 0.0, 1.0);
  stencil_test::fields::fill_pattern(s, 1, 4, 0.5, 1.5);
  HostField u = stencil_test::fields::to_host(s, 0);
  HostField k = stencil_test::fields::to_host(s, 1);
  if (boundary == Boundary::periodic) stencil_test::fields::wrap_halo(k);
  for (int t = 0; t < steps; ++t) {
    if (boundary == Boundary::periodic) stencil_test::fields::wrap_halo(u);
    HostField next = u;
    // In T, as the functor computes it (see check_wave).
    auto at = [](HostField const& h, int x) {
      return static_cast<T>(h(0, 0, x));
    };
    T const half = 0.5f, lambda = static_cast<T>(Op::lambda);
    for (int x = 0; x < n; ++x) {
      T const uc = at(u, x), kc = at(k, x);
      T const flux = half * (kc + at(k, x + 1)) * (at(u, x + 1) - uc) -
                     half * (kc + at(k, x - 1)) * (uc - at(u, x - 1));
      next(0, 0, x) = uc + lambda * flux;
    }
    u = next;
  }
  stencil::iterate(Kokkos::Cuda{}, s, Op{}, steps, RegisterResident{});
  Kokkos::fence();
  HostField const got = stencil_test::fields::to_host(s, 0);
  int bad = 0;
  for (int x = 0; x < n; ++x) {
    double const e = u(0, 0, x);
    if (!(std::abs(got(0, 0, x) - e) <=
          tolerance<T>(steps) * (1 + std::abs(e))) &&
        ++bad <= 3) {
      ADD_FAILURE() << "cell " << x << " is " << got(0, 0, x) << ", reference "
                    << e;
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(RegisterResident, CoefficientField) {
  STENCIL_REQUIRE_GPU();
  for (Boundary b : {Boundary::fixed, Boundary::periodic}) {
    check_coefficient<float>(20011, b, 131);
    check_coefficient<double>(20011, b, 131);
    check_coefficient<double>(777, b, 64);
  }
}

TEST(RegisterResident, RefusesWhatItCannotRun) {
  STENCIL_REQUIRE_GPU();
  using Wave = stencil::suite::Wave<1, 1>;
  int const most = capacity<float, Wave>();
  stencil_test::expect_refused_with(
      [&] { resident_plan<float, Wave>(most + 1, Boundary::fixed); },
      "hold at most " + std::to_string(most) + " cells");
  stencil_test::expect_refused_with(
      [&] { resident_plan<float, Wave>(100, Boundary::fixed); },
      "use at least");
  stencil_test::expect_refused_with(
      [&] {
        resident_plan<float, Wave>(4096, Boundary::fixed,
                                   {.cells_per_thread = 7});
      },
      "cells_per_thread is 7");
  stencil_test::expect_refused_with(
      [&] {
        resident_plan<float, Wave>(4096, Boundary::fixed, {.grid_halo = 5});
      },
      "grid_halo is 5");
  stencil_test::expect_refused_with(
      [&] { resident_plan<float, Wave>(4096, Boundary::neumann); },
      "runs fixed and periodic boundaries");
}

/// The plan takes the narrowest compiled shape that holds the domain, the
/// wide one beyond it, and a shape asked for wherever it fits.
TEST(RegisterResident, NarrowestShapeThatHoldsTheDomain) {
  STENCIL_REQUIRE_GPU();
  using Wave = stencil::suite::Wave<1, 1>;
  std::vector<int> const g = shapes<float, Wave>();
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ((shapes<double, Wave>().size()), 1u);
  int const narrow_most = capacity<float, Wave>(g[0]);
  ASSERT_GT((capacity<float, Wave>(g[1])), narrow_most);
  auto const cells_per_thread = [](int n, RegisterResident policy = {}) {
    return resident_plan<float, Wave>(n, Boundary::fixed, policy)
        .native_cuda.cells_per_thread;
  };
  EXPECT_EQ(cells_per_thread(5001), g[0]);
  EXPECT_EQ(cells_per_thread(narrow_most), g[0]);
  EXPECT_EQ(cells_per_thread(narrow_most + 1), g[1]);
  EXPECT_EQ(cells_per_thread(5001, {.cells_per_thread = g[1]}), g[1]);
  stencil_test::expect_refused_with(
      [&] { cells_per_thread(narrow_most + 1, {.cells_per_thread = g[0]}); },
      "hold at most " + std::to_string(narrow_most) + " cells");
  stencil_test::expect_refused_with(
      [&] { cells_per_thread(4096, {.cells_per_thread = 7}); },
      "compiled for " + std::to_string(g[0]) + " or " + std::to_string(g[1]));
}

TEST(RegisterResident, AutoTakesItWhereTheDomainFits) {
  STENCIL_REQUIRE_GPU();
  using Wave = stencil::suite::Wave<1, 2>;
  int const most = capacity<double, Wave>();
  for (int n : {5001, most}) {
    Line<double> s("wave", {n}, stencil::field_specs<Wave>({"u"}), {.halo = 2});
    stencil::Plan const p =
        stencil::plan(Kokkos::Cuda{}, s, Wave{}, stencil::Auto{});
    EXPECT_EQ(p.policy, stencil::PolicyKind::register_resident) << p;
  }
  Line<double> large("wave", {most + 1}, stencil::field_specs<Wave>({"u"}),
                     {.halo = 2});
  stencil::Plan const p =
      stencil::plan(Kokkos::Cuda{}, large, Wave{}, stencil::Auto{});
  EXPECT_EQ(p.policy, stencil::PolicyKind::temporal_blocking) << p;
  EXPECT_NE(p.reason.find("RegisterResident does not run it"),
            std::string::npos)
      << p.reason;
  // A single-field grid likewise, periodic too, and temporal blocking
  // beyond the registers, saying why.
  using Heat = stencil::suite::Heat1D<1>;
  int const most_heat = capacity<float, Heat>();
  for (Boundary b : {Boundary::fixed, Boundary::periodic}) {
    for (int n : {100003, most_heat}) {
      stencil::Grid<float, 1, Kokkos::CudaSpace> line(
          "u", {n}, {.halo = 1, .boundary = b});
      stencil::Plan const single =
          stencil::plan(Kokkos::Cuda{}, line, Heat{}, stencil::Auto{});
      EXPECT_EQ(single.policy, stencil::PolicyKind::register_resident)
          << single;
    }
  }
  // Heat's narrow kernel fits two blocks per multiprocessor; a domain that
  // one block per multiprocessor holds gets one each (a shallower grid
  // halo), not a second block on some of them, which would double their
  // work.
  int const narrow_heat = capacity<float, Heat>(shapes<float, Heat>()[0]);
  stencil::Plan const one_each =
      resident_plan<float, Heat>(narrow_heat / 2, Boundary::fixed);
  EXPECT_LE(one_each.blocks,
            stencil::native_cuda::current_device_limits().multiprocessors)
      << one_each;
  stencil::Grid<float, 1, Kokkos::CudaSpace> long_line("u", {most_heat + 1},
                                                       {.halo = 1});
  stencil::Plan const streamed =
      stencil::plan(Kokkos::Cuda{}, long_line, Heat{}, stencil::Auto{});
  EXPECT_EQ(streamed.policy, stencil::PolicyKind::temporal_blocking)
      << streamed;
  for (char const* why : {"RegisterResident) cannot run this grid",
                          "RegisterResident holds the whole domain"}) {
    EXPECT_NE(streamed.reason.find(why), std::string::npos) << streamed.reason;
  }
}

}  // namespace
