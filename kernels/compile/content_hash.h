// content_hash(): SHA-256 of bytes as 64 lowercase hex digits, the key of the compile cache.
// Computed by libsodium (crypto_hash_sha256), initialised on the first call.
// Thread-safety: callable from any thread.
// Errors: none expected; libsodium failing to initialise is a fault (std::runtime_error).
#pragma once

#include <string>
#include <string_view>

namespace drk::compile {

std::string content_hash(std::string_view bytes);

}  // namespace drk::compile
