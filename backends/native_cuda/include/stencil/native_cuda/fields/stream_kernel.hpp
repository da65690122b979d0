// SPDX-License-Identifier: Apache-2.0
// Rank-2 temporal blocking of multi-field stencils by streaming (after the
// single-field kernel, temporal_blocking/kernels.hpp): a block owns a strip
// of `stream_threads` columns, one per thread (its valid columns plus a
// rim of depth x radius columns on each side, recomputed by the
// neighbouring strips), and streams down a segment of rows. Level t (the
// field values after t steps) computes `stream_rows` rows per iteration,
// `lag` rows behind level t - 1, so every row it reads was finished in an
// earlier iteration: one barrier per iteration however deep the blocking,
// and the levels of an iteration are independent of each other.
//
// Each written field keeps a ring of its most recent rows in shared memory
// per level below the last (which goes to global memory) and per earlier
// level of the launch's input, copied in with the current one: enough rows
// for the next level's taps and for the earlier levels a later step reads
// at its own cell (a leapfrog's n-1). A coefficient keeps one ring of the
// input, deep enough for the deepest level's rows. A thread reads its own
// column's rows of a ring into registers once per level and iteration, and the
// other columns' taps from the ring. Against the overlapped-tile kernel
// (kernels.hpp) only the rim columns are recomputed, not rim rows as well, and
// a level keeps a few rows instead of the whole tile, so the depth no longer
// eats the tile.
//
// Halo cells (fixed boundaries) are never computed: a level's halo is the
// halo of the buffer it will be written to, the one that held the level
// `levels` steps earlier, so a halo cell keeps that level's value, which
// the level reads at the cell anyway; only the launch's input comes from
// global memory. Along a periodic axis every cell is computed and the
// input is read wrapped.
//
// Each depth is a kernel of its own: its levels unroll with no branch
// between them (the compiler interleaves them) and every ring slot is a
// constant offset into a table rotated once an iteration.
#pragma once

#include <stencil/native_cuda/common/device.hpp>
#include <stencil/native_cuda/fields/kernels.hpp>

#include <stencil/detail/fields/accessor.hpp>
#include <stencil/detail/neighbourhood.hpp>
#include <stencil/detail/portable/layout.hpp>

#include <Kokkos_Core.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace stencil::native_cuda::fields {

/// Columns of a strip, one per thread.
inline constexpr int stream_threads = 256;
/// Rows a level computes per iteration: 2 amortise the barrier and the
/// column loads (R + 2r rows read for R cells) while the rings, which
/// grow with it, leave the depth room in shared memory; 3 won and lost
/// by turns (docs/decisions/auto-fields.md).
inline constexpr int stream_rows = 2;
/// Iterations ahead of its use that an input row is loaded: an
/// iteration of the levels (some 170 instructions a warp at depth 4) is
/// shorter than a DRAM latency under load. Two beat one on the leapfrog
/// and tied elsewhere (docs/decisions/auto-fields.md).
inline constexpr int stream_ahead = 2;
/// The deepest depth compiled: each depth is a kernel of its own, whose
/// levels unroll with constant ring slot offsets and no branch between
/// them, so that the compiler interleaves the levels of an iteration (they
/// are independent); 8 is the default rim of 8 cells at radius 1.
inline constexpr int stream_max_depth =
    max_depth_compiled < 8 ? max_depth_compiled : 8;

/// The compile-time shape of the stream for fields `Fields`.
template <class Fields>
struct StreamShape {
  static constexpr int threads = stream_threads;
  static constexpr int rows = stream_rows;
  static constexpr int radius = Fields::radius;
  static constexpr int lag = rows + radius;
  static constexpr int pad = radius;
  static constexpr int row_length = threads + 2 * pad;
  /// Rows in a ring of written field f. Its level t is read by level t + 1
  /// at rows [a - lag - r_f, a) while it writes [a, a + rows), and, as its
  /// level -m, by level t + 1 + m at that level's own cells, (m + 1) lags
  /// behind (m < levels).
  __host__ __device__ static constexpr int ring(int f) {
    int const r = Fields::radii[f];
    int const neighbours = lag + r + rows;
    int const levels = Fields::levels[f];
    int const earlier = levels > 1 ? levels * lag + rows : 0;
    return neighbours > earlier ? neighbours : earlier;
  }
  /// Rows in the one ring of coefficient f: it serves every level of a run,
  /// the last `depth` lags behind the input.
  __host__ __device__ static constexpr int coefficient_ring(int f, int depth) {
    return depth * lag + rows + Fields::radii[f];
  }
  /// Where field f's rings start: `per_depth(f) * depth + fixed(f)`
  /// elements in. A written field keeps a ring per level of a run below
  /// the last (which goes to global memory) and one per earlier level of
  /// the launch's input (levels -1 .. 1 - levels, copied in with its
  /// current level); the coefficients' rings follow all of those.
  __host__ __device__ static constexpr int per_depth(int f) {
    int b = 0;
    for (int g = 0; g < Fields::count; ++g) {
      if (Fields::written[g]) {
        b += Fields::written[f] && g >= f ? 0 : ring(g);
      } else if (!Fields::written[f] && g < f) {
        b += lag;
      }
    }
    return b * row_length;
  }
  __host__ __device__ static constexpr int fixed(int f) {
    int b = 0;
    for (int g = 0; g < Fields::count; ++g) {
      bool const before = Fields::written[f] ? Fields::written[g] && g < f
                                             : Fields::written[g] || g < f;
      if (!before) continue;
      b += Fields::written[g] ? (Fields::levels[g] - 1) * ring(g)
                              : rows + Fields::radii[g];
    }
    return b * row_length;
  }
  static constexpr int total_per_depth = [] {
    int b = 0;
    for (int g = 0; g < Fields::count; ++g) {
      b += Fields::written[g] ? ring(g) : lag;
    }
    return b * row_length;
  }();
  static constexpr int total_fixed = [] {
    int b = 0;
    for (int g = 0; g < Fields::count; ++g) {
      b += Fields::written[g] ? (Fields::levels[g] - 1) * ring(g)
                              : rows + Fields::radii[g];
    }
    return b * row_length;
  }();
  template <class T>
  static constexpr std::size_t shared_bytes(int depth) {
    return (static_cast<std::size_t>(total_per_depth) * depth + total_fixed) *
           sizeof(T);
  }
};

template <class T, class Op>
struct StreamParams {
  using Fields = typename Op::fields;
  /// Level -k of field f, read at the start of a launch.
  T const* in[Fields::count][Fields::most_levels] = {};
  /// Where level -k of written field f goes after the launch.
  T* out[Fields::count][Fields::most_levels] = {};
  Op op;
  stencil::detail::PaddedLayout layout;
  int valid_width = 1;  // output columns per strip
  int strips = 1;
  /// Rows per block of the strips' rows laid end to end: a share may end
  /// in one strip and go on in the next, so every block gets the same work
  /// whatever the extents.
  int share = 1;
  bool wrap_x = false, wrap_y = false;
  double t0 = 0.0, dt = 1.0;
};

/// Field I's current level around a cell: the thread's own column from the
/// registers it read the rows into, the other columns' taps from the ring.
/// Offsets are constants once the loops unroll, so the branch folds away.
template <class T, int Radius, int Span>
struct StreamColumn {
  using value_type = T;
  T const (&column)[Span];      // rows a - R .. of the thread's column
  T const* const (&row)[Span];  // the same rows of the ring, at the column
  int centre;                   // the cell's row in `column`

  __device__ __forceinline__ T operator()(int dy, int dx) const {
    stencil::detail::check_offsets<Radius>(dy, dx);
    return dx == 0 ? column[centre + dy] : row[centre + dy][dx];
  }
};

/// An earlier level at the cell itself.
template <class T>
struct StreamValue {
  using value_type = T;
  T value;
  __device__ __forceinline__ T operator()(int dy, int dx) const {
    stencil::detail::check_offsets<0>(dy, dx);
    return value;
  }
};

/// The `in` a functor receives from the streaming kernel. Rows of every
/// field are laid out with the largest radius R on either side.
template <class T, class Fields>
struct StreamFieldsNeighbourhood {
  using fields_type = Fields;
  using value_type = T;
  using Shape = StreamShape<Fields>;
  static constexpr int span = Shape::rows + 2 * Shape::radius;
  static constexpr int earlier =
      Fields::most_levels > 1 ? Fields::most_levels - 1 : 1;

  T const (&column)[Fields::count][span];
  T const* const (&row)[Fields::count][span];
  T const (&before)[Fields::count][earlier][Shape::rows];
  int j;  // the cell's row among the level's rows of the iteration
  int y, x;
  double t;

  template <int I, int Level>
  __device__ __forceinline__ auto level() const {
    if constexpr (Level == 0) {
      return StreamColumn<T, Fields::radii[I], span>{column[I], row[I],
                                                     j + Shape::radius};
    } else {
      return StreamValue<T>{before[I][-Level - 1][j]};
    }
  }
  __device__ __forceinline__ Kokkos::Array<int, 2> position() const {
    return {y, x};
  }
  __device__ __forceinline__ double time() const { return t; }
};

/// Output rows [y_begin, y_end) of `strip`.
template <class T, class Op, int Depth>
__device__ __forceinline__ void stream_segment(StreamParams<T, Op> const& p,
                                               T* const shared, int strip,
                                               int y_begin, int y_end) {
  using Fields = typename Op::fields;
  using S = StreamShape<Fields>;
  using In = StreamFieldsNeighbourhood<T, Fields>;
  constexpr int R = S::rows, L = S::lag, r = S::radius;
  constexpr int span = In::span;
  constexpr int count = Fields::count;
  constexpr int written_count = Fields::written_count;

  constexpr int depth = Depth;
  int const nx = p.layout.nx, ny = p.layout.ny, halo = p.layout.halo;
  int const tid = static_cast<int>(threadIdx.x);
  int const reach = depth * r;
  int const x = strip * p.valid_width - reach + tid;
  // Below the first row and above the last only the halo rows are read
  // (or, periodic, the wrapped rows computed).
  int const first = p.wrap_y ? y_begin - reach : max(y_begin - reach, -r);
  int const iterations = (y_end - first + depth * L + R - 1) / R;

  // Guarded (below), everything per cell is a compare or an add: no
  // branches for the boundaries (they split the code into regions the
  // compiler cannot interleave) and no division for the periodic wrap.
  auto wrapped = [](int v, int n) { return ((v % n) + n) % n; };
  bool const x_interior =
      p.wrap_x | (static_cast<unsigned>(x) < static_cast<unsigned>(nx));
  bool const x_loadable = p.wrap_x | (static_cast<unsigned>(x + halo) <
                                      static_cast<unsigned>(nx + 2 * halo));
  int const gx = p.wrap_x ? wrapped(x, nx) : x;
  // This thread's column of the padded buffers (column 0 if it lies
  // outside, so that the address stays valid where the load is skipped).
  int const column_offset = x_loadable ? gx + halo : 0;
  int const stride = p.layout.stride_y;
  bool const x_output =
      (tid >= reach) & (tid < reach + p.valid_width) & (x < nx);
  // Rows: level t's first row of the iteration, as a buffer row (wrapped
  // along a periodic y, plain otherwise), advanced R rows an iteration.
  int const period = p.wrap_y ? ny : (1 << 30);
  auto next_row = [&](int y, int step) {
    int const v = y + step;
    return v >= period ? v - period : v;
  };
  int row_of_level[Depth + 1];
  for_each_constant<Depth + 1>([&](auto level) {
    constexpr int t = decltype(level)::value;
    row_of_level[t] = p.wrap_y ? wrapped(first - t * L, ny) : first - t * L;
  });
  auto row_interior = [&](int y) {
    return p.wrap_y | (static_cast<unsigned>(y) < static_cast<unsigned>(ny));
  };
  auto row_loadable = [&](int y) {
    return p.wrap_y | (static_cast<unsigned>(y + halo) <
                       static_cast<unsigned>(ny + 2 * halo));
  };
  // Every buffer at this thread's column, so that a row's address is one
  // wide multiply-add. Rows count unsigned from the padded array's first:
  // a row above it is never dereferenced (its load is predicated off).
  T const* in_column[count][Fields::most_levels];
  T* out_column[count][Fields::most_levels];
  for_each_field<Fields>([&](auto field) {
    constexpr int f = decltype(field)::value;
    constexpr int levels = Fields::levels[f];
#pragma unroll
    for (int k = 0; k < levels; ++k) {
      in_column[f][k] = p.in[f][k] + column_offset;
      if constexpr (Fields::written[f]) {
        out_column[f][k] = p.out[f][k] + column_offset;
      }
    }
  });
  unsigned const row_bytes = static_cast<unsigned>(stride) * sizeof(T);
  auto at_row = [&](auto* column, int y) {
    using Byte = std::conditional_t<
        std::is_const_v<std::remove_pointer_t<decltype(column)>>,
        unsigned char const, unsigned char>;
    return reinterpret_cast<decltype(column)>(
        reinterpret_cast<Byte*>(column) +
        static_cast<std::uint64_t>(static_cast<unsigned>(y + halo)) *
            row_bytes);
  };
  // Buffer column `from` at buffer row y, 0 outside the padded array.
  auto load = [&](T const* from, int y) {
    T v = T(0);
    if (x_loadable & row_loadable(y)) v = *at_row(from, y);
    return v;
  };
  // Ring of field f at level t (1 - levels .. depth - 1; 0 for a
  // coefficient), at this thread's column of slot 0.
  auto ring_of = [&](auto field, int t) {
    constexpr int f = decltype(field)::value;
    constexpr int per_depth = S::per_depth(f), fixed = S::fixed(f);
    T* const first_ring = shared + per_depth * depth + fixed + S::pad + tid;
    if constexpr (Fields::written[f]) {
      constexpr int first_level = 1 - Fields::levels[f];
      return first_ring + (t - first_level) * (S::ring(f) * S::row_length);
    } else {
      return first_ring;
    }
  };
  // slot0[f]: the ring slot of this iteration's first input row. In a
  // written field's ring (of compile-time length) a row `shift` rows
  // before it lies (-shift) mod ring slots after it. A coefficient's ring
  // has S::coefficient_ring(f, Depth) rows, and every shift a level reads
  // lies in (0, ring).
  int slot0[count];
  for_each_field<Fields>(
      [&](auto field) { slot0[decltype(field)::value] = 0; });
  // The element offset of every slot of a written field's ring, rotated to
  // start at slot0: set once an iteration, so that a level (whose shifts
  // are constants) addresses a ring row with one add instead of a wrap and
  // a multiply each.
  constexpr int longest_ring = [] {
    int n = 1;
    for (int g = 0; g < count; ++g) n = S::ring(g) > n ? S::ring(g) : n;
    return n;
  }();
  int rotated[count][longest_ring];
  auto rotate = [&] {
    for_each_field<Fields>([&](auto field) {
      constexpr int f = decltype(field)::value;
      if constexpr (Fields::written[f]) {
        constexpr int n = S::ring(f);
#pragma unroll
        for (int c = 0; c < n; ++c) {
          int const s = slot0[f] + c;
          rotated[f][c] = (s >= n ? s - n : s) * S::row_length;
        }
      }
    });
  };
  // The offset of the row `shift` rows before slot0 (shift a constant).
  auto rotated_row = [&](auto field, int shift) {
    constexpr int f = decltype(field)::value;
    constexpr int n = S::ring(f);
    return rotated[f][((-shift) % n + n) % n];
  };
  auto coefficient_slot = [&](auto field, int shift) {
    constexpr int f = decltype(field)::value;
    constexpr int n = S::coefficient_ring(f, Depth);
    int const s = slot0[f] - shift;
    return s < 0 ? s + n : s;
  };

  // Each iteration's input rows, of every level of the launch's input, are
  // loaded `A` iterations ahead into registers: iteration k reads stage
  // k mod A, then loads iteration k + A's rows into it. The stage is a
  // compile-time index (the iteration loop unrolls by A): moving registers
  // down a stage would wait for their loads an iteration early.
  constexpr int A = stream_ahead;
  T incoming[A][count][Fields::most_levels][R];
  auto load_input = [&](auto stage, int y, auto is_guarded) {
    constexpr int a = decltype(stage)::value;
    constexpr bool guarded = decltype(is_guarded)::value;
    for_each_field<Fields>([&](auto field) {
      constexpr int f = decltype(field)::value;
      constexpr int levels = Fields::levels[f];
#pragma unroll
      for (int k = 0; k < levels; ++k) {
#pragma unroll
        for (int j = 0; j < R; ++j) {
          incoming[a][f][k][j] = guarded ? load(in_column[f][k], next_row(y, j))
                                         : *at_row(in_column[f][k], y + j);
        }
      }
    });
  };
  // The first row of the newest stage loaded.
  int ahead_row = row_of_level[0];
  for_each_constant<A>([&](auto stage) {
    if (decltype(stage)::value > 0) ahead_row = next_row(ahead_row, R);
    load_input(stage, ahead_row, std::true_type{});
  });

  // One level's rows of an iteration (a compile-time `level`: every slot
  // offset a constant). The levels below the last go to their rings, the
  // last to global memory.
  auto advance_level = [&](auto level, auto is_last, auto is_guarded, int k,
                           int a_row) {
    constexpr bool last = decltype(is_last)::value;
    constexpr bool guarded = decltype(is_guarded)::value;
    constexpr int t = decltype(level)::value;
    int const a = first + R * k - t * L;  // the level's first row
    constexpr int lagged = t * L;         // rows behind the input
    T column[count][span];
    T const* row[count][span];
    T before[count][In::earlier][R];
    for_each_field<Fields>([&](auto field) {
      constexpr int f = decltype(field)::value;
      constexpr int rf = Fields::radii[f];
      constexpr int levels = Fields::levels[f];
      T const* const ring = ring_of(field, t - 1);
      // Rows a - rf .. a + R + rf of the level below (the input for a
      // coefficient), laid out with the largest radius.
#pragma unroll
      for (int i = r - rf; i < r + R + rf; ++i) {
        if constexpr (!Fields::written[f]) {
          row[f][i] =
              ring + coefficient_slot(field, t * L + r - i) * S::row_length;
        } else {
          row[f][i] = ring + rotated_row(field, lagged + r - i);
        }
        column[f][i] = row[f][i][0];
      }
      // Earlier levels at the cell: level -m of step t is level t - 1 - m,
      // from its ring (below 0, the launch's input).
#pragma unroll
      for (int m = 1; m < levels; ++m) {
#pragma unroll
        for (int j = 0; j < R; ++j) {
          T const* const earlier = ring_of(field, t - 1 - m);
          before[f][m - 1][j] = earlier[rotated_row(field, lagged - j)];
        }
      }
    });
    double const time = p.t0 + (t - 1) * p.dt;
#pragma unroll
    for (int j = 0; j < R; ++j) {
      int const y = guarded ? next_row(a_row, j) : a_row + j;
      In const in{column, row, before, j, y, gx, time};
      T value[written_count];
      stencil::detail::functor_values<T, Fields>(p.op(in), value);
      bool const interior = !guarded || (x_interior & row_interior(y));
      bool const output =
          guarded ? x_output & (a + j >= y_begin) & (a + j < y_end) : x_output;
      for_each_field<Fields>([&](auto field) {
        constexpr int f = decltype(field)::value;
        if constexpr (Fields::written[f]) {
          constexpr int levels = Fields::levels[f];
          T v = value[stencil::detail::written_slot<Fields, f>()];
          // A halo cell keeps the value of the buffer level t goes to, the
          // one that held level t - levels: that level's value at the cell,
          // which the level has read already (and, below level 1, the
          // launch's input, whose halo the loads brought in). No load.
          T kept = column[f][r + j];
          if constexpr (levels > 1) kept = before[f][levels - 2][j];
          v = interior ? v : kept;
          if constexpr (!last) {
            ring_of(field, t)[rotated_row(field, lagged - j)] = v;
          } else if (output) {
            *at_row(out_column[f][0], y) = v;
            // Level -m after the launch is level depth - m: the current
            // level of the last step, then its earlier ones.
#pragma unroll
            for (int m = 1; m < levels; ++m) {
              *at_row(out_column[f][m], y) =
                  m == 1 ? column[f][r + j] : before[f][m - 2][j];
            }
          }
        }
      });
    }
  };

  auto iteration = [&](int k, auto stage, auto is_guarded) {
    constexpr int a = decltype(stage)::value;
    constexpr bool guarded = decltype(is_guarded)::value;
    rotate();
    auto step = [&](int y, int by) {
      return guarded ? next_row(y, by) : y + by;
    };
    // Levels 0 and below: the input rows into their rings.
    for_each_field<Fields>([&](auto field) {
      constexpr int f = decltype(field)::value;
      constexpr int levels = Fields::levels[f];
      if constexpr (Fields::written[f]) {
#pragma unroll
        for (int k = 0; k < levels; ++k) {
#pragma unroll
          for (int j = 0; j < R; ++j) {
            ring_of(field, -k)[rotated_row(field, -j)] = incoming[a][f][k][j];
          }
        }
      } else {
        constexpr int n = S::coefficient_ring(f, Depth);
#pragma unroll
        for (int j = 0; j < R; ++j) {
          int const s = slot0[f] + j;
          ring_of(field, 0)[(s >= n ? s - n : s) * S::row_length] =
              incoming[a][f][0][j];
        }
      }
    });
    ahead_row = step(ahead_row, R);
    load_input(stage, ahead_row, is_guarded);

    for_each_constant<Depth>([&](auto level_minus_one) {
      constexpr int t = decltype(level_minus_one)::value + 1;
      advance_level(std::integral_constant<int, t>{},
                    std::bool_constant<t == Depth>{}, is_guarded, k,
                    row_of_level[t]);
      row_of_level[t] = step(row_of_level[t], R);
    });

    for_each_field<Fields>([&](auto field) {
      constexpr int f = decltype(field)::value;
      constexpr bool written = Fields::written[f];
      constexpr int n = written ? S::ring(f) : S::coefficient_ring(f, Depth);
      slot0[f] += R;
      if (slot0[f] >= n) slot0[f] -= n;
    });
  };

  // A warp's iteration is unguarded when every row it computes or loads
  // lies inside the grid, unwrapped, the last level's rows are all output
  // rows, and every column of the warp lies inside (or wraps): then no cell
  // needs a boundary test, a wrap or a halo value. That is every iteration
  // but the first and last few of a segment, in every warp but those on the
  // grid's left and right edges. The branch is uniform in the warp (the
  // iteration holds no barrier), so the guarded code's selects and
  // predicated loads cost only the warps that need them.
  bool const warp_interior = __all_sync(0xffffffffu, x_interior);
  for (int k0 = 0; k0 < iterations; k0 += A) {
    for_each_constant<A>([&](auto stage) {
      int const k = k0 + decltype(stage)::value;
      if (k >= iterations) return;
      int const a_last = first + R * k - depth * L;
      bool const unguarded = warp_interior & (a_last >= y_begin) &
                             (a_last + R <= y_end) &
                             (first + R * (k + A + 1) <= ny);
      if (unguarded) {
        iteration(k, stage, std::false_type{});
      } else {
        iteration(k, stage, std::true_type{});
      }
      __syncthreads();
    });
  }
}

template <class T, class Op, int Depth>
__global__ void __launch_bounds__(stream_threads)
    stream_steps(StreamParams<T, Op> p) {
  using S = StreamShape<typename Op::fields>;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* const shared = reinterpret_cast<T*>(shared_raw);
  // Zero every ring once, pads included: the pad columns are never
  // written, and only rim columns read them.
  constexpr int total = S::total_per_depth * Depth + S::total_fixed;
  for (int i = static_cast<int>(threadIdx.x); i < total; i += S::threads) {
    shared[i] = T(0);
  }
  __syncthreads();
  int const ny = p.layout.ny;
  long long const begin = static_cast<long long>(blockIdx.x) * p.share;
  long long const end =
      min(begin + p.share, static_cast<long long>(p.strips) * ny);
  for (long long at = begin; at < end;) {
    int const strip = static_cast<int>(at / ny);
    int const y_begin = static_cast<int>(at % ny);
    int const y_end =
        static_cast<int>(min(static_cast<long long>(ny), y_begin + (end - at)));
    stream_segment<T, Op, Depth>(p, shared, strip, y_begin, y_end);
    at += y_end - y_begin;
  }
}

}  // namespace stencil::native_cuda::fields
