// Frames of the sandbox protocol (messages/sandbox.capnp) on a pipe: a 4-byte little-endian
// byte count, then a flat Cap'n Proto message. Used by both ends: the Evaluator
// (sandbox_process.cpp) and drk-sandbox (sandbox_main.cpp).
//
// Thread-safety: free functions; one reader and one writer per descriptor.
// Errors: peer_unavailable when the other end closed; timeout when no whole frame arrived in
// time; protocol_error for a frame over kMaxFrameBytes or not a whole number of words.
#pragma once

#include <capnp/message.h>
#include <kj/array.h>

#include "base/result.h"

namespace drk::evaluator {

constexpr uint32_t kMaxFrameBytes = 1u << 20;

Status write_frame(int fd, capnp::MessageBuilder& message);

// timeout_ms < 0 waits without a deadline.
Result<kj::Array<capnp::word>> read_frame(int fd, int timeout_ms);

// Reader limits for frames from the other (untrusted) end.
capnp::ReaderOptions frame_reader_options();

}  // namespace drk::evaluator
