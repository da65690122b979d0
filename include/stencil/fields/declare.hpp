// SPDX-License-Identifier: Apache-2.0
// What a stencil of several fields declares, and how its functor reads them.
//
//   struct GrayScott {
//     static constexpr int rank = 2;
//     static constexpr auto shape = stencil::Shape::star;
//     using fields = stencil::fields<stencil::field<1>,   // u, written
//                                    stencil::field<1>>;  // v, written
//     template <class In>
//     KOKKOS_FUNCTION auto operator()(In const& in) const {
//       auto const u = stencil::read<0>(in);
//       auto const v = stencil::read<1>(in);
//       ...
//       return stencil::values{u_next, v_next};   // one per written field
//     }
//   };
//
// The fields are those of a stencil::State, in order. A single-field
// functor (no `fields`) keeps running on a Grid unchanged.
#pragma once

#include <stencil/detail/neighbourhood.hpp>
#include <stencil/traits.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

namespace stencil {

/// A field the stencil updates. It reads the current level within `Radius`
/// and, with `Levels` > 1, the `Levels - 1` earlier levels at the cell
/// itself (read<I, -1>, read<I, -2>, ...): a leapfrog wave is field<r, 2>.
/// The new level overwrites the oldest one kept, so a field keeps
/// max(2, Levels) buffers; that is why earlier levels are read at offset 0
/// only (another cell's old value may already be overwritten).
template <int Radius, int Levels = 1>
struct field {
  static_assert(Radius >= 0 && Radius <= max_radius,
                "stencil::field: the radius must be between 0 and "
                "stencil::max_radius (8)");
  static_assert(Levels >= 1 && Levels <= 4,
                "stencil::field: a field keeps 1 to 4 time levels");
  static constexpr int radius = Radius;
  static constexpr int levels = Levels;
  static constexpr bool written = true;
};

/// A field the stencil reads but never writes (a coefficient such as a
/// diffusivity k(x, y)): one buffer, its halo refreshed like the others.
template <int Radius>
struct coefficient {
  static_assert(Radius >= 0 && Radius <= max_radius,
                "stencil::coefficient: the radius must be between 0 and "
                "stencil::max_radius (8)");
  static constexpr int radius = Radius;
  static constexpr int levels = 1;
  static constexpr bool written = false;
};

namespace detail {
/// The largest of a pack, for the fields' traits: computed from the pack,
/// not from the class's own arrays, which are incomplete inside it.
template <class... Int>
constexpr int largest_of(Int... values) {
  int most = 0;
  ((most = values > most ? values : most), ...);
  return most;
}

/// Radius `axis` (0: the fastest) of radii given slowest first; max_radius
/// past the last.
template <int... Radius>
constexpr int fastest_first(int axis) {
  constexpr int n = sizeof...(Radius);
  constexpr int slowest_first[] = {Radius..., 0};
  return axis < n ? slowest_first[n - 1 - axis] : max_radius;
}
}  // namespace detail

/// The fields a stencil reads, in the order of the State's fields.
template <class... Field>
struct fields {
  static_assert(sizeof...(Field) >= 1 && sizeof...(Field) <= 8,
                "stencil::fields: a stencil declares 1 to 8 fields");
  static constexpr int count = sizeof...(Field);
  static constexpr int radii[] = {Field::radius...};
  static constexpr int levels[] = {Field::levels...};
  static constexpr bool written[] = {Field::written...};
  static constexpr int written_count = (0 + ... + (Field::written ? 1 : 0));
  static_assert(written_count >= 1,
                "stencil::fields: a stencil writes at least one field; "
                "declare it with stencil::field, not stencil::coefficient");
  static constexpr int radius = detail::largest_of(Field::radius...);
  static constexpr int most_levels = detail::largest_of(Field::levels...);
  /// How far the stencil reads along each axis, fastest first, where
  /// `within` narrows it: none here (each field's radius on every axis).
  static constexpr int within_count = 0;
  static constexpr int within_radii[3] = {max_radius, max_radius, max_radius};

  /// The same fields, read at most `Radius...` cells away along each axis,
  /// slowest first as in in(dy, dx), one per dimension of the stencil:
  /// `stencil::fields<stencil::field<2>>::within<1, 2>` reads 1 row and 2
  /// columns away (u and v stored side by side in one row). A field's reach
  /// along an axis is the smaller of its radius and the axis's. The fused
  /// Runge-Kutta plan recomputes rims only as deep as each axis needs; a
  /// read beyond them is caught as one beyond the radius is.
  template <int... Radius>
  struct within;
};

template <class... Field>
template <int... Radius>
struct fields<Field...>::within : fields<Field...> {
  static_assert(sizeof...(Radius) >= 1 && sizeof...(Radius) <= 3,
                "stencil::fields::within: give one radius per dimension of "
                "the stencil, slowest first (within<ry, rx> in 2D)");
  static_assert(((Radius >= 0 && Radius <= max_radius) && ...),
                "stencil::fields::within: each axis's radius must be between "
                "0 and stencil::max_radius (8)");
  static constexpr int within_count = sizeof...(Radius);
  static constexpr int within_radii[3] = {detail::fastest_first<Radius...>(0),
                                          detail::fastest_first<Radius...>(1),
                                          detail::fastest_first<Radius...>(2)};
};

namespace detail {
/// How far field `I` of `Fields` is read along `axis` (0: the fastest).
template <class Fields, int I>
KOKKOS_INLINE_FUNCTION constexpr int radius_along(int axis) {
  int const own = Fields::radii[I];
  int const cap = Fields::within_radii[axis];
  return own < cap ? own : cap;
}
/// The most any field of `Fields` is read along `axis` (0: the fastest).
template <class Fields>
KOKKOS_INLINE_FUNCTION constexpr int largest_radius_along(int axis) {
  int const cap = Fields::within_radii[axis];
  return Fields::radius < cap ? Fields::radius : cap;
}
}  // namespace detail

/// The new values of a stencil that writes several fields, in the order of
/// its written fields: `return stencil::values{u_next, v_next};`.
template <class T, int N>
struct values {
  T value[N];
  KOKKOS_FORCEINLINE_FUNCTION constexpr T operator[](int i) const {
    return value[i];
  }
};
template <class T, class... U>
KOKKOS_DEDUCTION_GUIDE values(T, U...)
    -> values<std::common_type_t<T, U...>, 1 + sizeof...(U)>;

/// True for a functor that declares `using fields = stencil::fields<...>`.
template <class Op>
concept MultiFieldOperator = requires {
  { Op::rank } -> std::convertible_to<int>;
  { Op::shape } -> std::convertible_to<Shape>;
  Op::fields::count;
};

namespace detail {

template <class Op>
inline constexpr bool has_fields_v = requires { Op::fields::count; };

/// The write slot of field `I` among the written fields (on the device
/// too: native kernels index their written values with it).
template <class Fields, int I>
KOKKOS_INLINE_FUNCTION constexpr int written_slot() {
  int slot = 0;
  for (int f = 0; f < I; ++f) slot += Fields::written[f] ? 1 : 0;
  return slot;
}

/// Whether `Fields` declares no `within`, or one radius per dimension of
/// a stencil of `rank`.
template <class Fields>
constexpr bool within_fits_rank(int rank) {
  return Fields::within_count == 0 || Fields::within_count == rank;
}

/// Compile-time checks of a multi-field functor, with what to do.
template <class Op, int Rank>
constexpr bool check_fields_operator() {
  static_assert(MultiFieldOperator<Op>,
                "stencil::fields: a multi-field stencil functor declares "
                "`static constexpr int rank`, `static constexpr "
                "stencil::Shape shape` and `using fields = "
                "stencil::fields<...>`");
  if constexpr (MultiFieldOperator<Op>) {
    static_assert(Op::rank >= 1 && Op::rank <= 3,
                  "stencil::traits: a stencil's rank must be 1, 2 or 3");
    static_assert(Op::rank == Rank,
                  "stencil::traits: the stencil's rank does not match the "
                  "state's rank; use a State<T, Op::rank>");
    static_assert(within_fits_rank<typename Op::fields>(Op::rank),
                  "stencil::fields::within: give one radius per dimension of "
                  "the stencil (within<ry, rx> for rank 2)");
  }
  return true;
}

}  // namespace detail

/// Reads field `I` of a multi-field stencil at time level `Level` (0: the
/// current level, -1: the one before, ...). The result is an accessor like
/// a single-field stencil's `in`: `read<0>(in)(dy, dx)`. Level 0 is read
/// within the field's declared radius, earlier levels at offset 0 only.
template <int I, int Level = 0, class In>
KOKKOS_FORCEINLINE_FUNCTION auto read(In const& in) {
  using Fields = typename In::fields_type;
  static_assert(I >= 0 && I < Fields::count,
                "stencil::read: the stencil reads a field it does not "
                "declare; add it to `using fields = stencil::fields<...>` "
                "(fields are numbered from 0, in the State's order)");
  static_assert(Level <= 0,
                "stencil::read: a time level is 0 (the current one) or "
                "negative (earlier ones); the new level is what the "
                "functor returns");
  static_assert(-Level < Fields::levels[I < Fields::count ? I : 0],
                "stencil::read: the stencil reads a time level the field "
                "does not keep; declare it with stencil::field<Radius, "
                "Levels> with Levels greater than the level's distance");
  return in.template level<I, Level>();
}

}  // namespace stencil
