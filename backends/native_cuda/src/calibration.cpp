// SPDX-License-Identifier: Apache-2.0
#include <stencil/native_cuda/common/calibration.hpp>
#include <stencil/native_cuda/common/cuda_check.hpp>
#include <stencil/native_cuda/common/grid_barrier.hpp>
#include <stencil/native_cuda/common/neighbour_flags.hpp>
#include <stencil/native_cuda/common/peaks.hpp>
#include <stencil/native_cuda/device_tiling/exchange.hpp>
#include <stencil/native_cuda/device_tiling/kernels.hpp>

#include <stencil/error.hpp>
#include <stencil/model.hpp>

#include <Kokkos_Core.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <ctime>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace stencil::native_cuda {

namespace {

constexpr int samples = 7;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t const n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median of `samples` timings of `enqueue` on `stream`, after one untimed
// run (first launch, clocks ramping up), in milliseconds.
template <class Enqueue>
double median_milliseconds(cudaStream_t stream, Enqueue&& enqueue) {
  enqueue();
  std::vector<double> ms;
  for (int s = 0; s < samples; ++s) {
    ms.push_back(stream_milliseconds(stream, enqueue));
  }
  return median(ms);
}

// A device array freed on every way out of a calibration kernel's timing.
template <class T>
class DeviceArray {
 public:
  DeviceArray(std::size_t n, char const* what) {
    if (cudaMalloc(&data_, n * sizeof(T)) != cudaSuccess) {
      cudaGetLastError();
      stencil::detail::throw_error(
          std::string("model: calibration could not allocate ") + what);
    }
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(DeviceArray const&) = delete;
  DeviceArray& operator=(DeviceArray const&) = delete;
  T* data() const { return data_; }

 private:
  T* data_ = nullptr;
};

// One 16-byte item per thread: the widest plain load and store, which is
// what the DRAM-bound kernels approach; narrower items meet an item-rate
// limit first (perf_tests/machine.hpp).
__global__ void copy_items(int4 const* __restrict__ in, int4* __restrict__ out,
                           std::size_t n) {
  std::size_t const i =
      static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

double copy_gbs(cudaStream_t stream) {
  // Far beyond any L2: 1 GiB per array, less where the GPU is nearly full
  // (an application may calibrate with its grids allocated), but never
  // below 128 MiB, which no L2 holds either.
  std::size_t free_bytes = 0, total_bytes = 0;
  STENCIL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::size_t constexpr smallest = std::size_t{1} << 27;
  std::size_t const bytes = std::min(
      std::size_t{1} << 30, free_bytes / 4 / sizeof(int4) * sizeof(int4));
  if (bytes < smallest)
    stencil::detail::throw_out_of_memory(
        stencil::detail::concat(
            "model: calibrating the copy bandwidth needs 2 x ", smallest >> 20,
            " MiB of free GPU memory, and ", free_bytes >> 20,
            " MiB are free; make the first plan before allocating the "
            "grids, or run stencil_calibrate once to fill the cache"),
        2 * smallest, free_bytes);
  std::size_t const n = bytes / sizeof(int4);
  int4* in = nullptr;
  int4* out = nullptr;
  STENCIL_CUDA_CHECK(cudaMalloc(&in, n * sizeof(int4)));
  if (cudaMalloc(&out, n * sizeof(int4)) != cudaSuccess) {
    cudaGetLastError();
    cudaFree(in);
    stencil::detail::throw_out_of_memory(
        "model: calibration could not allocate its second copy array; run "
        "stencil_calibrate once on an idle GPU to fill the cache",
        n * sizeof(int4), free_bytes - n * sizeof(int4));
  }
  int const copies = 3;
  int const threads = 256;
  auto const blocks = static_cast<unsigned>((n + threads - 1) / threads);
  double ms = 0;
  try {
    STENCIL_CUDA_CHECK(cudaMemsetAsync(in, 0, n * sizeof(int4), stream));
    ms = median_milliseconds(stream, [&] {
      for (int c = 0; c < copies; ++c) {
        copy_items<<<blocks, threads, 0, stream>>>(in, out, n);
      }
      STENCIL_CUDA_CHECK(cudaGetLastError());
    });
  } catch (...) {
    cudaFree(in);
    cudaFree(out);
    throw;
  }
  STENCIL_CUDA_CHECK(cudaFree(in));
  STENCIL_CUDA_CHECK(cudaFree(out));
  double const moved = 2.0 * copies * static_cast<double>(n * sizeof(int4));
  return moved / (ms * 1e-3) / 1e9;
}

// Reads through L2 only (ld.global.cg skips L1) of an array of half the L2,
// `repeats` times over: after the first pass every read hits in L2.
__global__ void l2_reads(int4 const* __restrict__ in, std::size_t n,
                         int repeats, int* sink) {
  std::size_t const stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  int acc = 0;
  for (int r = 0; r < repeats; ++r) {
    for (std::size_t i =
             static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < n; i += stride) {
      int4 const v = __ldcg(in + i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  // The array is zero, so never true; keeps the reads alive.
  if (acc == 0x7fffffff) sink[blockIdx.x] = acc;
}

double l2_gbs(cudaStream_t stream, int l2_bytes, int sms) {
  std::size_t const n = std::max<std::size_t>(
      1024, static_cast<std::size_t>(l2_bytes) / 2 / sizeof(int4));
  int const threads = 256;
  int const blocks = 8 * sms;
  int const repeats = 400;
  DeviceArray<int4> const in(n, "its L2 read array");
  DeviceArray<int> const sink(blocks, "its L2 read sink");
  STENCIL_CUDA_CHECK(cudaMemsetAsync(in.data(), 0, n * sizeof(int4), stream));
  double const ms = median_milliseconds(stream, [&] {
    l2_reads<<<blocks, threads, 0, stream>>>(in.data(), n, repeats,
                                             sink.data());
    STENCIL_CUDA_CHECK(cudaGetLastError());
  });
  double const read = static_cast<double>(repeats) * n * sizeof(int4);
  return read / (ms * 1e-3) / 1e9;
}

constexpr int shared_threads = 1024;
constexpr int shared_words = 2 * shared_threads;
constexpr int shared_loads_per_round = 32;

// Conflict-free 4-byte loads: in every load a warp's 32 lanes read 32
// consecutive words, one per bank. The base moves every round, so nothing
// can be hoisted out of the loop; four accumulators keep the adds off the
// critical path.
__global__ void __launch_bounds__(shared_threads)
    shared_loads(float* sink, int rounds) {
  __shared__ float words[shared_words];
  for (int i = threadIdx.x; i < shared_words; i += blockDim.x) {
    words[i] = static_cast<float>(i);
  }
  __syncthreads();
  float acc[4] = {0, 0, 0, 0};
  for (int r = 0; r < rounds; ++r) {
    int const base =
        (static_cast<int>(threadIdx.x) + 32 * r) & (shared_threads - 1);
#pragma unroll
    for (int j = 0; j < shared_loads_per_round; ++j) {
      acc[j % 4] += words[base + 32 * j];
    }
  }
  float const sum = acc[0] + acc[1] + acc[2] + acc[3];
  // Never true for these values; keeps the loads alive.
  if (sum == -1.0f) sink[blockIdx.x] = sum;
}

double shared_tbs(cudaStream_t stream, int sms) {
  int per_sm = 0;
  STENCIL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, shared_loads, shared_threads, 0));
  STENCIL_EXPECT(per_sm >= 1,
                 "model: the shared-memory calibration kernel cannot run a "
                 "block of ",
                 shared_threads, " threads on this GPU");
  int const blocks = per_sm * sms;
  int const rounds = 2048;
  DeviceArray<float> const sink(blocks, "its shared-memory sink");
  double const ms = median_milliseconds(stream, [&] {
    shared_loads<<<blocks, shared_threads, 0, stream>>>(sink.data(), rounds);
    STENCIL_CUDA_CHECK(cudaGetLastError());
  });
  double const bytes = static_cast<double>(blocks) * shared_threads * rounds *
                       shared_loads_per_round * sizeof(float);
  return bytes / (ms * 1e-3) / 1e12;
}

constexpr int fma_threads = 256;
constexpr int fma_chains = 8;
constexpr int fma_unroll = 8;

// Independent FMA chains per thread, so that an FMA's latency never stalls
// its warp; with every SM full, the schedulers issue FMAs back to back.
// x -> a x + b with a just below 1 keeps every value bounded.
template <class T>
__global__ void __launch_bounds__(fma_threads)
    fma_rounds(T* sink, int rounds, T a, T b) {
  T x[fma_chains];
#pragma unroll
  for (int c = 0; c < fma_chains; ++c) {
    x[c] = static_cast<T>(threadIdx.x + c);
  }
  for (int r = 0; r < rounds; ++r) {
#pragma unroll
    for (int u = 0; u < fma_unroll; ++u) {
#pragma unroll
      for (int c = 0; c < fma_chains; ++c) x[c] = fma(x[c], a, b);
    }
  }
  T sum = 0;
#pragma unroll
  for (int c = 0; c < fma_chains; ++c) sum += x[c];
  // Never true for these values; keeps the FMAs alive.
  if (sum == T(-1)) sink[blockIdx.x] = sum;
}

// GFLOP/s of back-to-back FMAs in T (an FMA counts as 2), as long a run as
// a kernel's: the clock a whole-GPU FMA load settles at, which the
// datasheet's boost clock overstates.
template <class T>
double fma_gflops_measured(cudaStream_t stream, int sms) {
  int per_sm = 0;
  STENCIL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, fma_rounds<T>, fma_threads, 0));
  STENCIL_EXPECT(per_sm >= 1,
                 "model: the FMA calibration kernel cannot run a block of ",
                 fma_threads, " threads on this GPU");
  int const blocks = per_sm * sms;
  // Some 20 ms of FP32 on a Hopper GPU, 40 of FP64.
  int const rounds = 1 << 14;
  DeviceArray<T> const sink(blocks, "its FMA sink");
  double const ms = median_milliseconds(stream, [&] {
    fma_rounds<T><<<blocks, fma_threads, 0, stream>>>(sink.data(), rounds,
                                                      T(0.999), T(0.001));
    STENCIL_CUDA_CHECK(cudaGetLastError());
  });
  double const fmas = static_cast<double>(blocks) * fma_threads * rounds *
                      fma_unroll * fma_chains;
  return 2.0 * fmas / (ms * 1e-3) / 1e9;
}

// `rounds` rounds of a ring of blocks, each waiting for its left and right
// neighbours in every round: what a 1D kernel synchronising every step
// pays.
__global__ void neighbour_flag_rounds(NeighbourFlags flags, int rounds) {
  int const block = static_cast<int>(blockIdx.x);
  int const blocks = static_cast<int>(gridDim.x);
  int const left = block == 0 ? blocks - 1 : block - 1;
  int const right = block + 1 == blocks ? 0 : block + 1;
  for (int r = 1; r <= rounds; ++r) {
    __syncthreads();
    if (threadIdx.x == 0) {
      flags.publish(block, static_cast<unsigned>(r));
      flags.wait_for(left, static_cast<unsigned>(r));
      flags.wait_for(right, static_cast<unsigned>(r));
    }
    __syncthreads();
  }
}

// Microseconds of one round of neighbour synchronisation (publish, wait for
// both neighbours, a block barrier either side) for one block of `threads`
// threads per SM in a ring: `rounds` rounds in one cooperative launch after
// a warm-up launch. The memset before each launch (rounds count from 1
// again) is timed too; against thousands of rounds it is noise.
double neighbour_flag_microseconds(cudaStream_t stream, int sms, int threads,
                                   int rounds) {
  DeviceArray<unsigned> const flags(sms, "its neighbour flags");
  auto launch = [&](int count) {
    STENCIL_CUDA_CHECK(
        cudaMemsetAsync(flags.data(), 0, sms * sizeof(unsigned), stream));
    launch_cooperative(&neighbour_flag_rounds, sms, threads, 0, stream,
                       NeighbourFlags{flags.data()}, count);
  };
  launch(16);
  return 1000.0 * stream_milliseconds(stream, [&] { launch(rounds); }) / rounds;
}

int attribute(cudaDeviceAttr a, int device) {
  int v = 0;
  STENCIL_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
  return v;
}

std::string uuid_of(cudaDeviceProp const& prop) {
  std::string s = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(hex, sizeof hex, "%02x",
                  static_cast<unsigned char>(prop.uuid.bytes[i]));
    s += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) s += '-';
  }
  return s;
}

std::string utc_now() {
  std::time_t const now =
      std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

struct Cache {
  std::mutex mutex;
  std::optional<model::Device> device;
  /// Why calibrating failed, so that later plans in the process say so
  /// instead of trying again (recalibrate_cuda_device does try again).
  std::optional<stencil::error> failure;
};

Cache& process_cache() {
  static Cache cache;
  return cache;
}

// Calibrates, tries to write the cache and says in `source` how that went.
model::Device calibrate_and_store(std::string const& why) {
  model::Device d = calibrate();
  d.source = "calibrated " + utc_now() + why;
  try {
    std::filesystem::path const file = model::cuda_device_cache_file();
    model::write_device(d, file);
    d.source += ", cached in " + file.string();
  } catch (stencil::error const& e) {
    d.source += ", not cached: " + std::string(e.what());
  }
  return d;
}

}  // namespace

std::string gpu_uuid() { return uuid_of(Kokkos::Cuda{}.cuda_device_prop()); }

model::Device calibrate() {
  Kokkos::Cuda const space;
  int const device = space.cuda_device();
  cudaDeviceProp const& prop = space.cuda_device_prop();
  cudaStream_t const stream = space.cuda_stream();
  model::Device d;
  d.name = prop.name;
  d.key = uuid_of(prop);
  d.compute_units = prop.multiProcessorCount;
  // cudaDeviceProp lost clockRate in CUDA 13; the attribute remains.
  double const clock_hz = attribute(cudaDevAttrClockRate, device) * 1e3;
  FmaLanes const lanes = fma_lanes_per_sm(prop.major, prop.minor);
  d.fp64_gflops = fma_gflops(d.compute_units, lanes.fp64, clock_hz);
  d.fp32_gflops = fma_gflops(d.compute_units, lanes.fp32, clock_hz);
  // Four schedulers per SM since Volta, each issuing one warp instruction
  // per clock.
  d.issue_gips = d.compute_units * 4.0 * 32 * clock_hz * 1e-9;
  space.fence("stencil::model calibration");
  d.copy_gbs = copy_gbs(stream);
  d.shared_tbs = shared_tbs(stream, d.compute_units);
  // The device tiles' configuration: one 256-thread block per SM.
  int const rounds = 4096;
  std::vector<double> barrier, exchange;
  for (int s = 0; s < 3; ++s) {
    barrier.push_back(
        barrier_microseconds(BarrierKind::counter, 1, 256, rounds));
    exchange.push_back(
        device_tiling::tagged_exchange_microseconds(256, rounds));
  }
  d.barrier_us = median(barrier);
  d.exchange_us = median(exchange);
  d.l2_gbs = l2_gbs(stream, prop.l2CacheSize, d.compute_units);
  d.fp32_measured_gflops = fma_gflops_measured<float>(stream, d.compute_units);
  d.fp64_measured_gflops = fma_gflops_measured<double>(stream, d.compute_units);
  // One 256-thread block per SM, as the register-resident kernels run.
  std::vector<double> flag;
  for (int s = 0; s < 3; ++s) {
    flag.push_back(
        neighbour_flag_microseconds(stream, d.compute_units, 256, rounds));
  }
  d.neighbour_flag_us = median(flag);
  return d;
}

model::Config model_config(Plan const& p) {
  model::Config c;
  c.policy = p.policy;
  c.depth = p.depth;
  if (p.backend != Backend::native_cuda) return c;
  c.blocks_per_sm = std::max(1, p.blocks_per_sm);
  c.prefetch = p.prefetch;
  switch (p.policy) {
    case PolicyKind::temporal_blocking: {
      // The plan's tile is the valid part; a block computes its halo too.
      int const halo = 2 * p.depth * p.radius;
      c.tile_x = p.tile.x + halo;
      c.tile_y = p.rank == 3 ? p.tile.y + halo : 0;
      c.rows = std::max(1, p.native_cuda.rows_per_thread);
      c.columns = std::max(1, p.native_cuda.columns_per_thread);
      c.warp_tiles = p.native_cuda.warp_tiles;
      break;
    }
    case PolicyKind::device_tiling:
      c.tile_x = p.tile.x;
      c.tile_y = p.tile.y;
      c.rows = std::max(1, p.native_cuda.rows_per_thread);
      break;
    default:
      break;
  }
  return c;
}

}  // namespace stencil::native_cuda

namespace stencil::model {

std::filesystem::path cuda_device_cache_file() {
  return cache_directory() / ("cuda-" + native_cuda::gpu_uuid() + ".txt");
}

Device const& cuda_device() {
  auto& cache = native_cuda::process_cache();
  std::lock_guard<std::mutex> const lock(cache.mutex);
  if (cache.device) return *cache.device;
  std::string why;
  try {
    std::filesystem::path const file = cuda_device_cache_file();
    if (std::filesystem::exists(file)) {
      Device d = read_device(file);
      // A file copied from another GPU (a shared home directory across
      // nodes with different GPUs keeps one file per UUID, but a copied
      // directory may not) is not this GPU's.
      if (d.key == native_cuda::gpu_uuid()) {
        d.source = "read from " + file.string() +
                   (d.source.empty() ? "" : " (" + d.source + ")");
        cache.device = std::move(d);
        return *cache.device;
      }
      why = " (the cache held another GPU's figures)";
    }
  } catch (stencil::error const& e) {
    why = std::string(" (the cache was unusable: ") + e.what() + ")";
  }
  // The file is read first even after a failure: another process (say
  // stencil_calibrate, which the error suggests) may have filled it since.
  if (cache.failure) throw *cache.failure;
  try {
    cache.device = native_cuda::calibrate_and_store(why);
  } catch (stencil::error const& e) {
    cache.failure = e;
    throw;
  }
  return *cache.device;
}

Device const& recalibrate_cuda_device() {
  auto& cache = native_cuda::process_cache();
  std::lock_guard<std::mutex> const lock(cache.mutex);
  cache.device = native_cuda::calibrate_and_store(" on request");
  cache.failure.reset();
  return *cache.device;
}

}  // namespace stencil::model
