// Outbox: the sending side of one thread: a PUSH socket per recipient, created on first use and
// connected to the recipient's endpoint as the Transport resolves it (transport.h), so that the
// messages of one sender to one recipient arrive in the order sent.
//
// send() waits up to SendOptions::wait_for_room for room in a full mailbox, then fails with
// Errc::busy; a recipient the topology does not name is Errc::not_found.
// Each envelope is built in a first segment the Outbox keeps and reuses, and encoded straight
// into its ZeroMQ frame (one copy, no allocation for a small message); `fill` must therefore
// not call send() on the same Outbox.
// Thread-safety: one thread uses an Outbox (ZeroMQ sockets are single-threaded); it must be
// destroyed before its Transport.
#pragma once

#include <capnp/common.h>
#include <kj/array.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <zmq.hpp>

#include "runtime/actor.h"
#include "runtime/transport.h"

namespace drk::runtime {

class Outbox {
 public:
  Outbox(Transport& transport, std::string sender, std::function<int64_t()> clock = system_unix_ms);

  // Builds an Envelope from `sender` to `recipient` with `fill` and sends it (see ActorContext).
  Status send(std::string_view recipient, const std::function<void(msg::Envelope::Builder)>& fill,
              const SendOptions& options = {});

 private:
  Result<zmq::socket_t*> socket_for(std::string_view recipient);

  Transport& transport_;
  std::string sender_;
  std::function<int64_t()> clock_;
  std::map<std::string, zmq::socket_t, std::less<>> sockets_;
  kj::Array<capnp::word> first_segment_;  // zeroed; a builder zeroes what it used when it ends
};

}  // namespace drk::runtime
