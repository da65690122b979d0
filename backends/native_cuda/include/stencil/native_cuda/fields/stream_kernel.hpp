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
// halo of the buffer it will be written to, read from global memory. Along
// a periodic axis every cell is computed and the input is read wrapped.
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
/// grow with it, leave the depth room in shared memory.
inline constexpr int stream_rows = 2;
/// The deepest depth compiled: the levels below the last are unrolled, so
/// that their ring slot offsets are constants (the last takes the launch's
/// depth at run time); 8 is the default rim of 8 cells at radius 1.
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
  static constexpr int max_depth = stream_max_depth;
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
  int depth = 1;
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

/// A level number given at compile time or at run time.
template <int Level>
__device__ __forceinline__ constexpr int level_value(
    std::integral_constant<int, Level>) {
  return Level;
}
__device__ __forceinline__ int level_value(int level) { return level; }

/// Output rows [y_begin, y_end) of `strip`.
template <class T, class Op>
__device__ __forceinline__ void stream_segment(StreamParams<T, Op> const& p,
                                               T* const shared, int strip,
                                               int y_begin, int y_end) {
  using Fields = typename Op::fields;
  using S = StreamShape<Fields>;
  using In = StreamFieldsNeighbourhood<T, Fields>;
  constexpr int R = S::rows, L = S::lag, r = S::radius, D = S::max_depth;
  constexpr int span = In::span;
  constexpr int count = Fields::count;
  constexpr int written_count = Fields::written_count;

  int const depth = p.depth;
  int const nx = p.layout.nx, ny = p.layout.ny, halo = p.layout.halo;
  int const tid = static_cast<int>(threadIdx.x);
  int const reach = depth * r;
  int const x = strip * p.valid_width - reach + tid;
  // Below the first row and above the last only the halo rows are read
  // (or, periodic, the wrapped rows computed).
  int const first = p.wrap_y ? y_begin - reach : max(y_begin - reach, -r);
  int const iterations = (y_end - first + depth * L + R - 1) / R;

  // Everything per cell is a compare or an add: the hot path keeps no
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
  std::int64_t const column_offset = x_loadable ? gx + halo : 0;
  std::int64_t const stride = p.layout.stride_y;
  bool const x_output =
      (tid >= reach) & (tid < reach + p.valid_width) & (x < nx);
  // Rows: level t's first row of the iteration, as a buffer row (wrapped
  // along a periodic y, plain otherwise), advanced R rows an iteration.
  int const period = p.wrap_y ? ny : (1 << 30);
  auto next_row = [&](int y, int step) {
    int const v = y + step;
    return v >= period ? v - period : v;
  };
  int row_of_level[D + 1];
  for_each_index<D + 1>([&](auto level) {
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
  auto offset = [&](int y) { return (y + halo) * stride + column_offset; };
  // Buffer `from` at buffer row y, 0 outside the padded array.
  auto load = [&](T const* from, int y) {
    T v = T(0);
    if (x_loadable & row_loadable(y)) v = from[offset(y)];
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
  // before it lies (-shift) mod ring slots after it, and the last level's
  // rows, depth lags behind, start at last0[f]. A coefficient's ring has
  // coefficient_rows[f], and every shift a level reads lies in (0, ring).
  int slot0[count], last_behind[count], last0[count], coefficient_rows[count];
  for_each_field<Fields>([&](auto field) {
    constexpr int f = decltype(field)::value;
    slot0[f] = 0;
    if constexpr (Fields::written[f]) {
      constexpr int n = S::ring(f);
      last_behind[f] = ((-depth * L) % n + n) % n;
      last0[f] = last_behind[f];
    } else {
      constexpr int rf = Fields::radii[f];  // S::coefficient_ring(f, depth)
      coefficient_rows[f] = depth * L + R + rf;
    }
  });
  auto slot = [&](auto field, int origin, int shift) {
    constexpr int n = S::ring(decltype(field)::value);
    int const s = origin + ((-shift) % n + n) % n;
    return s >= n ? s - n : s;
  };
  auto coefficient_slot = [&](auto field, int shift) {
    constexpr int f = decltype(field)::value;
    int const s = slot0[f] - shift;
    return s < 0 ? s + coefficient_rows[f] : s;
  };

  // Each iteration's input rows, of every level of the launch's input, are
  // loaded an iteration ahead.
  T incoming[count][Fields::most_levels][R];
  auto load_input = [&](int y) {
    for_each_field<Fields>([&](auto field) {
      constexpr int f = decltype(field)::value;
      constexpr int levels = Fields::levels[f];
#pragma unroll
      for (int k = 0; k < levels; ++k) {
#pragma unroll
        for (int j = 0; j < R; ++j) {
          incoming[f][k][j] = load(p.in[f][k], next_row(y, j));
        }
      }
    });
  };
  load_input(row_of_level[0]);
  int last_row = p.wrap_y ? wrapped(first - depth * L, ny) : first - depth * L;

  // One level's rows of an iteration. The levels below the last have a
  // compile-time `level` (every slot offset a constant) and go to their
  // rings; the last, at the run's depth, goes to global memory.
  auto advance_level = [&](auto level, auto is_last, int k, int a_row) {
    constexpr bool last = decltype(is_last)::value;
    int const t = level_value(level);
    int const a = first + R * k - t * L;  // the level's first row
    // Slots: the intermediate levels count their lag in the constant
    // shift, the last level in its origin (last0).
    int const lagged = last ? 0 : t * L;
    T column[count][span];
    T const* row[count][span];
    T before[count][In::earlier][R];
    for_each_field<Fields>([&](auto field) {
      constexpr int f = decltype(field)::value;
      constexpr int rf = Fields::radii[f];
      constexpr int levels = Fields::levels[f];
      int const o = last ? last0[f] : slot0[f];
      T const* const ring = ring_of(field, t - 1);
      // Rows a - rf .. a + R + rf of the level below (the input for a
      // coefficient), laid out with the largest radius.
#pragma unroll
      for (int i = r - rf; i < r + R + rf; ++i) {
        int const s = Fields::written[f]
                          ? slot(field, o, lagged + r - i)
                          : coefficient_slot(field, t * L + r - i);
        row[f][i] = ring + s * S::row_length;
        column[f][i] = row[f][i][0];
      }
      // Earlier levels at the cell: level -m of step t is level t - 1 - m,
      // from its ring (below 0, the launch's input).
#pragma unroll
      for (int m = 1; m < levels; ++m) {
#pragma unroll
        for (int j = 0; j < R; ++j) {
          before[f][m - 1][j] = ring_of(
              field, t - 1 - m)[slot(field, o, lagged - j) * S::row_length];
        }
      }
    });
    double const time = p.t0 + (t - 1) * p.dt;
#pragma unroll
    for (int j = 0; j < R; ++j) {
      int const y = next_row(a_row, j);
      In const in{column, row, before, j, y, gx, time};
      T value[written_count];
      stencil::detail::functor_values<T, Fields>(p.op(in), value);
      bool const interior = x_interior & row_interior(y);
      bool const output = x_output & (a + j >= y_begin) & (a + j < y_end);
      for_each_field<Fields>([&](auto field) {
        constexpr int f = decltype(field)::value;
        if constexpr (Fields::written[f]) {
          constexpr int levels = Fields::levels[f];
          T v = value[stencil::detail::written_slot<Fields, f>()];
          // The halo of the buffer level t goes to: the one that held
          // level t - levels, and so back to the launch's input. One
          // predicate, so that the load is predicated, not branched around.
          T halo_value = T(0);
          if (!interior & x_loadable & row_loadable(y)) {
            halo_value = p.in[f][(levels - t % levels) % levels][offset(y)];
          }
          v = interior ? v : halo_value;
          if constexpr (!last) {
            ring_of(field,
                    t)[slot(field, slot0[f], lagged - j) * S::row_length] = v;
          } else if (output) {
            std::int64_t const at = offset(y);
            p.out[f][0][at] = v;
            // Level -m after the launch is level depth - m: the current
            // level of the last step, then its earlier ones.
#pragma unroll
            for (int m = 1; m < levels; ++m) {
              p.out[f][m][at] = m == 1 ? column[f][r + j] : before[f][m - 2][j];
            }
          }
        }
      });
    }
  };

  for (int k = 0; k < iterations; ++k) {
    // Levels 0 and below: the input rows into their rings.
    for_each_field<Fields>([&](auto field) {
      constexpr int f = decltype(field)::value;
      constexpr int levels = Fields::levels[f];
      if constexpr (Fields::written[f]) {
#pragma unroll
        for (int k = 0; k < levels; ++k) {
#pragma unroll
          for (int j = 0; j < R; ++j) {
            ring_of(field, -k)[slot(field, slot0[f], -j) * S::row_length] =
                incoming[f][k][j];
          }
        }
        constexpr int n = S::ring(f);
        int const o = slot0[f] + last_behind[f];
        last0[f] = o >= n ? o - n : o;
      } else {
#pragma unroll
        for (int j = 0; j < R; ++j) {
          int const s = slot0[f] + j;
          ring_of(field,
                  0)[(s >= coefficient_rows[f] ? s - coefficient_rows[f] : s) *
                     S::row_length] = incoming[f][0][j];
        }
      }
    });
    row_of_level[0] = next_row(row_of_level[0], R);
    load_input(row_of_level[0]);

    for_each_index<D - 1>([&](auto level_minus_one) {
      constexpr int t = decltype(level_minus_one)::value + 1;
      if (t >= depth) return;
      advance_level(std::integral_constant<int, t>{}, std::false_type{}, k,
                    row_of_level[t]);
      row_of_level[t] = next_row(row_of_level[t], R);
    });
    advance_level(depth, std::true_type{}, k, last_row);
    last_row = next_row(last_row, R);

    for_each_field<Fields>([&](auto field) {
      constexpr int f = decltype(field)::value;
      constexpr bool written = Fields::written[f];
      int const n = written ? S::ring(f) : coefficient_rows[f];
      slot0[f] += R;
      if (slot0[f] >= n) slot0[f] -= n;
    });
    __syncthreads();
  }
}

template <class T, class Op>
__global__ void __launch_bounds__(stream_threads)
    stream_steps(StreamParams<T, Op> p) {
  using S = StreamShape<typename Op::fields>;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* const shared = reinterpret_cast<T*>(shared_raw);
  // Zero every ring once, pads included: the pad columns are never
  // written, and only rim columns read them.
  int const total = S::total_per_depth * p.depth + S::total_fixed;
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
    stream_segment(p, shared, strip, y_begin, y_end);
    at += y_end - y_begin;
  }
}

}  // namespace stencil::native_cuda::fields
