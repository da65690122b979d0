// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/boundary.hpp>
#include <stencil/detail/memory.hpp>
#include <stencil/detail/padded.hpp>
#include <stencil/error.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <exception>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace stencil {

/// Construction options of a Grid. The halo must be at least the radius of
/// every stencil applied to the grid; iterate refuses a narrower one.
/// `boundary` is the kind of every side (not dirichlet, whose sides need
/// their function: Grid::set_dirichlet); Grid::set_boundary changes one.
/// `dt` is the time one step advances the grid's time (the time dirichlet
/// functions see).
struct GridOptions {
  int halo = 1;
  Boundary boundary = Boundary::fixed;
  double dt = 1.0;
};

namespace detail {
template <class T, int Rank>
struct ViewData;
template <class T>
struct ViewData<T, 1> {
  using type = T*;
};
template <class T>
struct ViewData<T, 2> {
  using type = T**;
};
template <class T>
struct ViewData<T, 3> {
  using type = T***;
};
}  // namespace detail

/// A structured grid of `Rank` dimensions (1, 2 or 3) with two buffers, the
/// current time level and the next, each holding the interior plus `halo`
/// cells on every side. Extents are given slowest dimension first ({ny, nx},
/// {nz, ny, nx}); the last dimension is contiguous (LayoutRight).
///
/// A Grid owns its buffers and is move-only: a copy would share buffers but
/// not which one is current (stencil::deep_copy copies the values). Moving
/// leaves the source empty, like a default-constructed Grid; using an empty
/// grid is a stencil::bad_input.
template <class T, int Rank,
          class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class Grid {
  static_assert(Rank >= 1 && Rank <= 3,
                "stencil::Grid: Rank must be 1, 2 or 3");
  static_assert(std::is_arithmetic_v<T>,
                "stencil::Grid: the value type must be a floating-point or "
                "integer type");

 public:
  using value_type = T;
  using memory_space = MemorySpace;
  using view_type = Kokkos::View<typename detail::ViewData<T, Rank>::type,
                                 Kokkos::LayoutRight, MemorySpace>;
  static constexpr int rank = Rank;

  /// An empty grid: no buffers, nothing to iterate. Assign one to it.
  Grid() = default;

  /// Allocates both buffers (zero-initialised). Throws stencil::bad_input if
  /// an extent is not positive, the halo is outside 0..64 or an extent with
  /// its halos does not fit the 32-bit index of a dimension, and
  /// stencil::out_of_memory if the memory space cannot hold both buffers
  /// (checked before anything is allocated where the space can tell).
  Grid(std::string label, std::array<int, Rank> const& extents,
       GridOptions options = {})
      : m_label(std::move(label)),
        m_extents(extents),
        m_halo(options.halo),
        m_dt(options.dt) {
    for (int d = 0; d < Rank; ++d) {
      STENCIL_EXPECT(extents[d] > 0, "grid '", m_label, "': extent ", d, " is ",
                     extents[d],
                     "; every extent must be a positive number of cells");
    }
    STENCIL_EXPECT(m_halo >= 0 && m_halo <= 64, "grid '", m_label,
                   "': halo is ", m_halo,
                   "; it must be between 0 and 64 cells (at least the radius "
                   "of the stencils you apply)");
    constexpr long long largest = std::numeric_limits<int>::max();
    for (int d = 0; d < Rank; ++d) {
      STENCIL_EXPECT(
          static_cast<long long>(extents[d]) + 2LL * m_halo <= largest,
          "grid '", m_label, "': extent ", d, " is ", extents[d],
          " cells and with a halo of ", m_halo, " on each side ",
          static_cast<long long>(extents[d]) + 2LL * m_halo,
          "; a dimension is indexed with 32-bit integers, so an extent may "
          "be at most ",
          largest - 2LL * m_halo);
    }
    std::string const context = "grid '" + m_label + "'";
    m_boundaries = detail::BoundarySet<Rank>(options.boundary, context);
    m_boundaries.validate(m_extents, m_halo, context);
    STENCIL_EXPECT(std::isfinite(m_dt), context, ": dt is ", m_dt,
                   "; the time per step must be a finite number");
    allocate_buffers();
  }

  Grid(Grid const&) = delete;
  Grid& operator=(Grid const&) = delete;
  Grid(Grid&& other) noexcept
      : m_label(std::move(other.m_label)),
        m_extents(other.m_extents),
        m_halo(other.m_halo),
        m_boundaries(std::move(other.m_boundaries)),
        m_time(other.m_time),
        m_dt(other.m_dt),
        m_buffers(std::move(other.m_buffers)),
        m_current(other.m_current) {
    other.clear();
  }
  Grid& operator=(Grid&& other) noexcept {
    if (this != &other) {
      m_label = std::move(other.m_label);
      m_extents = other.m_extents;
      m_halo = other.m_halo;
      m_boundaries = std::move(other.m_boundaries);
      m_time = other.m_time;
      m_dt = other.m_dt;
      m_buffers = std::move(other.m_buffers);
      m_current = other.m_current;
      other.clear();
    }
    return *this;
  }
  ~Grid() = default;

  /// True for a default-constructed or moved-from grid: it has no buffers.
  bool empty() const noexcept { return !m_buffers[0].is_allocated(); }

  std::string const& label() const { return m_label; }
  std::array<int, Rank> const& extents() const { return m_extents; }
  /// Interior extent of dimension `d` (0 = slowest).
  int extent(int d) const { return m_extents[d]; }
  /// Extent of dimension `d` including both halos.
  int padded_extent(int d) const { return m_extents[d] + 2 * m_halo; }
  int halo() const { return m_halo; }

  /// The kind of every side; where the sides differ, a stencil::bad_input
  /// naming them (ask boundary(axis, side)).
  Boundary boundary() const {
    return m_boundaries.uniform_kind("grid '" + m_label + "': boundary()");
  }
  /// The kind of `side` of `axis` (0 = slowest); Side::both: the kind both
  /// sides share, a stencil::bad_input where they differ.
  Boundary boundary(int axis, Side side) const {
    return m_boundaries.kind(axis, side, "grid '" + m_label + "': boundary");
  }
  /// Every side's kind and dirichlet function.
  detail::BoundarySet<Rank> const& boundaries() const noexcept {
    return m_boundaries;
  }
  /// Sets `side` of `axis` (0 = slowest) to `kind`, from the next block of
  /// steps on. Refuses (stencil::bad_input, the grid unchanged) an axis out
  /// of range, dirichlet (use set_dirichlet), an axis periodic on one side
  /// only, and an axis too short for a mirroring kind.
  void set_boundary(int axis, Side side, Boundary kind) {
    std::string const context = "grid '" + m_label + "': set_boundary";
    expect_usable(context);
    detail::BoundarySet<Rank> changed = m_boundaries;
    changed.set(axis, side, kind, context);
    changed.validate(m_extents, m_halo, context);
    m_boundaries = std::move(changed);
  }
  /// Sets `side` of `axis` to dirichlet: before every block of steps its
  /// halo cells take `f(cell, time)`, where `cell` holds the halo cell's
  /// interior coordinates (slowest first; outside 0..n-1 along `axis`) and
  /// `time` is the grid's time at the block's first step. `f` runs on the
  /// host and returns a value convertible to T.
  template <class F>
  void set_dirichlet(int axis, Side side, F f) {
    static_assert(
        std::is_invocable_v<F const&, std::array<int, Rank> const&, double> &&
            std::is_convertible_v<
                std::invoke_result_t<F const&, std::array<int, Rank> const&,
                                     double>,
                T>,
        "stencil::Grid::set_dirichlet: f must be callable as "
        "f(std::array<int, Rank> cell, double time) and return a value "
        "convertible to the grid's value type");
    std::string const context = "grid '" + m_label + "': set_dirichlet";
    expect_usable(context);
    detail::BoundarySet<Rank> changed = m_boundaries;
    changed.set_dirichlet(
        axis, side,
        [f = std::move(f)](std::array<int, Rank> const& cell, double time) {
          return static_cast<double>(static_cast<T>(f(cell, time)));
        },
        context);
    changed.validate(m_extents, m_halo, context);
    m_boundaries = std::move(changed);
  }
  /// Replaces every side at once (e.g. another grid's boundaries()),
  /// checked like set_boundary.
  void set_boundaries(detail::BoundarySet<Rank> boundaries) {
    std::string const context = "grid '" + m_label + "': set_boundaries";
    expect_usable(context);
    boundaries.validate(m_extents, m_halo, context);
    m_boundaries = std::move(boundaries);
  }

  /// The time of the current level: 0 at construction, advanced by dt()
  /// per step by iterate.
  double time() const noexcept { return m_time; }
  void set_time(double time) {
    STENCIL_EXPECT(std::isfinite(time), "grid '", m_label, "': time is ", time,
                   "; the time must be a finite number");
    m_time = time;
  }
  /// The time one step advances (GridOptions::dt).
  double dt() const noexcept { return m_dt; }
  std::size_t interior_cells() const {
    std::size_t n = 1;
    for (int e : m_extents) n *= static_cast<std::size_t>(e);
    return n;
  }

  /// The current time level, halo included: index i of dimension d is the
  /// interior cell i - halo.
  view_type const& current() const { return m_buffers[m_current]; }
  /// The buffer the next step writes; its halo holds the boundary values too.
  view_type const& next() const { return m_buffers[1 - m_current]; }
  /// The interior of the current time level, as an unmanaged-offset subview.
  auto interior() const { return interior_of(current()); }

  /// Makes `next()` current. Called by iterate after each step.
  void swap() noexcept { m_current = 1 - m_current; }

  /// Bytes both buffers take, halos included.
  std::size_t bytes() const {
    std::size_t cells = 1;
    for (int d = 0; d < Rank; ++d) {
      cells *= static_cast<std::size_t>(padded_extent(d));
    }
    return 2 * cells * sizeof(T);
  }

 private:
  void clear() noexcept {
    m_label.clear();
    m_extents = {};
    m_halo = 0;
    m_boundaries = {};
    m_time = 0.0;
    m_dt = 1.0;
    m_buffers = {};
    m_current = 0;
  }

  void expect_usable(std::string const& context) const {
    STENCIL_EXPECT(!empty(), context,
                   ": the grid is empty (default-constructed or moved from); "
                   "use the grid it was moved to, or construct a new one");
  }

  /// Checks the size against what the memory space has free, then allocates.
  /// A padded extent fits an int, so the cell count (at most 3 x 31 bits)
  /// needs an overflow check only in its product with the value size.
  void allocate_buffers() {
    constexpr std::size_t most = std::numeric_limits<std::size_t>::max();
    bool overflow = false;
    auto multiply = [&](std::size_t a, std::size_t b) {
      overflow |= b != 0 && a > most / b;
      return a * b;
    };
    std::size_t cells = 1;
    for (int d = 0; d < Rank; ++d) {
      cells = multiply(cells, static_cast<std::size_t>(padded_extent(d)));
    }
    std::size_t const requested = multiply(cells, 2 * sizeof(T));
    std::size_t const available = detail::available_bytes<MemorySpace>();
    if (overflow) {
      detail::throw_out_of_memory(
          detail::concat("grid '", m_label, "': two buffers of ", cells,
                         " cells of ", sizeof(T),
                         " bytes overflow a 64-bit size; use smaller extents"),
          std::numeric_limits<std::size_t>::max(), available);
    }
    if (available != 0 && requested > available) {
      detail::throw_out_of_memory(
          detail::concat("grid '", m_label, "' needs ",
                         detail::format_bytes(requested), " (", requested,
                         " bytes: two buffers, halos included) in ",
                         MemorySpace::name(), ", which has ",
                         detail::format_bytes(available), " (", available,
                         " bytes) free; use smaller extents or free memory"),
          requested, available);
    }
    try {
      m_buffers[0] = allocate(m_label + ":a");
      m_buffers[1] = allocate(m_label + ":b");
    } catch (std::exception const& e) {
      m_buffers = {};
      detail::throw_out_of_memory(
          detail::concat("grid '", m_label, "': allocating ",
                         detail::format_bytes(requested), " in ",
                         MemorySpace::name(), " failed (", e.what(), ")"),
          requested, available);
    }
  }

  view_type allocate(std::string const& name) const {
    return detail::allocate_padded<view_type, Rank>(name, m_extents, m_halo);
  }

  auto interior_of(view_type const& v) const {
    return detail::interior_of<view_type, Rank>(v, m_extents, m_halo);
  }

  std::string m_label;
  std::array<int, Rank> m_extents{};
  int m_halo = 0;
  detail::BoundarySet<Rank> m_boundaries;
  double m_time = 0.0;
  double m_dt = 1.0;
  std::array<view_type, 2> m_buffers;
  int m_current = 0;
};

namespace detail {
/// Refuses an empty (default-constructed or moved-from) grid, naming the
/// call that was given it.
template <class T, int Rank, class MemorySpace>
void expect_not_empty(Grid<T, Rank, MemorySpace> const& grid,
                      char const* call) {
  STENCIL_EXPECT(!grid.empty(), call,
                 ": the grid is empty (default-constructed or moved from); "
                 "use the grid it was moved to, or construct a new one");
}
}  // namespace detail

/// Copies the values of both buffers of `source`, halos included, into
/// `destination`, which must have the same extents and halo; either may
/// live in another memory space. Synchronous. The boundary and the time
/// stay `destination`'s own.
template <class T, int Rank, class DestinationSpace, class SourceSpace>
void deep_copy(Grid<T, Rank, DestinationSpace>& destination,
               Grid<T, Rank, SourceSpace> const& source) {
  detail::expect_not_empty(source, "deep_copy (source)");
  detail::expect_not_empty(destination, "deep_copy (destination)");
  STENCIL_EXPECT(destination.extents() == source.extents() &&
                     destination.halo() == source.halo(),
                 "deep_copy: grid '", source.label(), "' and grid '",
                 destination.label(),
                 "' differ in extents or halo; copy between grids of the "
                 "same shape");
  Kokkos::deep_copy(destination.current(), source.current());
  Kokkos::deep_copy(destination.next(), source.next());
}

/// Sets every cell of both buffers, halo included, to `f(i)` / `f(i, j)` /
/// `f(i, j, k)`, where the indices are interior coordinates (the halo has
/// indices -halo..-1 and n..n+halo-1). `f` runs on the host. Writing both
/// buffers puts the fixed boundary values where every later step reads them.
/// Synchronous: returns when the device holds the values.
template <class T, int Rank, class MemorySpace, class F>
void fill(Grid<T, Rank, MemorySpace>& grid, F&& f) {
  detail::expect_not_empty(grid, "fill");
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace{}, grid.current());
  detail::fill_padded<decltype(host), Rank>(host, grid.extents(), grid.halo(),
                                            f);
  Kokkos::deep_copy(grid.current(), host);
  Kokkos::deep_copy(grid.next(), host);
}

}  // namespace stencil
