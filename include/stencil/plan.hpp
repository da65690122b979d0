// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/backend.hpp>
#include <stencil/detail/validate.hpp>
#include <stencil/error.hpp>
#include <stencil/grid.hpp>
#include <stencil/policy.hpp>
#include <stencil/traits.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <iosfwd>
#include <string>

namespace stencil {

/// What `iterate` will run: the backend and policy, with every parameter
/// resolved. Made by `stencil::plan`, printable, and reusable for any grid of
/// the same extents, value type and boundary on the same execution space.
struct Plan {
  std::string execution_space;  ///< Kokkos name of the execution space
  Backend backend = Backend::portable;  ///< the backend that runs the plan
  Backend space_backend = Backend::portable;  ///< backend_for<ExecSpace>
  PolicyKind policy = PolicyKind::naive;
  bool chosen_by_auto = false;
  std::string reason;  ///< why Auto chose this, or empty

  int rank = 0;
  int radius = 0;
  Shape shape = Shape::star;
  std::array<int, 3> extents{1, 1, 1};  ///< (z, y, x); unused dims are 1
  int halo = 0;
  Boundary boundary = Boundary::fixed;
  int value_size = 0;  ///< sizeof(T)

  Tile tile{1, 1, 1};  ///< cells per team (SpatialBlocking); 1 where unused
  int depth = 1;       ///< time steps per kernel launch
  int team_size = 0;   ///< threads per team, 0 where the policy has no teams
  std::size_t scratch_bytes = 0;  ///< scratch (shared) memory per team
};

std::ostream& operator<<(std::ostream& out, Plan const& plan);
std::string to_string(Backend backend);
std::string to_string(PolicyKind policy);
std::string to_string(Boundary boundary);
std::string to_string(Shape shape);

namespace detail {

template <class ExecSpace>
inline constexpr bool is_host_space_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                               typename ExecSpace::memory_space>::accessible;

template <class Op, class T, int Rank, class MemorySpace>
Plan describe(std::string space_name, Grid<T, Rank, MemorySpace> const& grid) {
  Plan p;
  p.execution_space = std::move(space_name);
  p.rank = Rank;
  p.radius = Op::radius;
  p.shape = Op::shape;
  for (int d = 0; d < Rank; ++d) p.extents[3 - Rank + d] = grid.extent(d);
  p.halo = grid.halo();
  p.boundary = grid.boundary();
  p.value_size = static_cast<int>(sizeof(T));
  return p;
}

/// Scratch bytes one team of the portable SpatialBlocking sweep needs.
inline std::size_t blocked_scratch_bytes(int rank, int radius, Tile tile,
                                         int value_size) {
  std::size_t const halo_x = static_cast<std::size_t>(tile.x + 2 * radius);
  std::size_t const halo_y = static_cast<std::size_t>(tile.y + 2 * radius);
  std::size_t cells = halo_x;
  if (rank >= 2) cells *= halo_y;
  if (rank == 3) cells *= static_cast<std::size_t>(2 * radius + 1);
  return cells * static_cast<std::size_t>(value_size);
}

template <class ExecSpace>
void resolve_spatial_blocking(Plan& p, Tile requested) {
  int const rank = p.rank;
  STENCIL_EXPECT(requested.x > 0 && (rank < 2 || requested.y > 0) &&
                     (rank < 3 || requested.z > 0),
                 "SpatialBlocking: tile {x=", requested.x, ", y=", requested.y,
                 ", z=", requested.z, "} has a zero or negative extent in a "
                 "dimension a rank-", rank, " grid uses; every used tile "
                 "extent must be at least 1 cell");
  // A tile larger than the domain only wastes scratch: clip it.
  Tile t{std::min(requested.x, p.extents[2]), 1, 1};
  if (rank >= 2) t.y = std::min(requested.y, p.extents[1]);
  if (rank == 3) t.z = std::min(requested.z, p.extents[0]);
  std::size_t const bytes =
      blocked_scratch_bytes(rank, p.radius, t, p.value_size);
  std::size_t const limit = static_cast<std::size_t>(
      Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0));
  STENCIL_EXPECT(bytes <= limit, "SpatialBlocking: tile {x=", t.x, ", y=", t.y,
                 "} with radius ", p.radius, " needs ", bytes,
                 " bytes of scratch per team on ", p.execution_space,
                 ", which allows ", limit, "; use a smaller tile");
  p.policy = PolicyKind::spatial_blocking;
  p.tile = t;
  p.scratch_bytes = bytes;
  // Host spaces run a team per thread; device spaces cover the tile's cells
  // with up to 256 threads (whole warps) that stride over them.
  if constexpr (is_host_space_v<ExecSpace>) {
    p.team_size = 1;
  } else {
    int const cells = t.x * (rank >= 2 ? t.y : 1);
    p.team_size = std::min(256, (cells + 31) / 32 * 32);
  }
}

}  // namespace detail

/// Resolves `policy` (Naive, SpatialBlocking or Auto) for `grid` and `op` on
/// `space`: checks everything a run would check and returns what would run.
/// Throws stencil::error for an unusable grid or policy; touches nothing.
template <class ExecSpace, class T, int Rank, class MemorySpace, class Op,
          class Policy>
Plan plan(ExecSpace const& space, Grid<T, Rank, MemorySpace> const& grid,
          Op const& /*op*/, Policy const& policy) {
  static_assert(detail::check_operator<Op, Rank>());
  static_assert(Kokkos::is_execution_space_v<ExecSpace>,
                "stencil::plan: the first argument must be a Kokkos execution "
                "space instance, e.g. Kokkos::DefaultExecutionSpace{}");
  static_assert(is_policy_v<Policy>,
                "stencil::plan: the policy must be stencil::Naive, "
                "stencil::SpatialBlocking or stencil::Auto");
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
      "stencil::plan: the grid's memory space is not accessible from this "
      "execution space; allocate the grid in ExecSpace::memory_space");
  (void)space;
  detail::validate_grid<Op>(grid);
  Plan p = detail::describe<Op>(ExecSpace::name(), grid);
  p.space_backend = backend_for<ExecSpace>;
  if constexpr (std::is_same_v<Policy, Naive>) {
    p.policy = PolicyKind::naive;
  } else if constexpr (std::is_same_v<Policy, SpatialBlocking>) {
    detail::resolve_spatial_blocking<ExecSpace>(p, policy.tile);
  } else {
    p.chosen_by_auto = true;
    p.policy = PolicyKind::naive;
    p.reason =
        "one kernel per step is bandwidth-bound and, without temporal "
        "blocking, moves the fewest bytes; no on-chip reuse policy for this "
        "space yet";
  }
  return p;
}

/// plan() on the default execution space.
template <class T, int Rank, class MemorySpace, class Op, class Policy = Auto>
Plan plan(Grid<T, Rank, MemorySpace> const& grid, Op const& op,
          Policy const& policy = {}) {
  return plan(Kokkos::DefaultExecutionSpace{}, grid, op, policy);
}

}  // namespace stencil
