// SPDX-License-Identifier: Apache-2.0
// The benchmark suite: which stencils, precisions and policies are measured,
// at which sizes, and how one benchmark is timed.
#pragma once

#include "machine.hpp"
#include "options.hpp"

#include <string>
#include <vector>

namespace stencil_perf {

/// Checks the names and the size in `o` against the suite and replaces the
/// names with their canonical spelling (groups such as "2d" expanded).
/// Throws UsageError with what was wrong and what is valid.
void check_selection(Options& o);

/// Registers one Google Benchmark per selected stencil, precision and policy.
/// Returns how many were registered.
int register_benchmarks(Options const& o, Ceilings const& ceilings);

/// Messages of benchmarks that could not run (a stencil::error from the
/// library, an allocation failure), in the order they happened.
std::vector<std::string> const& failures();

/// Frees the grids kept between repetitions. Call before Kokkos::finalize.
void release_fixtures();

}  // namespace stencil_perf
