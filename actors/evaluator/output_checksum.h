// A checksum of a tensor's bytes, the same in the sandbox and in the Evaluator: the sandbox takes
// it of the outputs the moment the candidate returns, the Evaluator of the same outputs when the
// reply arrives; a difference is a write after return (docs/verification.md, work_after_return).
// Not cryptographic: a candidate that matches it on purpose must know the bytes it will write
// later, and could then have written them before returning.
//
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace drk::evaluator {

inline uint64_t checksum_bytes(const void* data, size_t bytes, uint64_t checksum = 0x9E3779B97F4A7C15ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t word;
    std::memcpy(&word, p + i, sizeof word);
    checksum = (checksum ^ word) * 0xFF51AFD7ED558CCDull;
    checksum ^= checksum >> 29;
  }
  for (; i < bytes; ++i) checksum = (checksum ^ p[i]) * 0x100000001B3ull;
  return checksum;
}

}  // namespace drk::evaluator
