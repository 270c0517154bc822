// content_hash(): SHA-256 of bytes as 64 lowercase hex digits, the key of the compile cache.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>

namespace drk::compile {

std::string content_hash(std::string_view bytes);

}  // namespace drk::compile
