#include "runtime/outbox.h"

#include <capnp/message.h>

#include <chrono>
#include <cstring>

namespace drk::runtime {
namespace {

constexpr int kLingerMs = 100;    // pending messages get this long at close (pitfalls.md #7)
constexpr int kReconnectMs = 20;  // a restarted peer is found again quickly
constexpr int kReconnectMaxMs = 500;
constexpr std::size_t kFirstSegmentWords = 1024;  // 8 KiB: most envelopes fit in one segment

}  // namespace

Outbox::Outbox(Transport& transport, std::string sender, std::function<int64_t()> clock)
    : transport_(transport),
      sender_(std::move(sender)),
      clock_(std::move(clock)),
      first_segment_(kj::heapArray<capnp::word>(kFirstSegmentWords)) {
  std::memset(first_segment_.begin(), 0, first_segment_.asBytes().size());
}

Result<zmq::socket_t*> Outbox::socket_for(std::string_view recipient) {
  if (auto found = sockets_.find(recipient); found != sockets_.end()) return &found->second;
  auto route = transport_.route_to(recipient);
  if (!route) return route.error();
  zmq::socket_t socket = transport_.sender_socket(*route);
  socket.set(zmq::sockopt::sndhwm, static_cast<int>(transport_.capacity_of(recipient)));
  socket.set(zmq::sockopt::linger, kLingerMs);
  socket.set(zmq::sockopt::reconnect_ivl, kReconnectMs);
  socket.set(zmq::sockopt::reconnect_ivl_max, kReconnectMaxMs);
  socket.connect(route->endpoint);
  auto [inserted, added] = sockets_.emplace(std::string(recipient), std::move(socket));
  return &inserted->second;
}

Status Outbox::send(std::string_view recipient, const std::function<void(msg::Envelope::Builder)>& fill,
                    const SendOptions& options) {
  auto socket = socket_for(recipient);
  if (!socket) return socket.error();

  zmq::message_t frame;
  {
    capnp::MallocMessageBuilder builder(first_segment_);
    auto envelope = builder.initRoot<msg::Envelope>();
    fill(envelope);
    envelope.setSender(sender_);
    auto recipient_text = envelope.initRecipient(static_cast<unsigned>(recipient.size()));
    std::memcpy(recipient_text.begin(), recipient.data(), recipient.size());
    envelope.setSentUnixMs(clock_());
    envelope.setDeadlineUnixMs(options.deadline_unix_ms);
    if (options.correlation_id != 0) envelope.setCorrelationId(options.correlation_id);
    if (options.trace_id != 0) envelope.setTraceId(options.trace_id);
    frame.rebuild(encoded_size_bytes(builder));
    encode_into(builder, {static_cast<std::byte*>(frame.data()), frame.size()});
  }

  if ((*socket)->send(frame, zmq::send_flags::dontwait)) return {};
  const auto until = std::chrono::steady_clock::now() + options.wait_for_room;  // the mailbox is full
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    zmq::pollitem_t item{(*socket)->handle(), 0, ZMQ_POLLOUT, 0};
    poll_sockets(&item, 1, left);
    if ((*socket)->send(frame, zmq::send_flags::dontwait)) return {};
  }
  return make_error(Errc::busy, "the mailbox of '" + std::string(recipient) + "' stayed full for " +
                                    std::to_string(options.wait_for_room.count()) + " ms (capacity " +
                                    std::to_string(transport_.capacity_of(recipient)) +
                                    "): the recipient is slow or down; try again later");
}

}  // namespace drk::runtime
