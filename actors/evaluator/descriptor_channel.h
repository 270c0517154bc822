// Messages with file descriptors attached, between an Evaluator and its sandbox zygote
// (sandbox_zygote.h): one flat Cap'n Proto message per datagram of a SOCK_SEQPACKET socket, the
// descriptors as SCM_RIGHTS.
//
// Thread-safety: free functions; one reader and one writer per socket.
// Errors: peer_unavailable when the other end closed; timeout when nothing arrived in time;
// protocol_error for a datagram that is not a whole message (truncated, or not whole words) or
// carries more descriptors than kMaxPassedDescriptors; io_error for the rest. Descriptors received
// with a message that is refused are closed.
#pragma once

#include <span>
#include <vector>

#include <capnp/message.h>
#include <kj/array.h>

#include "base/result.h"
#include "base/unique_fd.h"

namespace drk::evaluator {

constexpr size_t kMaxDescriptorMessageBytes = 64 * 1024;
constexpr size_t kMaxPassedDescriptors = 4;

Status send_with_descriptors(int socket, capnp::MessageBuilder& message, std::span<const int> descriptors = {});

struct ReceivedMessage {
  kj::Array<capnp::word> words;
  std::vector<UniqueFd> descriptors;
};

// timeout_ms < 0 waits without a deadline.
Result<ReceivedMessage> receive_with_descriptors(int socket, int timeout_ms);

}  // namespace drk::evaluator
