// SPDX-License-Identifier: Apache-2.0
#pragma once

// The suite's solvers of several fields and time levels (docs/suite.md):
// the leapfrog wave equation (u at n and n-1), heat with a read-only
// diffusivity field, and the two-species Gray-Scott and Brusselator
// reaction-diffusion systems. Each is a multi-field stencil functor
// (stencil/fields/declare.hpp) with `name` and `bytes_per_cell`: the bytes a
// one-step sweep must move per cell (every field read once and every
// written field stored once), from which the benchmarks' DRAM ceilings come.

#include <stencil/fields/declare.hpp>
#include <stencil/traits.hpp>

#include <Kokkos_Core.hpp>

namespace stencil::suite {

/// Reads the centre of a rank-`Rank` accessor.
template <int Rank, class U>
KOKKOS_FORCEINLINE_FUNCTION auto at_centre(U const& u) {
  if constexpr (Rank == 1) {
    return u(0);
  } else if constexpr (Rank == 2) {
    return u(0, 0);
  } else {
    return u(0, 0, 0);
  }
}

namespace detail {
/// Weight `d` (0: the centre, then distance 1..r) of the radius-r central
/// second difference. A function, not a static array: device code may not
/// index a host array with a run-time index.
KOKKOS_FORCEINLINE_FUNCTION constexpr double second_difference(int r, int d) {
  switch (r) {
    case 1:
      return d == 0 ? -2.0 : 1.0;
    case 2:
      return d == 0 ? -5.0 / 2 : d == 1 ? 4.0 / 3 : -1.0 / 12;
    case 3:
      return d == 0   ? -49.0 / 18
             : d == 1 ? 3.0 / 2
             : d == 2 ? -3.0 / 20
                      : 1.0 / 90;
    default:
      return d == 0   ? -205.0 / 72
             : d == 1 ? 8.0 / 5
             : d == 2 ? -1.0 / 5
             : d == 3 ? 8.0 / 315
                      : -1.0 / 560;
  }
}

/// The 2 * Rank cells at distance `d` from the centre along the axes.
template <class T, int Rank, class U>
KOKKOS_FORCEINLINE_FUNCTION T pairs_at(U const& u, int d) {
  if constexpr (Rank == 1) {
    return u(-d) + u(d);
  } else if constexpr (Rank == 2) {
    return u(-d, 0) + u(d, 0) + u(0, -d) + u(0, d);
  } else {
    return u(-d, 0, 0) + u(d, 0, 0) + u(0, -d, 0) + u(0, d, 0) + u(0, 0, -d) +
           u(0, 0, d);
  }
}

}  // namespace detail

/// wave<Rank>d-r<R>: u[n+1] = 2 u[n] - u[n-1] + C^2 sum_axes Delta_R u[n],
/// C = 0.3 (stable for every R <= 4 in 1D, 2D and 3D). Two buffers: u[n+1]
/// overwrites u[n-1]. In 1D it is paper 004's leapfrog (STENCILS.md, "1D
/// wave equation"), the register-resident study's stencil.
template <int Rank, int R>
struct Wave {
  static_assert(R >= 1 && R <= 4, "wave: radius 1 to 4");
  static_assert(Rank >= 1 && Rank <= 3, "wave: rank 1 to 3");
  static constexpr int rank = Rank;
  static constexpr auto shape = Shape::star;
  using fields = stencil::fields<stencil::field<R, 2>>;
  static constexpr char const* name = Rank == 1   ? (R == 1   ? "wave1d-r1"
                                                     : R == 2 ? "wave1d-r2"
                                                     : R == 3 ? "wave1d-r3"
                                                              : "wave1d-r4")
                                      : Rank == 2 ? (R == 1   ? "wave2d-r1"
                                                     : R == 2 ? "wave2d-r2"
                                                     : R == 3 ? "wave2d-r3"
                                                              : "wave2d-r4")
                                                  : (R == 1   ? "wave3d-r1"
                                                     : R == 2 ? "wave3d-r2"
                                                     : R == 3 ? "wave3d-r3"
                                                              : "wave3d-r4");
  /// Reads u[n] and u[n-1], writes u[n+1] (over u[n-1]).
  static constexpr int values_per_cell = 3;
  static constexpr double courant_squared = 0.3 * 0.3;

  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    auto const u = stencil::read<0>(in);
    auto const u_old = stencil::read<0, -1>(in);
    // 2 u - u_old + C^2 Lap u with C^2 folded into the weights: one FMA
    // for the centre and u_old, and an add and an FMA per distance in 1D,
    // the fewest a radius-R update takes (paper 004 counts 2R + 1).
    constexpr double k = courant_squared;
    T next = static_cast<T>(2 + k * Rank * detail::second_difference(R, 0)) *
                 at_centre<Rank>(u) -
             at_centre<Rank>(u_old);
    for (int d = 1; d <= R; ++d) {
      next += static_cast<T>(k * detail::second_difference(R, d)) *
              detail::pairs_at<T, Rank>(u, d);
    }
    return next;
  }
};

/// heat-varcoef<Rank>d: u' = u + lambda sum_axes [k+ (u+ - u) - k- (u - u-)]
/// with k+ = (k + k at +1) / 2 along each axis and lambda = 0.1; k is a
/// read-only field (values in [0.5, 1.5] in the suite).
template <int Rank>
struct HeatVarCoef {
  static constexpr int rank = Rank;
  static constexpr auto shape = Shape::star;
  using fields = stencil::fields<stencil::field<1>, stencil::coefficient<1>>;
  static constexpr char const* name =
      Rank == 2 ? "heat-varcoef2d" : "heat-varcoef3d";
  /// Reads u and k, writes u.
  static constexpr int values_per_cell = 3;
  static constexpr double lambda = 0.1;

  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    auto const u = stencil::read<0>(in);
    auto const k = stencil::read<1>(in);
    T const uc = at_centre<Rank>(u);
    T const kc = at_centre<Rank>(k);
    T const half = static_cast<T>(0.5);
    T flux = 0;
    auto axis = [&](T u_minus, T u_plus, T k_minus, T k_plus) {
      flux += half * (kc + k_plus) * (u_plus - uc) -
              half * (kc + k_minus) * (uc - u_minus);
    };
    if constexpr (Rank == 1) {
      axis(u(-1), u(1), k(-1), k(1));
    } else if constexpr (Rank == 2) {
      axis(u(-1, 0), u(1, 0), k(-1, 0), k(1, 0));
      axis(u(0, -1), u(0, 1), k(0, -1), k(0, 1));
    } else {
      axis(u(-1, 0, 0), u(1, 0, 0), k(-1, 0, 0), k(1, 0, 0));
      axis(u(0, -1, 0), u(0, 1, 0), k(0, -1, 0), k(0, 1, 0));
      axis(u(0, 0, -1), u(0, 0, 1), k(0, 0, -1), k(0, 0, 1));
    }
    return uc + static_cast<T>(lambda) * flux;
  }
};

/// grayscott2d's right-hand side for stencil::ode::integrate: u' = Du Lap u
/// - u v^2 + F (1 - u), v' = Dv Lap v + u v^2 - (F + k) v, the Laplacian
/// per cell (GrayScott is its forward Euler step with dt = 1).
struct GrayScottRhs {
  static constexpr int rank = 2;
  static constexpr auto shape = Shape::star;
  using fields = stencil::fields<stencil::field<1>, stencil::field<1>>;
  static constexpr char const* name = "grayscott2d";
  double du = 0.16, dv = 0.08, feed = 0.035, kill = 0.065;

  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    auto const u = stencil::read<0>(in);
    auto const v = stencil::read<1>(in);
    T const uc = u(0, 0), vc = v(0, 0);
    T const lap_u = u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1) - 4 * uc;
    T const lap_v = v(-1, 0) + v(1, 0) + v(0, -1) + v(0, 1) - 4 * vc;
    T const uvv = uc * vc * vc;
    return stencil::values{
        static_cast<T>(du) * lap_u - uvv + static_cast<T>(feed) * (1 - uc),
        static_cast<T>(dv) * lap_v + uvv - static_cast<T>(feed + kill) * vc};
  }
};

/// grayscott2d: one forward Euler step of GrayScottRhs with h = dt = 1,
/// u + Du Lap u - u v^2 + F (1 - u) and v + Dv Lap v + u v^2 - (F + k) v
/// (5-point Laplacian), Du = 0.16, Dv = 0.08, F = 0.035, k = 0.065;
/// periodic in the suite.
struct GrayScott {
  static constexpr int rank = 2;
  static constexpr auto shape = Shape::star;
  using fields = stencil::fields<stencil::field<1>, stencil::field<1>>;
  static constexpr char const* name = "grayscott2d";
  /// Reads u and v, writes both.
  static constexpr int values_per_cell = 4;
  double du = 0.16, dv = 0.08, feed = 0.035, kill = 0.065;

  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    auto const derivative = GrayScottRhs{du, dv, feed, kill}(in);
    return stencil::values{stencil::read<0>(in)(0, 0) + derivative.value[0],
                           stencil::read<1>(in)(0, 0) + derivative.value[1]};
  }
};

/// The Brusselator as an ODE right-hand side for stencil::ode::integrate:
/// u' and v' of bruss2d (Bruss is their forward Euler step), on N x N
/// points of the unit square, h = 1/(N-1). Its method-of-lines form is the
/// ODE test problem of paper 001 and of Hairer & Wanner II.
struct BrussRhs {
  static constexpr int rank = 2;
  static constexpr auto shape = Shape::star;
  using fields = stencil::fields<stencil::field<1>, stencil::field<1>>;
  static constexpr char const* name = "bruss2d";
  static constexpr double alpha = 2e-3;
  double inv_h2 = 1.0;  ///< 1 / h^2 = (N - 1)^2

  static BrussRhs for_points(int n) {
    return {static_cast<double>(n - 1) * (n - 1)};
  }
  /// The magnitude of the diffusion's most negative eigenvalue, 8 alpha /
  /// h^2: an explicit method is stable for steps up to its stability
  /// interval on the negative real axis divided by this (and the reaction
  /// keeps steps below about 0.1 where diffusion allows more).
  double stiffness() const { return 8 * alpha * inv_h2; }

  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    auto const u = stencil::read<0>(in);
    auto const v = stencil::read<1>(in);
    T const uc = u(0, 0), vc = v(0, 0);
    T const diffusion = static_cast<T>(alpha * inv_h2);
    T const lap_u = u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1) - 4 * uc;
    T const lap_v = v(-1, 0) + v(1, 0) + v(0, -1) + v(0, 1) - 4 * vc;
    T const uuv = uc * uc * vc;
    return stencil::values{
        1 + uuv - static_cast<T>(4.4) * uc + diffusion * lap_u,
        static_cast<T>(3.4) * uc - uuv + diffusion * lap_v};
  }
};

/// bruss2d, one explicit Euler step of the Brusselator with diffusion:
/// u_t = 1 + u^2 v - 4.4 u + alpha Lap u, v_t = 3.4 u - u^2 v + alpha Lap v
/// on the unit square with N x N points (h = 1/(N-1)), alpha = 2e-3,
/// reflecting (vertex-centred Neumann) boundaries in the suite: y + dt
/// BrussRhs(y). `dt` must keep 4 alpha dt / h^2 below 1 for stability.
struct Bruss {
  static constexpr int rank = 2;
  static constexpr auto shape = Shape::star;
  using fields = stencil::fields<stencil::field<1>, stencil::field<1>>;
  static constexpr char const* name = "bruss2d";
  static constexpr int values_per_cell = 4;
  static constexpr double alpha = BrussRhs::alpha;
  double dt = 1e-6;
  double inv_h2 = 1.0;  ///< 1 / h^2 = (N - 1)^2

  /// The stencil for an N x N grid: h = 1/(N-1), dt at a quarter of the
  /// diffusion's stability limit, and at most 0.01, which keeps the
  /// reaction's explicit step stable where the diffusion allows more
  /// (small N).
  static Bruss for_points(int n) {
    double const inv_h2 = static_cast<double>(n - 1) * (n - 1);
    double const diffusion_limit = 0.25 / (4 * alpha * inv_h2);
    return {diffusion_limit < 0.01 ? diffusion_limit : 0.01, inv_h2};
  }

  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    using T = typename In::value_type;
    auto const derivative = BrussRhs{inv_h2}(in);
    T const step = static_cast<T>(dt);
    return stencil::values{
        stencil::read<0>(in)(0, 0) + step * derivative.value[0],
        stencil::read<1>(in)(0, 0) + step * derivative.value[1]};
  }
};

/// bruss2d's right-hand side stored interleaved, as paper 001 stores it:
/// one field of N rows of 2N values, u and v of a point side by side (u at
/// even x, v at odd x), so that a value's neighbours along y lie 2N values
/// away (the access distance d = 2N). It applies the reflecting boundary
/// (vertex-centred Neumann, h = 1/(N-1)) itself, from the cell's position,
/// so the halo's values are never used (a fixed halo of 2 cells). It reads
/// 2 values away along a row but 1 row away: `within<1, 2>`.
struct BrussInterleavedRhs {
  static constexpr int rank = 2;
  static constexpr auto shape = Shape::star;
  using fields = stencil::fields<stencil::field<2>>::within<1, 2>;
  static constexpr char const* name = "bruss2d-interleaved";
  static constexpr double alpha = BrussRhs::alpha;
  double inv_h2 = 1.0;
  int points = 3;  ///< N

  static BrussInterleavedRhs for_points(int n) {
    return {static_cast<double>(n - 1) * (n - 1), n};
  }
  double stiffness() const { return 8 * alpha * inv_h2; }

  // u_t at a u value (v is the next value), v_t at a v value (u is the one
  // before); a neighbour past the edge is the mirror image of the one
  // inside. The two forms below compute the same values in the same order.
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const {
    // On a GPU each cell loads only the neighbours it uses: the other loads
    // and the unused rate cost the fused kernel more than the divergence of
    // its alternating lanes. On a host every neighbour is read and each
    // choice selects among values, so that the compiler can evaluate a
    // row's cells in vector lanes (a load or a product under a branch keeps
    // the loop scalar).
    KOKKOS_IF_ON_DEVICE((return rate_loading_what_it_uses(in);))
    KOKKOS_IF_ON_HOST((return rate_choosing_values(in);))
  }

  /// u_t and v_t of the point whose u value `in` is at (an even x), as
  /// operator() computes them at x and x + 1: the fused CUDA kernel
  /// evaluates a point at once where a right-hand side offers this, each
  /// neighbouring pair one aligned load.
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto rates_of_point(In const& in) const {
    using T = typename In::value_type;
    auto const y = stencil::read<0>(in);
    auto const at = in.position();
    int const column = at[1] / 2;
    int const west = column == 0 ? 2 : -2;
    int const east = column == points - 1 ? -2 : 2;
    int const up = at[0] == 0 ? 1 : -1;
    int const down = at[0] == points - 1 ? -1 : 1;
    T const u = y(0, 0), v = y(0, 1);
    T const u_west = y(0, west), v_west = y(0, west + 1);
    T const u_east = y(0, east), v_east = y(0, east + 1);
    T const u_up = y(up, 0), v_up = y(up, 1);
    T const u_down = y(down, 0), v_down = y(down, 1);
    T const scale = static_cast<T>(alpha * inv_h2);
    T const spread_u = scale * (u_west + u_east + u_up + u_down - 4 * u);
    T const spread_v = scale * (v_west + v_east + v_up + v_down - 4 * v);
    return stencil::values<T, 2>{
        1 + u * u * v - static_cast<T>(4.4) * u + spread_u,
        static_cast<T>(3.4) * u - u * u * v + spread_v};
  }

 private:
  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto rate_loading_what_it_uses(
      In const& in) const {
    using T = typename In::value_type;
    auto const y = stencil::read<0>(in);
    auto const at = in.position();  // {row, value in the row}
    int const column = at[1] / 2;
    T const c = y(0, 0);
    T const west = column == 0 ? y(0, 2) : y(0, -2);
    T const east = column == points - 1 ? y(0, -2) : y(0, 2);
    T const up = at[0] == 0 ? y(1, 0) : y(-1, 0);
    T const down = at[0] == points - 1 ? y(-1, 0) : y(1, 0);
    T const spread =
        static_cast<T>(alpha * inv_h2) * (west + east + up + down - 4 * c);
    if (at[1] % 2 == 0) {
      T const v = y(0, 1);
      return 1 + c * c * v - static_cast<T>(4.4) * c + spread;
    }
    T const u = y(0, -1);
    return static_cast<T>(3.4) * u - u * u * c + spread;
  }

  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION auto rate_choosing_values(In const& in) const {
    using T = typename In::value_type;
    auto const y = stencil::read<0>(in);
    auto const at = in.position();
    int const column = at[1] / 2;
    T const c = y(0, 0);
    T const west2 = y(0, -2), east2 = y(0, 2), north = y(-1, 0),
            south = y(1, 0), west1 = y(0, -1), east1 = y(0, 1);
    T const west = column == 0 ? east2 : west2;
    T const east = column == points - 1 ? west2 : east2;
    T const up = at[0] == 0 ? south : north;
    T const down = at[0] == points - 1 ? north : south;
    T const spread =
        static_cast<T>(alpha * inv_h2) * (west + east + up + down - 4 * c);
    T const du = 1 + c * c * east1 - static_cast<T>(4.4) * c;
    T const dv = static_cast<T>(3.4) * west1 - west1 * west1 * c;
    return (at[1] % 2 == 0 ? du : dv) + spread;
  }
};

}  // namespace stencil::suite
