// SPDX-License-Identifier: Apache-2.0
// Device tiling with deep temporal blocking for rank-3 grids (after EBISU,
// Zhang et al., ICS'23, sections 4.1 and 6.3): the whole GPU works on one
// region of the xy plane at a time. Every block owns a 32x32 tile of it and
// all blocks stream along z together, `depth` time levels deep. A level
// reads the level below from shared memory; the cells of its tile's
// `radius`-wide rim come from the neighbouring blocks through an exchange
// buffer in global memory (which stays in L2), once per streamed plane
// (exchange.hpp: tagged words by default, no barrier).
//
// Level t works `lag` = r + 1 planes behind level t-1, so every plane a
// level reads was finished (and exchanged) in an earlier iteration: one
// exchange per iteration however deep the blocking, and no dependency
// between the levels inside an iteration. Each level keeps a
// ring of 2r + 2 planes of its tile plus rim in shared memory: the 2r + 1
// the level above reads and the one being written. A star reads the planes
// off its centre plane only at the centre column, so its r planes below
// come from registers instead (the values the thread read as centres in
// its last r iterations, as EBISU's redundant register streaming keeps
// them) and its ring keeps r + 2 planes: deeper blocking in the same
// shared memory, and r fewer shared loads per cell. In device tiling, a
// double box whose functor declares itself linear is summed plane by
// plane: a level reads only its newest plane, once, and adds each plane's
// part to the 2r + 1 cells of its column that read it, keeping the 2r
// unfinished sums in registers; its ring keeps r + 2 planes as a star's
// does.
//
// The input plane (level 0, with its rim) comes in ahead of its use: with
// prefetch 0 as plain loads into registers an iteration ahead (float) or
// as cp.async copies into its ring slot at the start of the iteration
// that stores it (double, copies_input_to_ring), with prefetch s > 0 as
// cp.async copies s iterations ahead into a staging ring of s + 1 planes
// after the levels' rings (each thread copies and later moves the same
// cells, so its own wait is enough).
//
// A region is a rectangle of tiles, at most one per resident block. When
// the grid's xy plane needs more tiles, it is cut into regions that overlap
// by depth*r cells on each side (recomputed, as the strips of the 2D
// kernel), run one after another; each writes only its core. When the
// resident blocks hold the region two or more times over (shallow depths,
// whose kernels are compiled for two blocks per SM), z is cut into that many
// segments, each streamed by a copy of the region with its own exchange
// planes, recomputing the depth*r planes on either side it depends on.
#pragma once

#include <stencil/native_cuda/common/device.hpp>
#include <stencil/native_cuda/common/linear_sums.hpp>
#include <stencil/native_cuda/common/prefetch.hpp>
#include <stencil/native_cuda/device_tiling/exchange.hpp>

#include <stencil/detail/neighbourhood.hpp>
#include <stencil/traits.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace stencil::native_cuda::device_tiling {

inline constexpr int tile_x = 32;
inline constexpr int tile_y = 32;
/// 8 warps of up to 255 registers: the plane loop, unrolled by the ring's
/// period, spills at 512 threads (128 registers each), where the loop
/// before the unrolling had gained from the extra warps
/// (docs/decisions/device-tiling-kernel-variants.md).
inline constexpr int threads_per_block = 256;

/// Tile rows per thread. A thread's rows are adjacent, so the taps its
/// cells share (the column above and below, and for a box most of the 3x3
/// neighbourhood in every plane) are loaded from shared memory once.
template <int Threads>
inline constexpr int rows_per_thread = tile_x* tile_y / Threads;

/// `Streamed`: the planes below the centre plane come from registers: a
/// star reads them only at the centre column, as the thread read them as
/// centres in earlier iterations, and a box summed by plane has added them
/// in already. A level's ring then keeps the r + 1 planes read from it and
/// the one being written; a box read whole reads every tap of its 2r + 1
/// planes from the ring, which keeps 2r + 2.
template <int Radius, bool Streamed = false>
struct TileShape {
  static constexpr int radius = Radius;
  static constexpr int lag = Radius + 1;
  static constexpr int ring = Streamed ? Radius + 2 : 2 * Radius + 2;
  static constexpr int row = tile_x + 2 * Radius;  // shared row length
  static constexpr int plane = row * (tile_y + 2 * Radius);
  static constexpr int rim_cells = plane - tile_x * tile_y;
  /// A tile's cells within r of its sides: what its neighbours read.
  static constexpr int edge_cells =
      tile_x * tile_y - (tile_x - 2 * Radius) * (tile_y - 2 * Radius);

  /// Ring slot of plane z. Levels not yet started (or finished) read
  /// planes far below 0; their results are discarded, but their addresses
  /// must stay in the ring.
  __host__ __device__ static constexpr int slot(int z) {
    return ((z % ring) + ring) % ring;
  }
};

/// Cell k of the r-wide frame of a width x height rectangle (its outermost
/// r rows and columns): the top band, the bottom band, then the left and
/// right bands row by row. It numbers the rim of a ring plane (the frame of
/// the tile plus rim) and the edge of a tile (the frame of the tile).
struct FrameCell {
  int y, x;
};
__host__ __device__ constexpr FrameCell frame_cell(int k, int width, int height,
                                                   int r) {
  int const band = r * width;
  if (k < band) return {k / width, k % width};
  if (k < 2 * band)
    return {height - r + (k - band) / width, (k - band) % width};
  int const side = k - 2 * band;
  int const c = side % (2 * r);
  return {r + side / (2 * r), c < r ? c : width - 2 * r + c};
}
static_assert(frame_cell(67, 34, 34, 1).y == 33 &&
              frame_cell(67, 34, 34, 1).x == 33 &&
              frame_cell(69, 34, 34, 1).y == 1 &&
              frame_cell(69, 34, 34, 1).x == 33);

/// The k of frame_cell for the cell (y, x) of the frame.
__host__ __device__ constexpr int frame_index(int y, int x, int width,
                                              int height, int r) {
  int const band = r * width;
  if (y < r) return y * width + x;
  if (y >= height - r) return band + (y - height + r) * width + x;
  return 2 * band + (y - r) * 2 * r + (x < r ? x : x - width + 2 * r);
}
/// Whether frame_index inverts frame_cell on every frame cell.
constexpr bool frame_index_inverts(int width, int height, int r) {
  int const cells = width * height - (width - 2 * r) * (height - 2 * r);
  for (int k = 0; k < cells; ++k) {
    auto const [y, x] = frame_cell(k, width, height, r);
    if (frame_index(y, x, width, height, r) != k) return false;
  }
  return true;
}
static_assert(frame_index_inverts(32, 32, 1) &&
              frame_index_inverts(32, 32, 2) && frame_index_inverts(34, 34, 1));

/// Cell k of the rim a star reads around a width x height tile, in the
/// coordinates of the tile plus rim: the frame of frame_cell without its
/// four r x r corners, which no tap of a star reaches (the top band, the
/// bottom band, then the left and right bands row by row).
__host__ __device__ constexpr FrameCell star_rim_cell(int k, int width,
                                                      int height, int r) {
  int const band = r * width;
  if (k < band) return {k / width, r + k % width};
  if (k < 2 * band)
    return {r + height + (k - band) / width, r + (k - band) % width};
  int const side = k - 2 * band;
  int const c = side % (2 * r);
  return {r + side / (2 * r), c < r ? c : width + c};
}
/// Whether star_rim_cell numbers every rim cell a star reads once and no
/// corner.
constexpr bool star_rim_cells_cover(int width, int height, int r) {
  if (width > tile_x || height > tile_y || r > 2) return false;  // `seen`
  int const cells = 2 * r * (width + height);
  int seen[(tile_x + 4) * (tile_y + 4)] = {};
  for (int k = 0; k < cells; ++k) {
    auto const [y, x] = star_rim_cell(k, width, height, r);
    bool const rows_in = y >= r && y < r + height;
    bool const columns_in = x >= r && x < r + width;
    if (y < 0 || y >= height + 2 * r || x < 0 || x >= width + 2 * r ||
        rows_in == columns_in) {
      return false;  // outside, inside the tile, or a corner
    }
    if (seen[y * (width + 2 * r) + x]++ != 0) return false;
  }
  return true;
}
static_assert(star_rim_cells_cover(32, 32, 1) &&
              star_rim_cells_cover(32, 32, 2));

/// Whether the kernel sums stencil `Op` on values of type T plane by
/// plane: a box whose functor is linear, in double, in device tiling
/// (exchange X shares rims). Its level reads each tap of the planes it
/// streams once instead of 2r + 1 times (13.5 shared loads per cell and
/// level for a radius-1 box on a thread's four rows, 4.5 summed by plane),
/// but carries 2r sums per cell in registers, which costs a depth where
/// two blocks share an SM (128 registers). Double pays despite the lost
/// depth; float does not, nor SM tiling (NoExchange), which lost its second
/// block per SM (docs/decisions/linear-box-sums.md).
template <class T, class Op, class X>
inline constexpr bool sums_planes =
    sizeof(T) == 8 && (Op::shape == Shape::box) &&
    stencil::detail::is_linear<Op>() && X::shares_rims;

/// The tile shape of stencil `Op` on values of type T, with exchange X.
template <class T, class Op, class X>
using TileShapeOf =
    TileShape<Op::radius, Op::shape == Shape::star || sums_planes<T, Op, X>>;

template <class T, class Op, class X>
constexpr std::size_t shared_bytes_per_level() {
  using S = TileShapeOf<T, Op, X>;
  return static_cast<std::size_t>(S::ring) * S::plane * sizeof(T);
}

/// Levels 0 (the input) to depth-1 keep rings; level `depth` goes to the
/// output directly.
template <class T, class Op, class X>
constexpr std::size_t shared_bytes(int depth) {
  return static_cast<std::size_t>(depth) * shared_bytes_per_level<T, Op, X>();
}

/// The staging ring of `prefetch` stages: s + 1 input planes (none for
/// prefetch 0).
template <class T, int Radius>
constexpr std::size_t staging_bytes(int prefetch) {
  return prefetch == 0 ? 0
                       : static_cast<std::size_t>(prefetch + 1) *
                             TileShape<Radius>::plane * sizeof(T);
}

/// The accessor a star sees: its centre plane and the r planes above come
/// from the level's ring (the centre plane with every tap, the others at
/// the centre column), the r planes below from the values the thread kept
/// in registers. Offsets are compile-time constants once the level loops
/// unroll, so the branch folds away.
template <class T, int Radius>
struct StarNeighbourhood {
  using value_type = T;
  T const* plane[Radius + 1];  // planes dz = 0..r, at the centre column
  T below[Radius];             // the centre cell of planes dz = -r..-1
  int centre = 0;              // offset of the centre cell within each plane
  int stride_y = 0;

  __device__ __forceinline__ T operator()(int dz, int dy, int dx) const {
    stencil::detail::check_offsets<Radius>(dz, dy, dx);
    if (dz < 0) return below[dz + Radius];
    return plane[dz][centre + dy * stride_y + dx];
  }
};

/// What a box summed by plane sees (add_newest_slice,
/// common/linear_sums.hpp): the taps of plane `Dz` (-r..r), read from
/// `plane` around `centre`; every other tap reads as zero. The offsets are
/// compile-time constants once the level loops unroll, so the zero taps
/// fold away. +0, where rank 2's RowTermsNeighbourhood reads -0 to drop
/// the last add as well: here -0 gained a little but made
/// j3d17pt-prescaled's depth-3 kernel spill
/// (docs/decisions/linear-box-sums.md).
template <class T, int Dz, int Radius>
struct PlaneTermsNeighbourhood {
  using value_type = T;
  T const* plane;
  int centre = 0;
  int stride_y = 0;

  __device__ __forceinline__ T operator()(int dz, int dy, int dx) const {
    stencil::detail::check_offsets<Radius>(dz, dy, dx);
    return dz == Dz ? plane[centre + dy * stride_y + dx] : T(0);
  }
};

/// One region: tiles_x * tiles_y blocks, each a 32x32 tile whose first cell
/// is at (y0 + 32 * tile row, x0 + 32 * tile column) of the grid.
struct Region {
  int x0, y0;
  int tiles_x, tiles_y;
  /// Cells written to the output: [core_x0, core_x1) x [core_y0, core_y1),
  /// within the grid.
  int core_x0, core_x1, core_y0, core_y1;
};

/// SM tiling (TemporalBlocking on rank-3 grids): every block computes a
/// 32x32 tile of its own over one segment of z, with no exchange. The
/// tiles overlap their neighbours by depth*r cells on each side (cells the
/// neighbours recompute) and so write only a core of `core` x `core`;
/// their rims come from the input, garbage inside the grid (they reach
/// only the overlap) and the fixed boundary values outside it. Block b
/// takes tile b % tiles (columns across x) and z segment b / tiles.
struct SmTiles {
  int columns = 0;  ///< 0: device tiling, the blocks are Params3D::region
  int tiles = 0;
  int core = 0;
  int z_segment = 0;  ///< planes per segment
};

template <class T, class Op, class Exchange>
struct Params3D {
  T const* in;
  T* out;
  /// Over (depth - 1) levels x exchange_parities x the edge cells of the
  /// region's tiles, tile after tile (`exchange_cells` in the kernel).
  Exchange exchange;
  /// Iteration it publishes with tag tag_base + it + 1 (TaggedExchange).
  unsigned tag_base;
  Op op;
  int nx, ny, nz;
  int halo;
  int stride_y, stride_z;  // of the grid's padded buffers
  Region region;
  SmTiles sm_tiles;
  int prefetch;  // 0: plain loads into registers; s: cp.async s ahead
  /// Device tiling: planes per z segment. The launch has a block per tile
  /// of the region and segment (block b: tile b % tiles, segment b /
  /// tiles); the blocks of a segment form a device tile of their own, with
  /// their own exchange planes, and recompute the depth*r planes below and
  /// above their segment that they depend on.
  int z_segment;
};

/// Whether an SM of compute capability 9.0 (228 KiB of shared memory, 1
/// KiB of it reserved per block) holds two blocks of `Depth` levels at
/// once. Such depths also get a kernel compiled for two blocks per SM (at
/// most 128 registers), used where it does not spill; where that pays is
/// measured, not assumed (launch.hpp's default depth). Deeper than 3 the
/// levels need more than 128 registers, except a radius-1 star's up to
/// depth 6 in float (sm_90: float j3d7pt takes 128 registers at depth 6
/// and spills at 7; double j3d7pt at depth 4 takes 128 registers, float
/// j3d13pt spills at 4 and 5; where two blocks paid:
/// docs/decisions/device-tiling-kernel-variants.md).
template <class T, class Op, int Depth, class X>
inline constexpr bool two_blocks_fit =
    (Depth <= 3 ||
     (Op::shape == Shape::star && Op::radius == 1 && Depth <= 6)) &&
    2 * (shared_bytes<T, Op, X>(Depth) + 1024) <= 233472;

/// Iterations between a block's publishing its edges and its neighbours'
/// reading them as rims, for stencil `Op` with exchange X. A star reads a
/// plane's rims only once the plane is its centre, r + 1 iterations after
/// computing it (the planes above are read at the centre column), so with
/// the tagged exchange a radius-1 star's blocks read, at the end of an
/// iteration, the rims published an iteration earlier: a neighbour may be
/// up to two iterations behind before a block waits, and no register is
/// held across the levels; it ran a little faster than reading them in
/// the iteration that publishes them. Radius 2 reads them at once: late,
/// double j3d13pt's two-block kernel spills and ran slower on one block,
/// and an earlier form that held the words across the iteration was slower
/// too (docs/decisions/device-tiling-kernel-variants.md).
/// A box reads the plane above whole in the very next iteration: 0.
template <class Op, class X>
inline constexpr int rim_lag = Op::shape == Shape::star&& Op::radius == 1 &&
                                       X::kind == ExchangeKind::tagged
                                   ? 1
                                   : 0;

/// Exchange planes per level, indexed by the publishing iteration modulo
/// their number. Rims read at once: a block cannot publish iteration it + 2
/// before its neighbours have published it + 1, which they do only after
/// reading iteration it; two planes. Rims read an iteration late: it + 3
/// needs the neighbours' it + 1 only, published before they read
/// iteration it (at the end of it + 1); four planes.
template <class Op, class X>
inline constexpr int exchange_parities = rim_lag<Op, X> == 0 ? 2 : 4;

/// Whether device tiling has a kernel of its own for launches whose tiles
/// all lie inside the grid in x and y (`Inside` below), for stencil `Op`
/// on values of type T with exchange X: radius-1 stars, where it was
/// measured to pay: no per-cell boundary selects. The double j3d13pt and
/// poisson kernels spill with it, and double j3d7pt gained from it only
/// once its warps split the rim work (`splits_rim_work`)
/// (docs/decisions/device-tiling-kernel-variants.md).
template <class T, class Op, class X>
inline constexpr bool has_inside_kernel =
    (Op::shape == Shape::star) && Op::radius == 1 && X::shares_rims;

/// Whether the plain-load kernel (prefetch 0) for values of type T copies
/// the input plane with cp.async straight into its level-0 ring slot, at
/// the start of the iteration that stores it, instead of loading it into
/// registers an iteration ahead and storing it at the iteration's end:
/// the slot is free for the whole iteration, and the registers that held
/// the plane (10 in double) go to the levels. Double only: it paid on
/// every double row in device tiling and on most in SM tiling; float lost,
/// a 4-byte copy per cell being twice as many copies per byte
/// (docs/decisions/device-tiling-kernel-variants.md).
template <class T>
inline constexpr bool copies_input_to_ring = sizeof(T) == 8;

/// `Staged`: the input comes through the staging ring (prefetch > 0); a
/// kernel of its own, so that the plain-load kernel stays as it was.
/// `MinBlocks`: blocks per SM the registers are limited for.
/// `Inside`: every tile of the launch lies inside the grid in x and y, so
/// only the planes beyond its z ends keep their values: no selects by
/// cell, and each level is written as soon as it is computed (which, in
/// the kernel for every launch, moved registers: double j3d7pt took 128
/// and ran 1% slower).
template <class T, class Op, int Depth, class Exchange, bool Staged,
          int MinBlocks = 1, int Threads = threads_per_block,
          bool Inside = false>
__global__ void __launch_bounds__(Threads, MinBlocks)
    device_tiling_3d(Params3D<T, Op, Exchange> const p) {
  static_assert(tile_x * tile_y % Threads == 0 && Threads % tile_x == 0);
  constexpr int r = Op::radius;
  constexpr int rows = rows_per_thread<Threads>;
  constexpr bool star = Op::shape == Shape::star;
  constexpr bool sums = sums_planes<T, Op, Exchange>;
  using S = TileShapeOf<T, Op, Exchange>;
  constexpr int L = S::lag;
  constexpr int parities = exchange_parities<Op, Exchange>;
  constexpr int rims_late = rim_lag<Op, Exchange>;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* const rings = reinterpret_cast<T*>(shared_raw);

  // The block's region and tile in it, and the planes it writes.
  Region g = p.region;
  int tile = static_cast<int>(blockIdx.x);
  int z_begin = 0, z_end = p.nz;
  long exchange_base = 0;  // the block's segment's exchange planes
  if (p.sm_tiles.columns == 0) {
    int const tiles = g.tiles_x * g.tiles_y;
    int const segment = tile / tiles;
    tile %= tiles;
    z_begin = segment * p.z_segment;
    z_end = min(p.nz, z_begin + p.z_segment);
    exchange_base = static_cast<long>(segment) * (Depth - 1) * parities *
                    tiles * S::edge_cells;
  } else {
    SmTiles const& iso = p.sm_tiles;
    int const index = tile % iso.tiles, segment = tile / iso.tiles;
    int const core_x = index % iso.columns * iso.core;
    int const core_y = index / iso.columns * iso.core;
    g = Region{core_x - Depth * r,
               core_y - Depth * r,
               1,
               1,
               core_x,
               min(p.nx, core_x + iso.core),
               core_y,
               min(p.ny, core_y + iso.core)};
    tile = 0;
    z_begin = segment * iso.z_segment;
    z_end = min(p.nz, z_begin + iso.z_segment);
  }
  // Input planes [z_first, z_last) are streamed: the output's, the depth*r
  // planes below and above them that its value depends on, and the fixed
  // boundary planes.
  int const z_first = max(z_begin - Depth * r, -r);
  int const z_last = min(z_end + Depth * r, p.nz + r);
  // Iteration it streams input plane it - r + shift; level t computes plane
  // it - r + shift - t*lag.
  int const shift = z_first + r;
  int const tile_col = tile % g.tiles_x;
  int const tile_row = tile / g.tiles_x;
  int const x_origin = g.x0 + tile_col * tile_x;  // grid x of tile cell 0
  int const y_origin = g.y0 + tile_row * tile_y;
  int const region_nx = g.tiles_x * tile_x;
  int const region_ny = g.tiles_y * tile_y;
  // An exchange plane holds only what is exchanged: the edge cells of
  // every tile of the region, each tile's in frame_cell order. A plane the
  // size of the region put every 32x32 tile on 64 (float) to 128 (double)
  // L2 lines for its 124-248 exchanged cells, so that the exchange held as
  // many lines as the region has cells, two to four planes per level.
  long const exchange_cells =
      static_cast<long>(g.tiles_x) * g.tiles_y * S::edge_cells;

  int const lx = static_cast<int>(threadIdx.x) % tile_x;
  int const ly0 = static_cast<int>(threadIdx.x) / tile_x * rows;
  int const gx = x_origin + lx;
  bool const x_inside = gx >= 0 && gx < p.nx;
  bool const x_core = gx >= g.core_x0 && gx < g.core_x1;

  auto grid_index = [&](int z, int y, int x) {
    return static_cast<long>(z + p.halo) * p.stride_z +
           static_cast<long>(y + p.halo) * p.stride_y + (x + p.halo);
  };
  // What the thread's cells are, where their values go: fixed per thread.
  bool xy_interior[rows], rim_source[rows], output[rows];
  long output_offset[rows];
#pragma unroll
  for (int j = 0; j < rows; ++j) {
    int const ly = ly0 + j;
    int const gy = y_origin + ly;
    xy_interior[j] = Inside || (x_inside && gy >= 0 && gy < p.ny);
    rim_source[j] = lx < r || lx >= tile_x - r || ly < r || ly >= tile_y - r;
    // Inside the grid and the region's core.
    output[j] = x_core && gy >= g.core_y0 && gy < g.core_y1;
    output_offset[j] = output[j] ? grid_index(0, gy, gx) : 0;
  }
  // The rim of a tile: the cells of the shared plane outside the 32x32
  // interior, `rim_per_thread` per thread, and where each comes from: the
  // exchange (a cell of the grid that a tile of this region computes) or
  // the input (fixed boundary cells, which never change; and, at a region's
  // edge inside the grid, cells only the overlap reads).
  struct RimCell {
    bool valid, from_exchange, input_inside;
    int shared_offset;
    int exchange_offset;  // within an exchange plane
    long input_offset;
  };
  // Radius-1 stars share the rim work between the warps: the rim loads,
  // at the iteration's end, on warps 0-3 (a star reads no rim corner: 128
  // cells), and the edges, computed first, on warps 4-7 (`first_edge_thread`
  // below), so that no warp does both.
  constexpr bool splits_rim_work =
      star && r == 1 && Exchange::shares_rims && Depth > 1;
  constexpr int rim_reads =
      splits_rim_work ? 2 * r * (tile_x + tile_y) : S::rim_cells;
  constexpr int rim_per_thread = (rim_reads + Threads - 1) / Threads;
  RimCell rim[rim_per_thread];
#pragma unroll
  for (int i = 0; i < rim_per_thread; ++i) {
    int const k = static_cast<int>(threadIdx.x) + i * Threads;
    auto const [sy, sx] = splits_rim_work
                              ? star_rim_cell(k, tile_x, tile_y, r)
                              : frame_cell(k, S::row, tile_y + 2 * r, r);
    int const y = y_origin + sy - r, x = x_origin + sx - r;
    RimCell& c = rim[i];
    c.valid = k < rim_reads;
    c.shared_offset = c.valid ? sy * S::row + sx : 0;
    bool const in_grid = y >= 0 && y < p.ny && x >= 0 && x < p.nx;
    bool const in_region =
        y >= g.y0 && y < g.y0 + region_ny && x >= g.x0 && x < g.x0 + region_nx;
    c.from_exchange = c.valid && in_grid && in_region;
    if (c.from_exchange) {
      int const ry = y - g.y0, rx = x - g.x0;  // within the region
      c.exchange_offset =
          (ry / tile_y * g.tiles_x + rx / tile_x) * S::edge_cells +
          frame_index(ry % tile_y, rx % tile_x, tile_x, tile_y, r);
    } else {
      c.exchange_offset = 0;
    }
    // Cells inside the grid but not the region reach only the overlap:
    // not worth a load.
    c.input_inside = c.valid && !in_grid && y >= -p.halo && y < p.ny + p.halo &&
                     x >= -p.halo && x < p.nx + p.halo;
    c.input_offset = c.input_inside ? grid_index(0, y, x) : 0;
  }

  // Edge cells: the tile's own cells within r of its sides, which the
  // neighbouring blocks read as their rims. Where blocks share rims, an
  // iteration computes and publishes them first, a cell per thread, and
  // only then the whole tile (whose edge results it discards), so that the
  // rims travel while the block computes; they are read at the iteration's
  // end. Computed last with the rest of the tile, the rims left the block
  // when its neighbours were already waiting for them: the largest stall
  // was on global loads, the rim reads among them, and the barrier after
  // them the third (ncu; docs/decisions/device-tiling-kernel-variants.md).
  constexpr bool edges_first = Exchange::shares_rims && Depth > 1;
  constexpr int edge_cells = S::edge_cells;
  constexpr int edges_per_thread =
      edges_first ? (edge_cells + Threads - 1) / Threads : 1;
  constexpr int first_edge_thread =
      splits_rim_work ? Threads - edges_per_thread * edge_cells : 0;
  static_assert(!splits_rim_work ||
                (edges_per_thread == 1 && rim_reads <= first_edge_thread &&
                 rim_reads % 32 == 0));
  struct EdgeCell {
    bool valid, xy_interior;
    int ring_offset;  // from the start of a ring plane
    int exchange_offset;
  };
  EdgeCell edge[edges_per_thread];
#pragma unroll
  for (int i = 0; i < edges_per_thread; ++i) {
    int const k =
        static_cast<int>(threadIdx.x) + i * Threads - first_edge_thread;
    auto const [ey, ex] = frame_cell(k, tile_x, tile_y, r);
    int const y = y_origin + ey, x = x_origin + ex;
    EdgeCell& e = edge[i];
    // `first_edge_thread == 0 ||` folds the test away where edges start at
    // thread 0, so those kernels compile exactly as before the split (a
    // plain `k >= 0` turned their signed compare unsigned in the PTX).
    e.valid =
        edges_first && (first_edge_thread == 0 || k >= 0) && k < edge_cells;
    e.xy_interior = Inside || (y >= 0 && y < p.ny && x >= 0 && x < p.nx);
    e.ring_offset = e.valid ? (ey + r) * S::row + ex + r : 0;
    e.exchange_offset = e.valid ? tile * edge_cells + k : 0;
  }

  for (long k = threadIdx.x; k < static_cast<long>(Depth) * S::ring * S::plane;
       k += Threads) {
    rings[k] = T(0);
  }
  // What a level carries in registers from one iteration to the next, for
  // the thread's own cells and (levels 1..Depth-1) for its edge cells. A
  // star: the centres of the planes below it, which the thread read in its
  // last r iterations, oldest first. A box summed by plane: the sums of the
  // 2r planes above the one it finishes, lowest first, each holding the
  // planes streamed so far. Zero, as the rings start.
  constexpr int carried = star ? r : (sums ? 2 * r : 0);
  [[maybe_unused]] T below[Depth][carried > 0 ? carried : 1][rows] = {};
  [[maybe_unused]] T edge_below[Depth > 1 ? Depth - 1 : 1]
                               [carried > 0 ? carried : 1][edges_per_thread] =
                                   {};

  // The level-0 plane is loaded one iteration ahead (its loads in flight
  // during the barrier and the rim exchange) or, in double, copied at the
  // start of its own iteration. Thread-invariant parts of each loaded
  // cell's address are computed once.
  constexpr int loads = (S::plane + Threads - 1) / Threads;
  constexpr bool direct = copies_input_to_ring<T> && !Staged;
  // Copies into the ring: offsets within a padded plane, 32 bits each (a
  // plan refuses planes beyond that: expect_plane_indexable), from a plane
  // pointer set once per iteration.
  std::conditional_t<direct, int, long> input_offset[loads];
  bool input_inside[loads];
#pragma unroll
  for (int i = 0; i < loads; ++i) {
    int const k = static_cast<int>(threadIdx.x) + i * Threads;
    int const y = y_origin + k / S::row - r, x = x_origin + k % S::row - r;
    input_inside[i] = k < S::plane && y >= -p.halo && y < p.ny + p.halo &&
                      x >= -p.halo && x < p.nx + p.halo;
    if constexpr (direct) {
      input_offset[i] =
          input_inside[i] ? (y + p.halo) * p.stride_y + (x + p.halo) : 0;
    } else {
      input_offset[i] = input_inside[i] ? grid_index(0, y, x) : 0;
    }
  }
  T incoming[loads];
  auto fetch_input = [&](int z) {
    bool const z_inside = z >= -p.halo && z < z_last;
#pragma unroll
    for (int i = 0; i < loads; ++i) {
      incoming[i] =
          z_inside && input_inside[i]
              ? p.in[input_offset[i] + static_cast<long>(z) * p.stride_z]
              : T(0);
    }
  };
  // Prefetch s > 0: plane z is copied s iterations before its use into
  // staging slot (z - z_first) % (s + 1), the slot used an iteration ago.
  int const stages = p.prefetch;
  RuntimeAsyncCopy const async{stages};
  T* const staging = rings + Depth * S::ring * S::plane;
  auto stage_input = [&](int z, int slot) {
    bool const z_inside = z >= -p.halo && z < z_last;
#pragma unroll
    for (int i = 0; i < loads; ++i) {
      int const k = static_cast<int>(threadIdx.x) + i * Threads;
      if (k >= S::plane) continue;
      T* const to = staging + slot * S::plane + k;
      if (z_inside && input_inside[i]) {
        async.copy(to,
                   p.in + input_offset[i] + static_cast<long>(z) * p.stride_z);
      } else {
        *to = T(0);
      }
    }
    async.commit();
  };
  int issue_slot = stages, read_slot = 0;
  if constexpr (direct) {
    // Each plane is copied at the start of the iteration that stores it.
  } else if constexpr (!Staged) {
    fetch_input(z_first);
  } else {
    for (int k = 0; k < stages; ++k) stage_input(z_first + k, k);
  }
  __syncthreads();

  // The loop is unrolled by the ring's period, so that every plane's ring
  // slot, and with it every shared-memory address below, is a compile-time
  // offset from the thread's cell (sm_90 SASS, j3d7pt double at depth 6:
  // the slot arithmetic was most of the loop's instructions). The few
  // iterations the rounding adds compute planes beyond the grid, which are
  // neither exchanged nor written.
  constexpr int period = S::ring;
  int const iterations =
      (z_end - shift + r + Depth * L + period - 1) / period * period;
  T* const cell_rings = rings + (ly0 + r) * S::row + lx + r;
  // Ring slot `slot` of `level`, relative to the thread's first cell.
  auto cell_plane = [&](int level, int slot) {
    return cell_rings + (level * S::ring + slot) * S::plane;
  };
  // The functor at `centre` (an offset within a ring plane) of the level
  // whose ring plane dz (-r..r) `plane(dz)` points at, and that centre's
  // value. A star reads its planes below from `kept(0..r-1)` (oldest first)
  // and shifts the centre it read into them.
  struct Evaluated {
    T value, centre;
  };
  auto evaluate = [&](auto plane, int centre, auto kept) {
    Evaluated e;
    if constexpr (star) {
      StarNeighbourhood<T, r> nb{};
#pragma unroll
      for (int dz = 0; dz <= r; ++dz) nb.plane[dz] = plane(dz);
#pragma unroll
      for (int k = 0; k < r; ++k) nb.below[k] = kept(k);
      nb.stride_y = S::row;
      nb.centre = centre;
      e.value = static_cast<T>(p.op(nb));
      e.centre = nb.plane[0][centre];
#pragma unroll
      for (int k = 0; k + 1 < r; ++k) kept(k) = kept(k + 1);
      kept(r - 1) = e.centre;
    } else {
      stencil::detail::PlaneRingNeighbourhood<T, r> nb{};
#pragma unroll
      for (int dz = -r; dz <= r; ++dz) nb.plane[dz + r] = plane(dz);
      nb.stride_y = S::row;
      nb.centre = centre;
      e.value = static_cast<T>(p.op(nb));
      e.centre = nb.plane[r][centre];
    }
    return e;
  };
  // A box summed by plane: adds the part of the newest plane, `plane(r)`, to
  // the sums `kept(0..2r-1)` of the cells above `centre` and returns the
  // cell it finishes, or its centre value where `keeps_centre` (a cell
  // outside the grid keeps its fixed value; only those load it). A function
  // of its own, so that the kernels that do not sum by plane stay as they
  // were (their registers move with any change to `evaluate`).
  auto sum_planes = [&](auto plane, int centre, auto kept, bool keeps_centre) {
    T value = add_newest_slice<r, T>(
        [&](auto dz) {
          return p.op(PlaneTermsNeighbourhood<T, decltype(dz)::value, r>{
              plane(r), centre, S::row});
        },
        kept);
    if (keeps_centre) value = plane(0)[centre];
    return value;
  };
  auto iteration = [&](auto phase_constant, int it) {
    constexpr int phase = decltype(phase_constant)::value;
    // Slot of the plane `it - r - t*lag + dz` (counted from the shift: the
    // slots only need to differ, not to match z).
    constexpr auto slot = [](int t, int dz) {
      return S::slot(phase - r - t * L + dz);
    };
    // The input plane into its ring slot, which no level reads in this
    // iteration (the slots of a ring differ, as below): the copies land
    // while the levels compute, and are waited for before the barrier.
    if constexpr (direct) {
      if (int const z = it + shift - r; z < z_last) {
        T* const plane = rings + slot(0, 0) * S::plane;
        T const* const from = p.in + static_cast<long>(z + p.halo) * p.stride_z;
        bool const z_inside = z >= -p.halo;
#pragma unroll
        for (int i = 0; i < loads; ++i) {
          int const k = static_cast<int>(threadIdx.x) + i * Threads;
          if (k >= S::plane) continue;
          if (z_inside && input_inside[i]) {
            RuntimeAsyncCopy::copy(plane + k, from + input_offset[i]);
          } else {
            plane[k] = T(0);
          }
        }
        RuntimeAsyncCopy::commit();
      }
    }
    // Depth 1 exchanges nothing, and has no use for it.
    [[maybe_unused]] unsigned const tag =
        p.tag_base + static_cast<unsigned>(it) + 1u;
    // Planes in [-r, nz + r) are exchanged (published and read); the others
    // reach only discarded cells.
    auto exchanged = [&](int z) { return z >= -r && z < p.nz + r; };
    // First cell of the exchange plane of level t published in iteration
    // `when`.
    auto exchange_plane = [&](int t, int when) {
      return exchange_base +
             (static_cast<long>(t - 1) * parities + (when & (parities - 1))) *
                 exchange_cells;
    };
    // The rims this iteration reads: of the planes levels 1..Depth-1
    // computed in this iteration, from the blocks that computed them, or
    // fixed boundary values. Every level's loads are issued before any is
    // waited for or stored, so their L2 latencies overlap instead of adding
    // up. rim_z(t) is the plane level t computes, spelled out again in the
    // loops below: with those going through rim_z too, ptxas allocated
    // registers differently in most kernels, and double j3d13pt's default
    // (depth 2, two blocks per SM) spilled 4 bytes (sm_90, CUDA 13).
    [[maybe_unused]] auto rim_z = [&](int t) {
      return it - rims_late + shift - r - t * L;
    };
    // The iteration the rims read here were published in, and whether it
    // published them (nothing was before the first).
    [[maybe_unused]] int const rim_it = it - rims_late;
    [[maybe_unused]] unsigned const rim_tag = tag - rims_late;
    [[maybe_unused]] auto rims_exist = [&](int t) {
      return (rims_late == 0 || rim_it >= 0) && exchanged(rim_z(t));
    };
    [[maybe_unused]]
    typename Exchange::Raw raw[Depth > 1 ? Depth - 1 : 1][rim_per_thread] = {};
    [[maybe_unused]] T fixed[Depth > 1 ? Depth - 1 : 1][rim_per_thread];
    [[maybe_unused]] auto load_rims = [&] {
#pragma unroll
      for (int t = 1; t < Depth; ++t) {
        int const z = rim_z(t);
        bool const published = rims_exist(t);
        bool const z_padded = z >= -p.halo && z < p.nz + p.halo;
#pragma unroll
        for (int i = 0; i < rim_per_thread; ++i) {
          if (published && rim[i].from_exchange) {
            raw[t - 1][i] = p.exchange.fetch(exchange_plane(t, rim_it) +
                                             rim[i].exchange_offset);
          }
          fixed[t - 1][i] = rim[i].input_inside && z_padded
                                ? p.in[rim[i].input_offset +
                                       static_cast<long>(z) * p.stride_z]
                                : T(0);
        }
      }
    };
    // The edge cells of levels 1..Depth-1, published at once.
    if constexpr (edges_first) {
#pragma unroll
      for (int t = 1; t < Depth; ++t) {
        int const z = it + shift - r - t * L;
        if constexpr (sums) {
          // A near-copy of the loop below, kept apart on purpose: folding
          // the two moved the other kernels' registers, so that some
          // spilled or lost their second block per SM
          // (docs/decisions/device-tiling-kernel-variants.md).
          bool const z_inside = z >= 0 && z < p.nz;
          // Every plane is added in, published or not.
          auto level_plane = [&](int dz) -> T const* {
            return rings + ((t - 1) * S::ring + slot(t, dz)) * S::plane;
          };
          T* const written = rings + (t * S::ring + slot(t, 0)) * S::plane;
#pragma unroll
          for (int i = 0; i < edges_per_thread; ++i) {
            if (!edge[i].valid) continue;
            T const kept = sum_planes(
                level_plane, edge[i].ring_offset,
                [&](int k) -> T& { return edge_below[t - 1][k][i]; },
                !(z_inside && edge[i].xy_interior));
            if (!exchanged(z)) continue;
            written[edge[i].ring_offset] = kept;
            p.exchange.publish(exchange_plane(t, it) + edge[i].exchange_offset,
                               kept, tag);
          }
          continue;
        }
        if (!exchanged(z)) continue;
        bool const z_inside = z >= 0 && z < p.nz;
        auto level_plane = [&](int dz) -> T const* {
          return rings + ((t - 1) * S::ring + slot(t, dz)) * S::plane;
        };
        T* const written = rings + (t * S::ring + slot(t, 0)) * S::plane;
#pragma unroll
        for (int i = 0; i < edges_per_thread; ++i) {
          if (!edge[i].valid) continue;
          auto const [value, centre] =
              evaluate(level_plane, edge[i].ring_offset,
                       [&](int k) -> T& { return edge_below[t - 1][k][i]; });
          T const kept = z_inside && edge[i].xy_interior ? value : centre;
          written[edge[i].ring_offset] = kept;
          p.exchange.publish(exchange_plane(t, it) + edge[i].exchange_offset,
                             kept, tag);
        }
      }
    }
    // Levels 1..Depth: level t computes plane it + shift - r - t*lag. All
    // levels read first, then all write: the slots differ, but the compiler
    // cannot know that, and reads after writes would serialise the levels.
    // The kernel for tiles inside the grid writes each level at once, which
    // measured faster (docs/decisions/device-tiling-kernel-variants.md).
    T values[Depth][rows];
    // Level t's cells into its ring or, the last level, the output.
    [[maybe_unused]] auto write_level = [&](int t) {
      int const z = it + shift - r - t * L;
      bool const wanted =
          t < Depth ? exchanged(z) : (z >= z_begin && z < z_end);
      if (!wanted) return;
#pragma unroll
      for (int j = 0; j < rows; ++j) {
        T const value = values[t - 1][j];
        if (t < Depth) {
          if (edges_first && rim_source[j]) continue;
          cell_plane(t, slot(t, 0))[j * S::row] = value;
        } else if (output[j]) {
          p.out[output_offset[j] + static_cast<long>(z) * p.stride_z] = value;
        }
      }
    };
#pragma unroll
    for (int t = 1; t <= Depth; ++t) {
      int const z = it + shift - r - t * L;
      bool const z_inside = z >= 0 && z < p.nz;
#pragma unroll
      for (int j = 0; j < rows; ++j) {
        bool const interior = z_inside && xy_interior[j];
        // Evaluated for every cell (all its taps are inside the rings), then
        // selected: a conditional evaluation would put each cell's loads in
        // its own branch, and the taps that neighbouring rows share could
        // not be loaded once for both.
        if constexpr (sums) {
          values[t - 1][j] = sum_planes(
              [&](int dz) -> T const* {
                return cell_plane(t - 1, slot(t, dz));
              },
              j* S::row, [&](int k) -> T& { return below[t - 1][k][j]; },
              !interior);
        } else {
          auto const [value, centre] = evaluate(
              [&](int dz) -> T const* {
                return cell_plane(t - 1, slot(t, dz));
              },
              j* S::row, [&](int k) -> T& { return below[t - 1][k][j]; });
          values[t - 1][j] = interior ? value : centre;
        }
      }
      if constexpr (Inside) write_level(t);
    }
    if constexpr (!Inside) {
      // The loop write_level's body comes from, left as it was: calling
      // write_level here moved registers (double j3d13pt's two-block
      // kernel spilled 16 bytes).
#pragma unroll
      for (int t = 1; t <= Depth; ++t) {
        int const z = it + shift - r - t * L;
        bool const wanted =
            t < Depth ? exchanged(z) : (z >= z_begin && z < z_end);
        if (!wanted) continue;
#pragma unroll
        for (int j = 0; j < rows; ++j) {
          T const value = values[t - 1][j];
          if (t < Depth) {
            // Edge cells were written (and published) first.
            if (edges_first && rim_source[j]) continue;
            cell_plane(t, slot(t, 0))[j * S::row] = value;
          } else if (output[j]) {
            p.out[output_offset[j] + static_cast<long>(z) * p.stride_z] = value;
          }
        }
      }
    }
    // Level 0: the input plane, with its rim, copied into its slot at this
    // iteration's start, loaded last iteration, or copied `stages`
    // iterations ago.
    if constexpr (direct) {
      RuntimeAsyncCopy::wait_all_but(0);
    } else if (int const z = it + shift - r; z < z_last) {
      T* const plane = rings + slot(0, 0) * S::plane;
      if constexpr (Staged) {
        stage_input(z + stages, issue_slot);
        issue_slot = issue_slot == stages ? 0 : issue_slot + 1;
        async.wait();
#pragma unroll
        for (int i = 0; i < loads; ++i) {
          int const k = static_cast<int>(threadIdx.x) + i * Threads;
          if (k < S::plane) incoming[i] = staging[read_slot * S::plane + k];
        }
        read_slot = read_slot == stages ? 0 : read_slot + 1;
      }
#pragma unroll
      for (int i = 0; i < loads; ++i) {
        int const k = static_cast<int>(threadIdx.x) + i * Threads;
        if (k < S::plane) plane[k] = incoming[i];
      }
      if constexpr (!Staged) fetch_input(z + 1);
    }
    if constexpr (Depth > 1) {
      p.exchange.arrive();
    } else {
      __syncthreads();  // one level: nothing to exchange
    }
    // Issued halfway through the levels instead, so that their round trip
    // overlapped the rest, the loads of rims published in this iteration
    // held registers across it: float poisson at depth 4 lost its second
    // block per SM, and most other rows ran slower
    // (docs/decisions/device-tiling-kernel-variants.md).
    if constexpr (Depth > 1) {
      load_rims();
      // Until every level's words carry the tag: the loads of all levels
      // that are not yet there are reissued together, so a late neighbour
      // costs one more round trip, not one per level.
      for (bool all_ready = false; !all_ready;) {
        all_ready = true;
#pragma unroll
        for (int t = 1; t < Depth; ++t) {
          bool const published = rims_exist(t);
#pragma unroll
          for (int i = 0; i < rim_per_thread; ++i) {
            if (published && rim[i].from_exchange &&
                !Exchange::ready(raw[t - 1][i], rim_tag)) {
              all_ready = false;
              raw[t - 1][i] = p.exchange.fetch(exchange_plane(t, rim_it) +
                                               rim[i].exchange_offset);
            }
          }
        }
      }
#pragma unroll
      for (int t = 1; t < Depth; ++t) {
        if (!rims_exist(t)) continue;
        // The plane they belong to: the one written in iteration rim_it.
        T* const plane = rings + (t * S::ring + slot(t, -rims_late)) * S::plane;
#pragma unroll
        for (int i = 0; i < rim_per_thread; ++i) {
          T const value = rim[i].from_exchange ? Exchange::value(raw[t - 1][i])
                                               : fixed[t - 1][i];
          if (rim[i].valid) plane[rim[i].shared_offset] = value;
        }
      }
    }
    __syncthreads();
  };
  for (int it0 = 0; it0 < iterations; it0 += period) {
    [&]<int... Phase>(std::integer_sequence<int, Phase...>) {
      (iteration(std::integral_constant<int, Phase>{}, it0 + Phase), ...);
    }
    (std::make_integer_sequence<int, period>{});
  }
  // No copy may land after the block has left its shared memory.
  if constexpr (Staged) RuntimeAsyncCopy::wait_all_but(0);
}

}  // namespace stencil::native_cuda::device_tiling
