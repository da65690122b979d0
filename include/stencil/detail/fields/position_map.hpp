// SPDX-License-Identifier: Apache-2.0
// The cell coordinates a multi-field functor reads with in.position().
#pragma once

#include <Kokkos_Core.hpp>

namespace stencil::detail {

/// Where a state's cell lies in the whole domain, for in.position(): the
/// state's interior starts at `origin` (z, y, x), and an axis whose
/// `period` is positive wraps around it. A single state has the identity;
/// a rank of a distributed state (stencil::mpi) holds a block of the
/// domain and its neighbours' ghosts, across periodic edges too.
struct PositionMap {
  int origin[3] = {0, 0, 0};
  int period[3] = {0, 0, 0};

  KOKKOS_FORCEINLINE_FUNCTION int at(int axis, int cell) const {
    int const v = cell + origin[axis];
    int const p = period[axis];
    return p > 0 ? ((v % p) + p) % p : v;
  }
  /// Interior cell (z, y, x)'s position, slowest dimension first: {x} for
  /// rank 1, {y, x} for rank 2, {z, y, x} for rank 3 (in.position()).
  template <int Rank>
  KOKKOS_FORCEINLINE_FUNCTION Kokkos::Array<int, Rank> position(int z, int y,
                                                                int x) const {
    if constexpr (Rank == 1) {
      return {at(2, x)};
    } else if constexpr (Rank == 2) {
      return {at(1, y), at(2, x)};
    } else {
      return {at(0, z), at(1, y), at(2, x)};
    }
  }
  KOKKOS_INLINE_FUNCTION bool identity() const {
    for (int a = 0; a < 3; ++a) {
      if (origin[a] != 0 || period[a] != 0) return false;
    }
    return true;
  }
};

/// Calls f(map), or f(PositionMap{}) where `map` is the identity (a whole
/// domain), so that a loop inlined into f sees a constant map: its periodic
/// wrap, a division under a test, then leaves the loop, which vectorises on
/// the host for functors that read in.position().
template <class F>
KOKKOS_FORCEINLINE_FUNCTION void with_constant_identity(PositionMap const& map,
                                                        F&& f) {
  if (map.identity()) {
    f(PositionMap{});
  } else {
    f(map);
  }
}

}  // namespace stencil::detail
