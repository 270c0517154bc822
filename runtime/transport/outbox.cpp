#include "runtime/transport/outbox.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/transport/frame_builder.h"

namespace drk::runtime {
namespace {

constexpr int kLingerMs = 100;    // pending messages get this long at close (docs/pitfalls.md #7)
constexpr int kReconnectMs = 20;  // a restarted peer is found again quickly
constexpr int kReconnectMaxMs = 500;
constexpr std::size_t kFirstSegmentWords = 1024;  // 8 KiB: most envelopes fit in one segment
// A batch under kMaxBatchBytes has room for one more envelope of up to kMaxBatchedEnvelopeBytes.
constexpr std::size_t kBatchBufferBytes = Outbox::kMaxBatchBytes + Outbox::kMaxBatchedEnvelopeBytes;
static_assert(kBatchBufferBytes <= FrameBufferPool::kMinBufferBytes, "a batch fills one pool buffer at most");

using Clock = std::chrono::steady_clock;

// Waits up to `patience` until `socket` takes one more frame; true when it does.
bool await_room(zmq::socket_t& socket, std::chrono::milliseconds patience) {
  if (socket.get(zmq::sockopt::events) & ZMQ_POLLOUT) return true;
  const auto until = Clock::now() + patience;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) return false;
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLOUT, 0};
    poll_sockets(&item, 1, left);
    if (item.revents & ZMQ_POLLOUT) return true;
  }
}

}  // namespace

Outbox::Outbox(Transport& transport, std::string sender, std::function<int64_t()> clock, OutboxMode mode)
    : transport_(transport),
      sender_(std::move(sender)),
      clock_(std::move(clock)),
      mode_(mode),
      first_segment_(kj::heapArray<capnp::word>(kFirstSegmentWords)),
      frame_pool_(std::make_shared<FrameBufferPool>()) {
  std::memset(first_segment_.begin(), 0, first_segment_.asBytes().size());
}

Outbox::~Outbox() {
  for (auto& [recipient, link] : links_) {
    if (link.held != nullptr) FrameBufferPool::give_back(link.held);
  }
}

Result<Outbox::Link*> Outbox::link_for(std::string_view recipient) {
  if (auto found = links_.find(recipient); found != links_.end()) return &found->second;
  auto route = transport_.route_to(recipient);
  if (!route) return route.error();
  zmq::socket_t socket = transport_.sender_socket(*route);
  socket.set(zmq::sockopt::sndhwm, static_cast<int>(transport_.capacity_of(recipient)));
  socket.set(zmq::sockopt::linger, kLingerMs);
  socket.set(zmq::sockopt::reconnect_ivl, kReconnectMs);
  socket.set(zmq::sockopt::reconnect_ivl_max, kReconnectMaxMs);
  socket.connect(route->endpoint);
  auto [inserted, added] = links_.emplace(std::string(recipient), Link{std::string(recipient), std::move(socket)});
  return &inserted->second;
}

Status Outbox::wait_for_room(std::string_view recipient, Link& link, std::chrono::milliseconds patience) {
  if (await_room(link.socket, patience)) return {};
  return make_error(Errc::busy, "the mailbox of '" + std::string(recipient) + "' stayed full for " +
                                    std::to_string(patience.count()) + " ms (capacity " +
                                    std::to_string(transport_.capacity_of(recipient)) +
                                    "): the recipient is slow or down; try again later");
}

Status Outbox::send_frame(std::string_view recipient, Link& link, zmq::message_t& frame,
                          std::chrono::milliseconds patience, zmq::message_t* tail) {
  const auto flags = tail ? zmq::send_flags::dontwait | zmq::send_flags::sndmore : zmq::send_flags::dontwait;
  // ZeroMQ counts room in whole messages: once the head is in, the tail is too.
  const auto send_tail = [&]() -> Status {
    if (!tail || link.socket.send(*tail, zmq::send_flags::dontwait)) return {};
    return make_error(Errc::internal, "the second part of a message to '" + std::string(recipient) +
                                          "' was refused after its first");
  };
  if (link.socket.send(frame, flags)) return send_tail();
  const auto until = Clock::now() + patience;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (auto room = wait_for_room(recipient, link, std::max(left, std::chrono::milliseconds{0})); !room) return room;
    if (link.socket.send(frame, flags)) return send_tail();
  }
}

Status Outbox::flush_link(std::string_view recipient, Link& link) {
  if (link.held_count == 0) return {};
  zmq::message_t frame(link.held, link.held_bytes, &FrameBufferPool::give_back,
                       FrameBufferPool::hint_of(link.held));
  const uint32_t count = link.held_count;
  link.held = nullptr;
  link.held_bytes = 0;
  link.held_count = 0;
  auto sent = send_frame(recipient, link, frame, link.held_patience);
  link.held_patience = std::chrono::milliseconds{0};
  if (sent) return {};
  return make_error(Errc::busy, std::to_string(count) + " envelope(s) to '" + std::string(recipient) +
                                    "' lost in a batch: " + sent.error().message);
}

Status Outbox::send(std::string_view recipient, const std::function<void(msg::Envelope::Builder)>& fill,
                    const SendOptions& options) {
  auto found = link_for(recipient);
  if (!found) return found.error();
  Link& link = **found;

  FrameBuilder builder(first_segment_, *frame_pool_);
  auto envelope = builder.initRoot<msg::Envelope>();
  fill(envelope);
  envelope.setSender(sender_);
  auto recipient_text = envelope.initRecipient(static_cast<unsigned>(recipient.size()));
  std::memcpy(recipient_text.begin(), recipient.data(), recipient.size());
  const int64_t now_unix_ms = clock_();
  envelope.setSentUnixMs(now_unix_ms);
  envelope.setDeadlineUnixMs(options.deadline_unix_ms);
  if (options.correlation_id != 0) envelope.setCorrelationId(options.correlation_id);
  if (options.trace_id != 0) envelope.setTraceId(options.trace_id);
  const std::size_t size = encoded_size_bytes(builder);

  const bool holdable = mode_ == OutboxMode::batching && size <= kMaxBatchedEnvelopeBytes;
  if (holdable && link.held_count > 0 && now_unix_ms - link.oldest_held_unix_ms >= kMaxBatchDelayMs) {
    if (auto sent = flush_link(recipient, link); !sent) lost_.push_back(sent.error());
  }
  if (holdable && link.sent_since_flush) {
    if (link.held_count == 0) {
      // Room for one frame now is room for the whole batch later: nothing else writes here.
      if (auto room = wait_for_room(recipient, link, options.wait_for_room); !room) return room;
      link.oldest_held_unix_ms = now_unix_ms;
    }
    // A batch under kMaxBatchBytes has room for one more envelope of up to kMaxBatchedEnvelopeBytes.
    if (link.held == nullptr) link.held = frame_pool_->take(kBatchBufferBytes).data;
    encode_into(builder, {link.held + link.held_bytes, size});
    link.held_bytes += size;
    ++link.held_count;
    link.held_patience = std::max(link.held_patience, options.wait_for_room);
    if (link.held_count >= kMaxBatchEnvelopes || link.held_bytes >= kMaxBatchBytes) {
      if (auto sent = flush_link(recipient, link); !sent) lost_.push_back(sent.error());
    }
    return {};
  }
  if (link.held_count > 0) {  // what is held leaves first: order per recipient is kept
    if (auto sent = flush_link(recipient, link); !sent) lost_.push_back(sent.error());
  }
  Status sent;
  if (builder.has_borrowed_tail()) {
    zmq::message_t head, tail;
    builder.take_parts(head, tail, received_tail_);
    sent = send_frame(recipient, link, head, options.wait_for_room, &tail);
  } else {
    zmq::message_t frame = builder.take_frame();
    sent = send_frame(recipient, link, frame, options.wait_for_room);
  }
  if (sent && mode_ == OutboxMode::batching && !link.sent_since_flush) {
    link.sent_since_flush = true;
    touched_.push_back(&link);
  }
  return sent;
}

std::size_t Outbox::held() const {
  std::size_t held = 0;
  for (const Link* link : touched_) held += link->held_count;
  return held;
}

std::vector<Error> Outbox::flush() {
  std::vector<Error> lost = std::move(lost_);
  lost_.clear();
  for (Link* link : touched_) {
    const auto& recipient = link->recipient;
    if (auto sent = flush_link(recipient, *link); !sent) lost.push_back(sent.error());
    link->sent_since_flush = false;
  }
  touched_.clear();
  return lost;
}

}  // namespace drk::runtime
