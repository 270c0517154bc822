#include "kernels/compile/content_hash.h"

#include <sodium.h>

#include <stdexcept>

namespace drk::compile {
namespace {

// sodium_init() picks the fastest implementation for this CPU; a function-local static makes
// the first call from any thread run it exactly once.
void ensure_sodium() {
  static const bool ready = sodium_init() >= 0;
  if (!ready) throw std::runtime_error("libsodium failed to initialise (sodium_init)");
}

}  // namespace

std::string content_hash(std::string_view bytes) {
  ensure_sodium();
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  char hex[2 * crypto_hash_sha256_BYTES + 1];
  sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
  return hex;
}

}  // namespace drk::compile
