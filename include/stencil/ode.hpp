// SPDX-License-Identifier: Apache-2.0
// Explicit Runge-Kutta integrators over stencil right-hand sides (issue 50):
// link stencil::ode, built where CMake finds Kokkos Kernels.
#pragma once

#include <stencil/ode/integrate.hpp>
#include <stencil/ode/point_rates.hpp>
#include <stencil/ode/tableau.hpp>
