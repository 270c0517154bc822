// FNV-1a, 64 bits: a fast, stable hash of a short text, for what must come out the same in every
// process and every run (seeds per candidate, buckets, socket directory names). Not for anything
// an adversary chooses to collide: content addresses use SHA-256.
//
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <string_view>

namespace drk {

constexpr uint64_t fnv1a_64(std::string_view text) {
  uint64_t hash = 14695981039346656037ull;  // the offset basis
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;  // the prime
  }
  return hash;
}

// The published test vectors.
static_assert(fnv1a_64("") == 0xcbf29ce484222325ull);
static_assert(fnv1a_64("a") == 0xaf63dc4c8601ec8cull);
static_assert(fnv1a_64("foobar") == 0x85944171f73967e8ull);

}  // namespace drk
