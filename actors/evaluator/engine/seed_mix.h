// mix: a seed derived from two values (SplitMix64's finaliser over a + golden * (b + 1)). An
// evaluation's draws, swaps and nudges each take mix(evaluation seed, their own salt), so that no
// two of them share a stream and none can be predicted without the engine's secret.
#pragma once

#include <cstdint>

namespace drk::evaluator {

inline uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9E3779B97F4A7C15ull * (b + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace drk::evaluator
