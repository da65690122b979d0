// SPDX-License-Identifier: Apache-2.0
// Host side of the Fused plan on host execution spaces
// (tiled_fused_kernel.hpp): what it runs, the tile it picks and the run
// stencil::ode::integrate steps with.
#pragma once

#include <stencil/boundary.hpp>
#include <stencil/detail/fields/time_loop.hpp>
#include <stencil/detail/ode/tiled_fused_kernel.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/error.hpp>
#include <stencil/fields/state.hpp>
#include <stencil/ode/plans.hpp>
#include <stencil/ode/tableau.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>

#if __has_include(<unistd.h>)
#include <unistd.h>
#endif

namespace stencil::ode::detail {

/// True for execution spaces whose threads run on the host (whose kernels
/// can read host memory): the host Fused plan's. A device space whose
/// memory the host reaches (unified memory) is not one.
template <class ExecSpace>
inline constexpr bool runs_on_host_v =
    Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

/// The scratch a host tile may take: three quarters of a core's L2 cache
/// as the system reports it (1 MiB where it does not), so that a tile's
/// arrays stay there beside the rows of y_n and y_n+1 streaming through
/// (docs/decisions/ode-host-fused.md).
inline std::size_t tiled_fused_scratch_budget() {
  long cache = -1;
#if defined(_SC_LEVEL2_CACHE_SIZE)
  cache = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  std::size_t const bytes =
      cache > 0 ? static_cast<std::size_t>(cache) : std::size_t{1} << 20;
  return bytes / 4 * 3;
}

/// The most cells Auto lets the host Fused plan's tiles compute per cell
/// they update (TiledFusedRun::recomputation): beyond it the rims'
/// recomputation costs more than the memory traffic the plan saves, where
/// it broke even when measured (docs/decisions/ode-host-fused.md).
inline constexpr double auto_host_recomputation = 2.0;

/// Why the host Fused plan cannot run `Rhs` on `state` (empty when it can).
template <class Rhs, class T, int Rank, class MemorySpace>
std::string tiled_fused_refusal(State<T, Rank, MemorySpace> const& state) {
  using stencil::detail::axis_name;
  if (!state.position_map().identity()) {
    return "Fused runs a whole domain; this state is part of a distributed "
           "one, whose halos are its neighbours' cells (use Unfused)";
  }
  // A tile holds a periodic axis's cells past the edge as the cells they
  // wrap to. A dirichlet side of a slower axis refreshed after it gives
  // the halo's corners its function's values at the unwrapped positions
  // (boundary.hpp), which differ from those; only a box stencil reads them.
  auto const& sides = state.boundaries();
  if constexpr (Rhs::shape == Shape::box) {
    for (int d = 0; d < Rank; ++d) {
      for (int e = d + 1; e < Rank; ++e) {
        bool const dirichlet = sides.kind_at(d, 0) == Boundary::dirichlet ||
                               sides.kind_at(d, 1) == Boundary::dirichlet;
        if (dirichlet && sides.kind_at(e, 0) == Boundary::periodic) {
          return stencil::detail::concat(
              "Fused wraps periodic axes around its tiles, and a box "
              "stencil reads the halo's corners, where axis ",
              axis_name(Rank, d),
              "'s dirichlet function gives other values "
              "than the cells periodic axis ",
              axis_name(Rank, e), " wraps to (use Unfused)");
        }
      }
    }
  }
  return {};
}

/// What a full tile of shape `s` computes in a step: the cells of every
/// stage's region (the tile grown by the radii the later stages read, at
/// most the axis) and the rows they lie in.
struct TiledFusedWork {
  double cells = 0.0;
  double rows = 0.0;
};

inline TiledFusedWork tiled_fused_work(TiledFusedShape const& s, int stages) {
  TiledFusedWork work;
  for (int i = 0; i < stages; ++i) {
    int const grow = stages - 1 - i;
    double cells = 1.0, rows = 1.0;
    for (int a = 0; a < 3; ++a) {
      int const span = s.tile[a] + 2 * grow * s.reach[a];
      int const held = s.periodic[a] ? span : std::min(span, s.extent[a]);
      cells *= held;
      if (a < 2) rows *= held;
    }
    work.cells += cells;
    work.rows += rows;
  }
  return work;
}

/// The work a tile shape costs per step, in cell updates: its cells, plus
/// two cells a row for starting one.
inline double tiled_fused_cost(TiledFusedShape const& s, int stages) {
  TiledFusedWork const work = tiled_fused_work(s, stages);
  return work.cells + 2.0 * work.rows;
}

/// The host Fused plan's tiles for `extents` (slowest first): the sizes
/// asked for (`request.tile_*`, 0: the plan's), else the shape of least
/// work (tiled_fused_cost, over rounds of `threads` tiles) whose scratch
/// fits tiled_fused_scratch_budget().
template <class Fields, int Rank>
TiledFusedShape tiled_fused_shape(
    std::array<int, Rank> const& extents,
    stencil::detail::BoundarySet<Rank> const& sides, int stages,
    std::size_t value_bytes, Fused const& request, int threads) {
  TiledFusedShape s;
  int const asked[3] = {request.tile_z, request.tile_y, request.tile_x};
  for (int d = 0; d < Rank; ++d) {
    int const a = 3 - Rank + d;
    s.extent[a] = extents[d];
    s.reach[a] = stencil::detail::largest_radius_along<Fields>(2 - a);
    s.rim[a] = stages * s.reach[a];
    s.periodic[a] = sides.kind_at(d, 0) == Boundary::periodic;
    s.side[a][0] = sides.kind_at(d, 0);
    s.side[a][1] = sides.kind_at(d, 1);
  }
  auto const finish = [&](TiledFusedShape& t) {
    for (int a = 0; a < 3; ++a) {
      t.tile[a] = std::min(t.tile[a], t.extent[a]);
      t.tiles[a] = (t.extent[a] + t.tile[a] - 1) / t.tile[a];
      int const span = t.tile[a] + 2 * t.rim[a];
      t.box[a] =
          t.periodic[a] ? span : std::min(span, t.extent[a] + 2 * t.reach[a]);
    }
  };
  auto const bytes = [&](TiledFusedShape const& t) {
    return static_cast<std::size_t>(tiled_fused_arrays<Fields>(stages)) *
           static_cast<std::size_t>(t.box_cells()) * value_bytes;
  };
  // The sizes tried along an axis: 4, 6, 8, 12, 16, 24, ... (powers of
  // two and one and a half times them) below the extent, and the extent.
  auto const sizes = [&](int a, int* out) {
    int count = 0;
    if (s.extent[a] == 1) {
      out[count++] = 1;
      return count;
    }
    for (int v = 4; v < s.extent[a]; v *= 2) {
      out[count++] = v;
      if (v + v / 2 < s.extent[a]) out[count++] = v + v / 2;
      if (v > s.extent[a] / 2) break;  // 2 v would pass it (or overflow)
    }
    out[count++] = s.extent[a];
    return count;
  };
  std::size_t const budget = tiled_fused_scratch_budget();
  int options[3][64];
  int counts[3];
  for (int a = 0; a < 3; ++a) {
    if (a >= 3 - Rank && asked[a] > 0) {
      options[a][0] = asked[a];
      counts[a] = 1;
    } else {
      counts[a] = sizes(a, options[a]);
    }
  }
  bool const all_asked = [&] {
    for (int a = 3 - Rank; a < 3; ++a) {
      if (asked[a] <= 0) return false;
    }
    return true;
  }();
  TiledFusedShape best = s;
  double best_cost = std::numeric_limits<double>::infinity();
  std::size_t smallest = std::numeric_limits<std::size_t>::max();
  TiledFusedShape smallest_shape = s;
  for (int iz = 0; iz < counts[0]; ++iz) {
    for (int iy = 0; iy < counts[1]; ++iy) {
      for (int ix = 0; ix < counts[2]; ++ix) {
        TiledFusedShape t = s;
        t.tile[0] = options[0][iz];
        t.tile[1] = options[1][iy];
        t.tile[2] = options[2][ix];
        finish(t);
        std::size_t const b = bytes(t);
        if (b < smallest) {
          smallest = b;
          smallest_shape = t;
        }
        if (!all_asked && b > budget) continue;
        double const rounds =
            static_cast<double>((t.tile_count() + threads - 1) / threads);
        double const cost = rounds * tiled_fused_cost(t, stages);
        // Ties go to the later shape: the larger x for a given z and y.
        if (cost <= best_cost) {
          best_cost = cost;
          best = t;
        }
      }
    }
  }
  return best_cost < std::numeric_limits<double>::infinity() ? best
                                                             : smallest_shape;
}

/// The Fused plan's run on a host execution space (see StepRun).
template <class ExecSpace, class T, int Rank, class MemorySpace, class Rhs>
class TiledFusedRun final : public StepRun {
 public:
  using Fields = typename Rhs::fields;
  static constexpr int W = Fields::written_count;
  using Kernel = TiledFusedStep<T, Rank, Rhs, ExecSpace>;
  using Policy =
      Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;

  TiledFusedRun(ExecSpace const& space, State<T, Rank, MemorySpace>& state,
                Rhs const& rhs, Tableau tableau, Fused const& request)
      : m_space(space), m_state(state), m_tableau(std::move(tableau)) {
    std::string const refusal = tiled_fused_refusal<Rhs>(state);
    STENCIL_EXPECT_SUPPORTED(refusal.empty(), "stencil::ode: ", refusal);
    STENCIL_EXPECT(
        request.cluster_x == 0 && request.cluster_y == 0 &&
            request.barrier == TileBarrier::automatic,
        "stencil::ode::Fused: clusters and tile barriers are the native "
        "CUDA backend's; on ",
        ExecSpace::name(),
        " leave cluster_x, cluster_y and barrier unset (tile_x, tile_y and "
        "tile_z size its tiles; `resident` needs a cluster and does not "
        "apply)");
    STENCIL_EXPECT(
        request.tile_x >= 0 && request.tile_y >= 0 && request.tile_z >= 0,
        "stencil::ode::Fused: tiles of ", request.tile_x, " x ", request.tile_y,
        " x ", request.tile_z,
        " cells; give positive sizes, or 0 for the plan's choice");
    int const unused[3] = {request.tile_z, request.tile_y, request.tile_x};
    for (int a = 0; a < 3 - Rank; ++a) {
      STENCIL_EXPECT(unused[a] == 0, "stencil::ode::Fused: a tile size along ",
                     "zyx"[a], " for a ", Rank,
                     "D state; give 0 (or nothing) there");
    }
    int const s = m_tableau.stages;
    STENCIL_EXPECT(s <= max_stages, "stencil::ode: ", s, " stages; at most ",
                   max_stages);
    m_kernel.shape = tiled_fused_shape<Fields, Rank>(
        state.extents(), state.boundaries(), s, sizeof(T), request,
        space.concurrency());
    m_kernel.layout =
        stencil::detail::make_layout<Rank>(state.extents(), state.halo());
    m_kernel.rhs = rhs;
    m_kernel.stages = s;
    for (int i = 0; i < s; ++i) {
      for (int j = 0; j <= i; ++j) {
        m_kernel.weight[i * max_stages + j] =
            i + 1 < s ? m_tableau.a_at(i + 1, j) : m_tableau.b[j];
      }
      if (m_tableau.embedded()) {
        m_kernel.error[i] = m_tableau.b[i] - m_tableau.bhat[i];
      }
    }
    int slot = 0;
    for (int f = 0; f < Fields::count; ++f) {
      if (Fields::written[f]) m_kernel.written[slot++] = f;
    }
    std::size_t const bytes = m_kernel.scratch_bytes();
    std::size_t const most = Policy(space, 1, 1).scratch_size_max(1);
    bool const asked =
        request.tile_x > 0 || request.tile_y > 0 || request.tile_z > 0;
    if (asked) {
      STENCIL_EXPECT(bytes <= most, "stencil::ode::Fused: tiles of ",
                     shape_text(), " cells need ", bytes,
                     " bytes of scratch a thread, and ", ExecSpace::name(),
                     " gives at most ", most, "; ask for smaller tiles");
    }
    // The plan's smallest tile still too large: rims of many stages times
    // a wide radius, in 3D.
    STENCIL_EXPECT_SUPPORTED(
        bytes <= most, "stencil::ode: Fused's smallest tile, ", shape_text(),
        " cells with rims of ", s, " stages x the radius, needs ", bytes,
        " bytes of scratch a thread, and ", ExecSpace::name(),
        " gives at most ", most, " (use Unfused)");
    STENCIL_EXPECT(m_kernel.shape.tile_count() <= std::int64_t{INT_MAX},
                   "stencil::ode::Fused: ", m_kernel.shape.tile_count(),
                   " tiles of ", shape_text(), " cells; ask for larger tiles");
  }

  /// Cells the plan's tiles compute per cell they update: each stage's
  /// region over the tile, averaged over the stages (1: no rims).
  double recomputation() const {
    TiledFusedShape const& t = m_kernel.shape;
    double const tile = static_cast<double>(t.tile[0]) * t.tile[1] * t.tile[2];
    return tiled_fused_work(t, m_kernel.stages).cells /
           (m_kernel.stages * tile);
  }

  double step(double dt, double absolute, double relative) override {
    double const t = m_state.time();
    // The halos of y_n (and once, of the coefficients), as Unfused's
    // first stage sees them.
    stencil::detail::refresh_state_halo(m_space, m_state, m_first);
    m_first = false;
    Kernel kernel = m_kernel;
    kernel.dt = dt;
    for (int i = 0; i < m_tableau.stages; ++i) {
      kernel.time[i] = t + m_tableau.c[i] * dt;
    }
    kernel.estimate = m_tableau.embedded() && absolute + relative > 0;
    kernel.absolute = absolute;
    kernel.relative = relative;
    for (int f = 0; f < Fields::count; ++f) {
      kernel.current[f] = m_state.current(f).data();
    }
    for (int w = 0; w < W; ++w) {
      kernel.next[w] = m_state.next(m_kernel.written[w]).data();
    }
    Policy const policy =
        Policy(m_space, static_cast<int>(kernel.shape.tile_count()), 1)
            .set_scratch_size(1, Kokkos::PerTeam(kernel.scratch_bytes()));
    kernel.dirichlet = dirichlet_values(t, dt);
    double err = 0.0;
    if (kernel.estimate) {
      double sum_squares = 0.0;
      Kokkos::parallel_reduce("stencil::ode::fused_tiles", policy, kernel,
                              sum_squares);
      err = std::sqrt(sum_squares /
                      (static_cast<double>(m_state.interior_cells()) * W));
    } else {
      Kokkos::parallel_for("stencil::ode::fused_tiles", policy, kernel);
    }
    for (int w = 0; w < W; ++w) m_state.rotate(m_kernel.written[w]);
    m_state.set_time(t + dt);
    m_step_start = t;
    m_evaluations += m_tableau.stages;
    return err;
  }

  /// y_n is still in the buffers the step read: rotate back to them.
  void reject() override {
    for (int w = 0; w < W; ++w) m_state.rotate(m_kernel.written[w]);
    m_state.set_time(m_step_start);
  }

  long long evaluations() const override { return m_evaluations; }

  std::string description() const override {
    return stencil::detail::concat(
        "Fused (", ExecSpace::name(), " tiles of ", shape_text(), " cells, ",
        m_kernel.shape.tile_count(), " tiles, ", m_kernel.scratch_bytes(),
        " bytes of scratch a thread)");
  }

 private:
  /// The dirichlet sides' values at the step's stages after the first
  /// (TiledFusedDirichlet), from their functions on the host, as
  /// refresh_boundaries takes them before each of Unfused's stages.
  TiledFusedDirichlet<T> dirichlet_values(double t, double dt) {
    TiledFusedShape const& shape = m_kernel.shape;
    auto const& sides = m_state.boundaries();
    int const s = m_tableau.stages;
    TiledFusedDirichlet<T> table;
    // Each axis's range of cells in a side's block: periodic ones wrapped.
    int lo[3], length[3];
    for (int b = 0; b < 3; ++b) {
      lo[b] = shape.periodic[b] ? 0 : -shape.reach[b];
      length[b] = shape.extent[b] - 2 * lo[b];
    }
    for (int a = 3 - Rank; a < 3; ++a) {
      for (int side = 0; side < 2; ++side) {
        if (shape.side[a][side] != Boundary::dirichlet) continue;
        std::int64_t cells = shape.reach[a];
        for (int b = 0; b < 3; ++b) {
          if (b != a) cells *= length[b];
        }
        table.start[a][side] = table.per_stage;
        table.per_stage += cells;
      }
    }
    if (table.per_stage == 0 || s == 1) return table;
    std::size_t const size =
        static_cast<std::size_t>(table.per_stage) * (s - 1);
    if (m_dirichlet.extent(0) < size) {
      m_dirichlet = Kokkos::View<T*, MemorySpace>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing,
                             "stencil::ode::fused_dirichlet"),
          size);
    }
    // The kernels of the last step may still read the values.
    m_space.fence("stencil::ode: the dirichlet values of the last step");
    T* const values = m_dirichlet.data();
    std::array<int, Rank> cell;
    for (int i = 1; i < s; ++i) {
      double const time = t + m_tableau.c[i] * dt;
      for (int a = 3 - Rank; a < 3; ++a) {
        for (int side = 0; side < 2; ++side) {
          if (shape.side[a][side] != Boundary::dirichlet) continue;
          auto const& f = sides.function_at(a - (3 - Rank), side);
          int from[3], to[3];
          for (int b = 0; b < 3; ++b) {
            from[b] = lo[b];
            to[b] = lo[b] + length[b];
          }
          from[a] = side == 0 ? -shape.reach[a] : shape.extent[a];
          to[a] = from[a] + shape.reach[a];
          std::int64_t at = (i - 1) * table.per_stage + table.start[a][side];
          for (int z = from[0]; z < to[0]; ++z) {
            for (int y = from[1]; y < to[1]; ++y) {
              for (int x = from[2]; x < to[2]; ++x) {
                int const c[3] = {z, y, x};
                for (int d = 0; d < Rank; ++d) cell[d] = c[3 - Rank + d];
                values[at++] = static_cast<T>(f(cell, time));
              }
            }
          }
        }
      }
    }
    table.values = values;
    return table;
  }

  std::string shape_text() const {
    std::string text;  // x first, as the native plan writes its tiles
    for (int a = 2; a >= 3 - Rank; --a) {
      text +=
          stencil::detail::concat(a == 2 ? "" : "x", m_kernel.shape.tile[a]);
    }
    return text;
  }

  ExecSpace m_space;
  State<T, Rank, MemorySpace>& m_state;
  Tableau m_tableau;
  Kernel m_kernel;
  Kokkos::View<T*, MemorySpace> m_dirichlet;
  bool m_first = true;
  double m_step_start = 0.0;
  long long m_evaluations = 0;
};

}  // namespace stencil::ode::detail
