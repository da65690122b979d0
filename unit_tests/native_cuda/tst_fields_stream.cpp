// SPDX-License-Identifier: Apache-2.0
// Native CUDA TemporalBlocking of several fields in 3D (the stream of
// planes through tiles of 32 x 16 columns, fields/stream_kernel.hpp)
// against plain host loops, and the same kernel in 2D at every depth: the
// leapfrog wave at radius 1 and 2, the variable-coefficient heat and a stencil
// with a field of every kind (radius 2, two levels, a coefficient), at every
// depth the tile allows and at the plan's default; float and double, fixed and
// periodic; extents of one tile and of several along x and y, a z shorter than
// the pipeline; step counts that are not multiples of the depth. Then the plan,
// its refusal of a rim that fills the tile, and Auto's choice.
#include "../fields_checks.hpp"
#include "native_test.hpp"

#include <stencil/native_cuda/fields/stream_kernel.hpp>
#include <stencil/stencil.hpp>
#include <stencil/suite/solvers.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

namespace {

using stencil::Boundary;
using stencil::TemporalBlocking;
using Space = Kokkos::Cuda;

/// The policy list of the shared checks: TemporalBlocking at `depth`.
struct AtDepth {
  int depth;
  template <class F>
  void operator()(int, Boundary, F&& f) const {
    f(TemporalBlocking{.depth = depth},
      depth == 0 ? "TemporalBlocking 3D default depth"
                 : "TemporalBlocking 3D depth " + std::to_string(depth));
  }
};

/// What `plan` prints.
std::string printed(stencil::Plan const& plan) {
  std::ostringstream out;
  out << plan;
  return out.str();
}

/// 0 (the plan's default), then 1 to `deepest`.
template <class F>
void each_depth(int deepest, F&& f) {
  for (int depth = 0; depth <= deepest; ++depth) f(depth);
}

TEST(FieldsStream3D, LeapfrogWave) {
  STENCIL_REQUIRE_GPU();
  using stencil_test::fields::check_wave;
  each_depth(3, [](int d) {
    int const steps = 2 * (d > 0 ? d : 3) + 1;
    check_wave<Space, double, 3, 1>(AtDepth{d}, {19, 21, 45}, 1,
                                    Boundary::fixed, steps);
    check_wave<Space, double, 3, 1>(AtDepth{d}, {23, 37, 70}, 1,
                                    Boundary::periodic, 7);
    check_wave<Space, float, 3, 1>(AtDepth{d}, {5, 17, 33}, 2, Boundary::fixed,
                                   steps);
    check_wave<Space, float, 3, 2>(AtDepth{d}, {9, 23, 41}, 3,
                                   Boundary::periodic, 3 * d + 2);
    // A tall z: several bands of planes, the last one shorter.
    check_wave<Space, double, 3, 1>(AtDepth{d}, {67, 20, 40}, 1,
                                    Boundary::fixed, steps);
    check_wave<Space, float, 3, 1>(AtDepth{d}, {61, 15, 29}, 2,
                                   Boundary::periodic, steps);
  });
}

TEST(FieldsStream3D, VariableCoefficientHeat) {
  STENCIL_REQUIRE_GPU();
  using stencil_test::fields::check_heat_varcoef;
  each_depth(3, [](int d) {
    check_heat_varcoef<Space, double, 3>(AtDepth{d}, {13, 29, 61}, 1,
                                         Boundary::fixed, 2 * d + 3);
    check_heat_varcoef<Space, float, 3>(AtDepth{d}, {11, 31, 35}, 2,
                                        Boundary::periodic, 5);
  });
}

/// A field of radius 2, a two-level field and a coefficient: several tiles
/// along x and y, a z shorter than the pipeline, and the deepest rim the tile's
/// 16 rows leave at radius 2. In double its rings fit in shared memory at depth
/// 1 only (the plan's default goes down to it).
TEST(FieldsStream3D, EveryFieldKind) {
  STENCIL_REQUIRE_GPU();
  using stencil_test::fields::check_mixed_radii;
  each_depth(3, [](int d) {
    TemporalBlocking const policy{.depth = d};
    std::string const name = "TemporalBlocking 3D depth " + std::to_string(d);
    check_mixed_radii<Space, float, 3>({13, 29, 61}, 2, Boundary::fixed,
                                       2 * d + 1, policy, name);
    check_mixed_radii<Space, float, 3>({9, 23, 41}, 3, Boundary::periodic,
                                       3 * d + 2, policy, name);
    check_mixed_radii<Space, float, 3>({5, 6, 7}, 2, Boundary::periodic, d + 2,
                                       policy, name);
    if (d <= 1) {
      check_mixed_radii<Space, double, 3>({13, 29, 61}, 2, Boundary::fixed,
                                          2 * d + 3, policy, name);
      check_mixed_radii<Space, double, 3>({5, 6, 7}, 2, Boundary::periodic,
                                          d + 4, policy, name);
    }
  });
}

/// The same kernel in 2D, where the tile is a strip of 256 columns (its
/// solvers on every policy: tst_fields.cpp).
TEST(FieldsStream2D, LeapfrogWaveAndEveryFieldKind) {
  STENCIL_REQUIRE_GPU();
  using stencil_test::fields::check_mixed_radii;
  using stencil_test::fields::check_wave;
  each_depth(4, [](int d) {
    check_wave<Space, double, 2, 1>(AtDepth{d}, {151, 301}, 1, Boundary::fixed,
                                    2 * d + 1);
    check_mixed_radii<Space, float, 2>({97, 263}, 3, Boundary::periodic,
                                       3 * d + 2, TemporalBlocking{.depth = d},
                                       "TemporalBlocking 2D");
  });
}

TEST(FieldsStream3D, PlanRefusalsAndAuto) {
  STENCIL_REQUIRE_GPU();
  using Op = stencil_test::fields::MixedRadii<3>;
  stencil::State<float, 3, Kokkos::CudaSpace> s(
      "mixed", {13, 29, 61}, stencil::field_specs<Op>({"u", "w", "k"}),
      {.halo = 2});
  auto const p = stencil::plan(Space{}, s, Op{}, TemporalBlocking{});
  std::string const text = printed(p);
  EXPECT_NE(text.find("tiles of 32 x 16 columns"), std::string::npos) << text;
  EXPECT_EQ(p.depth, 2) << "the default at radius 2";
  // Its 13 planes are one band; a taller z is cut into bands.
  EXPECT_EQ(p.tile.z, 13) << text;
  stencil::State<float, 3, Kokkos::CudaSpace> tall(
      "tall", {67, 20, 40}, stencil::field_specs<Op>({"u", "w", "k"}),
      {.halo = 2});
  auto const banded = stencil::plan(Space{}, tall, Op{}, TemporalBlocking{});
  std::string const banded_text = printed(banded);
  EXPECT_LT(banded.tile.z, 67) << banded_text;
  EXPECT_NE(banded_text.find("streamed down in bands of"), std::string::npos)
      << banded_text;
  // At radius 1 the default is depth 3 where it is compiled (the wave does
  // not spill there).
  using Wave = stencil::suite::Wave<3, 1>;
  stencil::State<double, 3, Kokkos::CudaSpace> wave(
      "wave", {40, 20, 40}, stencil::field_specs<Wave>({"u"}), {.halo = 1});
  EXPECT_EQ(stencil::plan(Space{}, wave, Wave{}, TemporalBlocking{}).depth,
            std::min(3, stencil::native_cuda::fields::stream_max_depth<3>));
  // In double the rings fit at depth 1 only: the default goes down to it,
  // and depth 2 is refused, saying which fit.
  stencil::State<double, 3, Kokkos::CudaSpace> wide(
      "mixed", {13, 29, 61}, stencil::field_specs<Op>({"u", "w", "k"}),
      {.halo = 2});
  EXPECT_EQ(stencil::plan(Space{}, wide, Op{}, TemporalBlocking{}).depth, 1);
  stencil_test::expect_refused_with(
      [&] {
        (void)stencil::plan(Space{}, wide, Op{}, TemporalBlocking{.depth = 2});
      },
      "depths 1 to 1 fit");
  // A rim of radius x depth = 8 leaves none of the tile's 16 rows.
  stencil_test::expect_refused_with(
      [&] {
        (void)stencil::plan(Space{}, s, Op{}, TemporalBlocking{.depth = 4});
      },
      "use a depth below 4");
  // Other boundaries change the halo every step.
  stencil::State<double, 3, Kokkos::CudaSpace> neumann(
      "n", {9, 9, 9}, stencil::field_specs<Op>({"u", "w", "k"}),
      {.halo = 2, .boundary = Boundary::neumann});
  stencil_test::expect_refused_with(
      [&] { (void)stencil::plan(Space{}, neumann, Op{}, TemporalBlocking{}); },
      "fixed and periodic boundaries");
  // In 3D it ran behind Naive at radius 2 and with a coefficient, so Auto
  // does not take it there...
  auto const chosen = stencil::plan(Space{}, s, Op{}, stencil::Auto{});
  EXPECT_EQ(chosen.policy, stencil::PolicyKind::naive) << chosen.reason;
  EXPECT_NE(chosen.reason.find("in 3D at radius 2"), std::string::npos)
      << chosen.reason;
  using Heat = stencil::suite::HeatVarCoef<3>;
  stencil::State<double, 3, Kokkos::CudaSpace> heat(
      "heat", {40, 20, 40}, stencil::field_specs<Heat>({"u", "k"}),
      {.halo = 1});
  auto const heat_auto = stencil::plan(Space{}, heat, Heat{}, stencil::Auto{});
  EXPECT_EQ(heat_auto.policy, stencil::PolicyKind::naive) << heat_auto.reason;
  EXPECT_NE(heat_auto.reason.find("with a coefficient field"),
            std::string::npos)
      << heat_auto.reason;
  // ...but takes it on the radius-1 wave, where it led, wherever this build
  // has a depth of 2 or more.
  auto const wave_auto = stencil::plan(Space{}, wave, Wave{}, stencil::Auto{});
  if (stencil::native_cuda::fields::stream_max_depth<3> >= 2) {
    EXPECT_EQ(wave_auto.policy, stencil::PolicyKind::temporal_blocking)
        << wave_auto.reason;
    EXPECT_EQ(wave_auto.depth,
              stencil::plan(Space{}, wave, Wave{}, TemporalBlocking{}).depth);
    EXPECT_NE(wave_auto.reason.find("3D at radius 1"), std::string::npos)
        << wave_auto.reason;
  } else {
    EXPECT_EQ(wave_auto.policy, stencil::PolicyKind::naive) << wave_auto.reason;
    EXPECT_NE(wave_auto.reason.find("depth in this build is 1"),
              std::string::npos)
        << wave_auto.reason;
  }
}

}  // namespace
