// SPDX-License-Identifier: Apache-2.0
// The benchmark suite: which stencils, precisions and policies are measured,
// at which sizes, and how one benchmark is timed.
#pragma once

#include "machine.hpp"
#include "options.hpp"

#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace stencil {
struct Plan;
}

namespace stencil_perf {

/// Checks the names and the size in `o` against the suite and replaces the
/// names with their canonical spelling (groups such as "2d" expanded).
/// Throws UsageError with what was wrong and what is valid.
void check_selection(Options& o);

/// Registers one Google Benchmark per selected stencil, precision and policy.
/// Returns how many were registered.
int register_benchmarks(Options const& o, Ceilings const& ceilings);

/// How a row that does not apply starts its message (a policy that cannot
/// run a solver of several fields, solver_cases.hpp): the console prints
/// n/a and the reason, results_table.py "n/a", and it is not a failure.
inline constexpr char const* not_applicable_prefix = "not applicable: ";

/// Messages of benchmarks that could not run (a stencil::error from the
/// library, an allocation failure), in the order they happened.
std::vector<std::string> const& failures();

/// Frees the grids kept between repetitions. Call before Kokkos::finalize.
void release_fixtures();

/// One benchmark as the console table shows it: what its registration
/// knows, then what its setup adds (empty where the setup failed).
struct TableRow {
  std::string stencil, precision, policy;
  std::string domain;  ///< extents, slowest first: "2560x352x384"
  int steps = 0;
  std::string plan;     ///< short_plan() of the plan it ran
  std::string ceiling;  ///< the ceiling's name: dram, dram*8, fp64, fp32
};

/// The table rows by benchmark name (<stencil>/<precision>/<policy>/<size>).
std::map<std::string, TableRow>& table_rows();

/// A plan in a few words for the console: "TB 512x8 d12 p1 256thr" (policy,
/// tile x,y,z, depth, prefetch stages, threads per team or block). The JSON
/// keeps the whole plan.
std::string short_plan(stencil::Plan const& plan);

/// The console's reporter: a column header, then one aligned line per
/// benchmark (its median, spread, fraction of its ceiling and short plan)
/// or per failure, and a short legend at the end. The statistics of every
/// repetition and the full plans go to the --benchmark_out file only.
std::unique_ptr<benchmark::BenchmarkReporter> make_table_reporter(
    Options const& o);

}  // namespace stencil_perf
