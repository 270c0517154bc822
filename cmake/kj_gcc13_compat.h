// Cap'n Proto 0.9's KJ leaves out `const char* == kj::StringPtr` under C++20, relying on the
// reversed member operator==; GCC 13 no longer considers that candidate because StringPtr also
// declares operator!= (P2468R2), so every file that includes capnp/blob.h fails to compile.
// This header, force-included for GCC >= 13 only (cmake/Dependencies.cmake), restores the two
// free operators KJ defines for C++17. A target without Cap'n Proto's headers on its include
// path (the dashboard page's) includes nothing: it has no StringPtr to compare.
#pragma once
#if __has_include(<kj/string.h>)
#include <kj/string.h>

namespace kj {
inline bool operator==(const char* a, const StringPtr& b) { return b == StringPtr(a); }
inline bool operator!=(const char* a, const StringPtr& b) { return !(b == StringPtr(a)); }
}  // namespace kj
#endif
