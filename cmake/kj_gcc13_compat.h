// Cap'n Proto 0.9's KJ leaves out `const char* == kj::StringPtr` under C++20, relying on the
// reversed member operator==; GCC 13 no longer considers that candidate because StringPtr also
// declares operator!= (P2468R2), so every file that includes capnp/blob.h fails to compile.
// This header, force-included for GCC >= 13 only (cmake/Dependencies.cmake), restores the two
// free operators KJ defines for C++17.
#pragma once
#include <kj/string.h>

namespace kj {
inline bool operator==(const char* a, const StringPtr& b) { return b == StringPtr(a); }
inline bool operator!=(const char* a, const StringPtr& b) { return !(b == StringPtr(a)); }
}  // namespace kj
