// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <concepts>
#include <type_traits>

namespace stencil {

/// Which neighbours a stencil reads. `star`: only cells on the axes through
/// the centre (|offset| > 0 in at most one dimension); `box`: the whole
/// (2r+1)^rank cube. Backends size halo exchanges and tiles by it.
enum class Shape { star, box };

/// The largest radius the library accepts. Halo widths and on-chip tiles grow
/// with the radius; beyond this a stencil is better expressed another way.
inline constexpr int max_radius = 8;

/// What a stencil functor must declare:
///
///   struct Heat2D {
///     static constexpr int rank = 2;                     // 1, 2 or 3
///     static constexpr int radius = 1;                   // 0 .. max_radius
///     static constexpr auto shape = stencil::Shape::star;
///     template <class In>
///     KOKKOS_FORCEINLINE_FUNCTION auto operator()(In const& in) const;
///   };
///
/// `in(dy, dx)` reads the neighbour at a relative offset (one offset per
/// dimension, slowest first; the last index is the contiguous one).
///
/// Optional: `static constexpr int divisions = 1;` where the update divides
/// (by anything but a power of two: `/ 118`, or stencil::Divisor). A GPU
/// division is a chain of dependent operations after the sum (Divisor: a
/// multiply and two FMAs per cell), and the native planner's default depth
/// for radius-1 stars depends on it: without a division their deepest
/// blocking pays, with one a shallower level on a wider block does (see
/// backends/native_cuda/temporal_blocking/launch.hpp). Default 0.
///
/// Optional: `static constexpr bool linear = true;` where the update is a
/// linear function of the taps: a sum of constant multiples of them, with no
/// constant term and nothing applied to the sum but a constant factor. Then
/// the update is the sum, over the planes of the neighbourhood, of the
/// functor applied to one plane's taps (the others read as zero), and the
/// native CUDA device-tiling kernel computes a double 3D box that way: it reads
/// a streamed plane's taps from shared memory once per level instead of once
/// per plane of the box, and adds the planes in an order of its own (a few
/// roundings apart from the functor's). Leave it out where a division ends
/// the update: summed by plane, it would divide once per plane. Default
/// false.
template <class Op>
concept StencilOperator = requires {
  { Op::rank } -> std::convertible_to<int>;
  { Op::radius } -> std::convertible_to<int>;
  { Op::shape } -> std::convertible_to<Shape>;
};

namespace detail {

/// The functor's `divisions` trait, 0 where it declares none.
template <class Op>
constexpr int divisions_of() {
  if constexpr (requires { Op::divisions; }) {
    return static_cast<int>(Op::divisions);
  } else {
    return 0;
  }
}

/// The functor's `linear` trait, false where it declares none.
template <class Op>
constexpr bool is_linear() {
  if constexpr (requires { Op::linear; }) {
    return static_cast<bool>(Op::linear);
  } else {
    return false;
  }
}

/// Compile-time checks shared by every entry point, with messages that say
/// what to do. Instantiated from iterate, plan and Grid-taking functions.
template <class Op, int GridRank>
constexpr bool check_operator() {
  static_assert(
      StencilOperator<Op>,
      "stencil::traits: the stencil functor must declare `static constexpr "
      "int rank`, `static constexpr int radius` and `static "
      "constexpr stencil::Shape shape` (see stencil/traits.hpp)");
  if constexpr (StencilOperator<Op>) {
    static_assert(Op::rank >= 1 && Op::rank <= 3,
                  "stencil::traits: a stencil's rank must be 1, 2 or 3");
    static_assert(
        Op::rank == GridRank,
        "stencil::traits: the stencil's rank does not match the grid's "
        "rank; use a Grid<T, Op::rank>");
    static_assert(Op::radius >= 0 && Op::radius <= max_radius,
                  "stencil::traits: a stencil's radius must be between 0 and "
                  "stencil::max_radius (8)");
    static_assert(
        divisions_of<Op>() >= 0,
        "stencil::traits: a stencil's divisions count the divisions of one "
        "update; give 0 or more (or leave it out for none)");
  }
  return true;
}

}  // namespace detail
}  // namespace stencil
