// SPDX-License-Identifier: Apache-2.0
// Temporal blocking of multi-field stencils by streaming (after the
// single-field kernel, temporal_blocking/kernels.hpp), rank 2 and 3. A
// block owns a tile of the cross-section, one column (a cell of every slice)
// per thread: in 2D a strip of `StreamTile<2>::x` columns, in 3D a tile of
// x by y columns. The tile is its valid columns plus a rim of depth x
// radius columns on each side, recomputed by the neighbouring tiles. The
// block streams down a segment of slices along the slowest axis (rows in
// 2D, planes in 3D). Level t (the field values after t steps) computes
// `rows` slices per iteration, `lag` slices behind level t - 1, so every
// slice it reads was finished in an earlier iteration: one barrier per
// iteration however deep the blocking, and the levels of an iteration are
// independent of each other.
//
// Each written field keeps a ring of its most recent slices in shared memory
// per level below the last (which goes to global memory) and per earlier
// level of the launch's input, copied in with the current one: enough slices
// for the next level's taps and for the earlier levels a later step reads
// at its own cell (a leapfrog's n-1). A coefficient keeps one ring of the
// input, deep enough for the deepest level's slices. A thread reads its own
// column's slices of a ring into registers once per level and iteration, and
// the other columns' taps from the ring. Against the overlapped-tile kernel
// (kernels.hpp) only the rim columns are recomputed, not rim slices as well,
// and a level keeps a few slices instead of the whole tile, so the depth no
// longer eats the tile. In 3D the rim is two-dimensional, so the depth eats
// the tile's cross-section (stream_launch.hpp's default depth).
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

/// The tile of columns a block streams, one column per thread, and the
/// slices a level computes per iteration.
template <int Rank>
struct StreamTile;
template <>
struct StreamTile<2> {
  /// A strip of 256 columns.
  static constexpr int x = 256, y = 1;
  /// Rows a level computes per iteration: 2 amortise the barrier and the
  /// column loads (R + 2r rows read for R cells) while the rings, which
  /// grow with it, leave the depth room in shared memory; 3 won and lost
  /// by turns (docs/decisions/auto-fields.md).
  static constexpr int rows = 2;
};
template <>
struct StreamTile<3> {
  /// 32 x 16 columns: a warp is one row of the tile (its lanes' taps in x
  /// are consecutive words), and the rim, two-dimensional here, costs a
  /// third of the cross-section at depth 2 and radius 1, where 32 x 8
  /// would cost more than half.
  static constexpr int x = 32, y = 16;
  /// One plane a level and iteration: a plane is 16 times a 2D row, so a
  /// second one would double rings that already bound the depth.
  static constexpr int rows = 1;
};
/// Iterations ahead of its use that an input row is loaded: an
/// iteration of the levels (some 170 instructions a warp at depth 4) is
/// shorter than a DRAM latency under load. Two beat one on the leapfrog
/// and tied elsewhere (docs/decisions/auto-fields.md).
inline constexpr int stream_ahead = 2;
/// The deepest depth compiled: each depth is a kernel of its own, whose
/// levels unroll with constant ring slot offsets and no branch between
/// them, so that the compiler interleaves the levels of an iteration (they
/// are independent). In 2D 8 is the default rim of 8 cells at radius 1; in
/// 3D a rim of 4 leaves half of the tile's 16 rows to recompute.
template <int Rank>
inline constexpr int stream_max_depth = [] {
  int const most = Rank == 3 ? 4 : 8;
  return max_depth_compiled < most ? max_depth_compiled : most;
}();

/// The compile-time shape of the stream for fields `Fields` in `Rank`
/// dimensions. A slice of a ring holds the tile's columns with a pad of the
/// largest radius on each side (in 3D a plane of `width` by `height`).
template <class Fields, int Rank = 2>
struct StreamShape {
  using Tile = StreamTile<Rank>;
  static constexpr int threads = Tile::x * Tile::y;
  static constexpr int rows = Tile::rows;
  static constexpr int radius = Fields::radius;
  static constexpr int lag = rows + radius;
  static constexpr int pad = radius;
  static constexpr int width = Tile::x + 2 * pad;
  static constexpr int height = Rank == 3 ? Tile::y + 2 * pad : 1;
  static constexpr int row_length = width * height;
  /// Thread `tid`'s column in a slice.
  __host__ __device__ static constexpr int column(int tid) {
    return Rank == 3 ? (tid / Tile::x + pad) * width + pad + tid % Tile::x
                     : pad + tid;
  }
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
  int valid_width = 1;   // output columns of a tile along x
  int valid_height = 1;  // along y (rank 3)
  int strips = 1;        // tiles of the cross-section
  int strips_x = 1;      // of them along x
  /// 2D: rows per block of the strips' rows laid end to end: a share may
  /// end in one strip and go on in the next, so every block gets the same
  /// work whatever the extents.
  int share = 1;
  /// 3D: planes per band (0 in 2D). The work is (band, tile) units, band
  /// by band and tile by tile along x then y, dealt to the blocks in turn,
  /// so that the blocks resident at once stream nearby planes. Shares of
  /// whole tiles' columns, as in 2D, spread them over the grid's whole
  /// depth (gigabytes apart on a large grid), and ran slower at every depth
  /// (docs/decisions/auto-fields.md).
  int band = 0;
  bool wrap_x = false, wrap_y = false, wrap_z = false;
  double t0 = 0.0, dt = 1.0;
};

/// Field I's current level around a cell: the thread's own column from the
/// registers it read the slices into, the other columns' taps from the ring
/// (`Width` elements between a slice's rows in 3D). Offsets are constants
/// once the loops unroll, so the branch folds away.
template <class T, int Rank, int Radius, int Span, int Width>
struct StreamColumn {
  using value_type = T;
  T const (&column)[Span];      // slices a - R .. of the thread's column
  T const* const (&row)[Span];  // the same slices of the ring, at the column
  int centre;                   // the cell's slice in `column`

  template <class... Offsets>
  __device__ __forceinline__ T operator()(Offsets... offsets) const {
    stencil::detail::check_offset_count<Rank, sizeof...(Offsets)>();
    stencil::detail::check_offsets<Radius>(static_cast<int>(offsets)...);
    return at(static_cast<int>(offsets)...);
  }

 private:
  __device__ __forceinline__ T at(int dy, int dx) const {
    return dx == 0 ? column[centre + dy] : row[centre + dy][dx];
  }
  __device__ __forceinline__ T at(int dz, int dy, int dx) const {
    return dy == 0 && dx == 0 ? column[centre + dz]
                              : row[centre + dz][dy * Width + dx];
  }
};

/// An earlier level at the cell itself.
template <class T, int Rank>
struct StreamValue {
  using value_type = T;
  T value;
  template <class... Offsets>
  __device__ __forceinline__ T operator()(Offsets... offsets) const {
    stencil::detail::check_offset_count<Rank, sizeof...(Offsets)>();
    stencil::detail::check_offsets<0>(static_cast<int>(offsets)...);
    return value;
  }
};

/// The `in` a functor receives from the streaming kernel. Slices of every
/// field are laid out with the largest radius R on either side.
template <class T, class Fields, int Rank>
struct StreamFieldsNeighbourhood {
  using fields_type = Fields;
  using value_type = T;
  using Shape = StreamShape<Fields, Rank>;
  static constexpr int span = Shape::rows + 2 * Shape::radius;
  static constexpr int earlier =
      Fields::most_levels > 1 ? Fields::most_levels - 1 : 1;

  T const (&column)[Fields::count][span];
  T const* const (&row)[Fields::count][span];
  T const (&before)[Fields::count][earlier][Shape::rows];
  int j;  // the cell's slice among the level's slices of the iteration
  int slice, y, x;  // slice: y in 2D, z in 3D
  double t;

  template <int I, int Level>
  __device__ __forceinline__ auto level() const {
    if constexpr (Level == 0) {
      return StreamColumn<T, Rank, Fields::radii[I], span, Shape::width>{
          column[I], row[I], j + Shape::radius};
    } else {
      return StreamValue<T, Rank>{before[I][-Level - 1][j]};
    }
  }
  __device__ __forceinline__ Kokkos::Array<int, Rank> position() const {
    if constexpr (Rank == 3) {
      return {slice, y, x};
    } else {
      return {slice, x};
    }
  }
  __device__ __forceinline__ double time() const { return t; }
};

/// Output slices [y_begin, y_end) of `strip` (rows in 2D, planes in 3D).
template <class T, class Op, int Depth>
__device__ __forceinline__ void stream_segment(StreamParams<T, Op> const& p,
                                               T* const shared, int strip,
                                               int y_begin, int y_end) {
  using Fields = typename Op::fields;
  constexpr int Rank = Op::rank;
  using S = StreamShape<Fields, Rank>;
  using In = StreamFieldsNeighbourhood<T, Fields, Rank>;
  constexpr int R = S::rows, L = S::lag, r = S::radius;
  constexpr int span = In::span;
  constexpr int count = Fields::count;
  constexpr int written_count = Fields::written_count;

  constexpr int depth = Depth;
  int const nx = p.layout.nx, halo = p.layout.halo;
  // The streamed axis: y in 2D, z in 3D; `ny` below is its extent.
  int const ny = Rank == 3 ? p.layout.nz : p.layout.ny;
  bool const wrap_stream = Rank == 3 ? p.wrap_z : p.wrap_y;
  int const tid = static_cast<int>(threadIdx.x);
  int const reach = depth * r;
  int const tx = Rank == 3 ? tid % S::Tile::x : tid;
  int const ty = Rank == 3 ? tid / S::Tile::x : 0;
  int const strip_x = Rank == 3 ? strip % p.strips_x : strip;
  int const strip_y = Rank == 3 ? strip / p.strips_x : 0;
  int const x = strip_x * p.valid_width - reach + tx;
  int const cy = strip_y * p.valid_height - reach + ty;  // y in 3D
  // Below the first row and above the last only the halo rows are read
  // (or, periodic, the wrapped rows computed).
  int const first = wrap_stream ? y_begin - reach : max(y_begin - reach, -r);
  int const iterations = (y_end - first + depth * L + R - 1) / R;

  // Guarded (below), everything per cell is a compare or an add: no
  // branches for the boundaries (they split the code into regions the
  // compiler cannot interleave) and no division for the periodic wrap.
  auto wrapped = [](int v, int n) { return ((v % n) + n) % n; };
  auto inside = [](bool wrap, int v, int n) {
    return wrap | (static_cast<unsigned>(v) < static_cast<unsigned>(n));
  };
  auto in_padded = [halo](bool wrap, int v, int n) {
    return wrap | (static_cast<unsigned>(v + halo) <
                   static_cast<unsigned>(n + 2 * halo));
  };
  int const cross_ny = p.layout.ny;  // the cross-section's y (3D)
  bool const column_interior =
      inside(p.wrap_x, x, nx) & (Rank != 3 || inside(p.wrap_y, cy, cross_ny));
  bool const column_loadable = in_padded(p.wrap_x, x, nx) &
                               (Rank != 3 || in_padded(p.wrap_y, cy, cross_ny));
  int const gx = p.wrap_x ? wrapped(x, nx) : x;
  int const gy = Rank == 3 && p.wrap_y ? wrapped(cy, cross_ny) : cy;
  // This thread's column of the padded buffers (column 0 if it lies
  // outside, so that the address stays valid where the load is skipped).
  int const column_offset = !column_loadable ? 0
                            : Rank == 3
                                ? (gy + halo) * p.layout.stride_y + gx + halo
                                : gx + halo;
  int const stride = Rank == 3 ? p.layout.stride_z : p.layout.stride_y;
  bool const column_output =
      (tx >= reach) & (tx < reach + p.valid_width) & (x < nx) &
      (Rank != 3 ||
       ((ty >= reach) & (ty < reach + p.valid_height) & (cy < cross_ny)));
  // Rows: level t's first row of the iteration, as a buffer row (wrapped
  // along a periodic y, plain otherwise), advanced R rows an iteration.
  int const period = wrap_stream ? ny : (1 << 30);
  auto next_row = [&](int y, int step) {
    int const v = y + step;
    return v >= period ? v - period : v;
  };
  int row_of_level[Depth + 1];
  for_each_constant<Depth + 1>([&](auto level) {
    constexpr int t = decltype(level)::value;
    row_of_level[t] = wrap_stream ? wrapped(first - t * L, ny) : first - t * L;
  });
  auto row_interior = [&](int y) { return inside(wrap_stream, y, ny); };
  auto row_loadable = [&](int y) { return in_padded(wrap_stream, y, ny); };
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
    if (column_loadable & row_loadable(y)) v = *at_row(from, y);
    return v;
  };
  // Ring of field f at level t (1 - levels .. depth - 1; 0 for a
  // coefficient), at this thread's column of slot 0.
  auto ring_of = [&](auto field, int t) {
    constexpr int f = decltype(field)::value;
    constexpr int per_depth = S::per_depth(f), fixed = S::fixed(f);
    T* const first_ring = shared + per_depth * depth + fixed + S::column(tid);
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
      In const in{column, row, before, j, y, gy, gx, time};
      T value[written_count];
      stencil::detail::functor_values<T, Fields>(p.op(in), value);
      bool const interior = !guarded || (column_interior & row_interior(y));
      bool const output =
          guarded ? column_output & (a + j >= y_begin) & (a + j < y_end)
                  : column_output;
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
  bool const warp_interior = __all_sync(0xffffffffu, column_interior);
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
__global__ void __launch_bounds__(
    StreamShape<typename Op::fields, Op::rank>::threads)
    stream_steps(StreamParams<T, Op> p) {
  using S = StreamShape<typename Op::fields, Op::rank>;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* const shared = reinterpret_cast<T*>(shared_raw);
  // Zero every ring once, pads included: the pad columns are never
  // written, and only rim columns read them.
  constexpr int total = S::total_per_depth * Depth + S::total_fixed;
  for (int i = static_cast<int>(threadIdx.x); i < total; i += S::threads) {
    shared[i] = T(0);
  }
  __syncthreads();
  // The slices along the streamed axis (y in 2D, z in 3D).
  int const ny = Op::rank == 3 ? p.layout.nz : p.layout.ny;
  if (p.band > 0) {
    int const bands = (ny + p.band - 1) / p.band;
    long long const units = static_cast<long long>(bands) * p.strips;
    for (long long unit = blockIdx.x; unit < units; unit += gridDim.x) {
      int const strip = static_cast<int>(unit % p.strips);
      int const y_begin = static_cast<int>(unit / p.strips) * p.band;
      stream_segment<T, Op, Depth>(p, shared, strip, y_begin,
                                   min(ny, y_begin + p.band));
    }
    return;
  }
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
