// SPDX-License-Identifier: Apache-2.0
// The explicit Runge-Kutta methods of stencil::ode and their Butcher
// tableaus, read from Kokkos Kernels' KokkosODE (as the bootstrap builds
// it: 4.7.00 with its Verner 5(6) tableau patched; unit_tests/
// tst_ode_tableaus.cpp checks every tableau against the order conditions).
#pragma once

#include <stencil/error.hpp>

#include <KokkosODE_RungeKutta.hpp>

#include <string>
#include <vector>

namespace stencil::ode {

/// An explicit Runge-Kutta method.
enum class Method {
  forward_euler,     ///< order 1, one stage
  rk4,               ///< the classic order 4, four stages
  bogacki_shampine,  ///< order 3 with an embedded order 2, four stages (FSAL)
  dormand_prince,    ///< order 5 with an embedded order 4, seven stages (FSAL)
  verner56,          ///< order 6 with an embedded order 5, eight stages
};

inline char const* to_string(Method m) {
  switch (m) {
    case Method::forward_euler:
      return "forward-euler";
    case Method::rk4:
      return "rk4";
    case Method::bogacki_shampine:
      return "bogacki-shampine";
    case Method::dormand_prince:
      return "dormand-prince";
    case Method::verner56:
      return "verner56";
  }
  return "unknown";
}

/// A Butcher tableau on the host: `a` row-major (stages x stages, zero on
/// and above the diagonal), the weights `b` of the propagated solution and,
/// for an embedded pair, `bhat` of the error estimate's lower-order one.
struct Tableau {
  Method method = Method::forward_euler;
  int stages = 1;
  int order = 1;           ///< of b
  int embedded_order = 0;  ///< of bhat; 0: no embedded method
  std::vector<double> a, b, bhat, c;

  double a_at(int i, int j) const { return a[i * stages + j]; }
  bool embedded() const { return embedded_order > 0; }
};

namespace detail {

/// Kokkos Kernels' tableau `Table` (a packed lower triangle with the
/// diagonal, a_ij = a[i(i+1)/2 + j]; `e` = b - bhat) as a Tableau.
template <class Table>
Tableau tableau_from(Method method, int embedded_order) {
  Table const t{};
  Tableau out;
  out.method = method;
  out.stages = Table::nstages;
  out.order = Table::order;
  out.embedded_order = embedded_order;
  int const s = Table::nstages;
  out.a.assign(static_cast<std::size_t>(s * s), 0.0);
  for (int i = 0; i < s; ++i) {
    for (int j = 0; j < i; ++j) out.a[i * s + j] = t.a[i * (i + 1) / 2 + j];
    out.b.push_back(t.b[i]);
    out.c.push_back(t.c[i]);
    if (embedded_order > 0) out.bhat.push_back(t.b[i] - t.e[i]);
  }
  return out;
}

template <KokkosODE::Experimental::RK_type Type>
using kokkos_kernels_table =
    typename KokkosODE::Experimental::RK_Tableau_helper<Type>::table_type;

}  // namespace detail

/// The tableau of `m`, from KokkosODE.
inline Tableau tableau(Method m) {
  using KokkosODE::Experimental::RK_type;
  switch (m) {
    case Method::forward_euler:
      return detail::tableau_from<detail::kokkos_kernels_table<RK_type::RKFE>>(
          m, 0);
    case Method::rk4:
      return detail::tableau_from<detail::kokkos_kernels_table<RK_type::RK4>>(
          m, 0);
    case Method::bogacki_shampine:
      return detail::tableau_from<detail::kokkos_kernels_table<RK_type::RKBS>>(
          m, 2);
    case Method::dormand_prince:
      return detail::tableau_from<detail::kokkos_kernels_table<RK_type::RKDP>>(
          m, 4);
    case Method::verner56:
      return detail::tableau_from<detail::kokkos_kernels_table<RK_type::VER56>>(
          m, 5);
  }
  stencil::detail::throw_error(stencil::detail::concat(
      "stencil::ode: unknown method ", static_cast<int>(m),
      "; use forward_euler, rk4, bogacki_shampine, dormand_prince or "
      "verner56"));
}

}  // namespace stencil::ode
