// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stencil/detail/neighbourhood.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/policy.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace stencil::detail {

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

/// One time step with a scratch tile per team. Rank 1 and 2: the team loads
/// its tile plus a halo of `radius` cells, synchronises, and computes the
/// tile from scratch. Rank 3: the team owns an xy tile and a run of
/// `tile.z` planes and streams through them with a ring of 2r+1 planes, so
/// each input plane is loaded once per team.
template <class ExecSpace, class T, int Rank, class Op>
struct BlockedSweep {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  static constexpr int r = Op::radius;
  static constexpr bool host = is_host_space_v<ExecSpace>;

  T const* in;
  T* out;
  Op op;
  PaddedLayout layout;
  Tile tile;
  int tiles_x;
  int tiles_y;
  std::size_t scratch_bytes;

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
    int const ry = Rank >= 2 ? r : 0;  // halo rows exist from rank 2 on
    int const row = width + 2 * r;     // scratch row length
    int const plane = row * (height + 2 * ry);
    T* scratch = static_cast<T*>(team.team_scratch(0).get_shmem(scratch_bytes));

    // Loads interior plane z (any z in [-r, nz + r)) of the tile plus halo.
    // Host teams have one thread: plain row loops, contiguous inside.
    // Device teams stride over the plane's cells.
    auto load_plane = [&](int z, T* dst) {
      if constexpr (host) {
        for (int yy = 0; yy < height + 2 * ry; ++yy) {
          T const* src = in + layout.offset(z, y0 + yy - ry, x0 - r);
          for (int xx = 0; xx < row; ++xx) dst[yy * row + xx] = src[xx];
        }
      } else {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, plane), [&](int k) {
          int const yy = k / row;
          int const xx = k - yy * row;
          dst[k] = in[layout.offset(z, y0 + yy - ry, x0 + xx - r)];
        });
      }
    };
    // Calls f(yy, xx) for every cell of the tile.
    auto for_each_cell = [&](auto&& f) {
      if constexpr (host) {
        for (int yy = 0; yy < height; ++yy)
          for (int xx = 0; xx < width; ++xx) f(yy, xx);
      } else {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, width * height),
                             [&](int k) {
                               int const yy = k / width;
                               f(yy, k - yy * width);
                             });
      }
    };

    if constexpr (Rank < 3) {
      load_plane(0, scratch);
      team.team_barrier();
      for_each_cell([&](int yy, int xx) {
        Neighbourhood<T, Rank, r> const nb{scratch + (yy + ry) * row + xx + r,
                                           row, 0};
        out[layout.offset(0, y0 + yy, x0 + xx)] = static_cast<T>(op(nb));
      });
    } else {
      constexpr int ring = 2 * r + 1;
      int const z0 = tile_z * tile.z;
      int const depth = Kokkos::min(tile.z, layout.nz - z0);
      // Plane z lives in slot (z - z0 + r) % ring.
      for (int j = -r; j < r; ++j) {
        load_plane(z0 + j, scratch + ((j + r) % ring) * plane);
      }
      for (int z = z0; z < z0 + depth; ++z) {
        load_plane(z + r, scratch + ((z - z0 + 2 * r) % ring) * plane);
        team.team_barrier();
        PlaneRingNeighbourhood<T, r> planes;
        planes.stride_y = row;
        for (int j = 0; j < ring; ++j) {
          planes.plane[j] = scratch + ((z - z0 + j) % ring) * plane;
        }
        for_each_cell([&](int yy, int xx) {
          PlaneRingNeighbourhood<T, r> nb = planes;
          nb.centre = (yy + r) * row + xx + r;
          out[layout.offset(z, y0 + yy, x0 + xx)] = static_cast<T>(op(nb));
        });
        // The next iteration overwrites the slot of plane z - r.
        team.team_barrier();
      }
    }
  }
};

template <class ExecSpace, class T, int Rank, class Op>
void blocked_step(ExecSpace const& space, T const* in, T* out,
                  PaddedLayout const& layout, Op const& op, Tile tile,
                  int team_size, std::size_t scratch_bytes) {
  int const tiles_x = (layout.nx + tile.x - 1) / tile.x;
  int const tiles_y = Rank >= 2 ? (layout.ny + tile.y - 1) / tile.y : 1;
  int const tiles_z = Rank == 3 ? (layout.nz + tile.z - 1) / tile.z : 1;
  if constexpr (Rank < 2) tile.y = 1;
  BlockedSweep<ExecSpace, T, Rank, Op> const sweep{
      in, out, op, layout, tile, tiles_x, tiles_y, scratch_bytes};
  Kokkos::TeamPolicy<ExecSpace> policy(space, tiles_x * tiles_y * tiles_z,
                                       team_size);
  Kokkos::parallel_for(
      "stencil::spatial_blocking",
      policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes)), sweep);
}

}  // namespace stencil::detail
