// SPDX-License-Identifier: Apache-2.0
// The halo refresh of one padded buffer: every side's boundary rule
// (boundary.hpp) as portable kernels, one launch per axis.
#pragma once

#include <stencil/boundary.hpp>
#include <stencil/detail/portable/layout.hpp>

#include <Kokkos_Core.hpp>

#include <any>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>

namespace stencil::detail {

/// The interior cell whose value halo cell `g` of an axis of `n` cells
/// takes on a side of `kind` (boundary.hpp): periodic wraps, neumann
/// mirrors across the face, reflecting across the boundary cell; any other
/// kind keeps `g`.
KOKKOS_INLINE_FUNCTION constexpr int halo_source(Boundary kind, int g, int n) {
  switch (kind) {
    case Boundary::periodic:
      return ((g % n) + n) % n;
    case Boundary::neumann:
      return g < 0 ? -1 - g : 2 * n - 1 - g;
    case Boundary::reflecting:
      return g < 0 ? -g : 2 * n - 2 - g;
    default:
      return g;
  }
}

/// Brings the halo of one side, or both, of one axis (0 = z, 1 = y, 2 = x)
/// up to date. The other axes run over their full padded range, so doing
/// x, then y, then z also fills edges and corners. One thread per halo
/// cell; the sides it covers are `first_side` and, with `sides` = 2, the
/// high one too. Every source cell lies in the interior (the grid's checks
/// on extents make it so), so the cells of one launch are independent.
template <class T>
struct BoundaryHaloAxis {
  T* data;
  /// Dirichlet values of each side, in the order of its halo cells taken
  /// row-major with `halo` cells along `axis`; null for other kinds.
  T const* values[2];
  Boundary kinds[2];
  int axis;
  int halo;
  int extent;  // interior extent along `axis`
  int first_side;
  int sides;
  int padded[3];  // padded extents (z, y, x); unused dims are 1
  std::int64_t stride[3];

  KOKKOS_FUNCTION void operator()(std::int64_t i) const {
    int coord[3];
    for (int a = 2; a >= 0; --a) {
      int const n = a == axis ? sides * halo : padded[a];
      coord[a] = static_cast<int>(i % n);
      i /= n;
    }
    int const side = first_side + coord[axis] / halo;
    int const k = coord[axis] % halo;
    // The halo cell's interior coordinate along `axis`.
    int const dst = side == 0 ? k - halo : extent + k;
    std::int64_t dst_at = 0;
    for (int a = 0; a < 3; ++a) {
      dst_at += (a == axis ? dst + halo : coord[a]) * stride[a];
    }
    Boundary const kind = kinds[side];
    if (kind == Boundary::dirichlet) {
      std::int64_t at = 0;
      for (int a = 0; a < 3; ++a) {
        at = at * (a == axis ? halo : padded[a]) + (a == axis ? k : coord[a]);
      }
      data[dst_at] = values[side][at];
      return;
    }
    int const src = halo_source(kind, dst, extent);
    data[dst_at] =
        data[dst_at + static_cast<std::int64_t>(src - dst) * stride[axis]];
  }
};

/// The dirichlet values of one refresh: evaluated on the host into `host`,
/// copied to `device` (the same buffer where the execution space reads
/// host memory), read by the kernels. Kept in the BoundarySet between
/// refreshes; `in_use_by` is the space whose enqueued work may still read
/// the buffers.
template <class T, class ExecSpace>
struct DirichletScratch {
  using device_view = Kokkos::View<T*, typename ExecSpace::memory_space>;
  device_view device;
  decltype(Kokkos::create_mirror_view(std::declval<device_view>())) host;
  std::optional<ExecSpace> in_use_by;
};

/// Brings the halo of one padded buffer (`data`, laid out as `layout`) up
/// to date with the boundary `set` at `time`: axis by axis from x to the
/// slowest, each over the full padded range of the others (boundary.hpp
/// says what that makes of edges and corners). Fixed sides are left alone.
/// Dirichlet sides evaluate their function on the host, for that side's
/// halo cells only, between blocks; on a space that is not the host the
/// values travel in one copy per refresh. Asynchronous on `space`, like
/// the kernels, except that a refresh with dirichlet sides first waits for
/// the previous one's kernels to have read its values.
template <class ExecSpace, class T, int Rank>
void refresh_boundaries(ExecSpace const& space, T* data,
                        PaddedLayout const& layout,
                        BoundarySet<Rank> const& set, double time) {
  int const h = layout.halo;
  if (h == 0 || set.all_fixed()) return;
  std::array<int, Rank> extents;
  int const interior[3] = {layout.nz, layout.ny, layout.nx};
  for (int d = 0; d < Rank; ++d) extents[d] = interior[3 - Rank + d];
  set.validate(extents, h, "refresh_boundaries");

  BoundaryHaloAxis<T> fill{};
  fill.data = data;
  fill.halo = h;
  for (int a = 0; a < 3; ++a) fill.padded[a] = 1;
  fill.stride[0] = layout.stride_z;
  fill.stride[1] = layout.stride_y;
  fill.stride[2] = 1;
  for (int a = 3 - Rank; a < 3; ++a) fill.padded[a] = interior[a] + 2 * h;
  auto const cells_beside = [&](int axis) {
    std::int64_t count = h;
    for (int a = 0; a < 3; ++a) {
      if (a != axis) count *= fill.padded[a];
    }
    return count;
  };

  // The dirichlet values of every side, in one buffer: the order of the
  // launches below, low side first.
  std::int64_t offset[3][2] = {};
  std::int64_t total = 0;
  for (int axis = 2; axis >= 3 - Rank; --axis) {
    for (int s = 0; s < 2; ++s) {
      if (set.kind_at(axis - (3 - Rank), s) == Boundary::dirichlet) {
        offset[axis][s] = total;
        total += cells_beside(axis);
      }
    }
  }
  using Scratch = DirichletScratch<T, ExecSpace>;
  Scratch* scratch = nullptr;
  if (total > 0) {
    scratch = std::any_cast<Scratch>(&set.scratch());
    // The buffers are rewritten only after what the last refresh enqueued
    // has read them.
    if (scratch && scratch->in_use_by) {
      scratch->in_use_by->fence("stencil::refresh_boundaries: values read");
      scratch->in_use_by.reset();
    }
    if (!scratch ||
        static_cast<std::int64_t>(scratch->device.extent(0)) < total) {
      set.scratch().reset();  // frees the old buffers first
      Scratch fresh;
      fresh.device = typename Scratch::device_view(
          Kokkos::view_alloc(Kokkos::WithoutInitializing,
                             "stencil::dirichlet_halo"),
          total);
      fresh.host = Kokkos::create_mirror_view(fresh.device);
      set.scratch() = std::move(fresh);
      scratch = std::any_cast<Scratch>(&set.scratch());
    }
    T* const host = scratch->host.data();
    for (int axis = 2; axis >= 3 - Rank; --axis) {
      int const d = axis - (3 - Rank);
      for (int s = 0; s < 2; ++s) {
        if (set.kind_at(d, s) != Boundary::dirichlet) continue;
        auto const& f = set.function_at(d, s);
        int lo[3], hi[3];  // interior coordinates of the side's cells
        for (int a = 0; a < 3; ++a) {
          bool const used = a >= 3 - Rank;
          lo[a] = used ? -h : 0;
          hi[a] = used ? interior[a] + h : 1;
        }
        lo[axis] = s == 0 ? -h : interior[axis];
        hi[axis] = lo[axis] + h;
        std::int64_t at = offset[axis][s];
        std::array<int, Rank> cell;
        for (int z = lo[0]; z < hi[0]; ++z) {
          for (int y = lo[1]; y < hi[1]; ++y) {
            for (int x = lo[2]; x < hi[2]; ++x) {
              int const c[3] = {z, y, x};
              for (int e = 0; e < Rank; ++e) cell[e] = c[3 - Rank + e];
              host[at++] = static_cast<T>(f(cell, time));
            }
          }
        }
      }
    }
    if (scratch->host.data() != scratch->device.data()) {
      auto const range = std::make_pair(std::int64_t{0}, total);
      Kokkos::deep_copy(space, Kokkos::subview(scratch->device, range),
                        Kokkos::subview(scratch->host, range));
    }
    scratch->in_use_by = space;
  }

  for (int axis = 2; axis >= 3 - Rank; --axis) {
    int const d = axis - (3 - Rank);
    Boundary const low = set.kind_at(d, 0), high = set.kind_at(d, 1);
    if (low == Boundary::fixed && high == Boundary::fixed) continue;
    fill.axis = axis;
    fill.extent = interior[axis];
    fill.kinds[0] = low;
    fill.kinds[1] = high;
    fill.first_side = low == Boundary::fixed ? 1 : 0;
    fill.sides = low != Boundary::fixed && high != Boundary::fixed ? 2 : 1;
    for (int s = 0; s < 2; ++s) {
      fill.values[s] = fill.kinds[s] == Boundary::dirichlet
                           ? scratch->device.data() + offset[axis][s]
                           : nullptr;
    }
    Kokkos::parallel_for(
        "stencil::boundary_halo",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
            space, 0, fill.sides * cells_beside(axis)),
        fill);
  }
}

}  // namespace stencil::detail
