// SPDX-License-Identifier: Apache-2.0
// Boundary conditions: what a grid's halo cells mean, per axis and side.
#pragma once

#include <stencil/error.hpp>

#include <any>
#include <array>
#include <cmath>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace stencil {

/// What the halo cells on one side of an axis mean. Every kind but `fixed`
/// is brought up to date from the interior (or the user's function) before
/// every block of steps; `n` is the interior extent along the axis and
/// indices are interior coordinates (the halo is -halo..-1 and n..n+halo-1).
///  - `fixed`: the halo holds what the user set (with `fill`) and is never
///    overwritten.
///  - `periodic`: the halo takes the interior's opposite side (cell -1 takes
///    n-1, cell n takes 0). Both sides of an axis must be periodic.
///  - `neumann`: zero flux through the face of a cell-centred grid; the halo
///    mirrors the interior across the face: cell -1-k takes cell k, and
///    n+k takes n-1-k. The axis needs at least `halo` interior cells.
///  - `reflecting`: mirror across the boundary cell, for vertex-centred grids
///    (h = 1/(N-1)) whose first and last cells lie on the boundary: cell -k
///    takes cell k (k = 1..halo), and n-1+k takes n-1-k. The axis needs at
///    least halo+1 interior cells.
///  - `dirichlet`: the halo takes a user function of the halo cell's
///    interior coordinates and the time (Grid::set_dirichlet).
/// Axes are refreshed one at a time, from the contiguous one (x) to the
/// slowest, each over the whole padded range of the others. So a cell in
/// the halo of several axes (an edge or corner, which box stencils read)
/// ends with the rule of the slowest of them that is not fixed, applied to
/// values the faster axes have just set: periodic in x and y gives the
/// diagonally opposite corner, a fixed y side with periodic x wraps the
/// fixed row.
enum class Boundary { fixed, periodic, neumann, reflecting, dirichlet };

/// A side of an axis: towards cell -1 (`low`), towards cell n (`high`), or
/// both.
enum class Side { low, high, both };

namespace detail {

constexpr char const* boundary_name(Boundary kind) {
  switch (kind) {
    case Boundary::fixed:
      return "fixed";
    case Boundary::periodic:
      return "periodic";
    case Boundary::neumann:
      return "neumann";
    case Boundary::reflecting:
      return "reflecting";
    case Boundary::dirichlet:
      return "dirichlet";
  }
  return "unknown";
}

/// The letter of axis `axis` (0 = slowest) of a rank-`rank` grid; the last
/// axis, the contiguous one, is x.
constexpr char axis_name(int rank, int axis) { return "zyx"[3 - rank + axis]; }

/// The kinds of every side, in Plan::extents' order (z, y, x; unused axes
/// are fixed), low side first.
using BoundarySides = std::array<std::array<Boundary, 2>, 3>;

/// The boundary in words: the kind where every side of the used axes has
/// it ("periodic"), else axis by axis, low/high ("y: periodic/periodic,
/// x: neumann/dirichlet").
inline std::string sides_text(BoundarySides const& sides, int rank) {
  bool uniform = true;
  for (int a = 3 - rank; a < 3; ++a) {
    for (Boundary kind : sides[a]) uniform &= kind == sides[2][0];
  }
  if (uniform) return boundary_name(sides[2][0]);
  std::string text;
  for (int a = 3 - rank; a < 3; ++a) {
    text += concat(a == 3 - rank ? "" : ", ", "zyx"[a], ": ",
                   boundary_name(sides[a][0]), "/", boundary_name(sides[a][1]));
  }
  return text;
}

/// The boundary of every side of a rank-`Rank` grid: a kind per axis
/// (0 = slowest, as extents) and side, and for a dirichlet side the host
/// function that gives its halo values. A Grid owns one; so may anything
/// else that keeps padded buffers (refresh_boundaries takes it with the
/// buffer). Every change is checked before anything is changed: a refused
/// one throws stencil::bad_input and leaves the set as it was.
///
/// refresh_boundaries keeps its scratch buffers for dirichlet values here.
/// A copy starts without them, so copies can be refreshed independently;
/// one set must not be refreshed from two host threads at once.
template <int Rank>
class BoundarySet {
  static_assert(Rank >= 1 && Rank <= 3);

 public:
  /// The value of a dirichlet halo cell: its interior coordinates (slowest
  /// first, outside 0..n-1 along the side's axis) and the time.
  using Function =
      std::function<double(std::array<int, Rank> const& cell, double time)>;

  /// Every side fixed.
  BoundarySet() = default;
  /// Every side `kind`, which must not be dirichlet (a dirichlet side needs
  /// its function: set_dirichlet). `context` starts the error message.
  explicit BoundarySet(Boundary kind, std::string_view context = "boundary") {
    set_all(kind, context);
  }

  /// The kind of `side` of `axis`. Side::both asks for the kind both sides
  /// share; sides that differ, or an axis out of range, are a
  /// stencil::bad_input.
  Boundary kind(int axis, Side side,
                std::string_view context = "boundary") const {
    expect_axis(axis, context);
    auto const& pair = m_kinds[axis];
    if (side == Side::low) return pair[0];
    if (side == Side::high) return pair[1];
    STENCIL_EXPECT(pair[0] == pair[1], context, ": axis ", axis, " (",
                   axis_name(Rank, axis), ") is ", boundary_name(pair[0]),
                   " on the low side and ", boundary_name(pair[1]),
                   " on the high side; ask for Side::low or Side::high");
    return pair[0];
  }
  /// The kind of side `side` (0 low, 1 high) of `axis`, unchecked.
  Boundary kind_at(int axis, int side) const { return m_kinds[axis][side]; }
  /// The function of a dirichlet side (0 low, 1 high); empty otherwise.
  Function const& function_at(int axis, int side) const {
    return m_functions[axis][side];
  }

  /// True where every side has the same kind.
  bool uniform() const {
    for (auto const& pair : m_kinds) {
      for (Boundary kind : pair) {
        if (kind != m_kinds[0][0]) return false;
      }
    }
    return true;
  }
  /// The kind every side has, or a stencil::bad_input naming the sides.
  Boundary uniform_kind(std::string_view context = "boundary") const {
    STENCIL_EXPECT(uniform(), context, ": the sides differ (", text(),
                   "); ask for one side with boundary(axis, side)");
    return m_kinds[0][0];
  }
  /// True where no side needs a refresh.
  bool all_fixed() const {
    return uniform() && m_kinds[0][0] == Boundary::fixed;
  }

  /// The kinds in Plan's order (z, y, x; unused axes fixed).
  BoundarySides sides() const {
    BoundarySides sides{};
    for (int d = 0; d < Rank; ++d) sides[3 - Rank + d] = m_kinds[d];
    return sides;
  }
  std::string text() const { return sides_text(sides(), Rank); }

  /// Sets `side` of `axis` to `kind`, which must not be dirichlet
  /// (set_dirichlet). An axis is periodic on both sides or on neither.
  void set(int axis, Side side, Boundary kind,
           std::string_view context = "set_boundary") {
    expect_axis(axis, context);
    expect_kind(kind, context);
    STENCIL_EXPECT(kind != Boundary::dirichlet, context, ": axis ", axis, " (",
                   axis_name(Rank, axis),
                   "): a dirichlet side needs the function that gives its "
                   "halo values; use set_dirichlet(axis, side, f)");
    assign(axis, side, kind, Function{}, context);
  }

  /// Sets `side` of `axis` to dirichlet with the halo values `f(cell,
  /// time)`, evaluated on the host before every block of steps.
  void set_dirichlet(int axis, Side side, Function f,
                     std::string_view context = "set_dirichlet") {
    expect_axis(axis, context);
    STENCIL_EXPECT(static_cast<bool>(f), context, ": axis ", axis, " (",
                   axis_name(Rank, axis),
                   "): the function is empty; give a callable f(cell, time)");
    assign(axis, side, Boundary::dirichlet, std::move(f), context);
  }

  /// Every side `kind` (not dirichlet).
  void set_all(Boundary kind, std::string_view context = "boundary") {
    expect_kind(kind, context);
    STENCIL_EXPECT(kind != Boundary::dirichlet, context,
                   ": dirichlet for every side needs the function that gives "
                   "the halo values; choose another kind here and set the "
                   "dirichlet sides with set_dirichlet(axis, side, f)");
    for (int d = 0; d < Rank; ++d) {
      m_kinds[d] = {kind, kind};
      m_functions[d] = {};
    }
  }

  /// Checks the set against a buffer of `extents` (interior, slowest
  /// first) with `halo` cells on every side: periodic axes wrap on both
  /// sides, a neumann side mirrors `halo` interior cells, so its axis needs
  /// that many, and a reflecting one halo + 1.
  void validate(std::array<int, Rank> const& extents, int halo,
                std::string_view context = "boundary") const {
    for (int d = 0; d < Rank; ++d) {
      auto const& pair = m_kinds[d];
      expect_periodic_pair(d, pair[0], pair[1], context);
      for (int s = 0; s < 2; ++s) {
        int const needed = pair[s] == Boundary::neumann      ? halo
                           : pair[s] == Boundary::reflecting ? halo + 1
                                                             : 0;
        STENCIL_EXPECT(extents[d] >= needed, context, ": axis ", d, " (",
                       axis_name(Rank, d), ") has ", extents[d],
                       " interior cells and its ", s == 0 ? "low" : "high",
                       " side is ", boundary_name(pair[s]), ", which mirrors ",
                       pair[s] == Boundary::neumann ? "halo" : "halo + 1",
                       " = ", needed, " of them; with a halo of ", halo,
                       " a neumann axis needs at least ", halo,
                       " cells and a reflecting one ", halo + 1,
                       " (use a smaller halo or another boundary)");
        STENCIL_EXPECT(pair[s] != Boundary::dirichlet ||
                           static_cast<bool>(m_functions[d][s]),
                       context, ": axis ", d, " (", axis_name(Rank, d),
                       ") is dirichlet without a function; set it with "
                       "set_dirichlet(axis, side, f)");
      }
    }
  }

  /// refresh_boundaries' cache (see the class comment).
  std::any& scratch() const { return m_scratch.value; }

 private:
  /// Holds a cache that a copy does not share.
  struct Scratch {
    mutable std::any value;
    Scratch() = default;
    Scratch(Scratch const&) {}
    Scratch(Scratch&&) noexcept = default;
    Scratch& operator=(Scratch const&) {
      value.reset();
      return *this;
    }
    Scratch& operator=(Scratch&&) noexcept = default;
  };

  static void expect_axis(int axis, std::string_view context) {
    STENCIL_EXPECT(axis >= 0 && axis < Rank, context, ": axis ", axis,
                   " is out of range; a rank-", Rank, " grid has ",
                   Rank == 1   ? "axis 0 (x)"
                   : Rank == 2 ? "axes 0 (y) and 1 (x)"
                               : "axes 0 (z), 1 (y) and 2 (x)");
  }
  static void expect_kind(Boundary kind, std::string_view context) {
    STENCIL_EXPECT(
        static_cast<int>(kind) >= 0 &&
            static_cast<int>(kind) <= static_cast<int>(Boundary::dirichlet),
        context, ": ", static_cast<int>(kind),
        " is not a stencil::Boundary; use fixed, periodic, "
        "neumann, reflecting or dirichlet");
  }
  static void expect_periodic_pair(int axis, Boundary low, Boundary high,
                                   std::string_view context) {
    STENCIL_EXPECT(
        (low == Boundary::periodic) == (high == Boundary::periodic), context,
        ": axis ", axis, " (", axis_name(Rank, axis), ") would be ",
        boundary_name(low), " on the low side and ", boundary_name(high),
        " on the high side; a periodic axis wraps around, so both its sides "
        "must be periodic (set them together with Side::both)");
  }

  void assign(int axis, Side side, Boundary kind, Function f,
              std::string_view context) {
    STENCIL_EXPECT(
        side == Side::low || side == Side::high || side == Side::both, context,
        ": ", static_cast<int>(side),
        " is not a stencil::Side; use low, high or both");
    auto kinds = m_kinds[axis];
    bool const low = side != Side::high, high = side != Side::low;
    if (low) kinds[0] = kind;
    if (high) kinds[1] = kind;
    expect_periodic_pair(axis, kinds[0], kinds[1], context);
    m_kinds[axis] = kinds;
    if (low) m_functions[axis][0] = f;
    if (high) m_functions[axis][1] = std::move(f);
  }

  std::array<std::array<Boundary, 2>, Rank> m_kinds{};
  std::array<std::array<Function, 2>, Rank> m_functions;
  Scratch m_scratch;
};

}  // namespace detail

}  // namespace stencil
