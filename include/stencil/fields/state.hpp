// SPDX-License-Identifier: Apache-2.0
// A State: the fields one solver advances together, on one grid shape.
#pragma once

#include <stencil/boundary.hpp>
#include <stencil/detail/fields/position_map.hpp>
#include <stencil/detail/memory.hpp>
#include <stencil/detail/padded.hpp>
#include <stencil/error.hpp>
#include <stencil/fields/declare.hpp>
#include <stencil/grid.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stencil {

namespace detail {
struct StateBuffers;
}  // namespace detail

/// One field of a State: its name (for output and lookup), how many time
/// levels a stencil reads (1, or 2 for leapfrog), and whether it is a
/// read-only coefficient (one buffer, never written).
struct FieldSpec {
  std::string name;
  int levels = 1;
  bool read_only = false;
};

/// Construction options of a State: the halo (at least the largest radius
/// of the stencils applied), the boundary of every side of every field, and
/// the time: the state starts at `t0` and each step advances it by `dt`
/// (what a functor's in.time() reads).
struct StateOptions {
  int halo = 1;
  Boundary boundary = Boundary::fixed;
  double t0 = 0.0;
  double dt = 1.0;
};

/// The fields of one solver on one structured grid: every field has the
/// same extents and halo (one padded layout), and as many buffers as its
/// time levels need and no more: a coefficient has one, a field read at one
/// level two (current and next), a field read at levels n and n-1 also
/// two, the new level overwriting the oldest (leapfrog), a field of L > 2
/// levels L.
///
/// Move-only, like Grid: a moved-from State is empty.
template <class T, int Rank,
          class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class State {
  static_assert(Rank >= 1 && Rank <= 3,
                "stencil::State: Rank must be 1, 2 or 3");
  static_assert(std::is_floating_point_v<T>,
                "stencil::State: the value type must be a floating-point "
                "type");

 public:
  using value_type = T;
  using memory_space = MemorySpace;
  using view_type = typename Grid<T, Rank, MemorySpace>::view_type;
  static constexpr int rank = Rank;

  State() = default;

  /// Allocates every field's buffers, zero-initialised. Throws
  /// stencil::bad_input for a bad extent, halo or field list and
  /// stencil::out_of_memory where the memory space cannot hold them.
  State(std::string label, std::array<int, Rank> const& extents,
        std::vector<FieldSpec> fields, StateOptions const& options = {})
      : m_label(std::move(label)),
        m_extents(extents),
        m_halo(options.halo),
        m_time(options.t0),
        m_dt(options.dt) {
    STENCIL_EXPECT(!fields.empty() && fields.size() <= 8, "state '", m_label,
                   "' has ", fields.size(),
                   " fields; a state holds 1 to 8 fields");
    for (std::size_t f = 0; f < fields.size(); ++f) {
      STENCIL_EXPECT(fields[f].levels >= 1 && fields[f].levels <= 4, "state '",
                     m_label, "': field '", fields[f].name, "' keeps ",
                     fields[f].levels, " time levels; a field keeps 1 to 4");
      STENCIL_EXPECT(!fields[f].read_only || fields[f].levels == 1, "state '",
                     m_label, "': read-only field '", fields[f].name,
                     "' keeps ", fields[f].levels,
                     " time levels; a coefficient never changes, so it keeps "
                     "one");
      for (std::size_t g = 0; g < f; ++g) {
        STENCIL_EXPECT(
            fields[f].name.empty() || fields[f].name != fields[g].name,
            "state '", m_label, "': two fields are named '", fields[f].name,
            "'; give every field its own name");
      }
    }
    STENCIL_EXPECT(m_dt > 0 && m_dt < std::numeric_limits<double>::infinity(),
                   "state '", m_label, "': dt is ", m_dt,
                   "; the time step must be a positive finite number");
    // The shape checks and the allocation of a Grid: one padded layout.
    std::size_t buffers = 0;
    for (auto const& spec : fields) buffers += buffer_count(spec);
    check_shape(buffers);
    std::string const context = "state '" + m_label + "'";
    m_boundaries = detail::BoundarySet<Rank>(options.boundary, context);
    m_boundaries.validate(m_extents, m_halo, context);
    m_fields.reserve(fields.size());
    try {
      for (auto& spec : fields) {
        Field field{std::move(spec), {}, 0};
        for (int b = 0; b < buffer_count(field.spec); ++b) {
          field.buffers.push_back(allocate(m_label + ":" + field.spec.name +
                                           ":" + std::to_string(b)));
        }
        m_fields.push_back(std::move(field));
      }
    } catch (std::exception const& e) {
      m_fields.clear();
      detail::throw_out_of_memory(
          detail::concat("state '", m_label, "': allocating its buffers in ",
                         MemorySpace::name(), " failed (", e.what(), ")"),
          bytes_for(buffers), detail::available_bytes<MemorySpace>());
    }
  }

  State(State const&) = delete;
  State& operator=(State const&) = delete;
  State(State&& other) noexcept { *this = std::move(other); }
  State& operator=(State&& other) noexcept {
    if (this != &other) {
      m_label = std::move(other.m_label);
      m_extents = other.m_extents;
      m_halo = other.m_halo;
      m_boundaries = std::move(other.m_boundaries);
      m_time = other.m_time;
      m_dt = other.m_dt;
      m_steps = other.m_steps;
      m_fields = std::move(other.m_fields);
      m_second_set = std::move(other.m_second_set);
      m_position_map = other.m_position_map;
      m_position_map_set = other.m_position_map_set;
      other.m_label.clear();
      other.m_extents = {};
      other.m_halo = 0;
      other.m_fields.clear();
      other.m_second_set.clear();
      other.m_steps = 0;
    }
    return *this;
  }
  ~State() = default;

  bool empty() const noexcept { return m_fields.empty(); }
  std::string const& label() const { return m_label; }
  std::array<int, Rank> const& extents() const { return m_extents; }
  int extent(int d) const { return m_extents[d]; }
  int padded_extent(int d) const { return m_extents[d] + 2 * m_halo; }
  int halo() const { return m_halo; }
  /// The kind of every side (bad_input where they differ), of one side, and
  /// every side's kind and Dirichlet function; all fields share them.
  Boundary boundary() const {
    return m_boundaries.uniform_kind("state '" + m_label + "': boundary()");
  }
  Boundary boundary(int axis, Side side) const {
    return m_boundaries.kind(axis, side, "state '" + m_label + "': boundary");
  }
  detail::BoundarySet<Rank> const& boundaries() const noexcept {
    return m_boundaries;
  }
  /// As Grid::set_boundary: `side` of `axis` (0 = slowest) becomes `kind`
  /// for every field; refused (the state unchanged) where invalid.
  void set_boundary(int axis, Side side, Boundary kind) {
    std::string const context = "state '" + m_label + "': set_boundary";
    detail::BoundarySet<Rank> changed = m_boundaries;
    changed.set(axis, side, kind, context);
    changed.validate(m_extents, m_halo, context);
    m_boundaries = std::move(changed);
  }
  /// As Grid::set_dirichlet: the side's halo cells of every field take
  /// `f(cell, time)` before every block of steps (`f` runs on the host).
  template <class F>
  void set_dirichlet(int axis, Side side, F f) {
    static_assert(
        std::is_invocable_v<F const&, std::array<int, Rank> const&, double>,
        "stencil::State::set_dirichlet: f must be callable as "
        "f(std::array<int, Rank> cell, double time)");
    std::string const context = "state '" + m_label + "': set_dirichlet";
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
  std::size_t interior_cells() const {
    std::size_t n = 1;
    for (int e : m_extents) n *= static_cast<std::size_t>(e);
    return n;
  }

  /// The time of the current level, and the time one step advances it by.
  double time() const { return m_time; }
  double dt() const { return m_dt; }
  void set_time(double t) { m_time = t; }
  /// Steps iterate has advanced this state by.
  long long steps_done() const { return m_steps; }

  /// Where this state's cells lie in a larger domain, for in.position():
  /// identity unless set. stencil::mpi::DistributedState sets it on every
  /// rank (interior origin and periodic wrap, z, y, x); the native kernels
  /// of several fields refuse a state whose map was set.
  detail::PositionMap const& position_map() const { return m_position_map; }
  bool position_map_set() const { return m_position_map_set; }
  void set_position_map(detail::PositionMap const& map) {
    m_position_map = map;
    m_position_map_set = true;
  }

  int field_count() const { return static_cast<int>(m_fields.size()); }
  FieldSpec const& spec(int field) const { return at(field).spec; }
  std::string const& name(int field) const { return at(field).spec.name; }
  /// The index of the field named `name`; stencil::bad_input if none is.
  int index(std::string_view name) const {
    for (int f = 0; f < field_count(); ++f) {
      if (m_fields[f].spec.name == name) return f;
    }
    std::string names;
    for (auto const& f : m_fields)
      names += (names.empty() ? "'" : ", '") + f.spec.name + "'";
    detail::throw_bad_input(detail::concat("state '", m_label,
                                           "' has no field named '", name,
                                           "'; its fields are ", names));
  }
  /// Buffers field `field` keeps (1, 2 or its levels).
  int buffers(int field) const {
    return static_cast<int>(at(field).buffers.size());
  }

  /// Time level `level` of field `field`, halo included: 0 the current
  /// level, -1 the one before, down to 1 - levels.
  view_type const& level(int field, int level = 0) const {
    Field const& f = at(field);
    STENCIL_EXPECT(level <= 0 && -level < f.spec.levels, "state '", m_label,
                   "': field '", f.spec.name, "' keeps levels 0 to ",
                   1 - f.spec.levels, "; level ", level, " is not one of them");
    int const n = static_cast<int>(f.buffers.size());
    return f.buffers[((f.current + level) % n + n) % n];
  }
  view_type const& current(int field) const { return level(field, 0); }
  /// The buffer the next step writes for `field`: its oldest level.
  view_type const& next(int field) const {
    Field const& f = at(field);
    int const n = static_cast<int>(f.buffers.size());
    return f.buffers[(f.current + 1) % n];
  }
  /// The interior of the current level of `field`.
  auto interior(int field) const { return interior_of(current(field)); }

  /// Makes `next(field)` the current level of `field` (the oldest becomes
  /// the newest). Called by iterate after each step for written fields.
  void rotate(int field) noexcept {
    Field& f = m_fields[field];
    f.current = (f.current + 1) % static_cast<int>(f.buffers.size());
  }
  /// Advances the clock by `steps` steps; called by iterate.
  void advance_time(int steps) {
    m_steps += steps;
    m_time += steps * m_dt;
  }

  /// Bytes every buffer takes, halos included.
  std::size_t bytes() const {
    std::size_t buffers = 0;
    for (auto const& f : m_fields) buffers += f.buffers.size();
    return bytes_for(buffers);
  }

  /// Bytes of the second set of buffers kept with the state: a policy that
  /// advances several steps per launch (native CUDA TemporalBlocking and
  /// RegisterResident) writes every level of the written fields into a
  /// second set, allocated at its first call and kept for the next ones,
  /// since allocating and freeing it each call cost more than a short run.
  /// 0 before such a call and after release_second_set().
  std::size_t second_set_bytes() const {
    std::size_t buffers = 0;
    for (auto const& set : m_second_set) buffers += set.size();
    return bytes_for(buffers);
  }
  /// Frees the second set (memory for something else); the next call of
  /// such a policy allocates it again. Freeing device memory waits for the
  /// device, so launches still using it finish first.
  void release_second_set() noexcept { m_second_set.clear(); }

 private:
  friend struct detail::StateBuffers;

  struct Field {
    FieldSpec spec;
    std::vector<view_type> buffers;
    int current = 0;
  };

  static int buffer_count(FieldSpec const& spec) {
    return spec.read_only ? 1 : std::max(2, spec.levels);
  }

  Field const& at(int field) const {
    STENCIL_EXPECT(field >= 0 && field < field_count(), "state '", m_label,
                   "': field ", field, " does not exist; it has ",
                   field_count(), " fields (0 to ", field_count() - 1, ")");
    return m_fields[field];
  }

  std::size_t bytes_for(std::size_t buffers) const {
    std::size_t cells = 1;
    for (int d = 0; d < Rank; ++d) {
      cells *= static_cast<std::size_t>(padded_extent(d));
    }
    return buffers * cells * sizeof(T);
  }

  /// The extent and halo checks of a Grid; the memory check counts every
  /// buffer, before any is allocated.
  void check_shape(std::size_t buffers) const {
    for (int d = 0; d < Rank; ++d) {
      STENCIL_EXPECT(m_extents[d] > 0, "state '", m_label, "': extent ", d,
                     " is ", m_extents[d],
                     "; every extent must be a positive number of cells");
      STENCIL_EXPECT(static_cast<long long>(m_extents[d]) + 2LL * m_halo <=
                         std::numeric_limits<int>::max(),
                     "state '", m_label, "': extent ", d, " with its halos ",
                     "overflows the 32-bit index of a dimension; use smaller "
                     "extents");
    }
    STENCIL_EXPECT(m_halo >= 0 && m_halo <= 64, "state '", m_label,
                   "': halo is ", m_halo,
                   "; it must be between 0 and 64 cells (at least the radius "
                   "of the stencils you apply)");
    std::size_t const requested = bytes_for(buffers);
    std::size_t const available = detail::available_bytes<MemorySpace>();
    if (available != 0 && requested > available) {
      detail::throw_out_of_memory(
          detail::concat("state '", m_label, "' needs ",
                         detail::format_bytes(requested), " (", buffers,
                         " buffers, halos included) in ", MemorySpace::name(),
                         ", which has ", detail::format_bytes(available),
                         " free; use smaller extents or free memory"),
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
  long long m_steps = 0;
  detail::PositionMap m_position_map;
  bool m_position_map_set = false;
  std::vector<Field> m_fields;
  /// Per field, the second set's buffers (see second_set_bytes()).
  std::vector<std::vector<view_type>> m_second_set;
};

namespace detail {
/// What a mechanism that writes whole launches of levels into buffers of
/// its own needs of a State: trading such a buffer for one of the state's.
struct StateBuffers {
  /// Swaps level `level` (0, -1, ...) of `field` with `buffer`, which has
  /// the state's padded shape.
  template <class T, int Rank, class MemorySpace>
  static void exchange(
      State<T, Rank, MemorySpace>& state, int field, int level,
      typename State<T, Rank, MemorySpace>::view_type& buffer) {
    auto& f = state.m_fields.at(static_cast<std::size_t>(field));
    int const n = static_cast<int>(f.buffers.size());
    std::swap(f.buffers[((f.current + level) % n + n) % n], buffer);
  }
  /// The second set kept with the state, per field (empty until a policy
  /// allocates it; see State::second_set_bytes()).
  template <class T, int Rank, class MemorySpace>
  static auto& second_set(State<T, Rank, MemorySpace>& state) {
    return state.m_second_set;
  }
};
}  // namespace detail

/// The fields a stencil declares, as FieldSpecs named `names` (in order;
/// missing names are "f0", "f1", ...): construct a State that fits it with
/// `State<T, Rank>(label, extents, stencil::field_specs<Op>({"u", "v"}))`.
template <class Op>
std::vector<FieldSpec> field_specs(std::vector<std::string> names = {}) {
  using Fields = typename Op::fields;
  std::vector<FieldSpec> specs;
  for (int f = 0; f < Fields::count; ++f) {
    std::string name =
        f < static_cast<int>(names.size()) ? names[f] : "f" + std::to_string(f);
    specs.push_back({std::move(name), Fields::levels[f], !Fields::written[f]});
  }
  return specs;
}

namespace detail {
template <class T, int Rank, class MemorySpace>
void expect_not_empty(State<T, Rank, MemorySpace> const& state,
                      char const* call) {
  STENCIL_EXPECT(!state.empty(), call,
                 ": the state is empty (default-constructed or moved from); "
                 "use the state it was moved to, or construct a new one");
}
}  // namespace detail

/// Sets every cell of every buffer of field `field`, halo included, to
/// `f(i)` / `f(i, j)` / `f(i, j, k)` (interior coordinates; the halo has
/// -halo..-1 and n..n+halo-1), as stencil::fill does for a Grid. `f` runs
/// on the host; synchronous.
template <class T, int Rank, class MemorySpace, class F>
void fill(State<T, Rank, MemorySpace>& state, int field, F&& f) {
  detail::expect_not_empty(state, "fill");
  auto host =
      Kokkos::create_mirror_view(Kokkos::HostSpace{}, state.current(field));
  detail::fill_padded<decltype(host), Rank>(host, state.extents(), state.halo(),
                                            f);
  for (int level = 0; level > -state.spec(field).levels; --level) {
    Kokkos::deep_copy(state.level(field, level), host);
  }
  Kokkos::deep_copy(state.next(field), host);
}

/// Sets time level `level` (0, -1, ...) of field `field` only, as fill()
/// sets them all: a leapfrog wave starts from u at n and at n-1.
template <class T, int Rank, class MemorySpace, class F>
void fill_level(State<T, Rank, MemorySpace>& state, int field, int level,
                F&& f) {
  detail::expect_not_empty(state, "fill_level");
  auto const& target = state.level(field, level);
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace{}, target);
  detail::fill_padded<decltype(host), Rank>(host, state.extents(), state.halo(),
                                            f);
  Kokkos::deep_copy(target, host);
}

/// fill() of the field named `name`.
template <class T, int Rank, class MemorySpace, class F>
void fill(State<T, Rank, MemorySpace>& state, std::string_view name, F&& f) {
  detail::expect_not_empty(state, "fill");
  fill(state, state.index(name), std::forward<F>(f));
}

}  // namespace stencil
