// Outbox: the sending side of one thread: a PUSH socket per recipient, created on first use and
// connected to the recipient's endpoint as the Transport resolves it (transport.h), so that the
// messages of one sender to one recipient arrive in the order sent.
//
// send() waits up to SendOptions::wait_for_room for room in a full mailbox, then fails with
// Errc::busy; a recipient the topology does not name is Errc::not_found.
// Each envelope is built in a first segment the Outbox keeps and reuses (frame_builder.h) and
// encoded straight into its ZeroMQ frame (one copy, no allocation for a small message); an
// envelope too large for that segment is built in a buffer that becomes its frame, so that its
// large part is copied once, into the builder, and ZeroMQ takes the buffer without a copy. An
// envelope whose payload is borrowed (borrowed_data.h) leaves in two parts (codec.h): the
// envelope, then the payload, copied once or, when it is the payload of the two-part envelope
// being handled (share_received_tail), shared without a copy: an actor that answers with, or
// passes on, a payload it received never touches its bytes, as a raw ZeroMQ relay would not.
// `fill` must therefore not call send() on the same Outbox.
//
// Batching (an actor host's outboxes; OutboxMode::batching): a ZeroMQ message costs about as
// much as a whole small envelope, so small envelopes that one handler sends to one recipient
// share frames. The first goes out at once, as without batching (a handler that sends one
// message pays nothing and waits for nothing); later ones are held and leave together when
// flush() is called (the actor host calls it after every handler), when kMaxBatchEnvelopes or
// kMaxBatchBytes are held, or when the clock (the Outbox's seam) has moved kMaxBatchDelayMs
// past the oldest held one at the next send (held 1 to 2 ms at most, by a millisecond clock).
// Backpressure is unchanged: a batch is opened only when its recipient's mailbox has room for
// one more frame (or after waiting for it, as send() waits), and the frame it becomes needs no
// more room than that. Envelopes larger than kMaxBatchedEnvelopeBytes are never held (the
// held ones to that recipient leave first: order is kept). A mailbox's capacity counts frames,
// so it holds at most capacity x kMaxBatchBytes of batched envelopes. Receivers read every
// message of a frame (codec.h: first_message_bytes). A batch, like a large envelope, is
// encoded into a buffer of the Outbox's FrameBufferPool, which ZeroMQ takes without a copy and
// which comes back for the next one when ZeroMQ frees the frame (frame_buffer_pool.h says why).
//
// Thread-safety: one thread uses an Outbox (ZeroMQ sockets are single-threaded); it must be
// destroyed before its Transport.
#pragma once

#include <capnp/common.h>
#include <kj/array.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "runtime/actor.h"
#include "runtime/transport/frame_buffer_pool.h"
#include "runtime/transport/transport.h"

namespace drk::runtime {

enum class OutboxMode { immediate, batching };

class Outbox {
 public:
  // A frame costs a ZeroMQ message, a wakeup and two clock reads at the receiver whatever it
  // holds: 256 small envelopes a frame instead of 64 sent 30 % more of them per second over tcp
  // on 2 cores. A batch fills the pool buffer it is built in (60 + 4 KiB = kMinBufferBytes).
  static constexpr uint32_t kMaxBatchEnvelopes = 256;
  static constexpr std::size_t kMaxBatchBytes = 60u << 10;
  static constexpr std::size_t kMaxBatchedEnvelopeBytes = 4u << 10;
  static constexpr int64_t kMaxBatchDelayMs = 2;

  Outbox(Transport& transport, std::string sender, std::function<int64_t()> clock = system_unix_ms,
         OutboxMode mode = OutboxMode::immediate);
  ~Outbox();
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Builds an Envelope from `sender` to `recipient` with `fill` and sends it (see ActorContext).
  Status send(std::string_view recipient, const std::function<void(msg::Envelope::Builder)>& fill,
              const SendOptions& options = {});

  // Sends every held envelope (batching mode; nothing to do otherwise). A frame whose mailbox
  // has no room although it had when its batch opened (its peer went away) waits as long as the
  // most patient of its envelopes would have; the error, per recipient, says how many
  // envelopes were lost (the caller counts them as dead letters).
  std::vector<Error> flush();

  // Envelopes held for batching now, over every recipient (for tests and inspection).
  std::size_t held() const;

  // The second part of the two-part envelope being handled (codec.h), or null: an envelope sent
  // meanwhile that borrows exactly those bytes shares them instead of copying them. The actor
  // host sets it around a handler; the message must outlive the handler's sends.
  void share_received_tail(zmq::message_t* tail) { received_tail_ = tail; }

 private:
  struct Link {
    std::string recipient;
    zmq::socket_t socket;
    std::byte* held = nullptr;       // encoded envelopes, back to back: the next frame (a pool buffer)
    std::size_t held_bytes = 0;
    uint32_t held_count = 0;
    int64_t oldest_held_unix_ms = 0;
    std::chrono::milliseconds held_patience{0};  // the longest wait_for_room among them
    bool sent_since_flush = false;   // the first envelope after a flush goes out at once
  };

  Result<Link*> link_for(std::string_view recipient);
  // Sends `frame` without waiting, then waits up to `patience` for room.
  // With `tail`, `frame` is the head of a two-part message and `tail` follows it.
  Status send_frame(std::string_view recipient, Link& link, zmq::message_t& frame,
                    std::chrono::milliseconds patience, zmq::message_t* tail = nullptr);
  Status wait_for_room(std::string_view recipient, Link& link, std::chrono::milliseconds patience);
  Status flush_link(std::string_view recipient, Link& link);

  Transport& transport_;
  std::string sender_;
  std::function<int64_t()> clock_;
  OutboxMode mode_;
  std::map<std::string, Link, std::less<>> links_;  // nodes stay put: touched_ points into it
  std::vector<Link*> touched_;  // links with a send since the last flush()
  std::vector<Error> lost_;     // batches that could not leave, until the next flush()
  kj::Array<capnp::word> first_segment_;  // zeroed; a builder zeroes what it used when it ends
  std::shared_ptr<FrameBufferPool> frame_pool_;  // shared with the frames ZeroMQ has not freed yet
  zmq::message_t* received_tail_ = nullptr;      // share_received_tail()
};

}  // namespace drk::runtime
