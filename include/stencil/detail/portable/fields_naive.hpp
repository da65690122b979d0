// SPDX-License-Identifier: Apache-2.0
// One step of a multi-field stencil, one kernel: every written field's new
// level from every field's current (and earlier) levels.
#pragma once

#include <stencil/detail/fields/accessor.hpp>
#include <stencil/detail/portable/layout.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>

namespace stencil::detail {

/// Device spaces: one cell per thread, x fastest, so that a warp's loads and
/// stores of each field are contiguous (every field is its own array).
/// Host spaces: a row per iteration, so the inner loop over x vectorises.
template <class T, int Rank, class Op, class Index>
struct FieldsNaiveSweep {
  using Fields = typename Op::fields;
  struct PerCell {};
  struct PerRow {};

  FieldBuffers<T, Fields> buffers;
  Op op;
  PaddedLayout layout;
  double time;
  PositionMap map;

  KOKKOS_FORCEINLINE_FUNCTION void update(int z, int y, int x) const {
    std::int64_t const at = layout.offset<std::int64_t>(z, y, x);
    store_fields(buffers, at,
                 op(FieldsNeighbourhood<T, Rank, Fields>{
                     buffers, at, layout.stride_y, layout.stride_z, z, y, x,
                     time, map}));
  }

  KOKKOS_FUNCTION void operator()(PerCell, Index cell) const {
    int const x = static_cast<int>(cell % layout.nx);
    Index const row = cell / layout.nx;
    int const y = static_cast<int>(row % layout.ny);
    int const z = static_cast<int>(row / layout.ny);
    update(z, y, x);
  }

  KOKKOS_FUNCTION void operator()(PerRow, Index row) const {
    int const y = static_cast<int>(row % layout.ny);
    int const z = static_cast<int>(row / layout.ny);
    for (int x = 0; x < layout.nx; ++x) update(z, y, x);
  }
};

template <class ExecSpace, class T, int Rank, class Op>
void fields_naive_step(ExecSpace const& space,
                       FieldBuffers<T, typename Op::fields> const& buffers,
                       Op const& op, PaddedLayout const& layout, double time,
                       PositionMap const& map = {}) {
  auto launch = [&](auto index) {
    using Index = decltype(index);
    using Sweep = FieldsNaiveSweep<T, Rank, Op, Index>;
    Sweep const sweep{buffers, op, layout, time, map};
    Index const rows = static_cast<Index>(layout.nz) * layout.ny;
    if constexpr (is_host_space_v<ExecSpace>) {
      Kokkos::parallel_for(
          "stencil::fields_naive",
          Kokkos::RangePolicy<ExecSpace, typename Sweep::PerRow,
                              Kokkos::IndexType<Index>>(space, 0, rows),
          sweep);
    } else {
      Kokkos::parallel_for(
          "stencil::fields_naive",
          Kokkos::RangePolicy<ExecSpace, typename Sweep::PerCell,
                              Kokkos::IndexType<Index>>(space, 0,
                                                        rows * layout.nx),
          sweep);
    }
  };
  // 32-bit cell indices where they fit: cheaper division on GPUs.
  if (layout.interior_cells() < std::numeric_limits<std::int32_t>::max()) {
    launch(std::int32_t{});
  } else {
    launch(std::int64_t{});
  }
}

}  // namespace stencil::detail
