// SPDX-License-Identifier: Apache-2.0
// One step of a multi-field stencil, one kernel: every written field's new
// level from every field's current (and earlier) levels.
#pragma once

#include <stencil/detail/fields/accessor.hpp>
#include <stencil/detail/portable/fields_naive_window.hpp>
#include <stencil/detail/portable/layout.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>

namespace stencil::detail {

/// The host path: one row per iteration, so that the inner loop over x
/// vectorises. Device spaces run the window kernel (fields_naive_window.hpp).
template <class T, int Rank, class Op, class Index>
struct FieldsNaiveRows {
  using Fields = typename Op::fields;

  FieldBuffers<T, Fields> buffers;
  Op op;
  PaddedLayout layout;
  double time;
  PositionMap map;

  KOKKOS_FUNCTION void operator()(Index row) const {
    int const y = static_cast<int>(row % layout.ny);
    int const z = static_cast<int>(row / layout.ny);
    with_constant_identity(
        map, [&](PositionMap const& positions) { sweep_row(z, y, positions); });
  }

 private:
  KOKKOS_FORCEINLINE_FUNCTION void sweep_row(int z, int y,
                                             PositionMap const& at) const {
    for (int x = 0; x < layout.nx; ++x) {
      std::int64_t const cell = layout.offset<std::int64_t>(z, y, x);
      store_fields(buffers, cell,
                   op(FieldsNeighbourhood<T, Rank, Fields>{
                       buffers, cell, layout.stride_y, layout.stride_z, z, y, x,
                       time, at}));
    }
  }
};

/// Padded cells of one buffer: the bound of every offset a kernel forms.
inline std::int64_t padded_buffer_cells(PaddedLayout const& layout, int rank) {
  std::int64_t const rows = rank >= 2 ? layout.ny + 2 * layout.halo : 1;
  std::int64_t const planes = rank >= 3 ? layout.nz + 2 * layout.halo : 1;
  return planes * rows * (layout.nx + 2 * layout.halo);
}

template <class ExecSpace, class T, int Rank, class Op>
void fields_naive_step(ExecSpace const& space,
                       FieldBuffers<T, typename Op::fields> const& buffers,
                       Op const& op, PaddedLayout const& layout, double time,
                       PositionMap const& map = {}) {
  auto launch = [&](auto index) {
    using Index = decltype(index);
    if constexpr (is_host_space_v<ExecSpace>) {
      using Sweep = FieldsNaiveRows<T, Rank, Op, Index>;
      Index const rows = static_cast<Index>(layout.nz) * layout.ny;
      Kokkos::parallel_for(
          "stencil::fields_naive",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(space, 0,
                                                                   rows),
          Sweep{buffers, op, layout, time, map});
    } else {
      int const v =
          fields_vector_width<T, Rank, typename Op::fields>(buffers, layout);
      if constexpr (max_vector_width_v<T> >= 4) {
        if (v >= 4) {
          fields_window_step_as<4, Index>(space, buffers, op, layout, time,
                                          map);
          return;
        }
      }
      if constexpr (max_vector_width_v<T> >= 2) {
        if (v >= 2) {
          fields_window_step_as<2, Index>(space, buffers, op, layout, time,
                                          map);
          return;
        }
      }
      fields_window_step_as<1, Index>(space, buffers, op, layout, time, map);
    }
  };
  // 32-bit indices where they fit (half the range: the thread count rounds
  // rows up to whole warps and row groups): cheaper division on GPUs.
  if (padded_buffer_cells(layout, Rank) <
      std::numeric_limits<std::int32_t>::max() / 2) {
    launch(std::int32_t{});
  } else {
    launch(std::int64_t{});
  }
}

}  // namespace stencil::detail
