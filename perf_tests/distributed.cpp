// SPDX-License-Identifier: Apache-2.0
// stencil_perf_mpi: the distributed benchmark. Under mpirun, advances a
// DistributedGrid (stencil/mpi.hpp) and reports, for the whole domain, the
// rate in GCells/s (global cells x steps / s), the share of the time the
// exchanges took, and the exchange's bytes and time per block, as rows
// named <stencil>/<precision>/<policy>/ranks:N/<weak|strong>.
//
//   mpirun -np 2 stencil_perf_mpi --stencil=j2d5pt-prescaled,j3d7pt \
//       --policy=Auto --mode=weak,strong --out=mpi.json
//
// weak: every rank holds the per-rank domain (--size, default the suite's
// larger domain split over the ranks of one GPU machine's count); strong:
// the ranks share the one global domain of --size. Exit status 0 when
// every row ran, 1 when one failed, 2 for a bad command line.
#include <stencil/mpi.hpp>
#include <stencil/stencil.hpp>
#include <stencil/suite.hpp>

#include "program_args.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using stencil_perf::json_text;
using stencil_perf::parse_positive;
using stencil_perf::split;
using stencil_perf::UsageError;

struct Options {
  std::vector<std::string> stencils{"j2d5pt-prescaled", "j3d7pt"};
  std::vector<std::string> precisions{"double"};
  std::vector<std::string> policies{"Auto"};
  std::vector<std::string> modes{"weak", "strong"};
  std::vector<std::string> transports{"host"};
  std::vector<int> size;  // empty: each stencil's default
  std::vector<int>
      ranks;      // empty: MPI_Dims_create (weak), the library (strong)
  int steps = 0;  // 0: the stencil's default
  int depth = 0;  // steps per exchange; 0: the stencil's default
  int repetitions = 3;
  bool quick = false;
  std::string out;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string const arg = argv[i];
    auto value = [&](char const* name) -> std::string const* {
      static std::string v;
      std::string const prefix = std::string("--") + name + "=";
      if (arg.rfind(prefix, 0) != 0) return nullptr;
      v = arg.substr(prefix.size());
      return &v;
    };
    if (arg == "--quick") {
      o.quick = true;
    } else if (auto v = value("stencil")) {
      o.stencils = split(*v, ',');
    } else if (auto v = value("precision")) {
      o.precisions = split(*v, ',');
    } else if (auto v = value("policy")) {
      o.policies = split(*v, ',');
    } else if (auto v = value("mode")) {
      o.modes = split(*v, ',');
    } else if (auto v = value("transport")) {
      o.transports = split(*v, ',');
    } else if (auto v = value("size")) {
      for (auto const& e : split(*v, 'x'))
        o.size.push_back(parse_positive("--size", e));
    } else if (auto v = value("ranks")) {
      for (auto const& e : split(*v, 'x'))
        o.ranks.push_back(parse_positive("--ranks", e));
    } else if (auto v = value("steps")) {
      o.steps = parse_positive("--steps", *v);
    } else if (auto v = value("depth")) {
      o.depth = parse_positive("--depth", *v);
    } else if (auto v = value("repetitions")) {
      o.repetitions = parse_positive("--repetitions", *v);
    } else if (auto v = value("out")) {
      o.out = *v;
    } else {
      throw UsageError(
          "unknown argument '" + arg +
          "'; use --stencil=j2d5pt,j2d5pt-prescaled,j3d7pt "
          "--precision=double,float --policy=Naive,SpatialBlocking,Auto,"
          "TemporalBlocking,DeviceTiling --mode=weak,strong "
          "--transport=host,nccl --size=NxN[xN] --ranks=AxB[xC] --steps=N "
          "--depth=N "
          "--repetitions=N --quick --out=FILE");
    }
  }
  stencil_perf::expect_one_of("--transport", o.transports, {"host", "nccl"});
  stencil_perf::expect_one_of("--mode", o.modes, {"weak", "strong"});
  stencil_perf::expect_one_of("--precision", o.precisions, {"double", "float"});
  return o;
}

struct Row {
  std::string name;
  double gcells = 0, exchange_share = 0, exchange_ms = 0, seconds = 0;
  std::size_t bytes = 0;
  int ranks = 1;
  std::string plan, error;
};

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

/// Whether this build runs `Policy` on rank-`Rank` grids of `Space`
/// (Auto always does).
template <class Policy, class Space, int Rank>
constexpr bool runs() {
  if constexpr (std::is_same_v<Policy, stencil::Auto>) {
    return true;
  } else {
    return stencil::policy_available_v<Policy, Space> &&
           stencil::runs_rank_v<Policy, Rank>;
  }
}

/// One row: `Op` in `T` with `policy` on every rank.
template <class Op, class T, class Policy>
Row run(Options const& o, std::string const& policy_name, Policy policy,
        std::string const& mode, std::string const& transport) {
  constexpr int rank = Op::rank;
  Row row;
  row.ranks = world_size();
  row.name = std::string(Op::name) + "/" +
             (std::is_same_v<T, float> ? "float" : "double") + "/" +
             policy_name + (transport == "host" ? "" : "." + transport) +
             "/ranks:" + std::to_string(row.ranks) + "/" + mode;
  using Space = Kokkos::DefaultExecutionSpace;
  if constexpr (!runs<Policy, Space, rank>()) {
    (void)o;
    (void)policy;
    row.error = policy_name + " does not run rank-" + std::to_string(rank) +
                " grids on " + Space::name() + " in this build";
    return row;
  } else {
    try {
      std::array<int, rank> extents{};
      std::array<int, rank> dims{};
      if (!o.ranks.empty()) {
        long long product = 1;
        for (int a = 0; a < rank; ++a) {
          dims[a] = o.ranks[std::min<std::size_t>(a, o.ranks.size() - 1)];
          product *= dims[a];
        }
        if (o.ranks.size() != rank || product != row.ranks) {
          throw UsageError("--ranks: give " + std::to_string(rank) +
                           " counts whose product is " +
                           std::to_string(row.ranks));
        }
      } else if (mode == "weak") {
        // Weak: each rank holds the per-rank domain, so the process grid
        // must be known first; strong leaves it to the library (0s).
        int d[rank] = {};
        MPI_Dims_create(row.ranks, rank, d);
        for (int a = 0; a < rank; ++a) dims[a] = d[a];
      }
      // The per-rank (weak) or global (strong) domain: --size, else the
      // suite's paper domains (j3d7pt's larger one), small with --quick.
      for (int a = 0; a < rank; ++a) {
        int const given =
            o.size.empty() ? 0
            : o.size.size() == 1
                ? o.size[0]
                : o.size[std::min<std::size_t>(a, o.size.size() - 1)];
        int const fallback = o.quick ? (rank == 2 ? 256 : 48)
                             : rank == 2
                                 ? 10208
                                 : std::array<int, 3>{2560, 352, 384}[a];
        extents[a] = given > 0 ? given : fallback;
        if (mode == "weak") extents[a] *= dims[a];
      }
      int const steps = o.steps > 0 ? o.steps : (o.quick ? 12 : 240);
      stencil::mpi::DistributedOptions<rank> options;
      options.radius = Op::radius;
      options.halo = Op::radius;
      options.depth = o.depth > 0 ? o.depth : (rank == 2 ? 12 : 8);
      options.ranks = dims;
      options.transport = transport == "nccl" ? stencil::mpi::Transport::nccl
                                              : stencil::mpi::Transport::host;
      stencil::mpi::DistributedGrid<T, rank> grid("bench", MPI_COMM_WORLD,
                                                  extents, options);
      if constexpr (rank == 2) {
        grid.fill([](int i, int j) {
          return static_cast<T>(0.5 + 0.5 * std::sin(0.01 * i + 0.02 * j));
        });
      } else {
        grid.fill([](int i, int j, int k) {
          return static_cast<T>(0.5 +
                                0.5 * std::sin(0.01 * i + 0.02 * j + 0.03 * k));
        });
      }
      Kokkos::DefaultExecutionSpace space;
      auto const p = stencil::mpi::iterate(space, grid, Op{}, options.depth,
                                           policy);  // warm-up
      std::ostringstream plan;
      plan << to_string(p.local.policy) << " d" << p.local.depth << ", ghosts "
           << p.ghost_width << ", x" << std::fixed;
      plan.precision(2);
      plan << p.redundant_work << " work, " << to_string(p.transport)
           << ", ranks ";
      for (int a = 0; a < rank; ++a) plan << (a ? "x" : "") << p.ranks[a];
      row.plan = plan.str();
      row.bytes = p.bytes_per_exchange;
      std::vector<double> times, shares, per_exchange;
      for (int r = 0; r < o.repetitions; ++r) {
        grid.exchange_stats() = {};
        MPI_Barrier(MPI_COMM_WORLD);
        double const start = MPI_Wtime();
        stencil::mpi::iterate(space, grid, Op{}, steps, policy);
        space.fence();
        MPI_Barrier(MPI_COMM_WORLD);
        double const seconds = MPI_Wtime() - start;
        auto const& s = grid.exchange_stats();
        double exchange = s.seconds, slowest = 0;
        MPI_Allreduce(&exchange, &slowest, 1, MPI_DOUBLE, MPI_MAX,
                      MPI_COMM_WORLD);
        times.push_back(seconds);
        shares.push_back(slowest / seconds);
        per_exchange.push_back(s.exchanges ? 1e3 * slowest / s.exchanges : 0.0);
      }
      auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
      };
      double cells = 1;
      for (int a = 0; a < rank; ++a) cells *= extents[a];
      row.seconds = median(times);
      row.gcells = cells * steps / row.seconds * 1e-9;
      row.exchange_share = median(shares);
      row.exchange_ms = median(per_exchange);
    } catch (stencil::error const& e) {
      row.error = e.what();
    }
    return row;
  }
}

template <class Op, class T>
void run_policies(Options const& o, std::string const& mode,
                  std::vector<Row>& rows) {
  for (auto const& transport : o.transports) {
    for (auto const& name : o.policies) {
      if (name == "Naive") {
        rows.push_back(run<Op, T>(o, name, stencil::Naive{}, mode, transport));
      } else if (name == "SpatialBlocking") {
        rows.push_back(
            run<Op, T>(o, name, stencil::SpatialBlocking{}, mode, transport));
      } else if (name == "Auto") {
        rows.push_back(run<Op, T>(o, name, stencil::Auto{}, mode, transport));
      } else if (name == "TemporalBlocking") {
        rows.push_back(
            run<Op, T>(o, name, stencil::TemporalBlocking{}, mode, transport));
      } else if (name == "DeviceTiling") {
        rows.push_back(
            run<Op, T>(o, name, stencil::DeviceTiling{}, mode, transport));
      } else {
        throw UsageError("--policy: unknown name '" + name +
                         "'; use Naive, SpatialBlocking, Auto, "
                         "TemporalBlocking or DeviceTiling");
      }
    }
  }
}

template <class Op>
void run_precisions(Options const& o, std::string const& mode,
                    std::vector<Row>& rows) {
  for (auto const& p : o.precisions) {
    if (p == "double") {
      run_policies<Op, double>(o, mode, rows);
    } else if (p == "float") {
      run_policies<Op, float>(o, mode, rows);
    } else {
      throw UsageError("--precision: unknown name '" + p +
                       "'; use double or float");
    }
  }
}

void write_json(std::string const& path, std::vector<Row> const& rows) {
  std::ofstream f(path);
  f << "{\n  \"context\": {\"program\": \"stencil_perf_mpi\", \"ranks\": "
    << world_size() << ", \"execution_space\": \""
    << Kokkos::DefaultExecutionSpace::name() << "\"},\n  \"benchmarks\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Row const& r = rows[i];
    f << (i ? "," : "") << "\n    {\"name\": \"" << json_text(r.name)
      << "\", \"run_name\": \"" << json_text(r.name) << "\"";
    if (!r.error.empty()) {
      f << ", \"error_occurred\": true, \"error_message\": \""
        << json_text(r.error) << "\"}";
      continue;
    }
    f << ", \"GCells/s\": " << r.gcells
      << ", \"exchange_share\": " << r.exchange_share
      << ", \"exchange_ms_per_block\": " << r.exchange_ms
      << ", \"bytes_per_exchange\": " << r.bytes
      << ", \"overlap\": 0, \"seconds\": " << r.seconds << ", \"plan\": \""
      << json_text(r.plan) << "\"}";
  }
  f << "\n  ]\n}\n";
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    // One device per rank: Kokkos maps the node-local rank (from the
    // launcher's environment) to a device, unless told otherwise.
    setenv("KOKKOS_MAP_DEVICE_ID_BY", "mpi_rank", 0);
    Kokkos::ScopeGuard kokkos(argc, argv);
    try {
      Options const o = parse(argc, argv);
      std::vector<Row> rows;
      for (auto const& mode : o.modes) {
        for (auto const& s : o.stencils) {
          if (s == "j2d5pt") {
            run_precisions<stencil::suite::J2d5pt>(o, mode, rows);
          } else if (s == "j2d5pt-prescaled") {
            run_precisions<stencil::suite::J2d5ptPrescaled>(o, mode, rows);
          } else if (s == "j3d7pt") {
            run_precisions<stencil::suite::J3d7pt>(o, mode, rows);
          } else {
            throw UsageError("--stencil: unknown name '" + s +
                             "'; use j2d5pt, j2d5pt-prescaled or j3d7pt");
          }
        }
      }
      if (world_rank() == 0) {
        std::printf("%-44s %10s %9s %12s %12s  %s\n", "row", "GCells/s",
                    "exchange", "ms/exchange", "bytes/exch", "plan");
        for (auto const& r : rows) {
          if (!r.error.empty()) {
            std::printf("%-44s failed: %s\n", r.name.c_str(), r.error.c_str());
            status = 1;
            continue;
          }
          std::printf("%-44s %10.2f %8.1f%% %12.3f %12zu  %s\n", r.name.c_str(),
                      r.gcells, 100 * r.exchange_share, r.exchange_ms, r.bytes,
                      r.plan.c_str());
        }
        if (!o.out.empty()) write_json(o.out, rows);
      }
    } catch (UsageError const& e) {
      if (world_rank() == 0)
        std::cerr << "stencil_perf_mpi: " << e.what() << "\n";
      status = 2;
    }
  }
  MPI_Finalize();
  return status;
}
