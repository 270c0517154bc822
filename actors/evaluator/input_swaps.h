// Swaps between calls: with a non-zero seed (RunRequest.swapSeed, TimeRequest.swapSeed), before
// every candidate call of a request two elements of each input of the call's set change places,
// at positions drawn from the seed, the call's index and the input's index. No two calls of the
// request then see the same inputs, so a result memoised on the whole input (a hash of it) misses
// on every call, and the re-timing of an implausible result (evaluation.cpp) measures the work.
// The swaps accumulate; the Evaluator writes fresh inputs after such a request, before it checks
// anything against its pristine copies.
//
// Thread-safety: pure functions; swap_host_elements writes the tensor's memory (the caller's
// thread, between calls).
#pragma once

#include <cstdint>
#include <cstring>

#include "actors/evaluator/sandbox_device.h"
#include "drk_kernel.h"

namespace drk::evaluator {

struct SwapPositions {
  uint64_t first = 0, second = 0;  // element indices; equal when the tensor has one element
};

inline SwapPositions swap_positions(uint64_t seed, uint64_t call, uint32_t input, uint64_t elements) {
  auto next = [state = seed ^ (call * 0x9e3779b97f4a7c15ULL) ^ (uint64_t{input} << 48)]() mutable {
    state += 0x9e3779b97f4a7c15ULL;  // splitmix64
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  if (elements == 0) return {};
  const uint64_t first = next() % elements;
  const uint64_t offset = elements > 1 ? 1 + next() % (elements - 1) : 0;
  return {first, (first + offset) % elements};
}

// Host memory (the CPU sandbox's region).
inline void swap_host_elements(const drk_tensor& tensor, SwapPositions positions) {
  const size_t bytes = dtype_bytes(tensor.dtype);
  if (bytes == 0 || positions.first == positions.second) return;
  auto* base = static_cast<unsigned char*>(tensor.data);
  unsigned char held[8];
  std::memcpy(held, base + positions.first * bytes, bytes);
  std::memcpy(base + positions.first * bytes, base + positions.second * bytes, bytes);
  std::memcpy(base + positions.second * bytes, held, bytes);
}

}  // namespace drk::evaluator
