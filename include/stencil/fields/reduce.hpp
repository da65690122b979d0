// SPDX-License-Identifier: Apache-2.0
// Reductions over a field's interior, for the checks a solver runs between
// steps (a norm, a conserved sum, a NaN check) without a kernel of its own.
#pragma once

#include <stencil/fields/state.hpp>
#include <stencil/grid.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>

namespace stencil {

/// What a reduction returns over the interior of one level.
struct FieldSummary {
  double sum = 0;       ///< sum of the values
  double sum_sq = 0;    ///< sum of their squares
  double max_abs = 0;   ///< largest magnitude
  long long nans = 0;   ///< values that are not finite (NaN or infinite)
  long long cells = 0;  ///< interior cells
  /// sqrt(sum_sq / cells): the root-mean-square value.
  double rms() const { return cells ? std::sqrt(sum_sq / cells) : 0.0; }
  double mean() const { return cells ? sum / cells : 0.0; }
};

namespace detail {

struct SummaryReducer {
  double sum, sum_sq, max_abs;
  long long nans;
};

/// Reduces the interior of `padded` (a padded LayoutRight view with `halo`
/// cells on each side) on `space`. Synchronous: returns the values.
template <class ExecSpace, class View>
FieldSummary summarize(ExecSpace const& space, View const& padded, int halo) {
  constexpr int rank = View::rank;
  using T = typename View::non_const_value_type;
  int n[3] = {1, 1, 1};
  for (int d = 0; d < rank; ++d) {
    n[3 - rank + d] = static_cast<int>(padded.extent(d)) - 2 * halo;
  }
  T const* data = padded.data();
  long long const stride_y = rank >= 2 ? padded.extent(rank - 1) : 0;
  long long const stride_z =
      rank == 3 ? stride_y * static_cast<long long>(padded.extent(1)) : 0;
  long long const cells = static_cast<long long>(n[0]) * n[1] * n[2];
  double sum = 0, sum_sq = 0, max_abs = 0;
  long long nans = 0;
  Kokkos::parallel_reduce(
      "stencil::summarize",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long long>>(space, 0,
                                                                   cells),
      KOKKOS_LAMBDA(long long i, double& s, double& s2, double& m,
                    long long& bad) {
        long long const x = i % n[2];
        long long const yz = i / n[2];
        long long const y = yz % n[1];
        long long const z = yz / n[1];
        long long const at = (rank == 3 ? (z + halo) * stride_z : 0) +
                             (rank >= 2 ? (y + halo) * stride_y : 0) + x +
                             halo;
        double const v = static_cast<double>(data[at]);
        if (!Kokkos::isfinite(v)) {
          ++bad;
          return;
        }
        s += v;
        s2 += v * v;
        m = Kokkos::max(m, Kokkos::abs(v));
      },
      sum, sum_sq, Kokkos::Max<double>(max_abs), nans);
  return {sum, sum_sq, max_abs, nans, cells};
}

}  // namespace detail

/// The interior of the current level of field `field` of `state`, reduced
/// on `space`: sum, sum of squares, largest magnitude, non-finite values.
template <class ExecSpace, class T, int Rank, class MemorySpace>
FieldSummary summarize(ExecSpace const& space,
                       State<T, Rank, MemorySpace> const& state, int field) {
  detail::expect_not_empty(state, "summarize");
  return detail::summarize(space, state.current(field), state.halo());
}
template <class T, int Rank, class MemorySpace>
FieldSummary summarize(State<T, Rank, MemorySpace> const& state, int field) {
  return summarize(Kokkos::DefaultExecutionSpace{}, state, field);
}

/// The interior of a grid's current level, reduced on `space`.
template <class ExecSpace, class T, int Rank, class MemorySpace>
FieldSummary summarize(ExecSpace const& space,
                       Grid<T, Rank, MemorySpace> const& grid) {
  detail::expect_not_empty(grid, "summarize");
  return detail::summarize(space, grid.current(), grid.halo());
}
template <class T, int Rank, class MemorySpace>
FieldSummary summarize(Grid<T, Rank, MemorySpace> const& grid) {
  return summarize(Kokkos::DefaultExecutionSpace{}, grid);
}

}  // namespace stencil
