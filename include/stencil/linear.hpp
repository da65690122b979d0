// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/divisor.hpp>
#include <stencil/error.hpp>
#include <stencil/traits.hpp>

#include <Kokkos_Core.hpp>

#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <utility>

namespace stencil {

namespace detail {

KOKKOS_INLINE_FUNCTION constexpr int linear_table_size(int rank, Shape shape,
                                                       int radius) {
  if (shape == Shape::star) return 2 * rank * radius + 1;
  int n = 1;
  for (int d = 0; d < rank; ++d) n *= 2 * radius + 1;
  return n;
}

/// The offset (slowest dimension first, padded to three) of entry `index` of a
/// coefficient table. Entries are the shape's points in lexicographic order
/// of their offsets (the order the suite's stencils list their weights in).
struct Offset3 {
  int d[3] = {0, 0, 0};
};

KOKKOS_INLINE_FUNCTION constexpr Offset3 linear_table_offset(int rank,
                                                             Shape shape,
                                                             int radius,
                                                             int index) {
  Offset3 o;
  int const first = 3 - rank;  // offsets live in the last `rank` slots
  if (shape == Shape::box) {
    for (int a = rank - 1; a >= 0; --a) {
      o.d[first + a] = index % (2 * radius + 1) - radius;
      index /= 2 * radius + 1;
    }
    return o;
  }
  // Star: points with a negative offset on axis a (zeros after), then the
  // star over the remaining axes, then positive offsets on axis a.
  for (int a = 0; a < rank; ++a) {
    if (a == rank - 1) {
      o.d[first + a] = index - radius;
      return o;
    }
    if (index < radius) {
      o.d[first + a] = index - radius;
      return o;
    }
    index -= radius;
    int const inner = 2 * (rank - 1 - a) * radius + 1;
    if (index < inner) continue;
    o.d[first + a] = index - inner + 1;
    return o;
  }
  return o;
}

}  // namespace detail

/// A linear constant-coefficient stencil given as data:
/// out = (sum over the shape's points p of c_p * in(p)) / divisor.
///
/// The table lists the shape's points in lexicographic order of their offsets
/// (slowest dimension first): for a radius-1 2D star that is
/// (-1,0), (0,-1), (0,0), (0,1), (1,0); for a box, row-major over
/// dz, dy, dx = -r..r. The divisor is applied after the sum, which keeps the
/// rounding of stencils written as `(...) / 118`.
template <int Rank, Shape StencilShape, int Radius, class T>
class Linear {
 public:
  static constexpr int rank = Rank;
  static constexpr int radius = Radius;
  static constexpr Shape shape = StencilShape;
  static constexpr int size =
      detail::linear_table_size(Rank, StencilShape, Radius);

  static_assert(Rank >= 1 && Rank <= 3,
                "stencil::Linear: Rank must be 1, 2 or 3");
  static_assert(Radius >= 0 && Radius <= max_radius,
                "stencil::Linear: Radius must be between 0 and "
                "stencil::max_radius");
  static_assert(std::floating_point<T>,
                "stencil::Linear: the value type must be float or double");
  static_assert(size * sizeof(T) <= 4096,
                "stencil::Linear: the coefficient table is larger than 4 KiB "
                "(kernel arguments carry it); write the stencil as a functor");

  /// Throws stencil::error unless `coefficients` has exactly `size` entries
  /// and `divisor` is non-zero.
  Linear(std::span<T const> coefficients, T divisor = T(1))
      : m_divisor(divisor) {
    STENCIL_EXPECT(
        coefficients.size() == static_cast<std::size_t>(size),
        "stencil::Linear<rank ", Rank, ", ",
        StencilShape == Shape::star ? "star" : "box", ", radius ", Radius,
        ">: the coefficient table has ", coefficients.size(),
        " entries; it needs exactly ", size,
        " (the shape's points in lexicographic order of their offsets)");
    STENCIL_EXPECT(divisor != T(0),
                   "stencil::Linear: the divisor is zero; use 1 for none");
    for (int i = 0; i < size; ++i) m_coefficients[i] = coefficients[i];
  }
  Linear(std::initializer_list<T> coefficients, T divisor = T(1))
      : Linear(std::span<T const>(coefficients.begin(), coefficients.size()),
               divisor) {}

  KOKKOS_INLINE_FUNCTION T coefficient(int i) const {
    return m_coefficients[i];
  }
  KOKKOS_INLINE_FUNCTION T divisor() const { return m_divisor.value(); }

  template <class In>
  KOKKOS_FORCEINLINE_FUNCTION T operator()(In const& in) const {
    // Divisor: the plain division's result without recomputing the
    // reciprocal of the divisor for every cell on a GPU.
    return sum(in, std::make_index_sequence<size>{}) / m_divisor;
  }

 private:
  template <int Index, class In>
  KOKKOS_FORCEINLINE_FUNCTION T tap(In const& in) const {
    constexpr detail::Offset3 o =
        detail::linear_table_offset(Rank, StencilShape, Radius, Index);
    if constexpr (Rank == 1) {
      return m_coefficients[Index] * in(o.d[2]);
    } else if constexpr (Rank == 2) {
      return m_coefficients[Index] * in(o.d[1], o.d[2]);
    } else {
      return m_coefficients[Index] * in(o.d[0], o.d[1], o.d[2]);
    }
  }

  template <class In, std::size_t... Index>
  KOKKOS_FORCEINLINE_FUNCTION T sum(In const& in,
                                    std::index_sequence<Index...>) const {
    T total = T(0);
    ((total += tap<static_cast<int>(Index)>(in)), ...);
    return total;
  }

  T m_coefficients[size] = {};
  Divisor<T> m_divisor{T(1)};
};

}  // namespace stencil
