// SPDX-License-Identifier: Apache-2.0
// stencil_perf: the benchmark suite of the stencil library. Measures the
// copy bandwidth of the device, then every stencil of the suite for every
// policy and precision against the ceilings that bandwidth implies: one
// table line per benchmark on stdout, everything in the JSON file.
//
//   stencil_perf --quick --benchmark_out=r.json --benchmark_out_format=json
//
// Exit status: 0 when every selected benchmark ran, 1 when one failed or
// none matched, 2 for a command line that cannot be run.
#include "benchmarks.hpp"
#include "machine.hpp"
#include "options.hpp"

#include <stencil/error.hpp>

#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <string>

#ifndef STENCIL_PERF_GIT_REVISION
#define STENCIL_PERF_GIT_REVISION "unknown"
#endif

namespace {

constexpr char const* kProgram = "stencil_perf";

std::string fixed(double value, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string join(std::vector<std::string> const& items) {
  std::string s;
  for (auto const& i : items) {
    if (!s.empty()) s += ',';
    s += i;
  }
  return s;
}

int usage_error(std::string const& message) {
  std::cerr << kProgram << ": error: " << message << "\n"
            << kProgram << ": run '" << kProgram
            << " --help' for the options\n";
  return 2;
}

// Measures, records and prints the ceilings, then runs the benchmarks.
// Returns the exit status.
int run(stencil_perf::Options const& options) {
  using namespace stencil_perf;
  Ceilings ceilings;
  if (!options.list_only) {
    Machine const machine = describe_machine();
    ceilings = measure_ceilings(options.quick);
    for (auto const& [key, value] : machine.facts) {
      benchmark::AddCustomContext(key, value);
    }
    for (auto const& [key, value] : ceiling_facts(ceilings)) {
      benchmark::AddCustomContext(key, value);
    }
    benchmark::AddCustomContext("stencil_revision", STENCIL_PERF_GIT_REVISION);
    benchmark::AddCustomContext("mode", options.quick ? "quick" : "full");
    benchmark::AddCustomContext("precisions", join(options.precisions));
    benchmark::AddCustomContext("repetitions",
                                std::to_string(options.repetitions));

    // A few lines: the full context (copies per item type, barriers, the
    // model's calibration) goes to the JSON.
    std::ostream& out = options.header_to_stderr ? std::cerr : std::cout;
    out << kProgram << " " << STENCIL_PERF_GIT_REVISION << ", "
        << (options.quick ? "quick" : "full") << " mode, "
        << options.repetitions
        << (options.repetitions == 1 ? " repetition" : " repetitions")
        << ", on " << machine.summary << "\n"
        << "ceilings: copy " << fixed(ceilings.copy.median_gbs, 1)
        << " GB/s -> DRAM " << fixed(ceilings.dram_gcells(sizeof(double)), 2)
        << " GCells/s double, " << fixed(ceilings.dram_gcells(sizeof(float)), 2)
        << " float (one kernel per step)";
    if (ceilings.fp64_gflops > 0) {
      out << "\nFP peak: " << fixed(ceilings.fp64_gflops, 0)
          << " GFLOP/s FP64, " << fixed(ceilings.fp32_gflops, 0) << " FP32";
    }
    out << "\n" << std::flush;
  }

  int const registered = register_benchmarks(options, ceilings);
  // The table on the console; another --benchmark_format gets Google
  // Benchmark's own reporter. The --benchmark_out file gets everything.
  std::unique_ptr<benchmark::BenchmarkReporter> const table =
      options.header_to_stderr ? nullptr : make_table_reporter(options);
  std::size_t const ran = benchmark::RunSpecifiedBenchmarks(table.get());
  if (ran == 0) {
    std::cerr << kProgram << ": error: none of the " << registered
              << " benchmarks matched --benchmark_filter; names are "
                 "<stencil>/<precision>/<policy>/<size>, see "
                 "--benchmark_list_tests\n";
    return 1;
  }
  auto const& failed = failures();
  if (!failed.empty()) {
    std::cerr << kProgram << ": error: " << failed.size()
              << " benchmark(s) could not run:\n";
    for (auto const& f : failed) std::cerr << "  " << f << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  stencil_perf::Options options;
  try {
    options = stencil_perf::parse_options(argc, argv);
    if (options.help) {
      std::cout << stencil_perf::usage(kProgram)
                << "Kokkos flags: --kokkos-help. Google Benchmark flags:\n"
                << std::flush;
      // Google Benchmark prints its usage for --help and exits.
      char help[] = "--help";
      char* help_argv[] = {argv[0], help, nullptr};
      int help_argc = 2;
      benchmark::Initialize(&help_argc, help_argv);
      return 0;
    }
    stencil_perf::check_selection(options);
  } catch (stencil_perf::UsageError const& e) {
    return usage_error(e.what());
  }

  Kokkos::ScopeGuard kokkos(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return usage_error("unrecognised argument (see above)");
  }

  int status = 1;
  try {
    status = run(options);
  } catch (stencil::error const& e) {
    std::cerr << kProgram << ": error: " << e.what() << "\n";
  } catch (std::exception const& e) {
    std::cerr << kProgram << ": error: " << e.what() << "\n";
  }
  // Views must go before Kokkos::finalize (the ScopeGuard).
  stencil_perf::release_fixtures();
  benchmark::Shutdown();
  return status;
}
