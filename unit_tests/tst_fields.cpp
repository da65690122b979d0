// SPDX-License-Identifier: Apache-2.0
// Multi-field stencils on a State: the suite's solvers (two time levels, a
// read-only coefficient, two coupled species) on every policy that runs
// them, against plain host loops written from their formulas; position and
// time; hooks; and the refusals.
#include "fields_checks.hpp"
#include "fields_reference.hpp"
#include "mixed_radii.hpp"
#include "stencil_test_spaces.hpp"
#include "test_support.hpp"

#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>
#include <stencil/suite/solvers.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using stencil::Boundary;
using stencil_test::fields::check_heat_varcoef;
using stencil_test::fields::check_mixed_radii;
using stencil_test::fields::check_wave;
using stencil_test::fields::fill_mixed;
using stencil_test::fields::HostField;
using stencil_test::fields::MixedRadii;
using stencil_test::fields::run;
using stencil_test::fields::to_host;

template <class Space>
class Fields : public ::testing::Test {};
TYPED_TEST_SUITE(Fields, stencil_test::ExecutionSpaces);

using stencil_test::fields::expect_field;
using stencil_test::fields::fill_pattern;
using stencil_test::fields::tolerance;

/// The policies a multi-field run of a rank-`rank` state is checked with on
/// this space (the policy list of the shared checks, fields_checks.hpp); on
/// a native space, the native sweep, and temporal blocking in 1D and 2D
/// (`boundary` fixed or periodic) at a depth that does not divide the
/// tests' step counts and at the plan's default. The native 3D stream has
/// tests of its own (native_cuda/tst_fields_stream.cpp).
template <class Space>
struct EveryFieldsPolicy {
  template <class F>
  void operator()(int rank, Boundary boundary, F&& f) const {
    f(stencil::Naive{}, "Naive");
    f(stencil::SpatialBlocking{{.x = 8, .y = 4, .z = 3}}, "SpatialBlocking");
    f(stencil::SpatialBlocking{}, "SpatialBlocking default tile");
    f(stencil::Auto{}, "Auto");
    if constexpr (stencil::native_available_v<Space>) {
      f(stencil::StreamingSweep{}, "StreamingSweep (native)");
      if (rank <= 2 &&
          (boundary == Boundary::fixed || boundary == Boundary::periodic)) {
        f(stencil::TemporalBlocking{.depth = 3}, "TemporalBlocking depth 3");
        f(stencil::TemporalBlocking{}, "TemporalBlocking default depth");
      }
    }
  }
};

// ---------------------------------------------------------------- wave

TYPED_TEST(Fields, LeapfrogWaveMatchesTheReference) {
  using Space = TypeParam;
  EveryFieldsPolicy<Space> const policies{};
  check_wave<Space, double, 2, 1>(policies, {13, 11}, 1, Boundary::fixed, 7);
  check_wave<Space, float, 2, 1>(policies, {9, 14}, 2, Boundary::periodic, 6);
  check_wave<Space, double, 2, 2>(policies, {11, 9}, 2, Boundary::periodic, 5);
  check_wave<Space, float, 2, 4>(policies, {13, 17}, 5, Boundary::fixed, 3);
  check_wave<Space, double, 3, 1>(policies, {7, 9, 11}, 1, Boundary::periodic,
                                  5);
  check_wave<Space, float, 3, 2>(policies, {7, 6, 9}, 3, Boundary::fixed, 4);
  check_wave<Space, double, 2, 3>(policies, {15, 7}, 3, Boundary::fixed, 1);
  // Several tiles of the native kernels along every axis.
  check_wave<Space, double, 2, 1>(policies, {151, 301}, 1, Boundary::fixed, 7);
  check_wave<Space, float, 2, 2>(policies, {97, 263}, 2, Boundary::periodic, 5);
  check_wave<Space, double, 3, 1>(policies, {19, 21, 45}, 1, Boundary::fixed,
                                  3);
  check_wave<Space, double, 3, 1>(policies, {23, 37, 70}, 1, Boundary::periodic,
                                  7);
  // The 1D leapfrog (paper 004's), both boundaries and the widest radius.
  check_wave<Space, double, 1, 1>(policies, {37}, 1, Boundary::fixed, 7);
  check_wave<Space, float, 1, 3>(policies, {41}, 4, Boundary::periodic, 5);
  check_wave<Space, double, 1, 4>(policies, {301}, 4, Boundary::fixed, 6);
}

// ------------------------------------------------------- heat-varcoef

TYPED_TEST(Fields, VariableCoefficientHeatMatchesTheReference) {
  using Space = TypeParam;
  EveryFieldsPolicy<Space> const policies{};
  check_heat_varcoef<Space, double, 2>(policies, {13, 9}, 1, Boundary::fixed,
                                       7);
  check_heat_varcoef<Space, float, 2>(policies, {10, 17}, 2, Boundary::periodic,
                                      5);
  check_heat_varcoef<Space, double, 3>(policies, {5, 9, 7}, 1,
                                       Boundary::periodic, 6);
  check_heat_varcoef<Space, float, 3>(policies, {7, 5, 11}, 2, Boundary::fixed,
                                      3);
  check_heat_varcoef<Space, float, 2>(policies, {133, 257}, 1, Boundary::fixed,
                                      10);
  check_heat_varcoef<Space, double, 2>(policies, {129, 263}, 2,
                                       Boundary::periodic, 9);
}

// ------------------------------------------------- two coupled species

template <class Space, class T, class Op, class Reaction>
void check_two_species(Op const& op, std::array<int, 2> extents, int halo,
                       Boundary boundary, int steps, Reaction reaction,
                       double diffusion_u, double diffusion_v) {
  EveryFieldsPolicy<Space>{}(
      2, boundary, [&](auto policy, char const* name) {
        std::string const what =
            std::string(Op::name) + " " + name + " steps " +
            std::to_string(steps) +
            (std::is_same_v<T, float> ? " float" : " double");
        stencil::State<T, 2, typename Space::memory_space> s(
            "species", extents, stencil::field_specs<Op>({"u", "v"}),
            {.halo = halo, .boundary = boundary});
        fill_pattern(s, 0, 5, 0.2, 1.0);
        fill_pattern(s, 1, 6, 0.0, 0.5);
        HostField u = to_host(s, 0), v = to_host(s, 1);
        auto const w = stencil_test::fields::second_difference(1);
        for (int n = 0; n < steps; ++n) {
          if (boundary == Boundary::periodic) {
            stencil_test::fields::wrap_halo(u);
            stencil_test::fields::wrap_halo(v);
          }
          HostField un = u, vn = v;
          stencil_test::fields::for_interior(u, [&](int z, int y, int x) {
            double const lu = stencil_test::fields::laplacian(u, z, y, x, w);
            double const lv = stencil_test::fields::laplacian(v, z, y, x, w);
            auto const [du, dv] = reaction(u(z, y, x), v(z, y, x));
            un(z, y, x) = u(z, y, x) + diffusion_u * lu + du;
            vn(z, y, x) = v(z, y, x) + diffusion_v * lv + dv;
          });
          u = un;
          v = vn;
        }
        if (!run<Space>(s, op, steps, policy, what)) return;
        expect_field(s, 0, u, what);
        expect_field(s, 1, v, what);
      });
}

TYPED_TEST(Fields, GrayScottMatchesTheReference) {
  using Space = TypeParam;
  auto const reaction = [](double u, double v) {
    return std::array<double, 2>{-u * v * v + 0.035 * (1 - u),
                                 u * v * v - (0.035 + 0.065) * v};
  };
  stencil::suite::GrayScott const op;
  check_two_species<Space, double>(op, {13, 11}, 1, Boundary::periodic, 9,
                                   reaction, 0.16, 0.08);
  check_two_species<Space, float>(op, {9, 16}, 2, Boundary::periodic, 4,
                                  reaction, 0.16, 0.08);
  check_two_species<Space, double>(op, {7, 7}, 1, Boundary::fixed, 5, reaction,
                                   0.16, 0.08);
  check_two_species<Space, double>(op, {141, 259}, 1, Boundary::fixed, 8,
                                   reaction, 0.16, 0.08);
  // Several tiles wrapping around both axes under temporal blocking.
  check_two_species<Space, float>(op, {133, 261}, 1, Boundary::periodic, 7,
                                  reaction, 0.16, 0.08);
}

TYPED_TEST(Fields, BrusselatorMatchesTheReference) {
  using Space = TypeParam;
  auto const op = stencil::suite::Bruss::for_points(12);
  double const dt = op.dt, diffusion = 2e-3 * op.inv_h2 * op.dt;
  auto const reaction = [dt](double u, double v) {
    return std::array<double, 2>{dt * (1 + u * u * v - 4.4 * u),
                                 dt * (3.4 * u - u * u * v)};
  };
  check_two_species<Space, double>(op, {12, 12}, 1, Boundary::fixed, 11,
                                   reaction, diffusion, diffusion);
  check_two_species<Space, float>(op, {12, 12}, 1, Boundary::fixed, 6, reaction,
                                  diffusion, diffusion);
}

// ---------------------------------------------- position, time, hooks

/// u' = u + dt * S(y, x, t) with S from the cell's position and the time.
struct Source {
  static constexpr int rank = 2;
  static constexpr auto shape = stencil::Shape::star;
  using fields = stencil::fields<stencil::field<0>>;
  template <class In>
  KOKKOS_FUNCTION auto operator()(In const& in) const {
    auto const p = in.position();
    return stencil::read<0>(in)(0, 0) +
           0.5 * (p[0] + 10.0 * p[1]) * (1.0 + in.time());
  }
};

TYPED_TEST(Fields, PositionAndTimeReachTheFunctor) {
  using Space = TypeParam;
  // Several tiles of the native kernels, and hooks every 2 steps, which cut
  // temporal blocking's blocks of 3.
  constexpr int ny = 37, nx = 301;
  EveryFieldsPolicy<Space>{}(
      2, Boundary::fixed, [&](auto policy, char const* name) {
        stencil::State<double, 2, typename Space::memory_space> s(
            "source", {ny, nx}, stencil::field_specs<Source>({"u"}),
            {.halo = 0, .t0 = 2.0, .dt = 0.5});
        int hooks = 0;
        std::vector<double> hook_times;
        stencil::iterate(Space{}, s, Source{}, 6, policy,
                         stencil::every(2, [&](int step) {
                           ++hooks;
                           EXPECT_EQ(step, 2 * hooks) << name;
                           hook_times.push_back(s.time());
                         }));
        Kokkos::fence();
        EXPECT_EQ(hooks, 3) << name;
        EXPECT_EQ(hook_times, (std::vector<double>{3.0, 4.0, 5.0})) << name;
        EXPECT_DOUBLE_EQ(s.time(), 5.0) << name;
        EXPECT_EQ(s.steps_done(), 6) << name;
        HostField const u = to_host(s, 0);
        // Steps at t = 2, 2.5, ..., 4.5: sum of (1 + t) = 6 + 19.5.
        int wrong = 0;
        for (int y = 0; y < ny; ++y)
          for (int x = 0; x < nx; ++x) {
            double const e = 0.5 * (y + 10.0 * x) * 25.5;
            if (std::abs(u(0, y, x) - e) > 1e-12 * (1 + std::abs(e)) &&
                wrong++ < 3) {
              ADD_FAILURE() << name << ": cell (" << y << ", " << x << ") is "
                            << u(0, y, x) << ", expected " << e;
            }
          }
        EXPECT_EQ(wrong, 0) << name;
      });
}

TYPED_TEST(Fields, WhatAHookThrowsLeavesIterateAsItWasThrown) {
  using Space = TypeParam;
  stencil::State<double, 2, typename Space::memory_space> s(
      "source", {5, 7}, stencil::field_specs<Source>({"u"}), {.halo = 0});
  EXPECT_THROW(stencil::iterate(Space{}, s, Source{}, 9, stencil::Naive{},
                                stencil::every(4,
                                               [](int step) {
                                                 if (step == 4)
                                                   throw std::out_of_range("4");
                                               })),
               std::out_of_range);
  EXPECT_EQ(s.steps_done(), 4) << "the steps before the hook stay done";
  stencil::Grid<double, 2, typename Space::memory_space> g("g", {9, 8});
  try {
    stencil::iterate(Space{}, g, stencil::suite::J2d5pt{}, 6, stencil::Auto{},
                     stencil::every(3, [](int) {
                       stencil::detail::throw_bad_input("from the hook");
                     }));
    ADD_FAILURE() << "the hook's exception was lost";
  } catch (stencil::device_error const&) {
    ADD_FAILURE() << "a hook's exception is not a device error";
  } catch (stencil::bad_input const& e) {
    EXPECT_NE(std::string(e.what()).find("from the hook"), std::string::npos);
  }
}

TYPED_TEST(Fields, HooksRunOnASingleGridToo) {
  using Space = TypeParam;
  stencil::Grid<double, 2, typename Space::memory_space> g("g", {9, 8});
  std::vector<int> fives, threes;
  stencil::iterate(
      Space{}, g, stencil::suite::J2d5pt{}, 16, stencil::Naive{},
      stencil::every(5, [&](int step) { fives.push_back(step); }),
      stencil::every(3, [&](int step) { threes.push_back(step); }));
  EXPECT_EQ(fives, (std::vector<int>{5, 10, 15}));
  EXPECT_EQ(threes, (std::vector<int>{3, 6, 9, 12, 15}));
}

TYPED_TEST(Fields, SummaryReducesTheInteriorOnly) {
  using Space = TypeParam;
  stencil::State<double, 3, typename Space::memory_space> s(
      "s", {3, 4, 5}, {{"u"}, {"v"}}, {.halo = 2});
  stencil::fill(s, 0, [](int z, int y, int x) {
    bool const inside = z >= 0 && z < 3 && y >= 0 && y < 4 && x >= 0 && x < 5;
    return inside ? 1.0 + x + 10.0 * y - 100.0 * z : 1e6;  // halo: ignored
  });
  stencil::fill(s, 1,
                [](int, int, int x) { return x == 2 ? std::nan("") : 0.5; });
  double sum = 0, sum_sq = 0, max_abs = 0;
  for (int z = 0; z < 3; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 5; ++x) {
        double const v = 1.0 + x + 10.0 * y - 100.0 * z;
        sum += v;
        sum_sq += v * v;
        max_abs = std::max(max_abs, std::abs(v));
      }
  auto const u = stencil::summarize(Space{}, s, 0);
  EXPECT_DOUBLE_EQ(u.sum, sum);
  EXPECT_DOUBLE_EQ(u.sum_sq, sum_sq);
  EXPECT_DOUBLE_EQ(u.max_abs, max_abs);
  EXPECT_EQ(u.nans, 0);
  EXPECT_EQ(u.cells, 60);
  auto const v = stencil::summarize(Space{}, s, 1);
  EXPECT_EQ(v.nans, 12);
  EXPECT_DOUBLE_EQ(v.sum, 0.5 * 48);
  stencil::Grid<float, 1, typename Space::memory_space> g("g", {7});
  stencil::fill(g, [](int i) { return i < 0 || i >= 7 ? 99.0f : -2.0f; });
  auto const gs = stencil::summarize(Space{}, g);
  EXPECT_DOUBLE_EQ(gs.sum, -14.0);
  EXPECT_DOUBLE_EQ(gs.rms(), 2.0);
}

// ---------------------------------------------------------- refusals

TYPED_TEST(Fields, MisuseIsRefusedWithWhatWouldBeValid) {
  using Space = TypeParam;
  using Mem = typename Space::memory_space;
  using Op = stencil::suite::HeatVarCoef<2>;
  using stencil_test::expect_error;
  // One field where the stencil declares two.
  stencil::State<double, 2, Mem> one("one", {9, 9}, {{"u"}});
  expect_error([&] { stencil::iterate(Space{}, one, Op{}, 1); },
               {"has 1 fields but the stencil declares 2", "field_specs"});
  // The coefficient is declared writable in the stencil's place: fine; a
  // written field that the state calls read-only is not.
  stencil::State<double, 2, Mem> read_only("ro", {9, 9},
                                           {{"u", 1, true}, {"k", 1, true}});
  expect_error([&] { stencil::iterate(Space{}, read_only, Op{}, 1); },
               {"is read-only in the state but the stencil writes it"});
  // Too few levels for leapfrog, too narrow a halo.
  using Wave = stencil::suite::Wave<2, 2>;
  stencil::State<double, 2, Mem> one_level("w", {9, 9}, {{"u", 1}},
                                           {.halo = 2});
  expect_error([&] { stencil::iterate(Space{}, one_level, Wave{}, 1); },
               {"keeps 1 time levels but the stencil reads 2"});
  stencil::State<double, 2, Mem> narrow("w", {9, 9}, {{"u", 2}});
  expect_error([&] { stencil::iterate(Space{}, narrow, Wave{}, 1); },
               {"halo of 1 cells but the stencil's largest radius is 2"});
  // Bad specs.
  expect_error(
      [] {
        stencil::State<double, 2, Mem> s("s", {4, 4}, {{"u"}, {"u"}});
      },
      {"two fields are named 'u'"});
  expect_error(
      [] {
        stencil::State<double, 2, Mem> s("s", {4, 4}, {{"k", 2, true}});
      },
      {"a coefficient never changes"});
  expect_error(
      [] {
        stencil::State<double, 2, Mem> s("s", {4, 4}, {});
      },
      {"a state holds 1 to 8 fields"});
  expect_error([&] { (void)one.index("v"); }, {"no field named 'v'", "'u'"});
  // A moved-from state is empty and refused.
  stencil::State<double, 2, Mem> moved("m", {9, 9}, {{"u", 2}});
  auto owner = std::move(moved);
  EXPECT_TRUE(moved.empty());
  EXPECT_FALSE(owner.empty());
  expect_error([&] { stencil::iterate(Space{}, moved, Wave{}, 1); },
               {"the state is empty"});
  // Auto says what it takes and why: in 2D the native TemporalBlocking
  // where the space has one and the boundaries allow it, else Naive; the
  // plan names the fields.
  stencil::State<double, 2, Mem> heat("h", {9, 9},
                                      stencil::field_specs<Op>({"u", "k"}));
  auto const p = stencil::plan(Space{}, heat, Op{}, stencil::Auto{});
  EXPECT_TRUE(p.chosen_by_auto);
  EXPECT_NE(p.reason.find("multi-field"), std::string::npos) << p.reason;
  if constexpr (stencil::native_available_v<Space>) {
    EXPECT_EQ(p.policy, stencil::PolicyKind::temporal_blocking) << p.reason;
    EXPECT_EQ(p.backend, stencil::Backend::native_cuda);
    stencil::State<double, 2, Mem> mirrored(
        "m", {9, 9}, stencil::field_specs<Op>({"u", "k"}),
        {.boundary = Boundary::neumann});
    auto const q = stencil::plan(Space{}, mirrored, Op{}, stencil::Auto{});
    EXPECT_EQ(q.policy, stencil::PolicyKind::naive);
    EXPECT_NE(q.reason.find("does not run this state"), std::string::npos)
        << q.reason;
  } else {
    EXPECT_EQ(p.policy, stencil::PolicyKind::naive);
  }
  EXPECT_NE(p.fields.find("k (radius 1, read-only)"), std::string::npos)
      << p.fields;
  // A plan for other fields is refused.
  stencil::State<double, 2, Mem> other("o", {9, 9},
                                       stencil::field_specs<Op>({"a", "b"}));
  expect_error([&] { stencil::iterate(Space{}, other, Op{}, 1, p); },
               {"the plan was made for a different run"});
  if constexpr (stencil::native_available_v<Space>) {
    expect_error(
        [&] {
          (void)stencil::plan(Space{}, heat, Op{}, stencil::DeviceTiling{});
        },
        {"DeviceTiling does not run multi-field stencils",
         "StreamingSweep, TemporalBlocking"});
    expect_error(
        [&] {
          (void)stencil::plan(Space{}, heat, Op{},
                              stencil::TemporalBlocking{.prefetch = 2});
        },
        {"prefetch 2", "plain loads"});
    expect_error(
        [&] {
          (void)stencil::plan(Space{}, heat, Op{},
                              stencil::TemporalBlocking{.depth = 400});
        },
        {"at depth 400", "depths 1 to"});
    stencil::State<double, 2, Mem> neumann("n", {9, 9},
                                           stencil::field_specs<Op>({"u", "k"}),
                                           {.boundary = Boundary::neumann});
    expect_error(
        [&] {
          (void)stencil::plan(Space{}, neumann, Op{},
                              stencil::TemporalBlocking{});
        },
        {"fixed and periodic boundaries", "is neumann", "StreamingSweep"});
    using Op3 = stencil::suite::HeatVarCoef<3>;
    stencil::State<double, 3, Mem> cube("c", {5, 5, 5},
                                        stencil::field_specs<Op3>({"u", "k"}));
    auto const sweep =
        stencil::plan(Space{}, cube, Op3{}, stencil::StreamingSweep{});
    EXPECT_EQ(sweep.backend, stencil::Backend::native_cuda);
    std::ostringstream text;
    text << sweep;
    EXPECT_NE(text.str().find("overlapped tile"), std::string::npos)
        << text.str();
  }
}

// ------------------------------------- SpatialBlocking of several fields

TYPED_TEST(Fields, SpatialBlockingStagesEachFieldWithItsOwnRadius) {
  using Space = TypeParam;
  auto each_tile = [](auto&& f) {
    f(stencil::Naive{}, "Naive");
    f(stencil::SpatialBlocking{{.x = 8, .y = 4, .z = 3}}, "tile 8x4x3");
    // Tiles that divide no extent, and single cells.
    f(stencil::SpatialBlocking{{.x = 5, .y = 3, .z = 2}}, "tile 5x3x2");
    f(stencil::SpatialBlocking{{.x = 1, .y = 1, .z = 1}}, "tile 1x1x1");
    f(stencil::SpatialBlocking{}, "default tile");
  };
  each_tile([](auto policy, char const* name) {
    check_mixed_radii<Space, double, 1>({37}, 2, Boundary::fixed, 5, policy,
                                        name);
    check_mixed_radii<Space, float, 1>({23}, 3, Boundary::periodic, 4, policy,
                                       name);
    check_mixed_radii<Space, double, 2>({13, 11}, 2, Boundary::periodic, 5,
                                        policy, name);
    check_mixed_radii<Space, float, 2>({9, 17}, 3, Boundary::fixed, 3, policy,
                                       name);
    check_mixed_radii<Space, double, 3>({7, 9, 11}, 2, Boundary::fixed, 4,
                                        policy, name);
    check_mixed_radii<Space, float, 3>({11, 5, 7}, 2, Boundary::periodic, 3,
                                       policy, name);
  });
}

/// The native rank-2 temporal kernel streams rows through a ring per level
/// (stream_kernel.hpp): fields of radius 2, 0 (two levels) and a radius-1
/// coefficient, at depths 1 to 4, on extents of several strips and shares
/// of rows and on ones narrower than a strip's rims.
TYPED_TEST(Fields, NativeTemporalBlockingStreamsEveryFieldKind) {
  using Space = TypeParam;
  if constexpr (stencil::native_available_v<Space>) {
    using Op = MixedRadii<2>;
    stencil::State<double, 2, typename Space::memory_space> s(
        "mixed", {301, 517}, stencil::field_specs<Op>({"u", "w", "k"}),
        {.halo = 2});
    auto const p = stencil::plan(Space{}, s, Op{}, stencil::TemporalBlocking{});
    std::ostringstream text;
    text << p;
    EXPECT_NE(text.str().find("streamed down in shares of"), std::string::npos)
        << text.str();
    EXPECT_EQ(p.local_memory_bytes, 0) << text.str();
    EXPECT_GE(p.blocks_per_sm, 2) << text.str();
    // Auto takes it (this state's widest radius is 2), but not for the
    // radius-4 wave in float, where it ran behind Naive.
    auto const chosen = stencil::plan(Space{}, s, Op{}, stencil::Auto{});
    EXPECT_EQ(chosen.policy, stencil::PolicyKind::temporal_blocking)
        << chosen.reason;
    using Wide = stencil::suite::Wave<2, 4>;
    stencil::State<float, 2, typename Space::memory_space> wide(
        "wide", {301, 517}, stencil::field_specs<Wide>({"u"}), {.halo = 4});
    auto const naive = stencil::plan(Space{}, wide, Wide{}, stencil::Auto{});
    EXPECT_EQ(naive.policy, stencil::PolicyKind::naive) << naive.reason;
    EXPECT_NE(naive.reason.find("radius 4"), std::string::npos) << naive.reason;
    stencil::State<double, 2, typename Space::memory_space> wide_double(
        "wide", {301, 517}, stencil::field_specs<Wide>({"u"}), {.halo = 4});
    EXPECT_EQ(
        stencil::plan(Space{}, wide_double, Wide{}, stencil::Auto{}).policy,
        stencil::PolicyKind::temporal_blocking);
    // Depths the default may pass over (it keeps two blocks per SM) and
    // one that does not divide the step counts.
    for (int depth = 1; depth <= 4; ++depth) {
      stencil::TemporalBlocking const policy{.depth = depth};
      std::string const name =
          "TemporalBlocking depth " + std::to_string(depth);
      check_mixed_radii<Space, double, 2>({301, 517}, 2, Boundary::fixed,
                                          2 * depth + 1, policy, name);
      check_mixed_radii<Space, float, 2>({97, 263}, 3, Boundary::periodic,
                                         3 * depth - 1, policy, name);
      check_mixed_radii<Space, double, 2>({5, 7}, 2, Boundary::periodic,
                                          depth + 2, policy, name);
      check_mixed_radii<Space, float, 2>({5, 300}, 2, Boundary::fixed, 7,
                                         policy, name);
    }
  }
}

/// Auto on a rank-1 state: on CUDA, RegisterResident where the domain fits
/// in the device's registers; beyond, the native TemporalBlocking at
/// radius 1 and 2, where it ran ahead of Naive on wave1d, and Naive from
/// radius 3, saying why; host spaces have no native kernel and take Naive.
TYPED_TEST(Fields, AutoInOneDimensionTakesRegistersThenTemporalBlocking) {
  using Space = TypeParam;
  using Mem = typename Space::memory_space;
  auto const chosen = [](auto op, int halo, int n) {
    using Op = decltype(op);
    stencil::State<double, 1, Mem> s(
        "line", {n}, stencil::field_specs<Op>({"u"}), {.halo = halo});
    return stencil::plan(Space{}, s, op, stencil::Auto{});
  };
  // More cells than an H200's registers hold in double (929280 at radius
  // 2 and 4).
  int const beyond_registers = 1 << 21;
  auto const fits = chosen(stencil::suite::Wave<1, 2>{}, 2, 4099);
  auto const r2 = chosen(stencil::suite::Wave<1, 2>{}, 2, beyond_registers);
  auto const r3 = chosen(stencil::suite::Wave<1, 3>{}, 3, beyond_registers);
  EXPECT_EQ(r3.policy, stencil::PolicyKind::naive) << r3.reason;
  if constexpr (stencil::native_available_v<Space>) {
    EXPECT_EQ(fits.policy, stencil::PolicyKind::register_resident)
        << fits.reason;
    EXPECT_EQ(r2.policy, stencil::PolicyKind::temporal_blocking) << r2.reason;
    EXPECT_NE(r2.reason.find("1D at radius 1 and 2"), std::string::npos)
        << r2.reason;
    EXPECT_NE(r3.reason.find("in 1D at radius 3"), std::string::npos)
        << r3.reason;
    EXPECT_NE(r3.reason.find("RegisterResident does not run it"),
              std::string::npos)
        << r3.reason;
  } else {
    EXPECT_EQ(fits.policy, stencil::PolicyKind::naive) << fits.reason;
    EXPECT_EQ(r2.policy, stencil::PolicyKind::naive) << r2.reason;
  }
}

TYPED_TEST(Fields, SpatialBlockingPlansScratchForStagedFieldsOnly) {
  using Space = TypeParam;
  using Mem = typename Space::memory_space;
  using Op2 = MixedRadii<2>;
  stencil::State<double, 2, Mem> s2("s", {13, 11}, stencil::field_specs<Op2>(),
                                    {.halo = 2});
  auto const p2 = stencil::plan(Space{}, s2, Op2{},
                                stencil::SpatialBlocking{{.x = 8, .y = 4}});
  EXPECT_EQ(p2.policy, stencil::PolicyKind::spatial_blocking);
  EXPECT_EQ(p2.backend, stencil::Backend::portable);
  // u: (8 + 4) x (4 + 4), k: (8 + 2) x (4 + 2); w (radius 0) none.
  EXPECT_EQ(p2.scratch_bytes, (12 * 8 + 10 * 6) * sizeof(double));
  using Op3 = MixedRadii<3>;
  stencil::State<float, 3, Mem> s3("s", {7, 9, 11}, stencil::field_specs<Op3>(),
                                   {.halo = 2});
  // The tile clipped to the domain: x 11, y 9, z 7.
  auto const p3 =
      stencil::plan(Space{}, s3, Op3{},
                    stencil::SpatialBlocking{{.x = 64, .y = 64, .z = 64}});
  EXPECT_EQ(p3.tile.x, 11);
  EXPECT_EQ(p3.tile.y, 9);
  EXPECT_EQ(p3.tile.z, 7);
  // Rings of 2r+1 planes: u 5 of 15 x 13, k 3 of 13 x 11.
  EXPECT_EQ(p3.scratch_bytes, (5 * 15 * 13 + 3 * 13 * 11) * sizeof(float));
  // A plan made once runs the state it was made for.
  fill_mixed(s3);
  stencil::iterate(Space{}, s3, Op3{}, 2, p3);
  Kokkos::fence();
  EXPECT_EQ(s3.steps_done(), 2);
}

TYPED_TEST(Fields, SpatialBlockingRefusesATileBeyondScratch) {
  using Space = TypeParam;
  using Op = MixedRadii<1>;
  int const n = 1 << 18;
  stencil::State<double, 1, typename Space::memory_space> s(
      "long", {n}, stencil::field_specs<Op>(), {.halo = 2});
  try {
    auto const p =
        stencil::plan(Space{}, s, Op{}, stencil::SpatialBlocking{{.x = n}});
    // Host spaces may allow any scratch (as tst_reliability's tile).
    EXPECT_EQ(p.scratch_bytes, ((n + 4) + (n + 2)) * sizeof(double));
    GTEST_SKIP() << Space::name() << "'s team scratch holds a tile of " << n
                 << " cells for two fields";
  } catch (stencil::unsupported const& e) {
    std::string const m = e.what();
    for (char const* part :
         {"SpatialBlocking: tile {x=262144", "2 fields in scratch (radii 2, 1)",
          "bytes of scratch per team", "which allows", "use a smaller tile"}) {
      EXPECT_NE(m.find(part), std::string::npos) << part << " in " << m;
    }
  }
}

/// Boundaries of one axis for the randomized check: periodic, or a kind per
/// side among those the state refreshes from the interior or a function.
template <class State, class Rng>
std::string random_boundaries(State& s, Rng& rng) {
  std::string text;
  for (int a = 0; a < State::rank; ++a) {
    if (rng() % 4 == 0) {
      s.set_boundary(a, stencil::Side::both, Boundary::periodic);
      text += " periodic";
      continue;
    }
    for (stencil::Side side : {stencil::Side::low, stencil::Side::high}) {
      switch (rng() % 4) {
        case 0:
          text += " fixed";
          break;
        case 1:
          s.set_boundary(a, side, Boundary::neumann);
          text += " neumann";
          break;
        case 2:
          s.set_boundary(a, side, Boundary::reflecting);
          text += " reflecting";
          break;
        default:
          s.set_dirichlet(a, side,
                          [a](std::array<int, State::rank> const& c, double t) {
                            return 0.1 * c[a] + 0.01 * t;
                          });
          text += " dirichlet";
      }
    }
  }
  return text;
}

/// Random odd extents, tiles, step counts and boundaries; SpatialBlocking
/// must give what Naive gives.
template <class Space, class T, int Rank, class Rng>
void check_random_blocking(Rng& rng) {
  using Op = MixedRadii<Rank>;
  std::array<int, Rank> extents{};
  for (int& e : extents) e = 5 + 2 * static_cast<int>(rng() % 9);  // 5..21
  int const halo = 2 + static_cast<int>(rng() % 2);
  int const steps = 1 + static_cast<int>(rng() % 9);
  stencil::Tile const tile{1 + static_cast<int>(rng() % 17),
                           1 + static_cast<int>(rng() % 9),
                           1 + static_cast<int>(rng() % 7)};
  auto make = [&](Rng copy, std::string* text) {
    stencil::State<T, Rank, typename Space::memory_space> s(
        "random", extents, stencil::field_specs<Op>(), {.halo = halo});
    std::string const b = random_boundaries(s, copy);
    if (text) *text = b;
    fill_mixed(s);
    return s;
  };
  Rng const boundary_rng = rng;
  rng.discard(16);
  std::string sides;
  auto naive = make(boundary_rng, &sides);
  auto blocked = make(boundary_rng, nullptr);
  std::string what = "random rank " + std::to_string(Rank) + " extents";
  for (int e : extents) what += " " + std::to_string(e);
  what += " halo " + std::to_string(halo) + " steps " + std::to_string(steps) +
          " tile " + std::to_string(tile.x) + "x" + std::to_string(tile.y) +
          "x" + std::to_string(tile.z) + " sides" + sides +
          (std::is_same_v<T, float> ? " float" : " double");
  if (!run<Space>(naive, Op{}, steps, stencil::Naive{}, what)) return;
  if (!run<Space>(blocked, Op{}, steps, stencil::SpatialBlocking{tile}, what))
    return;
  for (int f = 0; f < 2; ++f) expect_field(blocked, f, to_host(naive, f), what);
}

TYPED_TEST(Fields, SpatialBlockingMatchesNaiveOnRandomCases) {
  using Space = TypeParam;
  std::mt19937 rng(48);
  for (int i = 0; i < 4; ++i) {
    check_random_blocking<Space, double, 1>(rng);
    check_random_blocking<Space, float, 1>(rng);
    check_random_blocking<Space, double, 2>(rng);
    check_random_blocking<Space, float, 2>(rng);
    check_random_blocking<Space, double, 3>(rng);
    check_random_blocking<Space, float, 3>(rng);
  }
}

/// fields<...>::within narrows each axis, slowest first, to at most the
/// field's own radius; without it every axis reads the field's radius.
TEST(FieldsDeclaration, WithinNarrowsEachAxisToItsRadius) {
  using stencil::detail::largest_radius_along;
  using stencil::detail::radius_along;
  using Narrow =
      stencil::fields<stencil::field<2>, stencil::coefficient<1>>::within<1, 2>;
  static_assert(Narrow::count == 2 && Narrow::radius == 2 &&
                Narrow::written_count == 1 && Narrow::within_count == 2);
  static_assert(radius_along<Narrow, 0>(0) == 2 &&  // x
                radius_along<Narrow, 0>(1) == 1 &&  // y
                radius_along<Narrow, 1>(0) == 1 &&
                radius_along<Narrow, 1>(1) == 1);
  static_assert(largest_radius_along<Narrow>(0) == 2 &&
                largest_radius_along<Narrow>(1) == 1);
  using Plain = stencil::fields<stencil::field<2>>;
  static_assert(Plain::within_count == 0 &&
                largest_radius_along<Plain>(0) == 2 &&
                largest_radius_along<Plain>(1) == 2);
  using Planes = stencil::fields<stencil::field<3>>::within<0, 3, 1>;
  static_assert(radius_along<Planes, 0>(0) == 1 &&  // x
                radius_along<Planes, 0>(1) == 3 &&  // y
                radius_along<Planes, 0>(2) == 0);   // z
  SUCCEED();
}

}  // namespace
