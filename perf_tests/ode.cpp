// SPDX-License-Identifier: Apache-2.0
// stencil_perf_ode: the Runge-Kutta benchmark (issue 50). Integrates
// BRUSS2D (2 N^2 unknowns, reflecting sides, u(0) = 0.5 + y, v(0) = 1 + 5x)
// with fixed steps, and reports GCells/s as unknowns x steps / s, with the
// bytes per step the plan must move and the bandwidth that makes, as rows
// bruss2d/<precision>/<method>/<plan>/N. The layout is two fields
// (stencil::suite::BrussRhs), or with --layout=interleaved one field of u
// and v side by side (BrussInterleavedRhs, access distance 2N, as paper 001
// stores it; rows bruss2d-interleaved/...).
//
//   stencil_perf_ode --n=16,128,1024,2900 --method=bogacki-shampine,verner56 \
//       --plan=Unfused,Fused --precision=double --out=ode.json
//
// --plan=FusedTiled runs Fused{.resident = false} (rows .../FusedTiled/N):
// tiles even where one cluster holds the domain, which Fused (by default)
// and FusedResident run in the resident kernel;
// --plan=FusedGlobal runs Fused{.barrier = TileBarrier::global_memory}: the
// tile's blocks meet in global memory, as where there are no clusters.
// --cluster=XxY asks the native CUDA plan for its cluster, --tile=XxY the
// host plan for its tiles (cells along x and y).
//
// Exit status 0 when every row ran, 1 when one failed, 2 for a bad
// command line.
#include <stencil/ode.hpp>
#include <stencil/stencil.hpp>
#include <stencil/suite/solvers.hpp>

#include "machine.hpp"
#include "program_args.hpp"

#include <stencil/config.hpp>
#if defined(KOKKOS_ENABLE_CUDA) && STENCIL_ENABLE_NATIVE_CUDA
#include <stencil/native_cuda/common/calibration.hpp>
#endif

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

using stencil::ode::Method;
using stencil_perf::json_text;
using stencil_perf::parse_positive;
using stencil_perf::split;
using stencil_perf::UsageError;

struct Options {
  std::vector<int> sizes{16, 128, 1024, 2900};
  std::vector<std::string> methods{"rk4", "bogacki-shampine", "dormand-prince",
                                   "verner56"};
  std::vector<std::string> precisions{"double"};
  std::vector<std::string> plans{"Unfused", "Fused"};
  std::vector<std::string> layouts{"fields"};
  stencil::ode::Fused fused{};  // --cluster=XxY, --tile=XxY: Fused's shape
  int steps = 0;  // 0: enough for about 2e9 unknown-steps, 10 to 10000
  int repetitions = 3;
  bool quick = false;
  std::string out;
  double copy_gbs = 0;  ///< measured before the rows: their DRAM ceiling
};

Method method_named(std::string const& name) {
  for (Method m : {Method::forward_euler, Method::rk4, Method::bogacki_shampine,
                   Method::dormand_prince, Method::verner56}) {
    if (name == stencil::ode::to_string(m)) return m;
  }
  throw UsageError("--method: unknown '" + name +
                   "'; use forward-euler, rk4, bogacki-shampine, "
                   "dormand-prince or verner56");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string const arg = argv[i];
    auto value = [&](std::string const& name, std::string& v) {
      std::string const prefix = "--" + name + "=";
      if (arg.rfind(prefix, 0) != 0) return false;
      v = arg.substr(prefix.size());
      return true;
    };
    std::string v;
    if (arg == "--quick") {
      o.sizes = {16, 64};
      o.methods = {"rk4", "verner56"};
      o.plans = {"Unfused", "Auto"};  // Auto runs everywhere
      o.layouts = {"fields", "interleaved"};
      o.steps = 5;
      o.repetitions = 1;
      o.quick = true;
    } else if (value("n", v)) {
      o.sizes.clear();
      for (auto const& e : split(v, ','))
        o.sizes.push_back(parse_positive("--n", e));
    } else if (value("method", v)) {
      o.methods = split(v, ',');
    } else if (value("plan", v)) {
      o.plans = split(v, ',');
    } else if (value("cluster", v)) {
      auto const sizes = split(v, 'x');
      if (sizes.size() != 2) {
        throw UsageError("--cluster: '" + v + "'; give XxY, e.g. 1x8");
      }
      o.fused.cluster_x = parse_positive("--cluster", sizes[0]);
      o.fused.cluster_y = parse_positive("--cluster", sizes[1]);
    } else if (value("tile", v)) {
      auto const sizes = split(v, 'x');
      if (sizes.size() != 2) {
        throw UsageError("--tile: '" + v + "'; give XxY, e.g. 64x32");
      }
      o.fused.tile_x = parse_positive("--tile", sizes[0]);
      o.fused.tile_y = parse_positive("--tile", sizes[1]);
    } else if (value("layout", v)) {
      o.layouts = split(v, ',');
    } else if (value("precision", v)) {
      o.precisions = split(v, ',');
    } else if (value("steps", v)) {
      o.steps = parse_positive("--steps", v);
    } else if (value("repetitions", v)) {
      o.repetitions = parse_positive("--repetitions", v);
    } else if (value("out", v)) {
      o.out = v;
    } else {
      throw UsageError(
          "unknown argument '" + arg +
          "'; use --n=N,N,... --method=NAME,... "
          "--plan=Unfused,Fused,FusedTiled,FusedResident,FusedGlobal,Auto "
          "--cluster=XxY (native CUDA) --tile=XxY (host) "
          "--layout=fields,interleaved "
          "--precision=double,float --steps=N "
          "--repetitions=N --quick --out=FILE");
    }
  }
  for (auto const& m : o.methods) (void)method_named(m);
  stencil_perf::expect_one_of("--plan", o.plans,
                              {"Unfused", "Fused", "FusedTiled",
                               "FusedResident", "FusedGlobal", "Auto"});
  stencil_perf::expect_one_of("--layout", o.layouts, {"fields", "interleaved"});
  stencil_perf::expect_one_of("--precision", o.precisions, {"double", "float"});
  for (int n : o.sizes) {
    if (n < 3) throw UsageError("--n: BRUSS2D needs N >= 3 points a side");
  }
  return o;
}

struct Row {
  std::string name, error, plan;
  int n = 0, steps = 0;
  double dt = 0, seconds = 0, gcells = 0, bytes_per_step = 0, gbytes = 0;
  double dram_gcells = 0;  ///< the rate at the copy bandwidth
};

/// Values the Unfused plan moves per unknown and step: stage 0 reads Y_0
/// and writes y_n, k_0 and Y_1; stage i > 0 reads Y_i, y_n and k_0..k_i-1
/// and writes k_i and Y_i+1 (the last: y_n+1).
int unfused_values_per_unknown(int stages) {
  return 4 * stages + stages * (stages - 1) / 2;
}

/// The state of BRUSS2D on N x N points in `Rhs`'s layout, at t = 0.
template <class T, class Rhs, class Space>
stencil::State<T, 2, typename Space::memory_space> bruss_state(int n) {
  double const h = 1.0 / (n - 1);
  auto u0 = [h](int i) { return T(0.5 + i * h); };
  auto v0 = [h](int j) { return T(1.0 + 5 * j * h); };
  if constexpr (std::is_same_v<Rhs, stencil::suite::BrussRhs>) {
    stencil::State<T, 2, typename Space::memory_space> state(
        "bruss2d", {n, n}, stencil::field_specs<Rhs>({"u", "v"}),
        {.halo = 1, .boundary = stencil::Boundary::reflecting});
    stencil::fill(state, 0, [&](int i, int) { return u0(i); });
    stencil::fill(state, 1, [&](int, int j) { return v0(j); });
    return state;
  } else {
    // Reflected by the right-hand side itself; the halo is never read.
    stencil::State<T, 2, typename Space::memory_space> state(
        "bruss2d", {n, 2 * n}, stencil::field_specs<Rhs>({"uv"}), {.halo = 2});
    stencil::fill(state, 0,
                  [&](int i, int j) { return j % 2 == 0 ? u0(i) : v0(j / 2); });
    return state;
  }
}

template <class T, class Rhs, class Plan>
Row run(Options const& o, Method method, int n, Plan plan,
        std::string const& plan_name) {
  Row row;
  row.n = n;
  row.name = std::string(Rhs::name) + "/" +
             (std::is_same_v<T, float> ? "float" : "double") + "/" +
             stencil::ode::to_string(method) + "/" + plan_name + "/" +
             std::to_string(n);
  try {
    using Space = Kokkos::DefaultExecutionSpace;
    auto const rhs = Rhs::for_points(n);
    auto state = bruss_state<T, Rhs, Space>(n);
    // Every method here is stable on the negative real axis to at least 2
    // (forward Euler's interval); 0.9 of that, and at most 0.01 for the
    // reaction.
    row.dt = std::min(0.01, 0.9 * 2.0 / rhs.stiffness());
    double const unknowns = 2.0 * n * n;
    row.steps = o.steps > 0
                    ? o.steps
                    : static_cast<int>(std::clamp(2e9 / unknowns, 10.0, 1e4));
    Space space;
    row.plan =
        stencil::ode::integrate(space, state, rhs, method,
                                stencil::ode::FixedSteps{0.0, row.dt, 1}, plan)
            .plan;
    space.fence();
    std::vector<double> times;
    for (int r = 0; r < o.repetitions; ++r) {
      auto const start = std::chrono::steady_clock::now();
      stencil::ode::integrate(space, state, rhs, method,
                              stencil::ode::FixedSteps{0.0, row.dt, row.steps},
                              plan);
      space.fence();
      times.push_back(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    }
    std::sort(times.begin(), times.end());
    row.seconds = times[times.size() / 2];
    row.gcells = unknowns * row.steps / row.seconds * 1e-9;
    // Fused moves y_n in and y_n+1 out (its tiles' rims, read twice, on
    // top); held by one cluster, once for all the steps of a launch (here
    // every step: no hooks); Unfused every stage's values.
    bool const fused = row.plan.rfind("Fused", 0) == 0;
    bool const held = row.plan.find("held by one cluster") != std::string::npos;
    double const values =
        fused
            ? (held ? 2.0 / row.steps : 2.0)
            : unfused_values_per_unknown(stencil::ode::tableau(method).stages);
    row.bytes_per_step = unknowns * sizeof(T) * values;
    row.gbytes = row.bytes_per_step * row.steps / row.seconds * 1e-9;
    row.dram_gcells = o.copy_gbs / (values * sizeof(T));
  } catch (stencil::error const& e) {
    row.error = e.what();
  }
  return row;
}

template <class T, class Rhs>
Row run_plan(Options const& o, Method method, int n, std::string const& plan) {
  if (plan == "Fused") return run<T, Rhs>(o, method, n, o.fused, plan);
  if (plan == "FusedResident") {
    stencil::ode::Fused resident = o.fused;
    resident.resident = true;
    return run<T, Rhs>(o, method, n, resident, plan);
  }
  if (plan == "FusedTiled") {
    stencil::ode::Fused tiled = o.fused;
    tiled.resident = false;
    return run<T, Rhs>(o, method, n, tiled, plan);
  }
  if (plan == "FusedGlobal") {
    stencil::ode::Fused global = o.fused;
    global.barrier = stencil::ode::TileBarrier::global_memory;
    return run<T, Rhs>(o, method, n, global, plan);
  }
  if (plan == "Auto") {
    return run<T, Rhs>(o, method, n, stencil::ode::Auto{}, plan);
  }
  return run<T, Rhs>(o, method, n, stencil::ode::Unfused{}, plan);
}

template <class T>
Row run_layout(Options const& o, Method method, int n, std::string const& plan,
               std::string const& layout) {
  if (layout == "interleaved") {
    return run_plan<T, stencil::suite::BrussInterleavedRhs>(o, method, n, plan);
  }
  return run_plan<T, stencil::suite::BrussRhs>(o, method, n, plan);
}

void write_json(std::string const& path, stencil_perf::Facts const& context,
                std::vector<Row> const& rows) {
  std::ofstream f(path);
  f << "{\n  \"context\": {\"program\": \"stencil_perf_ode\"";
  for (auto const& [key, value] : context) {
    f << ",\n    \"" << json_text(key) << "\": \"" << json_text(value) << "\"";
  }
  f << "},\n  \"benchmarks\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Row const& r = rows[i];
    f << (i ? "," : "") << "\n    {\"name\": \"" << json_text(r.name)
      << "\", \"run_name\": \"" << json_text(r.name) << "\"";
    if (!r.error.empty()) {
      f << ", \"error_occurred\": true, \"error_message\": \""
        << json_text(r.error) << "\"}";
      continue;
    }
    f << ", \"GCells/s\": " << r.gcells << ", \"GB/s\": " << r.gbytes
      << ", \"bytes_per_step\": " << r.bytes_per_step
      << ", \"dram_ceiling_GCells/s\": " << r.dram_gcells
      << ", \"steps\": " << r.steps << ", \"dt\": " << r.dt << ", \"plan\": \""
      << json_text(r.plan) << "\""
      << ", \"seconds\": " << r.seconds << "}";
  }
  f << "\n  ]\n}\n";
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    Options o = parse(argc, argv);
    // Where the rows ran, and the copy bandwidth their DRAM ceilings rest
    // on (quick: smaller arrays).
    auto const machine = stencil_perf::describe_machine();
    auto const ceilings = stencil_perf::measure_ceilings(o.quick);
    stencil_perf::Facts context = machine.facts;
#if defined(KOKKOS_ENABLE_CUDA) && STENCIL_ENABLE_NATIVE_CUDA
    context.emplace_back("gpu_uuid", stencil::native_cuda::gpu_uuid());
#endif
    for (auto const& fact : stencil_perf::ceiling_facts(ceilings)) {
      context.push_back(fact);
    }
    o.copy_gbs = ceilings.copy.median_gbs;
    std::printf("%s; copy %.0f GB/s\n", machine.summary.c_str(), o.copy_gbs);
    std::printf("%-56s %10s %10s %14s %9s %7s  %s\n", "row", "GCells/s", "GB/s",
                "bytes/step", "DRAM ceil", "steps", "plan");
    // Each row is printed, and the JSON rewritten, as soon as it has run,
    // so that a run cut short by a time limit keeps what it measured.
    std::vector<Row> rows;
    int status = 0;
    auto report = [&](Row const& r) {
      rows.push_back(r);
      if (!r.error.empty()) {
        std::printf("%-56s failed: %s\n", r.name.c_str(), r.error.c_str());
        status = 1;
      } else {
        std::printf("%-56s %10.3f %10.1f %14.0f %9.1f %7d  %s\n",
                    r.name.c_str(), r.gcells, r.gbytes, r.bytes_per_step,
                    r.dram_gcells, r.steps, r.plan.c_str());
      }
      std::fflush(stdout);
      if (!o.out.empty()) write_json(o.out, context, rows);
    };
    for (auto const& layout : o.layouts) {
      for (auto const& p : o.precisions) {
        for (auto const& m : o.methods) {
          for (int n : o.sizes) {
            for (auto const& plan : o.plans) {
              Method const method = method_named(m);
              report(p == "float"
                         ? run_layout<float>(o, method, n, plan, layout)
                         : run_layout<double>(o, method, n, plan, layout));
            }
          }
        }
      }
    }
    return status;
  } catch (UsageError const& e) {
    std::cerr << "stencil_perf_ode: " << e.what() << "\n";
    return 2;
  }
}
