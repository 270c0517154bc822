#include "runtime/outbox.h"

#include <capnp/message.h>

#include <chrono>

namespace drk::runtime {
namespace {

constexpr int kLingerMs = 100;    // pending messages get this long at close (pitfalls.md #7)
constexpr int kReconnectMs = 20;  // a restarted peer is found again quickly
constexpr int kReconnectMaxMs = 500;

}  // namespace

Outbox::Outbox(Transport& transport, std::string sender, std::function<int64_t()> clock)
    : transport_(transport), sender_(std::move(sender)), clock_(std::move(clock)) {}

Result<zmq::socket_t*> Outbox::socket_for(std::string_view recipient) {
  if (auto found = sockets_.find(recipient); found != sockets_.end()) return &found->second;
  auto endpoint = transport_.endpoint_of(recipient);
  if (!endpoint) return endpoint.error();
  zmq::socket_t socket(transport_.context(), zmq::socket_type::push);
  socket.set(zmq::sockopt::sndhwm, static_cast<int>(transport_.capacity_of(recipient)));
  socket.set(zmq::sockopt::linger, kLingerMs);
  socket.set(zmq::sockopt::reconnect_ivl, kReconnectMs);
  socket.set(zmq::sockopt::reconnect_ivl_max, kReconnectMaxMs);
  socket.connect(*endpoint);
  auto [inserted, added] = sockets_.emplace(std::string(recipient), std::move(socket));
  return &inserted->second;
}

Status Outbox::send(std::string_view recipient, const std::function<void(msg::Envelope::Builder)>& fill,
                    const SendOptions& options) {
  auto socket = socket_for(recipient);
  if (!socket) return socket.error();

  capnp::MallocMessageBuilder builder;
  auto envelope = builder.initRoot<msg::Envelope>();
  fill(envelope);
  envelope.setSender(sender_);
  envelope.setRecipient(std::string(recipient));
  envelope.setSentUnixMs(clock_());
  envelope.setDeadlineUnixMs(options.deadline_unix_ms);
  if (options.correlation_id != 0) envelope.setCorrelationId(options.correlation_id);
  if (options.trace_id != 0) envelope.setTraceId(options.trace_id);
  const kj::Array<capnp::word> words = encode(builder);
  const auto bytes = words.asBytes();
  zmq::message_t frame(bytes.begin(), bytes.size());

  const auto until = std::chrono::steady_clock::now() + options.wait_for_room;
  while (true) {
    if ((*socket)->send(frame, zmq::send_flags::dontwait)) return {};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    zmq::pollitem_t item{(*socket)->handle(), 0, ZMQ_POLLOUT, 0};
    poll_sockets(&item, 1, left);
  }
  return make_error(Errc::busy, "the mailbox of '" + std::string(recipient) + "' stayed full for " +
                                    std::to_string(options.wait_for_room.count()) + " ms (capacity " +
                                    std::to_string(transport_.capacity_of(recipient)) +
                                    "): the recipient is slow or down; try again later");
}

}  // namespace drk::runtime
