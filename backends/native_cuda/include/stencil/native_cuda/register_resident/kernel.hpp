// SPDX-License-Identifier: Apache-2.0
// The register-resident kernel (paper 004's RDDhalo): a rank-1 domain held
// in registers for a whole call. Each thread keeps `cells_per_thread`
// adjacent cells of every field and reads its neighbours' cells by warp
// shuffles; adjacent warps of a block overlap by a warp halo of
// radius x block_halo cells, refreshed through shared memory every
// `block_halo` steps; adjacent blocks overlap by radius x grid_halo cells,
// exchanged through L2 every `grid_halo` steps behind flags that only the
// two neighbours wait on (common/neighbour_flags.hpp). Between refreshes
// the overlaps are recomputed, one radius of them going stale per step.
#pragma once

#include <stencil/native_cuda/common/neighbour_flags.hpp>

#include <stencil/detail/fields/accessor.hpp>
#include <stencil/detail/unroll.hpp>
#include <stencil/fields/declare.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace stencil::native_cuda::register_resident {

/// The exchanged values of the written fields before field `F`: every
/// level each keeps.
template <class Fields, int F>
__host__ __device__ constexpr int exchanged_before() {
  if constexpr (F == 0) {
    return 0;
  } else {
    return exchanged_before<Fields, F - 1>() +
           (Fields::written[F - 1] ? Fields::levels[F - 1] : 0);
  }
}

/// The cells per thread of the kernels compiled for values `T` and a
/// multi-field functor `Op`. Every register array of G cells (two per
/// written field, the current level and the one the step writes; one per
/// coefficient) must fit beside the step's temporaries, so G shrinks as the
/// fields and the value size grow. `narrow` keeps 64 registers of float
/// values (128 of double) a thread; `wide`, 0 where none is compiled,
/// twice the cells of a float functor of at most two arrays: a block then
/// holds twice the domain and overlaps its warps and its neighbours by the
/// same cells, so it recomputes a smaller part of what it computes.
template <class T, class Op>
struct ShapeChoices {
  using Fields = typename Op::fields;
  static constexpr int arrays =
      2 * Fields::written_count + (Fields::count - Fields::written_count);
  static constexpr int words = sizeof(T) > 4 ? 2 : 1;
  static constexpr int value_words = words == 1 ? 64 : 128;
  static constexpr int fitting = value_words / (arrays * words) / 8 * 8;
  static constexpr int narrow = fitting > 32 ? 32 : (fitting < 8 ? 8 : fitting);
  static constexpr int wide = words == 1 && arrays <= 2 ? 64 : 0;
};

/// The compiled shape of the kernel of G cells per thread
/// (ShapeChoices) for values `T` and a multi-field functor `Op`.
template <class T, class Op, int G>
struct Shape {
  using Fields = typename Op::fields;
  static constexpr int radius = Fields::radius;
  static constexpr int written = Fields::written_count;
  static constexpr int coefficients = Fields::count - written;
  static constexpr int words = sizeof(T) > 4 ? 2 : 1;
  static constexpr int cells_per_thread = G;
  /// Threads of a block, one block per multiprocessor: 384 in float (up
  /// to 168 registers a thread), 256 in double (up to 255). The wide float
  /// shape spills a few registers at 384 threads, and yet ran ahead of 256
  /// threads at radius 1 and 4 (docs/decisions/register-resident.md).
  static constexpr int threads = words == 1 ? 384 : 256;
  static constexpr int warps = threads / 32;
  /// One bit per register cell of a thread (the grid exchange's masks).
  using cell_mask = std::conditional_t<(G > 32), std::uint64_t, unsigned>;
  /// The warp halo, in cells: the fewest whole lanes, at least 64 cells,
  /// whose overlap lasts at least min(32, 64 / radius) steps, an even
  /// number (the step loop runs pairs of steps), so that a block barrier
  /// comes at most about every 64 / radius steps and warps recompute as
  /// few cells as whole lanes allow. `block_halo` steps may use fewer
  /// cells than the lanes hold (at radius 3 and 64 cells per thread, 126
  /// of 128): a lane must move whole, while the steps need not consume a
  /// whole number of lanes.
  static constexpr int reach = radius > 0 ? radius : 1;
  static constexpr int steps_in(int cells) { return cells / reach / 2 * 2; }
  /// min(32, 64 / radius), and at least a pair of steps.
  static constexpr int least_block_halo =
      64 / reach < 2 ? 2 : (64 / reach < 32 ? 64 / reach : 32);
  static constexpr int fewest_halo_lanes() {
    int lanes = (64 + cells_per_thread - 1) / cells_per_thread;
    while (steps_in(lanes * cells_per_thread) < least_block_halo) ++lanes;
    return lanes;
  }
  static constexpr int warp_halo_lanes = fewest_halo_lanes();
  static constexpr int warp_halo = warp_halo_lanes * cells_per_thread;
  static constexpr int block_halo = steps_in(warp_halo);
  /// The cells adjacent blocks overlap by for an exchange every
  /// `grid_halo` steps (a multiple of block_halo): the radius x grid_halo
  /// cells the steps consume, rounded up to whole lanes, so that the
  /// lanes of every block start a whole number of lanes from its own
  /// cells, and the domain's ends lie on lane edges (the fixed halo cells
  /// are kept by register position, and a periodic halo is wrapped lane
  /// by lane).
  static constexpr int grid_halo_cells(int grid_halo) {
    return (radius * grid_halo + cells_per_thread - 1) / cells_per_thread *
           cells_per_thread;
  }
  static constexpr int warp_owned = 32 * cells_per_thread - 2 * warp_halo;
  /// Cells a block spans: every warp's own cells and the two outer halos.
  static constexpr int span = warps * warp_owned + 2 * warp_halo;
  /// Values the warp halo exchange moves per cell: every kept level of
  /// every written field (coefficients never change).
  static constexpr int exchanged = exchanged_before<Fields, Fields::count>();
  static_assert(Fields::most_levels <= 2,
                "register-resident fields keep 1 or 2 time levels");
  static constexpr std::size_t exchange_bytes = std::size_t{2} * 2 * warps *
                                                warp_halo_lanes * exchanged *
                                                cells_per_thread * sizeof(T);
  /// A warp's cells of one array, staged in rows of cells_per_thread + 1
  /// values (odd, so that neither a lane's row nor a run of 32 cells
  /// meets a bank twice), for the coalesced loads and stores at the start
  /// and end of a launch. The same shared memory as the exchange, which
  /// runs only between them.
  static constexpr std::size_t staging_bytes =
      std::size_t{1} * warps * 32 * (cells_per_thread + 1) * sizeof(T);
  static constexpr std::size_t shared_bytes =
      exchange_bytes > staging_bytes ? exchange_bytes : staging_bytes;
  /// Pairs of steps per iteration of the step loop: the most, up to four,
  /// whose updates stay within 1792 FMAs (G x (2r + 1) a step). With fewer
  /// at radius 1, the register allocator placed the arrays differently at
  /// the end of an iteration than at its start and copied them back every
  /// iteration (21 moves per 4 steps on the float radius-1 wave); longer
  /// loops ran slower (four pairs at radius 4 and 32 cells per thread, at
  /// radius 2 and 3 and 64 cells), as we read it because they outgrow the
  /// instruction cache (docs/decisions/register-resident.md).
  static constexpr int pair_fmas = 2 * cells_per_thread * (2 * radius + 1);
  static constexpr int unrolled_pairs = 4 * pair_fmas <= 1792   ? 4
                                        : 2 * pair_fmas <= 1792 ? 2
                                                                : 1;
  static_assert(warp_owned > 0, "the warp halo leaves a warp no cells");
  static_assert(warps >= 2, "a thread of each of two warps waits for a flag");
};

template <class T, class Op>
struct Params {
  using Fields = typename Op::fields;
  /// Level -k of field f (padded arrays), read at the start.
  T const* in[Fields::count][Fields::most_levels] = {};
  /// Where level -k of written field f goes at the end.
  T* out[Fields::count][Fields::most_levels] = {};
  Op op;
  int n = 0;     ///< cells of the domain
  int halo = 0;  ///< of the padded arrays
  int steps = 0;
  int grid_halo = 0;  ///< steps between exchanges with the neighbours
  /// Cells adjacent blocks overlap by, Shape::grid_halo_cells(grid_halo),
  /// from the host: the kernel rounding it up to whole lanes itself cost
  /// it 15 registers and spills.
  int grid_halo_cells = 0;
  bool periodic = false;
  /// Block b owns cells [starts[b], starts[b + 1]). A table rather than
  /// the partition's formula: computing it here cost the kernel, which
  /// uses every register it may, a spill.
  int const* starts = nullptr;
  /// Exchanged edge cells by domain index: [parity][exchanged value][n].
  T* edges = nullptr;
  /// Every flag holds at most `first_round`, the last round an earlier
  /// launch published: this launch's rounds count on from it, so that the
  /// flags need no resetting between launches.
  NeighbourFlags flags;
  unsigned first_round = 0;
  double t0 = 0.0, dt = 1.0;
};

/// Level 0 of a field around register cell I: the thread's own cells and
/// the R cells of each neighbouring lane, shuffled in.
template <class T, int R, int G, int I>
struct RegisterWindow {
  using value_type = T;
  T const (&cells)[G];
  T const (&left)[R];
  T const (&right)[R];
  __device__ __forceinline__ T operator()(int offset) const {
    int const k = I + offset;
    return k < 0 ? left[R + k] : (k >= G ? right[k - G] : cells[k]);
  }
};

/// An earlier level, read at the cell only.
template <class T>
struct RegisterCentre {
  using value_type = T;
  T value;
  __device__ __forceinline__ T operator()(int) const { return value; }
};

/// Every register a thread keeps: `level[w][a]` the two arrays of written
/// field slot w (array `parity` is level 0), `coefficient[c]` the
/// read-only fields, and the shuffled neighbour cells of every field's
/// level 0.
template <class T, class Op, int CellsPerThread>
struct Registers {
  using S = Shape<T, Op, CellsPerThread>;
  static constexpr int G = S::cells_per_thread;
  static constexpr int R = S::radius;
  T level[S::written][2][G];
  T coefficient[S::coefficients > 0 ? S::coefficients : 1][G];
  T left[Op::fields::count][R];
  T right[Op::fields::count][R];
};

/// The `in` of register cell I at step parity P.
template <class T, class Op, int G, int P, int I>
struct RegisterCell {
  using fields_type = typename Op::fields;
  using value_type = T;
  using Regs = Registers<T, Op, G>;
  Regs const& r;
  int x;
  double t;

  template <int F, int Level>
  __device__ __forceinline__ auto level() const {
    constexpr int slot = stencil::detail::written_slot<fields_type, F>();
    if constexpr (Level == 0) {
      if constexpr (fields_type::written[F]) {
        return RegisterWindow<T, Regs::R, Regs::G, I>{r.level[slot][P],
                                                      r.left[F], r.right[F]};
      } else {
        return RegisterWindow<T, Regs::R, Regs::G, I>{r.coefficient[F - slot],
                                                      r.left[F], r.right[F]};
      }
    } else {
      static_assert(Level == -1, "register-resident fields keep 2 levels");
      return RegisterCentre<T>{r.level[slot][1 - P][I]};
    }
  }
  __device__ __forceinline__ Kokkos::Array<int, 1> position() const {
    return {x};
  }
  __device__ __forceinline__ double time() const { return t; }
};

/// The new values of one cell, one per written field.
template <class T, int W>
struct NewValues {
  T value[W];
};

/// The `RF` cells next to a lane's own, from the lanes beside it: the last
/// of the lane below into left[R - RF, R), the first of the lane above
/// into right[0, RF).
template <int RF, class T, int R, int G>
__device__ __forceinline__ void shuffle_neighbours(T const (&cells)[G],
                                                   T (&left)[R],
                                                   T (&right)[R]) {
#pragma unroll
  for (int j = R - RF; j < R; ++j) {
    left[j] = __shfl_up_sync(0xffffffffu, cells[G - R + j], 1);
  }
#pragma unroll
  for (int j = 0; j < RF; ++j) {
    right[j] = __shfl_down_sync(0xffffffffu, cells[j], 1);
  }
}

template <class T, class Op, int G>
__global__ void __launch_bounds__(Shape<T, Op, G>::threads, 1)
    resident_steps(Params<T, Op> p) {
  using S = Shape<T, Op, G>;
  using Fields = typename Op::fields;
  using Regs = Registers<T, Op, G>;
  constexpr int R = S::radius, W = S::written;
  constexpr int HW = S::block_halo, hwL = S::warp_halo_lanes;
  constexpr int E = S::exchanged, WARPS = S::warps;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  // [parity][side][warp][lane][exchanged value][cell]
  T* const bound = reinterpret_cast<T*>(shared_raw);
  auto bound_at = [&](int par, int side, int w, int l, int e) {
    return bound + ((((par * 2 + side) * WARPS + w) * hwL + l) * E + e) * G;
  };

  int const b = blockIdx.x, B = gridDim.x, t = threadIdx.x;
  int const lane = t & 31, w = t >> 5;
  int const hb = p.grid_halo_cells;
  int const start = p.starts[b], end = p.starts[b + 1];
  int const base = start - hb + w * S::warp_owned + lane * G;
  int const n = p.n;
  auto wrap = [&](int g) { return ((g % n) + n) % n; };
  Regs r;
  // Loads and stores go through the warp's staging rows: lane l moves
  // cells k * 32 + l of the warp's 32 x G, so that each access of a warp
  // covers 32 adjacent cells. Each lane moving its own run of G cells made
  // every access touch 32 lines, and cost a short call far more than its
  // DRAM traffic.
  int const warp_base = base - lane * G;
  T* const staging = reinterpret_cast<T*>(shared_raw) + w * 32 * (G + 1);
  auto staged = [](int c) { return c / G * (G + 1) + c % G; };
  // Fixed boundaries: every cell the padded arrays hold, 0 beyond.
  auto load = [&](T const* from, T(&cells)[G]) {
    for (int k = 0; k < G; ++k) {
      int const c = k * 32 + lane, g = warp_base + c;
      T const v = p.periodic                       ? from[p.halo + wrap(g)]
                  : g >= -p.halo && g < n + p.halo ? from[p.halo + g]
                                                   : T(0);
      staging[staged(c)] = v;
    }
    __syncwarp();
#pragma unroll
    for (int i = 0; i < G; ++i) cells[i] = staging[lane * (G + 1) + i];
    __syncwarp();
  };
  stencil::detail::for_each_constant<Fields::count>([&](auto field) {
    constexpr int f = decltype(field)::value;
    constexpr int slot = stencil::detail::written_slot<Fields, f>();
    if constexpr (Fields::written[f]) {
      load(p.in[f][0], r.level[slot][0]);
      // A field of one level writes its second array over a copy of the
      // first, whose halo cells the steps keep.
      if constexpr (Fields::levels[f] > 1) {
        load(p.in[f][1], r.level[slot][1]);
      } else {
#pragma unroll
        for (int i = 0; i < G; ++i) r.level[slot][1][i] = r.level[slot][0][i];
      }
    } else {
      load(p.in[f][0], r.coefficient[f - slot]);
    }
  });
  // The exchanges reuse the staging rows.
  __syncthreads();
  // The fixed halo cells next to the domain, [-R, 0) and [n, n + R): the
  // last R registers of the thread whose cells end at 0 and the first R of
  // the thread whose cells start at n (block ownership keeps n on a lane's
  // start). Each array keeps the halo of the buffer it stands for.
  bool const keep_low = !p.periodic && base == -G;
  bool const keep_high = !p.periodic && base == n;

  // The neighbouring lanes' cells of every written field's level 0 (array
  // P), and with `coefficients` of the read-only fields, which never
  // change.
  auto shuffle = [&](auto parity, bool coefficients) {
    constexpr int P = decltype(parity)::value;
    stencil::detail::for_each_constant<Fields::count>([&](auto field) {
      constexpr int f = decltype(field)::value;
      constexpr int slot = stencil::detail::written_slot<Fields, f>();
      if constexpr (Fields::radii[f] > 0 && Fields::written[f]) {
        shuffle_neighbours<Fields::radii[f]>(r.level[slot][P], r.left[f],
                                             r.right[f]);
      } else if constexpr (Fields::radii[f] > 0) {
        if (coefficients) {
          shuffle_neighbours<Fields::radii[f]>(r.coefficient[f - slot],
                                               r.left[f], r.right[f]);
        }
      }
    });
  };

  // One step from array P to array 1 - P. The cells next to the lane's
  // edges come first, and the next step's shuffles of them right after,
  // so that the shuffles' latency passes while the interior is computed
  // (interior cells read neither the shuffled cells nor the edge cells'
  // old level -1).
  auto step = [&](auto parity, double time) {
    constexpr int P = decltype(parity)::value;
    // The new values of register cell i; the fixed halo cells keep theirs.
    auto cell = [&](auto ic) {
      constexpr int i = decltype(ic)::value;
      NewValues<T, W> out;
      stencil::detail::functor_values<T, Fields>(
          p.op(RegisterCell<T, Op, G, P, i>{r, base + i, time}), out.value);
      constexpr bool low_halo = i >= G - R, high_halo = i < R;
      if constexpr (low_halo || high_halo) {
        bool const keep = low_halo ? keep_low : keep_high;
#pragma unroll
        for (int s = 0; s < W; ++s) {
          out.value[s] = keep ? r.level[s][1 - P][i] : out.value[s];
        }
      }
      return out;
    };
    auto store = [&](auto ic, NewValues<T, W> const& v) {
      constexpr int i = decltype(ic)::value;
#pragma unroll
      for (int s = 0; s < W; ++s) r.level[s][1 - P][i] = v.value[s];
    };
    NewValues<T, W> first[R], last[R];
    stencil::detail::for_each_constant<R>([&](auto j) {
      constexpr int i = decltype(j)::value;
      first[i] = cell(j);
      last[i] = cell(std::integral_constant<int, G - R + i>{});
    });
    stencil::detail::for_each_constant<R>([&](auto j) {
      constexpr int i = decltype(j)::value;
      store(j, first[i]);
      store(std::integral_constant<int, G - R + i>{}, last[i]);
    });
    shuffle(std::integral_constant<int, 1 - P>{}, false);
    stencil::detail::for_each_constant<G - 2 * R>([&](auto j) {
      constexpr int i = R + decltype(j)::value;
      store(std::integral_constant<int, i>{},
            cell(std::integral_constant<int, i>{}));
    });
  };

  // f(array, e) for every exchanged value e: each kept level -k of each
  // written field, array k at parity 0, where every exchange happens.
  auto for_each_exchanged = [&](auto&& f) {
    stencil::detail::for_each_constant<Fields::count>([&](auto field) {
      constexpr int fi = decltype(field)::value;
      if constexpr (Fields::written[fi]) {
        constexpr int s = stencil::detail::written_slot<Fields, fi>();
        constexpr int e = exchanged_before<Fields, fi>();
        f(r.level[s][0], e);
        if constexpr (Fields::levels[fi] > 1) f(r.level[s][1], e + 1);
      }
    });
  };

  int warp_round = 0;
  auto warp_exchange = [&] {
    int const par = (warp_round++) & 1;
    bool const send_low = w > 0 && lane >= hwL && lane < 2 * hwL;
    bool const send_high =
        w + 1 < WARPS && lane >= 32 - 2 * hwL && lane < 32 - hwL;
    for_each_exchanged([&](T(&cells)[G], int e) {
      if (send_low) {
        T* const d = bound_at(par, 0, w, lane - hwL, e);
#pragma unroll
        for (int i = 0; i < G; ++i) d[i] = cells[i];
      }
      if (send_high) {
        T* const d = bound_at(par, 1, w, lane - (32 - 2 * hwL), e);
#pragma unroll
        for (int i = 0; i < G; ++i) d[i] = cells[i];
      }
    });
    __syncthreads();
    bool const take_low = w > 0 && lane < hwL;
    bool const take_high = w + 1 < WARPS && lane >= 32 - hwL;
    for_each_exchanged([&](T(&cells)[G], int e) {
      if (take_low) {
        T const* const d = bound_at(par, 1, w - 1, lane, e);
#pragma unroll
        for (int i = 0; i < G; ++i) cells[i] = d[i];
      }
      if (take_high) {
        T const* const d = bound_at(par, 0, w + 1, lane - (32 - hwL), e);
#pragma unroll
        for (int i = 0; i < G; ++i) cells[i] = d[i];
      }
    });
  };

  // The neighbours' edges: a block sends the hb cells at each end of what
  // it owns and takes the hb cells beyond each end, by domain index, so
  // that blocks may own different lengths. Edge buffers alternate by
  // round: a block writes round k + 2's edges only after its neighbours
  // published round k + 1, so after they read round k's.
  bool const has_low = p.periodic || b > 0;
  bool const has_high = p.periodic || b + 1 < B;
  int const low_block = b == 0 ? B - 1 : b - 1;
  int const high_block = b + 1 == B ? 0 : b + 1;
  // Which of the thread's cells each part of the exchange moves, one bit
  // per cell: bit masks (S::cell_mask), not a predicate per cell, so that
  // they cost two to four registers while every register array is live.
  auto cells_in = [&](int lo, int hi) {  // domain indices [lo, hi)
    int const a = min(max(lo - base, 0), G), z = min(max(hi - base, 0), G);
    using M = typename S::cell_mask;
    constexpr int bits = 8 * sizeof(M);
    auto const below = [](int k) {
      return k >= bits ? ~M{0} : (M{1} << k) - 1;
    };
    return below(z) & ~below(a);
  };
  auto const own = [&] {
    int const a = w == 0 ? 0 : S::warp_halo - lane * G;
    int const z = w + 1 == WARPS ? G : S::warp_owned + S::warp_halo - lane * G;
    return cells_in(base + a, base + z) & cells_in(start, end);
  }();
  auto const sent =
      own & (cells_in(start, start + hb) | cells_in(end - hb, end));
  // The halo beyond each end is taken in whole lanes: the left one starts
  // a lane, and a lane that holds the right end's last own cells takes
  // them back as its own block sent them. A whole lane, unlike a mask of
  // cells, needs no registers for the values it replaces. A periodic halo
  // beyond the domain's ends lies wholly on one side of it.
  bool const take_low = has_low && base >= start - hb && base < start;
  bool const take_high = has_high && base + G > end && base < end + hb;
  int const shift = !take_low ? (end == n ? -n : 0) : (start == 0 ? n : 0);
  unsigned grid_round = p.first_round;
  auto grid_exchange = [&] {
    ++grid_round;
    T* const edges =
        p.edges + static_cast<std::int64_t>(grid_round & 1) * E * n;
    for_each_exchanged([&](T(&cells)[G], int e) {
      T* const row = edges + static_cast<std::int64_t>(e) * n;
#pragma unroll
      for (int i = 0; i < G; ++i) {
        if ((sent >> i) & 1) __stcg(row + (base + i), cells[i]);
      }
    });
    __syncthreads();
    // The flag's release store makes the block's edges, ordered before it
    // by the barrier, visible with it; the acquire loads of the
    // neighbours' flags, ordered before the block's loads by the next
    // barrier, make theirs visible. Two threads wait, one per neighbour,
    // so that the two round trips through L2 overlap.
    if (t == 0) p.flags.publish(b, grid_round);
    if (t == 0 && has_low) p.flags.wait_for(low_block, grid_round);
    if (t == 32 && has_high) p.flags.wait_for(high_block, grid_round);
    __syncthreads();
    if (take_low || take_high) {
      for_each_exchanged([&](T(&cells)[G], int e) {
        T const* const row =
            edges + static_cast<std::int64_t>(e) * n + (base + shift);
#pragma unroll
        for (int i = 0; i < G; ++i) cells[i] = __ldcg(row + i);
      });
    }
  };

  shuffle(std::integral_constant<int, 0>{}, true);
  int s = 0, next_grid = p.grid_halo;
  auto time = [&](int k) { return p.t0 + (s + k) * p.dt; };
  while (s + HW <= p.steps) {
#pragma unroll S::unrolled_pairs
    for (int k = 0; k < HW; k += 2) {
      step(std::integral_constant<int, 0>{}, time(k));
      step(std::integral_constant<int, 1>{}, time(k + 1));
    }
    s += HW;
    if (s < p.steps) {
      if (s == next_grid) {
        grid_exchange();
        next_grid += p.grid_halo;
      }
      warp_exchange();
      shuffle(std::integral_constant<int, 0>{}, false);
    }
  }
  for (; s + 1 < p.steps; s += 2) {
    step(std::integral_constant<int, 0>{}, time(0));
    step(std::integral_constant<int, 1>{}, time(1));
  }
  bool const odd = s < p.steps;
  if (odd) step(std::integral_constant<int, 0>{}, time(0));

  // Level 0 of each written field lies in array P, level -1 in 1 - P.
  // The cells the warp owns, [own_low, own_high): the thread masks' union.
  int const own_low = max(start, w == 0 ? warp_base : warp_base + S::warp_halo);
  int const own_high =
      min(end, w + 1 == WARPS ? warp_base + 32 * G
                              : warp_base + S::warp_owned + S::warp_halo);
  __syncthreads();  // every warp is past its last exchange
  auto write_back = [&](auto parity) {
    constexpr int P = decltype(parity)::value;
    stencil::detail::for_each_constant<Fields::count>([&](auto field) {
      constexpr int f = decltype(field)::value;
      if constexpr (Fields::written[f]) {
        constexpr int slot = stencil::detail::written_slot<Fields, f>();
        auto store = [&](T const(&cells)[G], T* to) {
#pragma unroll
          for (int i = 0; i < G; ++i) staging[lane * (G + 1) + i] = cells[i];
          __syncwarp();
          for (int k = 0; k < G; ++k) {
            int const c = k * 32 + lane, g = warp_base + c;
            if (g >= own_low && g < own_high) {
              to[p.halo + g] = staging[staged(c)];
            }
          }
          __syncwarp();
        };
        store(r.level[slot][P], p.out[f][0]);
        if constexpr (Fields::levels[f] > 1) {
          store(r.level[slot][1 - P], p.out[f][1]);
        }
      }
    });
  };
  if (odd) {
    write_back(std::integral_constant<int, 1>{});
  } else {
    write_back(std::integral_constant<int, 0>{});
  }
}

}  // namespace stencil::native_cuda::register_resident
