// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <cctype>
#include <charconv>
#include <climits>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace stencil_perf {

namespace {

// Parses a whole string as an int of at least `least`; anything else
// (empty, sign, trailing characters, overflow) is an error that names the
// flag.
int parse_at_least(int least, std::string const& flag, std::string_view text,
                   char const* what) {
  int value = 0;
  auto const [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec == std::errc::invalid_argument ||
      end != text.data() + text.size()) {
    throw UsageError(flag + ": '" + std::string(text) +
                     "' is not a whole number; " + what);
  }
  if (ec == std::errc::result_out_of_range || value < least) {
    throw UsageError(flag + ": " + std::string(text) + " is out of range; " +
                     what);
  }
  return value;
}

int parse_positive(std::string const& flag, std::string_view text,
                   char const* what) {
  return parse_at_least(1, flag, text, what);
}

// "8352x8352", "2560x288x384" or "1048576": up to three extents separated
// by 'x', slowest dimension first as in stencil::Grid and docs/suite.md.
std::vector<int> parse_extents(std::string const& value) {
  std::string const flag = "--size=" + value;
  char const* const what =
      "give 1 to 3 positive extents separated by 'x', slowest dimension "
      "first (NX, NYxNX or NZxNYxNX), 'paper' or 'larger'";
  std::vector<int> extents;
  std::string_view rest = value;
  while (true) {
    std::size_t const cut = rest.find_first_of("xX");
    extents.push_back(parse_positive(flag, rest.substr(0, cut), what));
    if (cut == std::string_view::npos) break;
    rest.remove_prefix(cut + 1);
  }
  if (extents.size() > 3) {
    throw UsageError(flag + ": " + std::to_string(extents.size()) +
                     " extents; " + what);
  }
  std::int64_t cells = 1;
  for (int e : extents) {
    cells *= e;
    // The grids are indexed with int per dimension and the 3D fill packs
    // coordinates into 21 bits each; both are far beyond device memory.
    if (cells > (std::int64_t{1} << 40) ||
        (extents.size() == 3 && e > (1 << 20))) {
      throw UsageError(flag + ": the domain is too large for any device");
    }
  }
  return extents;
}

// Matches "--name=value"; a bare "--name" without '=' is an error because it
// would otherwise silently reach Google Benchmark as an unknown flag.
bool take_value(std::string const& arg, std::string const& name,
                std::string& value) {
  std::string const prefix = "--" + name;
  if (arg.rfind(prefix, 0) != 0) return false;
  if (arg.size() == prefix.size()) {
    throw UsageError(prefix + " needs a value: " + prefix + "=...");
  }
  if (arg[prefix.size()] != '=') return false;
  value = arg.substr(prefix.size() + 1);
  if (value.empty()) {
    throw UsageError(prefix + "= is empty; see --help for valid values");
  }
  return true;
}

}  // namespace

bool iequals(std::string const& a, std::string const& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::vector<std::string> split_list(std::string const& flag,
                                    std::string const& value) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    std::size_t const comma = value.find(',', start);
    std::string item = value.substr(start, comma - start);
    if (item.empty()) {
      throw UsageError(flag + "=" + value +
                       ": empty name in the list; separate names with "
                       "single commas");
    }
    items.push_back(std::move(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

Options parse_options(int& argc, char** argv) {
  Options o;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    std::string const arg = argv[i];
    std::string value;
    if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--full") {
      o.quick = false;
    } else if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else if (take_value(arg, "stencil", value)) {
      o.stencils = split_list("--stencil", value);
    } else if (take_value(arg, "precision", value)) {
      o.precisions = split_list("--precision", value);
    } else if (take_value(arg, "policy", value)) {
      o.policies = split_list("--policy", value);
    } else if (take_value(arg, "backend", value)) {
      o.backend = value;
    } else if (take_value(arg, "size", value)) {
      if (iequals(value, "paper") || iequals(value, "larger")) {
        o.size = iequals(value, "paper") ? "paper" : "larger";
        o.extents.clear();
      } else {
        o.extents = parse_extents(value);
        o.size = value;
      }
    } else if (take_value(arg, "depth", value)) {
      o.depths.clear();
      for (auto const& d : split_list("--depth", value)) {
        o.depths.push_back(parse_positive(
            "--depth=" + value, d,
            "give temporal depths as positive numbers separated by commas"));
      }
    } else if (take_value(arg, "prefetch", value)) {
      o.prefetch.clear();
      for (auto const& s : split_list("--prefetch", value)) {
        o.prefetch.push_back(parse_at_least(
            0, "--prefetch=" + value, s,
            "give prefetch stages as numbers of 0 or more separated by "
            "commas (0: plain loads)"));
      }
    } else if (take_value(arg, "tiles", value)) {
      o.tiles.clear();
      for (auto const& t : split_list("--tiles", value)) {
        if (iequals(t, "shared")) {
          o.tiles.push_back(stencil::Tiles2D::shared_memory);
        } else if (iequals(t, "warps")) {
          o.tiles.push_back(stencil::Tiles2D::warp_registers);
        } else {
          throw UsageError("--tiles=" + value + ": unknown tiles '" + t +
                           "'; give shared (Tiles2D::shared_memory) or "
                           "warps (Tiles2D::warp_registers), separated by "
                           "commas");
        }
      }
    } else if (take_value(arg, "steps", value)) {
      o.steps = parse_positive("--steps=" + value, value,
                               "give a positive number of time steps, "
                               "e.g. --steps=100");
    } else if (take_value(arg, "repetitions", value)) {
      o.repetitions = parse_positive("--repetitions=" + value, value,
                                     "give a positive number of timed "
                                     "repetitions, e.g. --repetitions=5");
    } else {
      if (arg.rfind("--benchmark_format=", 0) == 0 &&
          arg != "--benchmark_format=console") {
        o.header_to_stderr = true;
      }
      if (arg.rfind("--benchmark_out=", 0) == 0) {
        o.out_file = arg.substr(std::string("--benchmark_out=").size());
      }
      if (arg == "--benchmark_list_tests" ||
          arg == "--benchmark_list_tests=true") {
        o.list_only = true;
      }
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return o;
}

std::string usage(std::string const& program) {
  return "Usage: " + program +
         R"( [options] [Kokkos flags] [Google Benchmark flags]

Benchmarks every stencil of the suite (docs/suite.md) for every policy and
precision on Kokkos::DefaultExecutionSpace, against the DRAM-bound ceiling
measured in the same run.
Benchmark names: <stencil>/<precision>/<policy>/<size>.
Prints one line per benchmark: the median GCells/s of its repetitions, their
spread, the fraction of its ceiling and its plan in short; the full plans and
every repetition go to --benchmark_out=FILE (JSON).

Options:
  --quick               small domains and few steps (CPU machines, CI)
  --full                the sustained paper domains (default)
  --stencil=LIST        comma-separated stencil names, or 1d, 2d, 3d,
                        solvers (several fields and time levels), all
  --precision=LIST      double, float (default: both)
  --policy=LIST         policy names, e.g. Naive,SpatialBlocking,Auto
                        (default: all but StreamingSweepBulk and
                        StreamingSweepAsync, the native sweep with its
                        copies forced to cp.async.bulk or cp.async, and
                        DeviceTilingL2Window, device tiling with its
                        exchange buffer persisting in L2, which run when
                        named)
  --backend=NAME        fail unless the benchmarks run on this Kokkos
                        execution space (e.g. Cuda, OpenMP, Serial)
  --size=SIZE           'paper' (paper domain, steps = EBISU depth),
                        'larger' (2D and 3D: the domains the native backends'
                        reference figures were measured on, sustained steps)
                        or extents
                        slowest first: NX (1D), NYxNX (2D), NZxNYxNX (3D);
                        extents select the stencils of that rank, and one
                        number N means N cells per dimension for every rank
  --steps=N             time steps per timed run (default: by size)
  --depth=LIST          run TemporalBlocking and DeviceTiling at these
                        depths (one benchmark each, named
                        TemporalBlocking.dN) instead of the depth their
                        plans choose
  --prefetch=LIST       run StreamingSweep, TemporalBlocking and
                        DeviceTiling with these numbers of prefetch stages
                        (0: plain loads; one benchmark each, named
                        StreamingSweep.pN, or TemporalBlocking.dD.pN with
                        --depth) instead of the plan's choice
  --tiles=LIST          run rank-2 TemporalBlocking in these tiles: shared
                        (rings in shared memory), warps (warp tiles in
                        registers); one benchmark each, named
                        TemporalBlocking.shared or .warps, instead of the
                        plan's choice
  --repetitions=N       timed repetitions per benchmark (default 5, quick 3)
  --help                this text, then Google Benchmark's

Useful Google Benchmark flags: --benchmark_filter=REGEX,
--benchmark_out=FILE --benchmark_out_format=json, --benchmark_list_tests.
)";
}

}  // namespace stencil_perf
