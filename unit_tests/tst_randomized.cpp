// SPDX-License-Identifier: Apache-2.0
// Randomized checks against the reference loop (issue 47): random extents,
// halos, boundaries, step counts, value types and stencils (the suite's and
// random linear ones), each case run on every policy of every execution
// space under test, native ones included, with random policy parameters,
// and Auto, and compared with the plain loop of reference.hpp. A policy
// whose plan refuses a case is counted as skipped, with its reason; the
// summary says how many cases each policy ran. How cases are drawn and run:
// random_cases.hpp.
//
// Environment:
//   STENCIL_RANDOM_CASES  how many cases (default 300, what CI runs)
//   STENCIL_RANDOM_SEED   the run's seed (default 47: CI is reproducible)
//   STENCIL_RANDOM_CASE   run only the case of this index (a replay)
// A failing case prints its parameters and the command that replays it.
#include "random_cases.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <system_error>

namespace {

using namespace stencil_test::randomized;

constexpr std::uint64_t default_seed = 47;
constexpr int default_cases = 300;

/// The variable's value as a number, std::nullopt where it is unset;
/// `error` says what is wrong with a value that is not a number.
std::optional<std::uint64_t> env_number(char const* name, std::string& error) {
  char const* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  try {
    std::size_t used = 0;
    std::uint64_t const value = std::stoull(text, &used, 0);
    if (used == std::string(text).size()) return value;
  } catch (std::exception const&) {
  }
  error = std::string(name) + "='" + text + "' is not a non-negative integer";
  return std::nullopt;
}

std::string executable() {
  std::error_code ec;
  auto const path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("stencil_test_randomized") : path.string();
}

std::string spaces() {
  std::string names;
  auto add = [&](auto tag) {
    names +=
        (names.empty() ? "" : ", ") + std::string(decltype(tag)::type::name());
  };
  [&]<class... Space>(::testing::Types<Space...>) {
    (add(std::type_identity<Space>{}), ...);
  }(stencil_test::ExecutionSpaces{});
  return names;
}

/// What the cases were: counts of each kind, so a reader sees the mix.
struct Mix {
  std::map<std::string, long> counts;
  double cells = 0, cell_steps = 0;
  void add(Case const& c) {
    cells += static_cast<double>(c.cells());
    cell_steps += static_cast<double>(c.cells()) * c.steps;
    ++counts["rank " + std::to_string(c.rank)];
    ++counts[c.is_double ? "double" : "float"];
    ++counts[std::string(stencil::to_string(c.boundary))];
    ++counts[c.info.random ? "random stencil" : "suite stencil"];
    ++counts["halo = radius + " + std::to_string(c.halo - c.info.radius)];
    ++counts[c.steps % c.depth == 0 ? "steps a multiple of the depth"
                                    : "steps not a multiple of the depth"];
    for (int d = 0; d < c.rank; ++d) {
      if (c.extents[d] == 2 * c.info.radius + 1) {
        ++counts["an extent at its smallest"];
        break;
      }
    }
  }
};

TEST(Randomized, MatchesReference) {
  std::string error;
  std::uint64_t const seed =
      env_number("STENCIL_RANDOM_SEED", error).value_or(default_seed);
  std::uint64_t const cases =
      env_number("STENCIL_RANDOM_CASES", error).value_or(default_cases);
  std::optional<std::uint64_t> const only =
      env_number("STENCIL_RANDOM_CASE", error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_LE(cases, 10'000'000u) << "STENCIL_RANDOM_CASES is too large";
  ASSERT_TRUE(!only || *only < 10'000'000u)
      << "STENCIL_RANDOM_CASE is too large";

  int const first = only ? static_cast<int>(*only) : 0;
  int const last = only ? first + 1 : static_cast<int>(cases);
  std::cout << "[randomized] STENCIL_RANDOM_SEED=" << seed << ", "
            << (only ? "STENCIL_RANDOM_CASE=" + std::to_string(*only)
                     : "STENCIL_RANDOM_CASES=" + std::to_string(cases))
            << ", on " << spaces() << "; native depths up to " << max_case_depth
            << std::endl;

  Tally tally;
  Mix mix;
  int failed_cases = 0;
  double slowest = 0;
  int slowest_case = -1;
  auto const start = std::chrono::steady_clock::now();
  for (int index = first; index < last; ++index) {
    Case const c = draw_case(seed, index);
    mix.add(c);
    if (only) std::cout << "[randomized] " << describe(c) << std::endl;
    Outcome outcome;
    auto const case_start = std::chrono::steady_clock::now();
    run_case(c, tally, outcome);
    double const seconds = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - case_start)
                               .count();
    if (seconds > slowest) {
      slowest = seconds;
      slowest_case = index;
    }
    if (outcome.failures.empty()) continue;
    ++failed_cases;
    std::ostringstream replay;
    replay << "STENCIL_RANDOM_SEED=" << seed << " STENCIL_RANDOM_CASE=" << index
           << ' ' << executable()
           << " --gtest_filter=Randomized.MatchesReference";
    if (failed_cases <= 10) {
      std::ostringstream what;
      for (std::string const& f : outcome.failures) what << "\n    " << f;
      ADD_FAILURE() << describe(c) << what.str()
                    << "\n  replay: " << replay.str();
    } else {
      ADD_FAILURE() << "case " << index << " failed ("
                    << outcome.failures.size()
                    << " policies); replay: " << replay.str();
    }
  }
  double const seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  std::cout << "[randomized] " << (last - first) << " cases in " << std::fixed
            << std::setprecision(1) << seconds << " s (slowest: case "
            << slowest_case << ", " << std::setprecision(2) << slowest
            << " s); " << failed_cases << " failed; mean "
            << std::setprecision(0) << mix.cells / (last - first) << " cells, "
            << mix.cell_steps / (last - first)
            << " cell updates per case\n[randomized] mix:";
  for (auto const& [what, count] : mix.counts) {
    std::cout << ' ' << what << ": " << count << ';';
  }
  std::cout << '\n';
  for (auto const& [label, count] : tally.rows()) {
    std::cout << "[randomized]   " << std::left << std::setw(28) << label
              << std::right << " ran " << std::setw(5) << count.run
              << ", skipped " << std::setw(5) << count.skipped << ", failed "
              << count.failed << '\n';
    // The commonest refusals, digits shown as '#'.
    std::vector<std::pair<long, std::string>> reasons;
    for (auto const& [reason, n] : count.reasons)
      reasons.push_back({n, reason});
    std::sort(reasons.rbegin(), reasons.rend());
    for (std::size_t i = 0; i < reasons.size() && i < 4; ++i) {
      std::cout << "[randomized]       skipped " << reasons[i].first
                << "x: " << reasons[i].second << "...\n";
    }
  }
  std::cout << std::flush;
}

}  // namespace
