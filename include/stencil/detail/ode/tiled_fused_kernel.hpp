// SPDX-License-Identifier: Apache-2.0
// The Fused plan on host execution spaces: every stage of a Runge-Kutta
// step over one tile at a time, the tile and its rims held in a thread's
// scratch. Paper 001 tiles a GPU's stages this way across thread blocks;
// on a CPU a tile sized to a core's cache does the same: memory sees y_n
// read and y_n+1 written once a step, where Unfused moves every stage's
// buffers through it.
//
// A tile of `tile` cells loads y_n (and every coefficient) over the tile
// and a rim of stages x radius cells along each axis. Stage i computes
// k_i where the later stages still need it, the tile grown by
// (stages - 1 - i) radii, then Y_i+1 = y_n + dt sum_j a_i+1,j k_j there;
// the last stage writes y_n+1 = y_n + dt sum_j b_j k_j on the tile alone.
// Neighbouring tiles recompute each other's rims; nothing is shared, so
// tiles run in any order, one per thread.
//
// Sides: a periodic axis wraps the rim around (its cells are computed as
// interior cells, at their wrapped position); the halo of other sides is
// refreshed in scratch after each stage as refresh_boundaries refreshes it
// between Unfused's stages (boundary.hpp): from the cell a mirror maps it
// to, from a dirichlet function's values at the next stage's time
// (computed on the host before the step), or, on a fixed side, not at all.
#pragma once

#include <stencil/boundary.hpp>
#include <stencil/detail/fields/accessor.hpp>
#include <stencil/detail/portable/boundary_halo.hpp>
#include <stencil/detail/portable/layout.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <utility>

// A loop whose iterations are independent: vectorise it without proving
// that its arrays do not overlap (they are distinct scratch arrays). Not
// OpenMP's simd, which gives each lane a copy of a loop's local objects
// (the right-hand side's accessor and result) and so keeps the loop that
// evaluates it scalar.
#if defined(__clang__)
#define STENCIL_IMPL_SIMD _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define STENCIL_IMPL_SIMD _Pragma("GCC ivdep")
#else
#define STENCIL_IMPL_SIMD
#endif

namespace stencil::ode::detail {

inline constexpr int max_stages = 8;

/// Where the tiles of a host Fused step lie, on axes (z, y, x); an axis
/// the state does not have has extent 1, one tile of 1 cell and reach 0.
struct TiledFusedShape {
  int extent[3] = {1, 1, 1};
  int tile[3] = {1, 1, 1};   ///< cells a tile updates
  int tiles[3] = {1, 1, 1};  ///< tiles along the axis
  int reach[3] = {};         ///< the right-hand side's radius along the axis
  int rim[3] = {};           ///< stages x reach: y_n loaded past the tile
  int box[3] = {1, 1, 1};    ///< a scratch array's cells: tile + 2 rims
  bool periodic[3] = {};
  Boundary side[3][2] = {};  ///< the kinds of the low and high sides

  std::int64_t box_cells() const {
    return static_cast<std::int64_t>(box[0]) * box[1] * box[2];
  }
  std::int64_t tile_count() const {
    return static_cast<std::int64_t>(tiles[0]) * tiles[1] * tiles[2];
  }
};

/// The values of the dirichlet sides at the stages after the first, which
/// a tile's halo refresh reads: for stage i + 1, side `side` of axis `a`,
/// `values[i * per_stage + start[a][side] + at]`, where `at` runs over the
/// side's halo cells (reach deep along a; the other axes over their
/// interior, and their reach either side where not periodic), slowest
/// axis first.
template <class T>
struct TiledFusedDirichlet {
  T const* values = nullptr;
  std::int64_t per_stage = 0;
  std::int64_t start[3][2] = {};
};

/// Scratch arrays a tile keeps: each field's current stage (coefficients:
/// their values), y_n and the stages' derivatives of each written field.
template <class Fields>
constexpr int tiled_fused_arrays(int stages) {
  return Fields::count + Fields::written_count * (1 + stages);
}

/// One step of the host Fused plan over every tile (see the file comment);
/// a TeamPolicy of one thread a team, a tile per team.
template <class T, int Rank, class Rhs, class ExecSpace>
struct TiledFusedStep {
  using Fields = typename Rhs::fields;
  static constexpr int F = Fields::count;
  static constexpr int W = Fields::written_count;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;

  TiledFusedShape shape;
  stencil::detail::PaddedLayout layout;
  T const* current[F] = {};  ///< each field's current level (global)
  T* next[W] = {};           ///< each written field's next level (global)
  int written[W] = {};       ///< the field of written slot w
  int stages = 1;
  double dt = 0.0;
  Kokkos::Array<double, max_stages> time{};  ///< t + c_i dt
  /// Stage i's combination weights: a_i+1,j, or b_j at the last stage.
  Kokkos::Array<double, max_stages * max_stages> weight{};
  Kokkos::Array<double, max_stages> error{};  ///< b_j - bhat_j
  bool estimate = false;
  double absolute = 0.0, relative = 0.0;
  TiledFusedDirichlet<T> dirichlet;
  Rhs rhs;

  /// The arrays, then two rows of doubles (8-byte aligned).
  std::size_t scratch_bytes() const {
    std::size_t const arrays =
        static_cast<std::size_t>(tiled_fused_arrays<Fields>(stages)) *
        static_cast<std::size_t>(shape.box_cells()) * sizeof(T);
    return (arrays + 7) / 8 * 8 +
           2 * sizeof(double) * static_cast<std::size_t>(shape.box[2]);
  }

  // Host code only: the plan runs on host execution spaces.
  void operator()(Member const& team) const { (void)run_tile(team); }
  void operator()(Member const& team, double& sum_squares) const {
    sum_squares += run_tile(team);
  }

 private:
  /// A range of cells along each axis, [lo, hi).
  struct Box {
    int lo[3], hi[3];
  };

  /// Axis `a`'s coordinate `c` where it lies in the state: wrapped on a
  /// periodic axis (a rim may wrap more than once around a small one).
  int wrap(int a, int c) const {
    int const n = shape.extent[a];
    if (!shape.periodic[a] || (c >= 0 && c < n)) return c;
    return ((c % n) + n) % n;
  }

  /// Whether `c` lies in the halo of a non-periodic axis `a`.
  bool in_halo(int a, int c) const {
    return !shape.periodic[a] && (c < 0 || c >= shape.extent[a]);
  }

  /// The tile grown by `grow` radii, within the interior of every
  /// non-periodic axis (the cells a stage computes).
  Box grown(Box const& tile, int grow) const {
    Box b;
    for (int a = 0; a < 3; ++a) {
      b.lo[a] = tile.lo[a] - grow * shape.reach[a];
      b.hi[a] = tile.hi[a] + grow * shape.reach[a];
      if (!shape.periodic[a]) {
        b.lo[a] = Kokkos::max(b.lo[a], 0);
        b.hi[a] = Kokkos::min(b.hi[a], shape.extent[a]);
      }
    }
    return b;
  }

  /// k_i[w][x] = the right-hand side's value for written field w, stored
  /// straight from the result: functor_values' array in between, whose
  /// address it takes, keeps the loop from being vectorised.
  template <class Result>
  static void store_derivatives(Result result, T* const (&k_i)[W], int x) {
    stencil::detail::check_functor_values<Fields, Result>();
    [&]<int... w>(std::integer_sequence<int, w...>) {
      ((k_i[w][x] = static_cast<T>(stencil::detail::functor_value<w>(result))),
       ...);
    }
    (std::make_integer_sequence<int, W>{});
  }

  /// Calls f(x0, x1, shift) over [lo, hi) along x in runs where the
  /// wrapped coordinate is x + shift (one run unless x is periodic).
  template <class F>
  void along_x(int lo, int hi, F&& f) const {
    for (int x0 = lo; x0 < hi;) {
      int const g0 = wrap(2, x0);
      int const x1 =
          shape.periodic[2] ? Kokkos::min(hi, x0 + shape.extent[2] - g0) : hi;
      f(x0, x1, g0 - x0);
      x0 = x1;
    }
  }

  double run_tile(Member const& team) const {
    int index = team.league_rank();
    Box tile, held;
    for (int a = 2; a >= 0; --a) {
      int const t = index % shape.tiles[a];
      index /= shape.tiles[a];
      tile.lo[a] = t * shape.tile[a];
      tile.hi[a] = Kokkos::min(tile.lo[a] + shape.tile[a], shape.extent[a]);
      held.lo[a] = tile.lo[a] - shape.rim[a];
      held.hi[a] = tile.hi[a] + shape.rim[a];
      if (!shape.periodic[a]) {
        held.lo[a] = Kokkos::max(held.lo[a], -shape.reach[a]);
        held.hi[a] = Kokkos::min(held.hi[a], shape.extent[a] + shape.reach[a]);
      }
    }
    int const row = shape.box[2];
    int const plane = shape.box[2] * shape.box[1];
    // Where cell (z, y, 0) would lie in a scratch array: cell x is x on.
    auto row_start = [&](int z, int y) {
      return (z - held.lo[0]) * plane + (y - held.lo[1]) * row - held.lo[2];
    };
    auto local = [&](int z, int y, int x) { return row_start(z, y) + x; };

    T* const scratch =
        static_cast<T*>(team.team_scratch(1).get_shmem(scratch_bytes()));
    std::int64_t const cells = shape.box_cells();
    stencil::detail::FieldBuffers<T, Fields> stage_values;
    T* held_field[F];
    for (int f = 0; f < F; ++f) {
      held_field[f] = scratch + f * cells;
      stage_values.level[f][0] = held_field[f];
    }
    T* saved[W];
    T* k[max_stages][W];
    for (int w = 0; w < W; ++w) {
      saved[w] = scratch + (F + w) * cells;
      for (int j = 0; j < stages; ++j) {
        k[j][w] = scratch + (F + W + j * W + w) * cells;
      }
    }
    // A row's combination and error estimate, in double (after the arrays:
    // their size is a multiple of 8 bytes).
    std::size_t const arrays_bytes =
        static_cast<std::size_t>(tiled_fused_arrays<Fields>(stages)) *
        static_cast<std::size_t>(cells) * sizeof(T);
    double* const combination = reinterpret_cast<double*>(
        reinterpret_cast<char*>(scratch) + (arrays_bytes + 7) / 8 * 8);
    double* const estimate_row = combination + row;

    // y_n and the coefficients over the tile and its rims.
    for (int z = held.lo[0]; z < held.hi[0]; ++z) {
      for (int y = held.lo[1]; y < held.hi[1]; ++y) {
        std::int64_t const line =
            layout.offset<std::int64_t>(wrap(0, z), wrap(1, y), 0);
        int const start = row_start(z, y);
        along_x(held.lo[2], held.hi[2], [&](int x0, int x1, int shift) {
          for (int f = 0; f < F; ++f) {
            T* const to = held_field[f] + start;
            T const* const from = current[f] + line + shift;
            STENCIL_IMPL_SIMD
            for (int x = x0; x < x1; ++x) to[x] = from[x];
          }
        });
        for (int w = 0; w < W; ++w) {
          T* const to = saved[w] + start;
          T const* const from = held_field[written[w]] + start;
          STENCIL_IMPL_SIMD
          for (int x = held.lo[2]; x < held.hi[2]; ++x) to[x] = from[x];
        }
      }
    }

    double sum_squares = 0.0;
    for (int i = 0; i < stages; ++i) {
      bool const last = i + 1 == stages;
      Box const region = grown(tile, stages - 1 - i);
      double const* const w_i = &weight[i * max_stages];
      double const t_i = time[i];
      int const x0 = region.lo[2], x1 = region.hi[2];
      for (int z = region.lo[0]; z < region.hi[0]; ++z) {
        for (int y = region.lo[1]; y < region.hi[1]; ++y) {
          int const gz = wrap(0, z), gy = wrap(1, y);
          int const start = row_start(z, y);
          // k_i from Y_i.
          along_x(x0, x1, [&](int from, int to, int shift) {
            // One accessor a run, moved along it: built afresh for every
            // cell, its copy keeps the loop from being vectorised.
            T* k_i[W];
            for (int w = 0; w < W; ++w) k_i[w] = k[i][w] + start;
            STENCIL_IMPL_SIMD
            for (int x = from; x < to; ++x) {
              store_derivatives(
                  rhs(stencil::detail::FieldsNeighbourhood<T, Rank, Fields>{
                      stage_values, start + x, row, plane, gz, gy, x + shift,
                      t_i}),
                  k_i, x);
            }
          });
        }
      }
      // Y_i+1 = y_n + dt sum_j w_i,j k_j (the order Unfused sums in), or
      // at the last stage y_n+1 into the state.
      for (int z = region.lo[0]; z < region.hi[0]; ++z) {
        for (int y = region.lo[1]; y < region.hi[1]; ++y) {
          int const start = row_start(z, y);
          for (int w = 0; w < W; ++w) {
            double* const sum = combination - x0;
            double* const err = estimate_row - x0;
            bool const estimating = last && estimate;
            {
              T const* const kj = k[0][w] + start;
              double const a = w_i[0], e = error[0];
              STENCIL_IMPL_SIMD
              for (int x = x0; x < x1; ++x) {
                sum[x] = a * static_cast<double>(kj[x]);
              }
              if (estimating) {
                STENCIL_IMPL_SIMD
                for (int x = x0; x < x1; ++x) {
                  err[x] = e * static_cast<double>(kj[x]);
                }
              }
            }
            for (int j = 1; j <= i; ++j) {
              T const* const kj = k[j][w] + start;
              double const a = w_i[j], e = error[j];
              STENCIL_IMPL_SIMD
              for (int x = x0; x < x1; ++x) {
                sum[x] += a * static_cast<double>(kj[x]);
              }
              if (estimating) {
                STENCIL_IMPL_SIMD
                for (int x = x0; x < x1; ++x) {
                  err[x] += e * static_cast<double>(kj[x]);
                }
              }
            }
            T const* const before = saved[w] + start;
            if (!last) {
              T* const out = held_field[written[w]] + start;
              STENCIL_IMPL_SIMD
              for (int x = x0; x < x1; ++x) {
                out[x] = static_cast<T>(static_cast<double>(before[x]) +
                                        dt * sum[x]);
              }
              continue;
            }
            T* const out = next[w] + layout.offset<std::int64_t>(z, y, 0);
            STENCIL_IMPL_SIMD
            for (int x = x0; x < x1; ++x) {
              out[x] =
                  static_cast<T>(static_cast<double>(before[x]) + dt * sum[x]);
            }
            if (!estimating) continue;
            for (int x = x0; x < x1; ++x) {
              double const b = before[x];
              double const after = b + dt * sum[x];
              double const scale =
                  absolute +
                  relative * Kokkos::max(Kokkos::abs(b), Kokkos::abs(after));
              double const e = dt * err[x] / scale;
              sum_squares += e * e;
            }
          }
        }
      }
      if (!last) {
        refresh_halo(held_field, i, grown(tile, stages - 2 - i), held, local);
      }
    }
    return sum_squares;
  }

  /// Y_i+1's halo cells that stage i + 1 reads (those within a reach of
  /// `next_region`, the cells it computes), as refresh_boundaries leaves
  /// them: the slowest axis along which a cell lies in a halo that is not
  /// fixed gives its value, a dirichlet side its function's (at stage
  /// i + 1's time), a mirror the value its mirror cell ends with; a cell
  /// outside no such halo keeps its value.
  template <class Local>
  void refresh_halo(T* const (&held_field)[F], int i, Box const& next_region,
                    Box const& held, Local const& local) const {
    Box read;
    bool any = false;
    for (int a = 0; a < 3; ++a) {
      read.lo[a] = Kokkos::max(next_region.lo[a] - shape.reach[a], held.lo[a]);
      read.hi[a] = Kokkos::min(next_region.hi[a] + shape.reach[a], held.hi[a]);
      any = any || in_halo(a, read.lo[a]) || in_halo(a, read.hi[a] - 1);
    }
    if (!any) return;
    for (int z = read.lo[0]; z < read.hi[0]; ++z) {
      for (int y = read.lo[1]; y < read.hi[1]; ++y) {
        bool const row_in_halo = in_halo(0, z) || in_halo(1, y);
        for (int x = read.lo[2]; x < read.hi[2]; ++x) {
          if (!row_in_halo && !in_halo(2, x)) {
            // Interior along x as well: jump to the high halo, if any.
            x = Kokkos::max(x, shape.extent[2] - 1);
            continue;
          }
          int cell[3] = {z, y, x};
          bool mirrored = false, given = false;
          T value{};
          for (int a = 0; a < 3 && !given; ++a) {
            if (!in_halo(a, cell[a])) continue;
            Boundary const kind = shape.side[a][cell[a] < 0 ? 0 : 1];
            if (kind == Boundary::fixed) continue;
            if (kind == Boundary::dirichlet) {
              value = dirichlet_value(i, a, cell);
              given = true;
            } else {
              // The faster axes then resolve the mirror cell in turn.
              cell[a] =
                  stencil::detail::halo_source(kind, cell[a], shape.extent[a]);
              mirrored = true;
            }
          }
          int const here = local(z, y, x);
          if (given) {
            for (int w = 0; w < W; ++w) held_field[written[w]][here] = value;
          } else if (mirrored) {
            int const from = local(cell[0], cell[1], cell[2]);
            for (int w = 0; w < W; ++w) {
              held_field[written[w]][here] = held_field[written[w]][from];
            }
          }
        }
      }
    }
  }

  /// The dirichlet value of halo cell `cell` of axis `a` (see
  /// TiledFusedDirichlet) after stage i, at stage i + 1's time.
  T dirichlet_value(int i, int a, int const (&cell)[3]) const {
    int const side = cell[a] < 0 ? 0 : 1;
    std::int64_t at = 0;
    for (int b = 0; b < 3; ++b) {
      int const n = shape.extent[b];
      int const reach = shape.reach[b];
      int offset, length;
      if (b == a) {
        offset = side == 0 ? cell[b] + reach : cell[b] - n;
        length = reach;
      } else if (shape.periodic[b]) {
        offset = wrap(b, cell[b]);
        length = n;
      } else {
        offset = cell[b] + reach;
        length = n + 2 * reach;
      }
      at = at * length + offset;
    }
    return dirichlet
        .values[i * dirichlet.per_stage + dirichlet.start[a][side] + at];
  }
};

}  // namespace stencil::ode::detail

#undef STENCIL_IMPL_SIMD
