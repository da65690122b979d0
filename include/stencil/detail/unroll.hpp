// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Kokkos_Macros.hpp>

#include <type_traits>
#include <utility>

/// `#pragma unroll` where the compiler takes it (Kokkos says which), nothing
/// elsewhere. The register-window kernels need their loops unrolled so that
/// window indices are compile-time constants.
#ifdef KOKKOS_ENABLE_PRAGMA_UNROLL
#define STENCIL_UNROLL _Pragma("unroll")
#else
#define STENCIL_UNROLL
#endif

namespace stencil::detail {

/// f(std::integral_constant<int, I>{}) for I = 0 .. Count-1, unrolled: a
/// field's constexpr tables (radii, levels) are then read at compile time
/// only, which device code needs.
template <int Count, class F>
KOKKOS_FORCEINLINE_FUNCTION void for_each_constant(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    (f(std::integral_constant<int, I>{}), ...);
  }
  (std::make_integer_sequence<int, Count>{});
}

}  // namespace stencil::detail
