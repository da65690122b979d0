// SPDX-License-Identifier: Apache-2.0
// Host side of the fused Runge-Kutta step (ode/fused_kernel.hpp): the
// cluster and tile the plan picks among the shapes of fused_shape.hpp, and
// the run that launches them. stencil::ode::integrate reaches it through
// stencil::ode::detail::NativeOde<Kokkos::Cuda>.
#pragma once

#include <stencil/native_cuda/common/cuda_check.hpp>
#include <stencil/native_cuda/common/device.hpp>
#include <stencil/native_cuda/ode/fused_kernel.hpp>
#include <stencil/native_cuda/ode/fused_shape.hpp>

#include <stencil/boundary.hpp>
#include <stencil/detail/fields/time_loop.hpp>
#include <stencil/detail/portable/layout.hpp>
#include <stencil/error.hpp>
#include <stencil/fields/state.hpp>
#include <stencil/ode/plans.hpp>
#include <stencil/ode/tableau.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace stencil::native_cuda::ode {

/// The fused plan's run on a 2D state (see StepRun).
template <class T, class MemorySpace, class Rhs>
class FusedRun final : public stencil::ode::detail::StepRun {
 public:
  using Fields = typename Rhs::fields;
  static constexpr int W = Fields::written_count;

  FusedRun(Kokkos::Cuda const& space, State<T, 2, MemorySpace>& state,
           Rhs const& rhs, stencil::ode::Tableau tableau,
           stencil::ode::Fused request)
      : m_space(space),
        m_state(state),
        m_rhs(rhs),
        m_tableau(std::move(tableau)),
        m_error("stencil::ode::fused_error") {
    std::string const refusal = fused_refusal<Rhs>(state, m_tableau.stages);
    STENCIL_EXPECT_SUPPORTED(refusal.empty(), "stencil::ode: ", refusal);
    using stencil::ode::TileBarrier;
    bool const clusters = current_device_limits().compute_capability >= 90;
    STENCIL_EXPECT_SUPPORTED(
        clusters || request.barrier != TileBarrier::cluster,
        "stencil::ode::Fused: barrier = TileBarrier::cluster needs thread-"
        "block clusters (compute capability 9.0 or newer); ",
        capability_of(current_device_limits()),
        " (Fused{.barrier = TileBarrier::global_memory} or automatic runs "
        "its tiles' blocks with barriers in global memory)");
    int const asked = request.cluster_x * request.cluster_y;
    bool const global = request.barrier == TileBarrier::global_memory ||
                        (request.barrier == TileBarrier::automatic &&
                         (!clusters || asked > largest_cluster));
    int const largest = global ? largest_global_tile : largest_cluster;
    STENCIL_EXPECT(
        request.cluster_x >= 0 && request.cluster_y >= 0 && asked <= largest,
        "stencil::ode::Fused: a tile of ", request.cluster_x, "x",
        request.cluster_y, " blocks; give a positive count along each axis, ",
        largest_cluster, " blocks in all at most in a cluster (8 run on "
        "every GPU), ",
        largest_global_tile,
        " where they meet in global memory, or 0 for the plan's choice");
    STENCIL_EXPECT(
        request.tile_x == 0 && request.tile_y == 0 && request.tile_z == 0,
        "stencil::ode::Fused: tile sizes are the host plan's; on the native "
        "CUDA backend a tile follows its cluster (cluster_x, cluster_y)");
    int const nx = state.extent(1), ny = state.extent(0);
    (void)with_stages(m_tableau.stages, [&](auto stages) {
      constexpr int S = decltype(stages)::value;
      if (request.resident && !global) {
        m_resident = pick_resident<S>(request, nx, ny);
      }
      if (!m_resident) pick<S>(request, global, nx, ny);
      // Once per run, not per step: the chosen tile's shared memory and
      // cluster size (the plan's queries set them for other shapes too).
      auto const function = kernel<S>();
      allow_dynamic_shared(function, m_shape.shared_bytes);
      if (!global) allow_large_clusters(function);
    });
    if (m_shape.global_barrier) {
      std::size_t const block_values =
          2 * static_cast<std::size_t>(W) * m_shape.slot_cells;
      std::size_t const values =
          static_cast<std::size_t>(m_shape.exchange_slots) * m_shape.cluster_x *
          m_shape.cluster_y * block_values;
      // The kernel indexes the buffers in 32 bits.
      STENCIL_EXPECT_SUPPORTED(values < (std::size_t{1} << 31),
                               "stencil::ode::Fused: the exchange buffers of ",
                               m_shape.exchange_slots, " tiles at once take ",
                               values,
                               " values, past 2^31 (use clusters or Unfused)");
      m_exchange = Kokkos::View<T*, Kokkos::CudaSpace>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing,
                             "stencil::ode::fused_exchange"),
          values);
      m_counters = Kokkos::View<unsigned*, Kokkos::CudaSpace>(
          "stencil::ode::fused_tile_counters",
          1 + 2 * static_cast<std::size_t>(m_shape.exchange_slots));
    }
    int written = 0;
    for (int f = 0; f < Fields::count; ++f) {
      if (Fields::written[f]) m_written[written++] = f;
    }
  }

  double step(double dt, double absolute, double relative) override {
    double const t = m_state.time();
    bool const estimate = m_tableau.embedded() && absolute + relative > 0;
    if (estimate) {
      STENCIL_CUDA_CHECK(cudaMemsetAsync(m_error.data(), 0, sizeof(double),
                                         m_space.cuda_stream()));
    }
    run_steps(t, 0, 1, dt, estimate, absolute, relative);
    m_state.set_time(t + dt);
    m_step_start = t;
    if (!estimate) return 0.0;
    double sum_squares = 0.0;
    Kokkos::deep_copy(m_space, sum_squares, m_error);
    m_space.fence();
    return std::sqrt(sum_squares /
                     (static_cast<double>(m_state.interior_cells()) * W));
  }

  /// Resident: every step up to `most` in one launch; tiled: one step.
  int fixed_steps(double t0, long long first, int most, double dt) override {
    if (!m_resident) {
      step(dt, 0.0, 0.0);
      return 1;
    }
    run_steps(t0, first, most, dt, false, 0.0, 0.0);
    m_state.set_time(t0 + static_cast<double>(first + most) * dt);
    return most;
  }

  /// y_n is still in the buffer the step read: rotate back to it.
  void reject() override {
    for (int w = 0; w < W; ++w) m_state.rotate(m_written[w]);
    m_state.set_time(m_step_start);
  }

  long long evaluations() const override { return m_evaluations; }

  std::string description() const override {
    if (m_shape.global_barrier) {
      return stencil::detail::concat(
          "Fused (tiles of ", m_shape.cluster_x, "x", m_shape.cluster_y,
          " blocks that meet in global memory, ", m_shape.tile_x(), "x",
          m_shape.tile_y(), " cells, ", m_shape.tiles_x * m_shape.tiles_y,
          " tiles, exchange buffers for ", m_shape.exchange_slots, " at once, ",
          m_shape.shared_bytes, " bytes of shared memory a block)");
    }
    if (m_resident) {
      return stencil::detail::concat(
          "Fused (the domain held by one cluster of ", m_shape.cluster_x, "x",
          m_shape.cluster_y, " blocks, ", m_shape.tile_x(), "x",
          m_shape.tile_y(),
          " cells, in shared memory and registers from step to step: one "
          "launch runs the fixed steps up to the next hook; ",
          m_shape.shared_bytes, " bytes of shared memory a block)");
    }
    return stencil::detail::concat(
        "Fused (clusters of ", m_shape.cluster_x, "x", m_shape.cluster_y,
        " blocks, tiles of ", m_shape.tile_x(), "x", m_shape.tile_y(),
        " cells, ", m_shape.tiles_x * m_shape.tiles_y, " tiles, ",
        m_shape.shared_bytes, " bytes of shared memory a block)");
  }

 private:
  /// `steps` steps from t0 + first dt, in one launch (one step unless
  /// resident), leaving y_n+1 in the state's current buffers.
  void run_steps(double t0, long long first, int steps, double dt,
                 bool estimate, double absolute, double relative) {
    stencil::detail::refresh_state_halo(m_space, m_state, m_first);
    m_first = false;
    (void)with_stages(m_tableau.stages, [&](auto stages) {
      constexpr int S = decltype(stages)::value;
      FusedParams<T, Rhs, S> p =
          params<S>(t0, dt, estimate, absolute, relative);
      p.first = first;
      p.steps = steps;
      if (m_shape.global_barrier) {
        STENCIL_CUDA_CHECK(cudaMemsetAsync(m_counters.data(), 0,
                                           m_counters.size() * sizeof(unsigned),
                                           m_space.cuda_stream()));
        p.exchange = m_exchange.data();
        p.counters.ticket = m_counters.data();
        p.counters.arrived = m_counters.data() + 1;
        p.counters.done = m_counters.data() + 1 + m_shape.exchange_slots;
        p.counters.slots = m_shape.exchange_slots;
      }
      ClusterLaunch const launch(m_shape, /*tiles=*/true,
                                 m_space.cuda_stream());
      STENCIL_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, kernel<S>(), p));
    });
    for (int w = 0; w < W; ++w) m_state.rotate(m_written[w]);
    m_evaluations += static_cast<long long>(m_tableau.stages) * steps;
  }

  /// The resident tile: the cluster asked for, where it holds the domain,
  /// or the one of the fewest blocks that does and CUDA can run (no two
  /// shapes of the fewest hold it: sizes are powers of two, so where
  /// 2x1 and 1x2 both would, 1x1 does).
  template <int S>
  bool pick_resident(stencil::ode::Fused request, int nx, int ny) {
    bool found = false;
    for (int cy : cluster_sides(request.cluster_y, largest_cluster)) {
      for (int cx : cluster_sides(request.cluster_x, largest_cluster)) {
        if (cx * cy > largest_cluster) continue;
        FusedShape const shape =
            resident_shape_for<T, Fields, S>(cx, cy, nx, ny);
        if (shape.tiles_x == 0) continue;
        if (found && cx * cy >= m_shape.cluster_x * m_shape.cluster_y) {
          continue;
        }
        if (resident_clusters<T, Rhs, S, true>(shape) < 1) continue;
        m_shape = shape;
        found = true;
      }
    }
    return found;
  }

  template <int S>
  auto kernel() const {
    if (m_resident) return fused_function<T, Rhs, S, true>();
    if (m_shape.global_barrier) return fused_function<T, Rhs, S, false, true>();
    return fused_function<T, Rhs, S, false>();
  }

  /// The cluster asked for, or the plan's: the one that computes the
  /// fewest cells (rims included), counting each doubling of its width as
  /// 10% more (a block's x neighbours in another block are read a column
  /// at a time) and taking a larger cluster only for 3% less (every block
  /// waits at each stage's barrier); among those CUDA can run. The figures
  /// are fitted in docs/decisions/ode-fused-plan.md. Tiles that meet in
  /// global memory (`global`) are weighed the same, up to
  /// largest_global_tile blocks.
  template <int S>
  void pick(stencil::ode::Fused request, bool global, int nx, int ny) {
    double best = -1.0;
    std::string tried;
    bool const chosen = request.cluster_x > 0 || request.cluster_y > 0;
    int const largest = global ? largest_global_tile : largest_cluster;
    for (int cy : cluster_sides(request.cluster_y, largest)) {
      for (int cx : cluster_sides(request.cluster_x, largest)) {
        if (cx * cy > largest) continue;
        double work = 0.0;
        FusedShape shape = shape_for<T, Fields, S>(cx, cy, nx, ny, work);
        if (work < 0) continue;
        shape.global_barrier = global;
        int const fit = global ? concurrent_tiles<T, Rhs, S>(shape)
                               : resident_clusters<T, Rhs, S>(shape);
        if (fit < 1) {
          tried += stencil::detail::concat(" ", cx, "x", cy);
          continue;
        }
        int const tiles = shape.tiles_x * shape.tiles_y;
        shape.exchange_slots = fit < tiles ? fit : tiles;
        double const cost = work * (1.0 + 0.1 * std::log2(cx));
        if (best < 0 || cost < best * 0.97) {
          best = cost;
          m_shape = shape;
        }
      }
    }
    STENCIL_EXPECT_SUPPORTED(
        best >= 0, "stencil::ode::Fused: no cluster",
        chosen ? " of the size asked" : "",
        " holds a tile that writes at least ", fewest_valid,
        " cells a side past rims of ", S, " stages x radius ",
        fused_radius<Fields>[0], " along x and ", fused_radius<Fields>[1],
        " along y",
        tried.empty() ? "" : "; CUDA cannot run at once every block of", tried,
        " (use Unfused)");
  }

  template <int S>
  FusedParams<T, Rhs, S> params(double t, double dt, bool estimate,
                                double absolute, double relative) {
    FusedParams<T, Rhs, S> p;
    for (int f = 0; f < Fields::count; ++f) {
      p.in[f] = m_state.current(f).data();
    }
    for (int w = 0; w < W; ++w) p.out[w] = m_state.next(m_written[w]).data();
    p.error_squares = estimate ? m_error.data() : nullptr;
    p.rhs = m_rhs;
    p.layout =
        stencil::detail::make_layout<2>(m_state.extents(), m_state.halo());
    p.cluster_x = m_shape.cluster_x;
    p.cluster_y = m_shape.cluster_y;
    p.tiles_x = m_shape.tiles_x;
    auto const& sides = m_state.boundaries();
    for (int a = 0; a < 2; ++a) {
      int const axis = 1 - a;  // x is the state's axis 1
      p.wrap[a] = sides.kind_at(axis, 0) == Boundary::periodic;
      for (int side = 0; side < 2; ++side) {
        p.side[a][side] = sides.kind_at(axis, side);
      }
    }
    p.t = t;
    p.dt = dt;
    p.absolute = absolute;
    p.relative = relative;
    for (int i = 0; i < S; ++i) {
      for (int j = 0; j < i; ++j) p.tableau.a[i][j] = m_tableau.a_at(i, j);
      p.tableau.b[i] = m_tableau.b[i];
      p.tableau.c[i] = m_tableau.c[i];
      p.tableau.e[i] =
          m_tableau.embedded() ? m_tableau.b[i] - m_tableau.bhat[i] : 0.0;
    }
    return p;
  }

  Kokkos::Cuda m_space;
  State<T, 2, MemorySpace>& m_state;
  Rhs m_rhs;
  stencil::ode::Tableau m_tableau;
  FusedShape m_shape;
  bool m_resident = false;
  Kokkos::View<T*, Kokkos::CudaSpace> m_exchange;
  Kokkos::View<unsigned*, Kokkos::CudaSpace> m_counters;
  Kokkos::View<double, Kokkos::CudaSpace> m_error;
  int m_written[W] = {};
  bool m_first = true;
  double m_step_start = 0.0;
  long long m_evaluations = 0;
};

}  // namespace stencil::native_cuda::ode

namespace stencil::ode::detail {

/// The native CUDA backend's integrators.
template <>
struct NativeOde<Kokkos::Cuda> {
  static constexpr bool available = true;

  template <class Rhs, class T, int Rank, class MemorySpace>
  static std::string refusal(State<T, Rank, MemorySpace> const& state,
                             int stages) {
    if constexpr (!Kokkos::SpaceAccessibility<Kokkos::Cuda,
                                              MemorySpace>::accessible) {
      return "Fused runs on a state in GPU memory (use Unfused)";
    } else {
      return stencil::native_cuda::ode::fused_refusal<Rhs>(state, stages);
    }
  }

  template <class T, int Rank, class MemorySpace, class Rhs>
  static std::unique_ptr<StepRun> make(Kokkos::Cuda const& space,
                                       State<T, Rank, MemorySpace>& state,
                                       Rhs const& rhs, Tableau tableau,
                                       Fused request) {
    if constexpr (Rank == 2 &&
                  Kokkos::SpaceAccessibility<Kokkos::Cuda,
                                             MemorySpace>::accessible) {
      return std::make_unique<
          stencil::native_cuda::ode::FusedRun<T, MemorySpace, Rhs>>(
          space, state, rhs, std::move(tableau), request);
    } else {
      stencil::detail::throw_unsupported(
          stencil::detail::concat("stencil::ode: ", refusal<Rhs>(state, 0)));
    }
  }
};

}  // namespace stencil::ode::detail
