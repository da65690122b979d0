// SPDX-License-Identifier: Apache-2.0
// How the blocks of a device tile hand the rims of their planes to their
// neighbours, once per streamed plane. Two ways, one interface:
//  - BarrierExchange: plain stores to a global buffer, then a device-wide
//    barrier, then plain loads. Every block waits for the slowest block of
//    the grid, and the barrier's fence, arrival and poll are three L2 round
//    trips on the critical path before the loads' own.
//  - TaggedExchange: every value travels with the iteration's tag in the
//    same 64-bit word (a double as two words, one per half, stored and
//    loaded together by one 16-byte access), stored and loaded as
//    single-copy atomic words. A reader polls the words it needs
//    until their tags match: it waits only for the neighbours whose cells
//    it reads, for exactly those cells, and no fence or barrier is needed
//    (the tag and the value cannot be seen apart).
// An exchange plane holds the edge cells of every tile of a region, tile
// after tile (kernels.hpp). The buffer holds two or four planes per
// exchanged level, indexed by the publishing iteration: a block cannot
// publish iteration it + 2 before its neighbours have published it + 1,
// which they do only after reading iteration it; four where the rims are
// read an iteration late (kernels.hpp, rim_lag and exchange_parities).
#pragma once

#include <stencil/native_cuda/common/cuda_check.hpp>
#include <stencil/native_cuda/common/grid_barrier.hpp>

#include <stencil/error.hpp>

#include <Kokkos_Core.hpp>

#include <cuda_runtime.h>
#include <cuda/atomic>

#include <cstdint>
#include <cstring>
#include <string_view>

namespace stencil::native_cuda::device_tiling {

enum class ExchangeKind {
  /// BarrierExchange over cooperative_groups' grid sync.
  grid_sync,
  /// TaggedExchange: per-value tags, no barrier.
  tagged,
  /// NoExchange: isolated tiles.
  none,
};

constexpr std::string_view name(ExchangeKind kind) {
  return kind == ExchangeKind::grid_sync ? "grid_sync"
         : kind == ExchangeKind::tagged  ? "tagged"
                                         : "none";
}

template <class T, class Barrier>
struct BarrierExchange {
  static constexpr ExchangeKind kind = ExchangeKind::grid_sync;
  /// Whether blocks read each other's cells (kernels.hpp computes the cells
  /// that are read first).
  static constexpr bool shares_rims = true;
  /// Bytes of buffer per exchanged cell.
  static constexpr std::size_t cell_bytes = sizeof(T);
  using Raw = T;

  T* buffer;
  Barrier barrier;

  __device__ void publish(long cell, T value, unsigned /*tag*/) const {
    buffer[cell] = value;
  }
  /// Between the last publish and the first fetch of an iteration.
  __device__ void arrive() const { barrier.sync(); }
  __device__ Raw fetch(long cell) const { return buffer[cell]; }
  __device__ static bool ready(Raw const&, unsigned) { return true; }
  __device__ static T value(Raw const& raw) { return raw; }
};

/// No exchange: the SM-tiling launch, whose blocks are isolated tiles
/// (SmTiles in kernels.hpp) and never read another block's cells.
template <class T>
struct NoExchange {
  static constexpr ExchangeKind kind = ExchangeKind::none;
  static constexpr bool shares_rims = false;
  static constexpr std::size_t cell_bytes = 0;
  struct Raw {};
  __device__ void publish(long, T, unsigned) const {}
  __device__ static void arrive() {}
  __device__ Raw fetch(long) const { return {}; }
  __device__ static bool ready(Raw const&, unsigned) { return true; }
  __device__ static T value(Raw const&) { return T(0); }
};

template <class T>
struct TaggedExchange {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8,
                "TaggedExchange carries 4- and 8-byte values");
  static constexpr ExchangeKind kind = ExchangeKind::tagged;
  static constexpr bool shares_rims = true;
  /// 64-bit words per value: 32 bits of the value and the tag in each.
  static constexpr int words = static_cast<int>(sizeof(T) / 4);
  static constexpr std::size_t cell_bytes = words * sizeof(std::uint64_t);
  struct Raw {
    std::uint64_t word[words];
  };

  /// Zero before the first launch that uses it: tags start at 1.
  std::uint64_t* buffer;

  __device__ void publish(long cell, T value, unsigned tag) const {
    std::uint32_t half[words];
    std::memcpy(half, &value, sizeof(T));
    std::uint64_t word[words];
#pragma unroll
    for (int w = 0; w < words; ++w) {
      word[w] = static_cast<std::uint64_t>(tag) << 32 | half[w];
    }
    if constexpr (words == 2) {
      // One 16-byte store, and one 16-byte load in fetch: faster than a
      // relaxed atomic per word
      // (docs/decisions/device-tiling-kernel-variants.md). Each element of a
      // vector access is a single-copy atomic of its own (PTX memory model),
      // and each word carries its tag, so a reader sees a word whole or not at
      // all. A cell is 16 bytes and the buffer a Kokkos allocation (at least
      // 64-byte aligned), so every access is aligned.
      asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(
                       buffer + cell * words),
                   "l"(word[0]), "l"(word[1])
                   : "memory");
    } else {
      atomic(cell * words).store(word[0], cuda::memory_order_relaxed);
    }
  }
  __device__ static void arrive() {}
  __device__ Raw fetch(long cell) const {
    Raw raw;
    if constexpr (words == 2) {
      asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                   : "=l"(raw.word[0]), "=l"(raw.word[1])
                   : "l"(buffer + cell * words)
                   : "memory");
    } else {
      raw.word[0] = atomic(cell * words).load(cuda::memory_order_relaxed);
    }
    return raw;
  }
  __device__ static bool ready(Raw const& raw, unsigned tag) {
    bool all = true;
#pragma unroll
    for (int w = 0; w < words; ++w) {
      all = all && static_cast<unsigned>(raw.word[w] >> 32) == tag;
    }
    return all;
  }
  __device__ static T value(Raw const& raw) {
    std::uint32_t half[words];
#pragma unroll
    for (int w = 0; w < words; ++w) {
      half[w] = static_cast<std::uint32_t>(raw.word[w]);
    }
    T value;
    std::memcpy(&value, half, sizeof(T));
    return value;
  }

 private:
  __device__ cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device> atomic(
      long word) const {
    return cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device>(
        buffer[word]);
  }
};

namespace detail {
/// `rounds` exchanges among blocks laid out as a `columns`-wide grid: each
/// block publishes one tagged word per round and waits for its (up to) four
/// neighbours' words, as a device-tiling block does for its rims.
template <class T>
__global__ void tagged_exchange_rounds(TaggedExchange<T> exchange, int columns,
                                       int rounds) {
  int const blocks = static_cast<int>(gridDim.x);
  int const block = static_cast<int>(blockIdx.x);
  int const row = block / columns, column = block % columns;
  int const direction = static_cast<int>(threadIdx.x);  // 0-3 poll
  int neighbour = -1;
  if (direction == 0 && column > 0) neighbour = block - 1;
  if (direction == 1 && column + 1 < columns && block + 1 < blocks) {
    neighbour = block + 1;
  }
  if (direction == 2 && row > 0) neighbour = block - columns;
  if (direction == 3 && block + columns < blocks) neighbour = block + columns;
  for (int round = 0; round < rounds; ++round) {
    long const plane = static_cast<long>(round & 1) * blocks;
    unsigned const tag = static_cast<unsigned>(round) + 1u;
    if (threadIdx.x == 0) {
      exchange.publish(plane + block, static_cast<T>(round), tag);
    }
    if (neighbour >= 0) {
      while (
          !TaggedExchange<T>::ready(exchange.fetch(plane + neighbour), tag)) {
      }
    }
    __syncthreads();
  }
}
}  // namespace detail

/// Microseconds one round of the tagged exchange takes (publish, wait for
/// the four neighbours, block barrier) for one `threads`-thread block per
/// SM laid out as a near-square grid: `rounds` rounds in one cooperative
/// launch, after a warm-up launch. Comparable to barrier_microseconds.
inline double tagged_exchange_microseconds(int threads, int rounds) {
  STENCIL_EXPECT(threads >= 4 && rounds >= 1,
                 "tagged_exchange_microseconds: threads (", threads,
                 ") must be at least 4 and rounds (", rounds, ") at least 1");
  int const blocks = Kokkos::Cuda{}.cuda_device_prop().multiProcessorCount;
  int columns = 1;
  while (columns * columns < blocks) ++columns;
  cudaStream_t const stream = Kokkos::Cuda{}.cuda_stream();
  auto run = [&](int count) {
    // Zeroed for every launch: its tags start at 1 again.
    Kokkos::View<std::uint64_t*, Kokkos::CudaSpace> words(
        "stencil_tagged_exchange", 2 * blocks);
    Kokkos::fence();
    TaggedExchange<float> exchange{words.data()};
    float const milliseconds = stream_milliseconds(stream, [&] {
      launch_cooperative(&detail::tagged_exchange_rounds<float>, blocks,
                         threads, 0, stream, exchange, columns, count);
    });
    return 1000.0 * milliseconds / count;
  };
  run(16);
  return run(rounds);
}

}  // namespace stencil::native_cuda::device_tiling
