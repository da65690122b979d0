// SPDX-License-Identifier: Apache-2.0
// What benchmarks.cpp and the per-stencil translation units of the suite
// share. Each stencil's benchmarks instantiate every kernel of every policy
// for that stencil, which makes one translation unit for the whole suite the
// longest step of a CUDA build by far; one per stencil lets the compiler
// jobs share the work.
#pragma once

#include "benchmarks.hpp"
#include "machine.hpp"
#include "options.hpp"
#include "tables.hpp"

#include <cstddef>
#include <exception>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace stencil_perf {

/// Registers the benchmarks of the `I`-th stencil of stencil_table() at
/// `size`, one per selected precision and policy (and per depth and prefetch
/// of --depth and --prefetch). Returns how many. Defined in cases_impl.hpp
/// and instantiated by the translation units CMakeLists.txt generates from
/// cases.cpp.in, one per entry the build compiles (STENCIL_PERF_ENTRIES).
template <std::size_t I>
int register_stencil_cases(Options const& o, Size const& size,
                           Ceilings const& ceilings);

using StencilCases = int (*)(Options const&, Size const&, Ceilings const&);

/// The entries of stencil_table() this build compiled benchmarks for, by
/// index: each generated unit adds its own when the program starts.
std::map<std::size_t, StencilCases>& compiled_stencil_cases();

/// Adds entry `index`'s registration to compiled_stencil_cases().
inline bool add_stencil_cases(std::size_t index, StencilCases cases) {
  compiled_stencil_cases()[index] = cases;
  return true;
}

/// Messages of benchmarks that could not run, in the order they happened.
std::vector<std::string>& failure_list();

/// A plan refused by design for this domain, not by a defect: a
/// RegisterResident plan of a domain larger than the device's registers
/// hold (the suite's 1D sizes are). Its row is not applicable, not failed.
struct NotApplicable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// stencil::plan(args...) with `policy`; a refusal that the policy makes
/// by design becomes NotApplicable.
template <class Policy, class MakePlan>
stencil::Plan plan_or_not_applicable(Policy const&, MakePlan&& make_plan) {
  try {
    return make_plan();
  } catch (stencil::unsupported const& e) {
    if constexpr (std::is_same_v<Policy, stencil::RegisterResident>) {
      throw NotApplicable(e.what());
    } else {
      throw;
    }
  }
}

struct FixtureBase {
  virtual ~FixtureBase() = default;
};

class FixtureCache {
 public:
  // Google Benchmark runs the repetitions of a benchmark one after another,
  // so one cached fixture is enough; a failure is cached too, so a grid that
  // does not fit is not allocated again for every repetition.
  template <class F, class Make>
  F* get(std::string const& key, Make&& make, std::string& error) {
    if (key != key_) {
      fixture_.reset();  // free the old grids before allocating new ones
      error_.clear();
      key_ = key;
      try {
        fixture_ = make();
      } catch (NotApplicable const& e) {
        error_ = std::string(not_applicable_prefix) + e.what();
        error = error_;
        return nullptr;
      } catch (stencil::error const& e) {
        error_ = e.what();
      } catch (std::exception const& e) {
        error_ = std::string("setup failed: ") + e.what();
      }
      if (!error_.empty()) failure_list().push_back(key + ": " + error_);
    }
    error = error_;
    return static_cast<F*>(fixture_.get());
  }
  void clear() {
    fixture_.reset();
    key_.clear();
    error_.clear();
  }

 private:
  std::string key_;
  std::unique_ptr<FixtureBase> fixture_;
  std::string error_;
};

/// The one cache of the program (benchmarks.cpp).
FixtureCache& fixture_cache();

}  // namespace stencil_perf
