// SPDX-License-Identifier: Apache-2.0
#include "benchmarks.hpp"

#include "cases.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#ifndef STENCIL_PERF_STENCIL_COUNT
#error "perf_tests/CMakeLists.txt defines STENCIL_PERF_STENCIL_COUNT"
#endif
static_assert(STENCIL_PERF_STENCIL_COUNT == stencil_perf::stencil_count,
              "perf_tests/CMakeLists.txt generated a different number of "
              "per-stencil translation units than stencil_table() has "
              "entries: each entry must start a line with StencilEntry<");

namespace stencil_perf {

namespace {

/// Small sizes: at most a few tens of milliseconds per run on two CPU
/// cores, so that the whole suite takes well under a minute. The 2D and 3D
/// domains hold the same number of cells (2^18).
std::vector<int> quick_domain(int rank) {
  if (rank == 1) return {1 << 20};
  if (rank == 2) return {512, 512};
  return {64, 64, 64};
}
int quick_steps(int rank) { return rank == 2 ? 20 : 10; }

constexpr int kRepetitions = 5;
constexpr int kQuickRepetitions = 3;

// ---------------------------------------------------------------------------
// Selection: which stencils run at which size.

/// What the selection needs of a stencil_table() entry, without its
/// operator type. The table is read in one short generic pass and the rest
/// of the selection is plain code compiled once: nvcc's front end spent
/// minutes on per-stencil copies of the selection's lambdas, the longest
/// step of a CUDA build of the benchmarks.
struct EntryInfo {
  std::string name;
  int rank = 0;
  int radius = 0;
  bool solver = false;
  std::vector<int> domain;
  int sustained_steps = 0;
  int paper_depth = 0;
  std::vector<int> larger;
};

std::vector<EntryInfo> const& entry_infos() {
  static std::vector<EntryInfo> const infos = [] {
    std::vector<EntryInfo> v;
    for_each_entry(stencil_table(), [&v](auto const& e) {
      using Op = typename std::decay_t<decltype(e)>::op_type;
      v.push_back({Op::name, Op::rank, radius_of<Op>(),
                   stencil::MultiFieldOperator<Op>,
                   std::vector<int>(e.domain.begin(), e.domain.end()),
                   e.sustained_steps, e.paper_depth,
                   std::vector<int>(e.larger.begin(), e.larger.end())});
    });
    return v;
  }();
  return infos;
}

Size size_for(EntryInfo const& e, Options const& o) {
  int const rank = e.rank;
  Size s;
  s.applies = true;
  if (o.size.empty()) {
    if (o.quick) {
      s.extents = quick_domain(rank);
      s.steps = quick_steps(rank);
      s.label = "quick";
    } else {
      s.extents.assign(e.domain.begin(), e.domain.end());
      s.steps = e.sustained_steps;
      s.label = "sustained";
    }
  } else if (o.size == "paper") {
    s.applies = e.paper_depth > 0;
    s.extents.assign(e.domain.begin(), e.domain.end());
    s.steps = e.paper_depth;
    s.label = "paper";
  } else if (o.size == "larger") {
    s.applies = e.larger[0] > 0;
    s.extents.assign(e.larger.begin(), e.larger.end());
    s.steps = e.sustained_steps;
    s.label = "larger";
  } else {
    if (o.extents.size() == 1) {
      s.extents.assign(rank, o.extents[0]);
    } else {
      s.applies = static_cast<int>(o.extents.size()) == rank;
      s.extents = o.extents;
    }
    s.steps = o.quick ? quick_steps(rank) : e.sustained_steps;
    s.label = join_extents(s.extents);
  }
  if (o.steps > 0) s.steps = o.steps;
  return s;
}

std::string join(std::vector<std::string> const& names) {
  std::string s;
  for (auto const& n : names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

// Resolves hand-typed names to canonical ones, case-insensitively.
// `groups` maps a group name to the names it stands for.
std::vector<std::string> resolve(
    std::string const& flag, std::vector<std::string> const& given,
    std::vector<std::string> const& valid,
    std::vector<std::pair<std::string, std::vector<std::string>>> const&
        groups = {}) {
  if (given.empty()) return valid;
  std::vector<std::string> out;
  auto add = [&out](std::string const& n) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  for (auto const& g : given) {
    auto const v = std::find_if(valid.begin(), valid.end(),
                                [&](auto& n) { return iequals(n, g); });
    if (v != valid.end()) {
      add(*v);
      continue;
    }
    auto const grp = std::find_if(groups.begin(), groups.end(),
                                  [&](auto& p) { return iequals(p.first, g); });
    if (grp == groups.end()) {
      std::string msg =
          flag + ": unknown name '" + g + "'; valid: " + join(valid);
      if (!groups.empty()) {
        std::vector<std::string> names;
        for (auto const& p : groups) names.push_back(p.first);
        msg += "; groups: " + join(names);
      }
      throw UsageError(msg);
    }
    for (auto const& n : grp->second) add(n);
  }
  return out;
}

// ---------------------------------------------------------------------------
// The console table.

/// "TemporalBlocking" -> "TB"; a one-word name stays as it is, in lower
/// case ("naive").
std::string policy_initials(std::string const& name) {
  std::string initials, lower;
  for (char ch : name) {
    auto const c = static_cast<unsigned char>(ch);
    if (std::isupper(c)) initials += ch;
    lower += static_cast<char>(std::tolower(c));
  }
  return initials.size() >= 2 ? initials : lower;
}

/// Three to five significant digits for CPU (0.040) and GPU (1234.5) rates.
std::string rate(double v) {
  int const decimals = v >= 100 ? 1 : v >= 10 ? 2 : 3;
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

std::string fixed(double v, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

/// A counter of a run, NaN where the run has none.
double counter(benchmark::BenchmarkReporter::Run const& run, char const* name) {
  auto const c = run.counters.find(name);
  return c == run.counters.end() ? std::nan("") : c->second.value;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t const n = v.size();
  return n == 0  ? std::nan("")
         : n % 2 ? v[n / 2]
                 : (v[n / 2 - 1] + v[n / 2]) / 2;
}

class TableReporter final : public benchmark::BenchmarkReporter {
 public:
  explicit TableReporter(Options const& o)
      : out_file_(o.out_file), repetitions_(o.repetitions) {}

  bool ReportContext(Context const& context) override {
    for (auto const& [name, row] : table_rows()) {
      (void)name;
      auto wider = [](int& w, std::string const& s) {
        w = std::max(w, static_cast<int>(s.size()));
      };
      wider(width_[0], row.stencil);
      wider(width_[1], row.precision);
      wider(width_[2], row.policy);
      wider(width_[3], row.domain);
      wider(width_[4], std::to_string(row.steps));
    }
    std::ostream& out = GetOutputStream();
    if (context.cpu_info.scaling == benchmark::CPUInfo::ENABLED) {
      out << "note: CPU frequency scaling is enabled; rates may vary\n";
    }
    std::string const titles =
        line("stencil", "prec", "policy", "domain", "steps", "GCells/s", "cv%",
             "frac", "ceiling", "plan");
    out << "\n"
        << titles << "\n"
        << std::string(titles.size(), '-') << std::string(18, '-') << "\n"
        << std::flush;
    return true;
  }

  void ReportRuns(std::vector<Run> const& runs) override {
    if (runs.empty()) return;
    std::string const name = runs.front().run_name.function_name;
    auto const found = table_rows().find(name);
    TableRow const row =
        found != table_rows().end() ? found->second : TableRow{name};
    for (Run const& r : runs) {
      if (r.error_occurred) {
        if (r.error_message.rfind(not_applicable_prefix, 0) == 0) {
          not_applicable(row, r.error_message.substr(
                                  std::string(not_applicable_prefix).size()));
        } else {
          failure(row, r.error_message);
        }
        return;
      }
    }
    double median = std::nan(""), frac = std::nan(""), cv = std::nan("");
    double mean = std::nan(""), stddev = std::nan("");
    std::vector<double> gcells, fracs;
    for (Run const& r : runs) {
      if (r.run_type != Run::RT_Aggregate) {
        gcells.push_back(counter(r, "GCells/s"));
        fracs.push_back(counter(r, "frac_of_ceiling"));
      } else if (r.aggregate_name == "median") {
        median = counter(r, "GCells/s");
        frac = counter(r, "frac_of_ceiling");
      } else if (r.aggregate_name == "cv") {
        cv = counter(r, "GCells/s");
      } else if (r.aggregate_name == "mean") {
        mean = counter(r, "GCells/s");
      } else if (r.aggregate_name == "stddev") {
        stddev = counter(r, "GCells/s");
      }
    }
    if (std::isnan(median)) {
      // Repetitions without aggregates: one repetition, or the aggregates
      // are still to come in a call of their own.
      if (gcells.empty() || runs.front().repetitions > 1) return;
      median = median_of(gcells);
      frac = median_of(fracs);
    }
    if (std::isnan(cv) && mean > 0) cv = stddev / mean;
    GetOutputStream() << line(row.stencil, row.precision, row.policy,
                              row.domain, std::to_string(row.steps),
                              rate(median),
                              std::isnan(cv) ? "-" : fixed(100 * cv, 1),
                              std::isnan(frac) ? "-" : fixed(frac, 2),
                              row.ceiling, row.plan)
                      << "\n"
                      << std::flush;
    ++rows_;
  }

  void Finalize() override {
    std::ostream& out = GetOutputStream();
    out << "\n" << rows_ + failed_ + not_applicable_ << " benchmarks";
    if (not_applicable_ > 0) {
      out << ", " << not_applicable_
          << " not applicable (a policy that cannot run the stencil; why in "
             "its row)";
    }
    if (failed_ > 0) out << ", " << failed_ << " failed (listed on stderr)";
    out << ". Full plans and every repetition: "
        << (out_file_.empty() ? "add --benchmark_out=FILE (JSON)" : out_file_)
        << "\nGCells/s: ";
    if (repetitions_ > 1) {
      out << "median of " << repetitions_
          << " repetitions; cv%: their stddev/mean; ";
    } else {
      out << "one repetition; ";
    }
    out << "frac: GCells/s / ceiling, where\n"
           "dram = copy bandwidth / (2 x value bytes), dram*d = that x depth "
           "d, fp64|fp32 = FP peak / flops,\n"
           "dramNv = copy bandwidth / (N x value bytes) for a solver that "
           "moves N values per cell and step.\n"
           "domain: cells, slowest dimension first. plan: policy initials, "
           "tile x[xy[xz]] in cells (x first),\n"
           "dN depth, gN grid halo (steps between exchanges), pN prefetch "
           "stages,\n"
           "Nthr threads per team or block, warps: 2D warp tiles.\n"
        << std::flush;
  }

 private:
  // Text columns left-aligned, numbers right-aligned, two spaces apart; the
  // plan last, unpadded.
  std::string line(std::string const& stencil, std::string const& precision,
                   std::string const& policy, std::string const& domain,
                   std::string const& steps, std::string const& gcells,
                   std::string const& cv, std::string const& frac,
                   std::string const& ceiling, std::string const& plan) const {
    std::string s;
    auto left = [&s](std::string const& text, int width) {
      s += text;
      s.append(std::max(0, width - static_cast<int>(text.size())) + 2, ' ');
    };
    auto right = [&s](std::string const& text, int width) {
      s.append(std::max(0, width - static_cast<int>(text.size())), ' ');
      s += text;
      s += "  ";
    };
    left(stencil, width_[0]);
    left(precision, width_[1]);
    left(policy, width_[2]);
    left(domain, width_[3]);
    right(steps, width_[4]);
    right(gcells, 8);
    right(cv, 4);
    right(frac, 4);
    left(ceiling, 7);
    s += plan;
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  }

  // A policy that cannot run the stencil: n/a and the reason, cut like a
  // failure's message; not a failure.
  void not_applicable(TableRow const& row, std::string message) {
    ++not_applicable_;
    std::string text = line(row.stencil, row.precision, row.policy, row.domain,
                            std::to_string(row.steps), "n/a", "", "", "", "") +
                       "  ";
    std::size_t const room = std::max<std::size_t>(40, 120 - text.size());
    if (message.size() > room) message = message.substr(0, room - 3) + "...";
    GetOutputStream() << text << message << "\n" << std::flush;
  }

  void failure(TableRow const& row, std::string message) {
    ++failed_;
    // The first line of the message after FAILED, cut to fit 120 columns;
    // stderr gets it whole at the end.
    std::string text =
        line(row.stencil, row.precision, row.policy, row.domain,
             std::to_string(row.steps), "FAILED", "", "", "", "") +
        "  ";
    message = message.substr(0, message.find('\n'));
    std::size_t const room = std::max<std::size_t>(40, 120 - text.size());
    if (message.size() > room) message = message.substr(0, room - 3) + "...";
    GetOutputStream() << text << message << "\n" << std::flush;
  }

  std::string out_file_;
  int repetitions_;
  // stencil, precision, policy, domain, steps: at least their titles.
  int width_[5] = {7, 4, 6, 6, 5};
  int rows_ = 0;
  int failed_ = 0;
  int not_applicable_ = 0;
};

int register_selected(Options const& o, Ceilings const& ceilings) {
  int count = 0;
  auto const& infos = entry_infos();
  for (std::size_t index = 0; index < infos.size(); ++index) {
    EntryInfo const& e = infos[index];
    if (!contains(o.stencils, e.name)) continue;
    Size const size = size_for(e, o);
    if (!size.applies) continue;
    auto const compiled = compiled_stencil_cases().find(index);
    if (compiled == compiled_stencil_cases().end()) {
      // Named on the command line but not compiled: say so, and fail.
      if (!o.stencils.empty()) {
        failure_list().push_back(
            e.name +
            ": not compiled in this build (configure with "
            "STENCIL_PERF_ENTRIES empty to compile every stencil)");
      }
      continue;
    }
    count += compiled->second(o, size, ceilings);
  }
  return count;
}

}  // namespace

std::map<std::size_t, StencilCases>& compiled_stencil_cases() {
  static std::map<std::size_t, StencilCases> cases;
  return cases;
}

std::vector<std::string>& failure_list() {
  static std::vector<std::string> list;
  return list;
}

FixtureCache& fixture_cache() {
  static FixtureCache cache;
  return cache;
}

// ---------------------------------------------------------------------------

void check_selection(Options& o) {
  std::vector<std::string> names;
  std::vector<std::pair<std::string, std::vector<std::string>>> groups{
      {"all", {}}, {"1d", {}}, {"2d", {}}, {"3d", {}}, {"solvers", {}}};
  for (EntryInfo const& e : entry_infos()) {
    names.push_back(e.name);
    groups[0].second.push_back(e.name);
    groups[e.rank].second.push_back(e.name);
    if (e.solver) groups[4].second.push_back(e.name);
  }
  // Stencils named one by one must fit the size; those a group or the
  // default selected drop out when the size is of another rank.
  std::vector<std::string> named;
  for (auto const& given : o.stencils) {
    for (auto const& n : names) {
      if (iequals(n, given)) named.push_back(n);
    }
  }
  o.stencils = resolve("--stencil", o.stencils, names, groups);

  std::vector<std::string> precisions;
  for_each_entry(precision_table(),
                 [&](auto const& p) { precisions.push_back(p.name); });
  o.precisions = resolve("--precision", o.precisions, precisions);

  std::vector<std::string> policies, by_default;
  for_each_entry(policy_table(), [&](auto const& p) {
    policies.push_back(p.name);
    if (!p.only_when_named) by_default.push_back(p.name);
  });
  o.policies = o.policies.empty() ? by_default
                                  : resolve("--policy", o.policies, policies);

  if (!o.backend.empty()) {
    std::string const space = Space::name();
    if (!iequals(o.backend, space)) {
      std::vector<std::string> const known{"Serial", "OpenMP",  "Threads",
                                           "HPX",    "Cuda",    "HIP",
                                           "SYCL",   "OpenACC", "OpenMPTarget"};
      auto const k = std::find_if(
          known.begin(), known.end(),
          [&](auto const& name) { return iequals(name, o.backend); });
      throw UsageError(
          "--backend=" + o.backend + ": " +
          (k != known.end()
               ? "this build runs the benchmarks on Kokkos::" + space +
                     "; build against a Kokkos whose default execution "
                     "space is " +
                     *k
               : "unknown execution space; this build runs on " + space +
                     " (Kokkos names: " + join(known) + ")"));
    }
  }

  std::vector<std::string> kept;
  std::string why_none;
  for (EntryInfo const& e : entry_infos()) {
    std::string const& name = e.name;
    if (!contains(o.stencils, name)) continue;
    Size const s = size_for(e, o);
    if (!s.applies) {
      std::string const why =
          o.size == "paper"
              ? std::string("--size=paper: ") + name +
                    " has no paper size (no published temporal depth)"
          : o.size == "larger"
              ? std::string("--size=larger: ") + name +
                    " has no larger domain (2D and 3D stencils only)"
              : "--size=" + o.size + " has " +
                    std::to_string(o.extents.size()) + " extents but " + name +
                    " is rank " + std::to_string(e.rank) + "; give " +
                    std::to_string(e.rank) +
                    " extents (slowest first) or one number";
      if (std::find(named.begin(), named.end(), name) != named.end()) {
        throw UsageError(why);
      }
      why_none = why;
      continue;
    }
    int const radius = e.radius;
    int const width = 2 * radius + 1;
    for (std::size_t d = 0; d < s.extents.size(); ++d) {
      if (s.extents[d] < width) {
        throw UsageError(
            "size " + join_extents(s.extents) + " is too small for " + name +
            " (radius " + std::to_string(radius) + "): extent " +
            std::to_string(d) + " is " + std::to_string(s.extents[d]) +
            " cells; every extent must be at least 2*radius+1 = " +
            std::to_string(width));
      }
    }
    kept.push_back(name);
  }
  if (kept.empty()) {
    throw UsageError(why_none.empty()
                         ? "no stencil selected; see --help"
                         : why_none + " (no selected stencil fits the size)");
  }
  o.stencils = kept;
  if (o.repetitions == 0) {
    o.repetitions = o.quick ? kQuickRepetitions : kRepetitions;
  }
}

int register_benchmarks(Options const& o, Ceilings const& ceilings) {
  return register_selected(o, ceilings);
}

std::vector<std::string> const& failures() { return failure_list(); }

void release_fixtures() { fixture_cache().clear(); }

std::map<std::string, TableRow>& table_rows() {
  static std::map<std::string, TableRow> rows;
  return rows;
}

std::string short_plan(stencil::Plan const& p) {
  std::string s = policy_initials(stencil::to_string(p.policy));
  if (p.policy != stencil::PolicyKind::naive) {
    // The tile's x, y and z, without the trailing ones of the unused
    // dimensions.
    int const tile[] = {p.tile.x, p.tile.y, p.tile.z};
    int n = 3;
    while (n > 1 && tile[n - 1] == 1) --n;
    if (n > 1 || tile[0] > 1) {
      s += ' ';
      for (int d = 0; d < n; ++d) {
        s += (d ? "x" : "") + std::to_string(tile[d]);
      }
    }
  }
  if (p.depth != 1) s += " d" + std::to_string(p.depth);
  if (p.policy == stencil::PolicyKind::register_resident) {
    s += " g" + std::to_string(p.native_cuda.grid_halo);
  }
  if (p.backend == stencil::Backend::native_cuda) {
    s += " p" + std::to_string(p.prefetch);
  }
  if (p.team_size > 0) s += " " + std::to_string(p.team_size) + "thr";
  if (p.native_cuda.warp_tiles) s += " warps";
  if (p.backend != p.space_backend) {
    s += " (" + stencil::to_string(p.backend) + " fallback)";
  }
  return s;
}

std::unique_ptr<benchmark::BenchmarkReporter> make_table_reporter(
    Options const& o) {
  return std::make_unique<TableReporter>(o);
}

}  // namespace stencil_perf
