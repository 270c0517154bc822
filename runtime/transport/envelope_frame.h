// One Envelope as one ZeroMQ frame, for the sockets that are not actor mailboxes (the node
// protocol, inspection): encode with envelope_frame, read with decode_envelope_frame, which
// applies the codec's limits and schema check (codec.h) so that a frame that passes can be
// read without throwing.
//
// Thread-safety: reentrant. Errors: protocol_error for bytes that are not a well-formed Envelope
// within `max_bytes`.
#pragma once

#include <cstddef>
#include <functional>
#include <zmq.hpp>

#include "messages/envelope.capnp.h"
#include "runtime/transport/codec.h"
#include "base/result.h"

namespace drk::runtime {

// Fills an Envelope with `fill`, stamps sentUnixMs and returns it as one frame.
zmq::message_t envelope_frame(const std::function<void(msg::Envelope::Builder)>& fill);

// Takes the frame over (the decoded message reads its bytes in place).
Result<DecodedMessage> decode_envelope_frame(zmq::message_t&& frame, std::size_t max_bytes);

}  // namespace drk::runtime
