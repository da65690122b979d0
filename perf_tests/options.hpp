// SPDX-License-Identifier: Apache-2.0
// Command-line options of stencil_perf that are not Google Benchmark's or
// Kokkos's own. They are parsed before either library sees argv, so a typo
// is reported before any device is initialised.
#pragma once

#include <stencil/policy.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace stencil_perf {

/// A command line that cannot be run. The message says what was wrong and
/// what would be valid; main prints it and exits non-zero.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  bool quick = false;  ///< small sizes for CPUs and CI
  bool help = false;
  std::vector<std::string> stencils;    ///< --stencil=a,b; empty: all
  std::vector<std::string> precisions;  ///< --precision=double,float
  std::vector<std::string> policies;    ///< --policy=Naive,...
  std::string backend;  ///< --backend=NAME: required execution space
  /// --size: "" (the mode's default), "paper", or extents (then `extents`).
  std::string size;
  std::vector<int> extents;  ///< slowest dimension first, like stencil::Grid
  int steps = 0;             ///< 0: the size's default
  /// --depth=LIST: temporal depths to run TemporalBlocking and
  /// DeviceTiling at, one benchmark each ("TemporalBlocking.d8"); empty:
  /// the plan's choice.
  std::vector<int> depths;
  /// --prefetch=LIST: prefetch stages to run the native policies at, one
  /// benchmark each ("StreamingSweep.p2"); empty: the plan's choice.
  std::vector<int> prefetch;
  /// --tiles=LIST: rank-2 TemporalBlocking in these tiles, one benchmark
  /// each ("TemporalBlocking.warps"); empty: the plan's choice.
  std::vector<stencil::Tiles2D> tiles;
  int repetitions = 0;  ///< 0: the mode's default
  /// Console output of Google Benchmark goes to stdout unless another
  /// format was asked for; then our header must not corrupt it.
  bool header_to_stderr = false;
  /// --benchmark_list_tests: nothing is measured, so skip the ceilings.
  bool list_only = false;
  /// --benchmark_out=FILE: where the full plans and the statistics go; the
  /// console table names it.
  std::string out_file;
};

/// Takes the options above out of argv (argc shrinks) and leaves every other
/// argument, in order, for Kokkos and Google Benchmark. Checks syntax only;
/// names are checked against the suite by `check_selection` (suite.hpp).
/// Throws UsageError.
Options parse_options(int& argc, char** argv);

/// The help text of the options above.
std::string usage(std::string const& program);

/// Splits "a,b,c" at commas; empty items are an error.
std::vector<std::string> split_list(std::string const& flag,
                                    std::string const& value);

/// Case-insensitive ASCII comparison, for names typed by hand.
bool iequals(std::string const& a, std::string const& b);

}  // namespace stencil_perf
