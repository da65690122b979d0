// SPDX-License-Identifier: Apache-2.0
// One step of a multi-field stencil with a scratch tile per team: the
// portable SpatialBlocking of several fields, one kernel per step.
//
// The tiling is the single-field sweep's (spatial_blocking.hpp), with one
// scratch region per staged field: rank 1 and 2 load the tile plus each
// field's halo; rank 3 streams x-y tiles along z with a ring of
// 2 r_f + 1 planes per field. Streaming rather than x-y-z boxes because it
// keeps the plan's tile meaning what it means for one field (tile.z is the
// planes one team streams through) and the scratch per team small (a box of
// tile.z + 2 r_f planes per field would rarely fit the default tile in a
// GPU's shared memory), and each input plane is still loaded once per team.
//
// Staged: every field read at level 0 with a radius > 0, each with its own
// declared radius (Fields::radii[f]). Earlier levels (read at the cell
// itself) and radius-0 fields are read from global memory: staging them
// would copy each value once to read it once.
#pragma once

#include <stencil/detail/fields/accessor.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/detail/portable/spatial_blocking.hpp>
#include <stencil/error.hpp>
#include <stencil/policy.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace stencil::detail {

/// Calls f(FieldIndex<F>{}) for F = First .. Count-1, so that a field's
/// radius is a constant in the body (device code cannot index the traits'
/// static arrays with a run-time value).
template <int F>
struct FieldIndex {
  static constexpr int value = F;
};
template <int First, int Count, class F>
KOKKOS_FORCEINLINE_FUNCTION void for_each_field_index(F&& f) {
  if constexpr (First < Count) {
    f(FieldIndex<First>{});
    for_each_field_index<First + 1, Count>(f);
  }
}

/// Scratch elements of each staged field for a (clipped) `tile`, at
/// `offset[f]` from the start of the team's scratch; returns the total.
/// Every field's region is that of the single-field sweep with radius r_f.
template <class Fields>
std::size_t fields_scratch_layout(int rank, Tile tile,
                                  std::size_t (&offset)[Fields::count]) {
  std::size_t total = 0;
  for (int f = 0; f < Fields::count; ++f) {
    offset[f] = total;
    if (Fields::radii[f] > 0) {
      total += blocked_scratch_bytes(rank, Fields::radii[f], tile, 1);
    }
  }
  return total;
}

/// Scratch bytes one team needs for every staged field of `Fields`.
template <class Fields>
std::size_t fields_scratch_bytes(int rank, Tile tile, int value_size) {
  std::size_t offset[Fields::count];
  return fields_scratch_layout<Fields>(rank, tile, offset) *
         static_cast<std::size_t>(value_size);
}

template <class ExecSpace, class T, int Rank, class Op>
struct FieldsBlockedSweep {
  using Fields = typename Op::fields;
  using Tiles = FieldTiles<T, Fields>;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  static constexpr bool host = is_host_space_v<ExecSpace>;
  static constexpr int count = Fields::count;

  FieldBuffers<T, Fields> buffers;
  Op op;
  PaddedLayout layout;
  Tile tile;
  int tiles_x;
  int tiles_y;
  std::size_t scratch_bytes;
  std::size_t scratch_offset[count];  // elements, per staged field
  double time;
  PositionMap map;

  KOKKOS_FUNCTION void operator()(Member const& team) const {
    int t = team.league_rank();
    int const tile_x = t % tiles_x;
    t /= tiles_x;
    int const tile_y = t % tiles_y;
    int const tile_z = t / tiles_y;

    int const x0 = tile_x * tile.x;
    int const y0 = tile_y * tile.y;
    int const width = Kokkos::min(tile.x, layout.nx - x0);
    int const height = Kokkos::min(tile.y, layout.ny - y0);
    T* scratch = static_cast<T*>(team.team_scratch(0).get_shmem(scratch_bytes));

    // Where each staged field's tile lives: rows of width + 2 r_f cells,
    // height + 2 r_f rows (rank >= 2), ring slots of one such plane.
    Tiles tiles;
    for_each_field_index<0, count>([&](auto fi) {
      constexpr int f = decltype(fi)::value;
      if constexpr (Tiles::staged(f)) {
        constexpr int r = Fields::radii[f];
        constexpr int ry = Rank >= 2 ? r : 0;
        tiles.row[f] = width + 2 * r;
        tiles.plane[f] = tiles.row[f] * (height + 2 * ry);
        tiles.origin[f] = scratch + scratch_offset[f] + ry * tiles.row[f] + r;
      }
    });

    // Loads interior plane z (any z in [-r_f, nz + r_f)) of field f's tile
    // plus halo into `dst` (the region's first cell). Host teams have one
    // thread: row loops, contiguous inside. Device teams stride over the
    // plane's cells.
    auto load_plane = [&](auto fi, int z, T* dst) {
      constexpr int f = decltype(fi)::value;
      constexpr int r = Fields::radii[f];
      constexpr int ry = Rank >= 2 ? r : 0;
      T const* in = buffers.level[f][0];
      int const row = tiles.row[f];
      if constexpr (host) {
        for (int yy = 0; yy < height + 2 * ry; ++yy) {
          T const* src = in + layout.offset(z, y0 + yy - ry, x0 - r);
          for (int xx = 0; xx < row; ++xx) dst[yy * row + xx] = src[xx];
        }
      } else {
        Kokkos::parallel_for(
            Kokkos::TeamThreadRange(team, tiles.plane[f]), [&](int k) {
              int const yy = k / row;
              int const xx = k - yy * row;
              dst[k] = in[layout.offset(z, y0 + yy - ry, x0 + xx - r)];
            });
      }
    };
    // The first cell of ring slot `slot` of field f's region.
    auto region = [&](int f, int slot) {
      return scratch + scratch_offset[f] + slot * tiles.plane[f];
    };
    // Computes every cell of the tile in plane z, writing every written
    // field's next level.
    auto compute_plane = [&](int z) {
      auto update = [&](int yy, int xx, PositionMap const& positions) {
        int const y = y0 + yy;
        int const x = x0 + xx;
        std::int64_t const at = layout.offset(z, y, x);
        store_fields(buffers, at,
                     op(TiledFieldsNeighbourhood<T, Rank, Fields>{
                         buffers, tiles, at, layout.stride_y, layout.stride_z,
                         yy, xx, z, y, x, time, positions}));
      };
      if constexpr (host) {
        with_constant_identity(map, [&](PositionMap const& positions) {
          for (int yy = 0; yy < height; ++yy)
            for (int xx = 0; xx < width; ++xx) update(yy, xx, positions);
        });
      } else {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, width * height),
                             [&](int k) {
                               int const yy = k / width;
                               update(yy, k - yy * width, map);
                             });
      }
    };

    if constexpr (Rank < 3) {
      for_each_field_index<0, count>([&](auto fi) {
        constexpr int f = decltype(fi)::value;
        if constexpr (Tiles::staged(f)) load_plane(fi, 0, region(f, 0));
      });
      team.team_barrier();
      compute_plane(0);
    } else {
      int const z0 = tile_z * tile.z;
      int const depth = Kokkos::min(tile.z, layout.nz - z0);
      // Plane z of field f lives in slot (z - z0 + r_f) % (2 r_f + 1): the
      // planes below the first, then one more per plane computed.
      for_each_field_index<0, count>([&](auto fi) {
        constexpr int f = decltype(fi)::value;
        if constexpr (Tiles::staged(f)) {
          constexpr int r = Fields::radii[f];
          for (int j = -r; j < r; ++j) load_plane(fi, z0 + j, region(f, j + r));
          tiles.first_slot[f] = 0;
        }
      });
      for (int z = z0; z < z0 + depth; ++z) {
        for_each_field_index<0, count>([&](auto fi) {
          constexpr int f = decltype(fi)::value;
          if constexpr (Tiles::staged(f)) {
            constexpr int r = Fields::radii[f];
            constexpr int ring = 2 * r + 1;
            // Plane z + r goes to the slot before plane z - r's.
            int const slot =
                tiles.first_slot[f] == 0 ? ring - 1 : tiles.first_slot[f] - 1;
            load_plane(fi, z + r, region(f, slot));
          }
        });
        team.team_barrier();
        compute_plane(z);
        // The next iteration overwrites the slot of each field's plane
        // z - r_f, which becomes the ring's last.
        team.team_barrier();
        for_each_field_index<0, count>([&](auto fi) {
          constexpr int f = decltype(fi)::value;
          if constexpr (Tiles::staged(f)) {
            constexpr int ring = 2 * Fields::radii[f] + 1;
            tiles.first_slot[f] =
                tiles.first_slot[f] + 1 == ring ? 0 : tiles.first_slot[f] + 1;
          }
        });
      }
    }
  }
};

/// One step: every written field's next level from the current (and
/// earlier) levels in `buffers`, tile by tile. `tile` is the plan's (clipped
/// to the domain) and `scratch_bytes` what fields_scratch_bytes gives it.
template <class ExecSpace, class T, int Rank, class Op>
void fields_blocked_step(ExecSpace const& space,
                         FieldBuffers<T, typename Op::fields> const& buffers,
                         Op const& op, PaddedLayout const& layout, Tile tile,
                         int team_size, std::size_t scratch_bytes, double time,
                         PositionMap const& map = {}) {
  using Sweep = FieldsBlockedSweep<ExecSpace, T, Rank, Op>;
  if constexpr (Rank < 2) tile.y = 1;
  if constexpr (Rank < 3) tile.z = 1;
  int const tiles_x = (layout.nx + tile.x - 1) / tile.x;
  int const tiles_y = (layout.ny + tile.y - 1) / tile.y;
  int const tiles_z = (layout.nz + tile.z - 1) / tile.z;
  Sweep sweep{buffers,       op, layout, tile, tiles_x, tiles_y,
              scratch_bytes, {}, time,   map};
  std::size_t const cells = fields_scratch_layout<typename Op::fields>(
      Rank, tile, sweep.scratch_offset);
  STENCIL_EXPECT(cells * sizeof(T) <= scratch_bytes,
                 "SpatialBlocking: the plan gives a team ", scratch_bytes,
                 " bytes of scratch but its tile {x=", tile.x, ", y=", tile.y,
                 ", z=", tile.z, "} needs ", cells * sizeof(T),
                 "; make the plan for this stencil with stencil::plan");
  Kokkos::TeamPolicy<ExecSpace> policy(space, tiles_x * tiles_y * tiles_z,
                                       team_size);
  Kokkos::parallel_for(
      "stencil::fields_spatial_blocking",
      policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes)), sweep);
}

}  // namespace stencil::detail
