// kMaxFrameBytes: the largest frame a receiver decodes (runtime/transport/codec.h's DecodeLimits), and so
// the most that one envelope carries. What goes inside an envelope is sized against it where it
// is built: a compiled object a Candidate ships (kernels/compile/compiled_artifact.h).
#pragma once

#include <cstddef>

namespace drk {

inline constexpr std::size_t kMaxFrameBytes = 64u << 20;

}  // namespace drk
