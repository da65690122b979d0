// SPDX-License-Identifier: Apache-2.0
#include "machine.hpp"

#include <stencil/config.hpp>
#include <stencil/native_cuda/common/peaks.hpp>  // plain constants: every build
#if STENCIL_ENABLE_NATIVE_CUDA
#include <stencil/native_cuda/common/grid_barrier.hpp>
#include <stencil/native_cuda/device_tiling/exchange.hpp>
#endif

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <type_traits>

namespace stencil_perf {

namespace {

using Space = Kokkos::DefaultExecutionSpace;

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

// ---------------------------------------------------------------------------
// Copy bandwidth

// 16 bytes that a GPU moves with one vector load and store.
struct alignas(16) Wide {
  double v[2];
};

// A functor rather than a lambda: nvcc does not allow extended lambdas in
// every context this could be called from.
template <class T>
struct CopyKernel {
  Kokkos::View<T const*, Space::memory_space> src;
  Kokkos::View<T*, Space::memory_space> dst;
  KOKKOS_FUNCTION void operator()(std::int64_t i) const { dst(i) = src(i); }
};

template <class T>
CopyBandwidth measure_copy(std::size_t bytes_per_array, int samples,
                           int copies_per_sample) {
  std::int64_t const n = static_cast<std::int64_t>(bytes_per_array / sizeof(T));
  // Kokkos initialises views with a parallel kernel, so host threads touch
  // their own pages first, as they will when copying. The values (zeros)
  // do not matter to a copy.
  Kokkos::View<T*, Space::memory_space> src("stencil_perf::copy_src", n);
  Kokkos::View<T*, Space::memory_space> dst("stencil_perf::copy_dst", n);
  Space space;
  CopyKernel<T> const kernel{src, dst};
  auto const policy =
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, n);
  auto run = [&] {
    for (int c = 0; c < copies_per_sample; ++c) {
      Kokkos::parallel_for("stencil_perf::copy", policy, kernel);
    }
    space.fence("stencil_perf::copy");
  };
  run();  // warm-up: first launch, page mapping, clocks ramping up
  std::vector<double> gbs;
  double const bytes = 2.0 * static_cast<double>(n) * sizeof(T) *
                       static_cast<double>(copies_per_sample);
  for (int s = 0; s < samples; ++s) {
    auto const start = std::chrono::steady_clock::now();
    run();
    std::chrono::duration<double> const t =
        std::chrono::steady_clock::now() - start;
    gbs.push_back(bytes / t.count() / 1e9);
  }
  std::sort(gbs.begin(), gbs.end());
  CopyBandwidth result;
  result.median_gbs =
      gbs.size() % 2 == 1
          ? gbs[gbs.size() / 2]
          : 0.5 * (gbs[gbs.size() / 2 - 1] + gbs[gbs.size() / 2]);
  result.best_gbs = gbs.back();
  result.bytes_per_array = static_cast<std::size_t>(n) * sizeof(T);
  result.samples = samples;
  return result;
}

// ---------------------------------------------------------------------------
// GPU properties

#if defined(KOKKOS_ENABLE_CUDA)
struct GpuProperties {
  std::string name;
  int device = 0;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int sm_clock_khz = 0;   // peak (boost) clock
  int mem_clock_khz = 0;  // peak memory clock
  int bus_bits = 0;
  int l2_bytes = 0;
  std::size_t global_bytes = 0;
  int runtime_version = 0;
  int driver_version = 0;
};

// cudaDeviceProp lost clockRate and memoryClockRate in CUDA 13; the
// attribute queries exist in every version we support.
GpuProperties read_gpu() {
  GpuProperties g;
  g.device = Kokkos::Cuda{}.cuda_device();
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, g.device) == cudaSuccess) {
    g.name = prop.name;
    g.global_bytes = prop.totalGlobalMem;
  } else {
    g.name = "unknown CUDA device";
  }
  auto attr = [&](cudaDeviceAttr a) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, a, g.device) != cudaSuccess) v = 0;
    return v;
  };
  g.cc_major = attr(cudaDevAttrComputeCapabilityMajor);
  g.cc_minor = attr(cudaDevAttrComputeCapabilityMinor);
  g.sm_count = attr(cudaDevAttrMultiProcessorCount);
  g.sm_clock_khz = attr(cudaDevAttrClockRate);
  g.mem_clock_khz = attr(cudaDevAttrMemoryClockRate);
  g.bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  g.l2_bytes = attr(cudaDevAttrL2CacheSize);
  cudaRuntimeGetVersion(&g.runtime_version);
  cudaDriverGetVersion(&g.driver_version);
  return g;
}

#endif

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      std::size_t const colon = line.find(':');
      if (colon != std::string::npos) {
        std::size_t const start = line.find_first_not_of(" \t", colon + 1);
        if (start != std::string::npos) return line.substr(start);
      }
    }
  }
  return "unknown CPU";
}

std::string kokkos_backends() {
  std::string s;
  auto add = [&s](char const* name) {
    if (!s.empty()) s += ',';
    s += name;
  };
#if defined(KOKKOS_ENABLE_SERIAL)
  add("Serial");
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  add("OpenMP");
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  add("Threads");
#endif
#if defined(KOKKOS_ENABLE_HPX)
  add("HPX");
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  add("Cuda");
#endif
#if defined(KOKKOS_ENABLE_HIP)
  add("HIP");
#endif
#if defined(KOKKOS_ENABLE_SYCL)
  add("SYCL");
#endif
#if defined(KOKKOS_ENABLE_OPENMPTARGET)
  add("OpenMPTarget");
#endif
#if defined(KOKKOS_ENABLE_OPENACC)
  add("OpenACC");
#endif
  return s;
}

// Picks the lines of Kokkos::print_configuration that identify a build
// (compiler, architectures); the full text is too long for a context entry.
void add_kokkos_configuration(Facts& facts) {
  std::ostringstream text;
  Kokkos::print_configuration(text, false);
  std::istringstream lines(text.str());
  std::string line;
  std::string compilers;
  while (std::getline(lines, line)) {
    std::size_t const colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::size_t const b = line.find_first_not_of(' ');
    std::string const key = line.substr(b, colon - b);
    std::size_t const v = line.find_first_not_of(' ', colon + 1);
    std::string const value = v == std::string::npos ? "" : line.substr(v);
    if (key == "CPU architecture") {
      facts.emplace_back("kokkos_cpu_arch", value);
    } else if (key == "GPU architecture") {
      facts.emplace_back("kokkos_gpu_arch", value);
    } else if (key.rfind("KOKKOS_COMPILER_", 0) == 0) {
      // CUDA builds list two: the device and the host compiler.
      if (!compilers.empty()) compilers += ", ";
      compilers += key.substr(16) + " " + value;
    }
  }
  if (!compilers.empty()) facts.emplace_back("kokkos_compiler", compilers);
}

}  // namespace

Machine describe_machine() {
  Machine m;
  Facts& f = m.facts;
  std::string const space = Space::name();
  int const host_threads = Kokkos::DefaultHostExecutionSpace().concurrency();
  bool described = false;
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
    GpuProperties const g = read_gpu();
    m.device = g.name;
    m.summary = g.name + " (" + std::to_string(g.sm_count) + " SMs, " +
                std::to_string(g.sm_clock_khz / 1000) + " MHz, sm_" +
                std::to_string(g.cc_major) + std::to_string(g.cc_minor) +
                "), Kokkos::" + space;
    f.emplace_back("gpu_name", g.name);
    f.emplace_back("gpu_device_id", std::to_string(g.device));
    f.emplace_back("gpu_compute_capability", std::to_string(g.cc_major) + "." +
                                                 std::to_string(g.cc_minor));
    f.emplace_back("gpu_sm_count", std::to_string(g.sm_count));
    f.emplace_back("gpu_sm_clock_MHz", fixed(g.sm_clock_khz / 1e3, 0));
    f.emplace_back("gpu_memory_clock_MHz", fixed(g.mem_clock_khz / 1e3, 0));
    f.emplace_back("gpu_memory_bus_bits", std::to_string(g.bus_bits));
    // Double data rate: two transfers per memory clock.
    f.emplace_back(
        "gpu_dram_theoretical_GB/s",
        fixed(2.0 * g.mem_clock_khz * 1e3 * g.bus_bits / 8 / 1e9, 0));
    f.emplace_back("gpu_l2_bytes", std::to_string(g.l2_bytes));
    f.emplace_back("gpu_memory_bytes", std::to_string(g.global_bytes));
    f.emplace_back("cuda_runtime_version", std::to_string(g.runtime_version));
    f.emplace_back("cuda_driver_version", std::to_string(g.driver_version));
    f.emplace_back("host_cpu_model", cpu_model());
    described = true;
  }
#endif
  if (!described) {
    m.device = cpu_model();
    m.summary = m.device + " (" + std::to_string(Space().concurrency()) +
                " threads), Kokkos::" + space;
    f.emplace_back("cpu_model", m.device);
    f.emplace_back("threads", std::to_string(Space().concurrency()));
  }
  f.emplace_back("host_threads", std::to_string(host_threads));
  f.emplace_back("execution_space", space);
  f.emplace_back("kokkos_version",
                 std::to_string(KOKKOS_VERSION / 10000) + "." +
                     std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
                     std::to_string(KOKKOS_VERSION % 100));
  f.emplace_back("kokkos_backends", kokkos_backends());
  add_kokkos_configuration(f);
  return m;
}

Ceilings measure_ceilings(bool quick) {
  Ceilings c;
  // Full: 1 GiB per array, far beyond any L2 or L3, and each sample repeats
  // the copy so that a fast GPU's sample still takes milliseconds.
  std::size_t const bytes =
      quick ? (std::size_t{1} << 27) : (std::size_t{1} << 30);
  int const samples = 7;
  int const copies = quick ? 1 : 5;
  c.copy = measure_copy<Wide>(bytes, samples, copies);
  c.copy_double = measure_copy<double>(bytes, samples, copies);
  c.copy_float = measure_copy<float>(bytes, samples, copies);
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
    GpuProperties const g = read_gpu();
    auto const lanes =
        stencil::native_cuda::fma_lanes_per_sm(g.cc_major, g.cc_minor);
    double const clock_hz = g.sm_clock_khz * 1e3;
    c.fp64_gflops =
        stencil::native_cuda::fma_gflops(g.sm_count, lanes.fp64, clock_hz);
    c.fp32_gflops =
        stencil::native_cuda::fma_gflops(g.sm_count, lanes.fp32, clock_hz);
    // 32 banks of 4 bytes per SM and clock.
    c.shared_gbs = g.sm_count * 128.0 * clock_hz / 1e9;
#if STENCIL_ENABLE_NATIVE_CUDA
    // What a device-tiling kernel pays per streamed plane; 20000 barriers
    // make the launch's own cost negligible.
    using stencil::native_cuda::BarrierKind;
    int const rounds = quick ? 2000 : 20000;
    c.barrier_us_grid_sync = stencil::native_cuda::barrier_microseconds(
        BarrierKind::grid_sync, 1, 256, rounds);
    c.barrier_us_counter = stencil::native_cuda::barrier_microseconds(
        BarrierKind::counter, 1, 256, rounds);
    c.exchange_us_tagged =
        stencil::native_cuda::device_tiling::tagged_exchange_microseconds(
            256, rounds);
    // Fresh figures for the model in every run, so that the predictions in
    // this run's rows rest on this run's device; they replace the cache.
    c.model_device = stencil::model::recalibrate_cuda_device();
#endif
  }
#endif
  return c;
}

Facts ceiling_facts(Ceilings const& c) {
  Facts f;
  f.emplace_back("copy_GB/s", fixed(c.copy.median_gbs, 2));
  f.emplace_back("copy_best_GB/s", fixed(c.copy.best_gbs, 2));
  f.emplace_back("copy_item_bytes", std::to_string(sizeof(Wide)));
  f.emplace_back("copy_bytes_per_array",
                 std::to_string(c.copy.bytes_per_array));
  f.emplace_back("copy_samples", std::to_string(c.copy.samples) + " (median)");
  f.emplace_back("copy_GB/s_double_items", fixed(c.copy_double.median_gbs, 2));
  f.emplace_back("copy_GB/s_float_items", fixed(c.copy_float.median_gbs, 2));
  f.emplace_back("dram_ceiling_GCells/s_double",
                 fixed(c.dram_gcells(sizeof(double)), 3));
  f.emplace_back("dram_ceiling_GCells/s_float",
                 fixed(c.dram_gcells(sizeof(float)), 3));
  if (c.shared_gbs > 0) {
    f.emplace_back("shared_memory_ceiling_GB/s", fixed(c.shared_gbs, 0));
  }
  if (c.barrier_us_grid_sync > 0) {
    f.emplace_back("barrier_us_grid_sync", fixed(c.barrier_us_grid_sync, 3));
    f.emplace_back("barrier_us_counter", fixed(c.barrier_us_counter, 3));
    f.emplace_back("exchange_us_tagged", fixed(c.exchange_us_tagged, 3));
  }
  if (c.fp64_gflops > 0) {
    f.emplace_back("fp64_peak_GFLOP/s", fixed(c.fp64_gflops, 0));
    f.emplace_back("fp32_peak_GFLOP/s", fixed(c.fp32_gflops, 0));
  }
  if (c.model_device) {
    stencil::model::Device const& d = *c.model_device;
    f.emplace_back("model_copy_GB/s", fixed(d.copy_gbs, 1));
    f.emplace_back("model_shared_TB/s", fixed(d.shared_tbs, 2));
    f.emplace_back("model_barrier_us", fixed(d.barrier_us, 3));
    f.emplace_back("model_exchange_us", fixed(d.exchange_us, 3));
    f.emplace_back("model_issue_Ginstr/s", fixed(d.issue_gips, 0));
    f.emplace_back("model_device_source", d.source);
  }
  return f;
}

}  // namespace stencil_perf
