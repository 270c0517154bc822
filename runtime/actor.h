// Actor: the unit of behaviour in drkernel's runtime.
//
// An actor is a C++ object with handlers. The runtime owns it, gives it a bounded mailbox and
// one thread, and calls its handlers one at a time on that thread: handlers never run
// concurrently for the same actor, so an actor's members need no locks. Where the actor lives
// (in the head process, its own process, another node) is the topology's choice (YAML); the
// actor's code is the same everywhere and talks to others only through ActorContext::send.
//
// Errors: a handler that throws is a fault: the runtime records the exception text as the
// death cause and ends the actor's process, so the supervisor restarts it. Expected failures
// (a peer that is busy or gone) come back from send() as values.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "messages/envelope.capnp.h"
#include "base/result.h"
#include "runtime/payload.h"
#include "runtime/trace/trace_span.h"

namespace drk::runtime {

// What an actor is told about itself at construction.
struct ActorSpec {
  std::string name;        // unique in the topology, e.g. "evaluator.1"
  std::string role;        // generator | evaluator | verifier | oracle | learner | archivist
  uint32_t index = 0;      // position within its role's pool
  YAML::Node params;       // the actor's own YAML parameters (may be null)
  YAML::Node experiment;   // the topology's experiment section, shared by all actors
  std::string run_dir;     // the experiment's directory: archive, checkpoints, sockets
  uint64_t incarnation = 0;  // differs after every restart of the actor's process
};

struct SendOptions {
  // How long send() may wait for room in a full mailbox before it returns Errc::busy.
  std::chrono::milliseconds wait_for_room{1000};
  // 0: none. Past it the recipient drops the message into its dead letters.
  int64_t deadline_unix_ms = 0;
  uint64_t correlation_id = 0;
  uint64_t trace_id = 0;
};

// The actor's handle on the runtime; valid only on the actor's own thread, during a handler.
class ActorContext {
 public:
  virtual ~ActorContext() = default;

  virtual const ActorSpec& spec() const = 0;
  const std::string& self() const { return spec().name; }

  // Builds an Envelope (sender, recipient, times are filled in) with `fill` and sends it; an
  // application's message is the envelope's payload (init_payload<T>, payload.h).
  // `fill` runs before send() returns, so a large Data field can borrow bytes that outlive the
  // call instead of copying them into the builder (borrowed_data.h).
  // Errors: not_found for a recipient the topology does not name; busy when the recipient's
  // mailbox stayed full for options.wait_for_room.
  virtual Status send(std::string_view recipient,
                      const std::function<void(msg::Envelope::Builder)>& fill,
                      const SendOptions& options = {}) = 0;

  // Sends what send() holds now. Small envelopes after the first that one handler sends to
  // one recipient may be held until the handler returns (they share a frame; runtime/transport/outbox.h):
  // a handler that goes on to work for long after sending calls flush() first.
  virtual void flush() {}

  // Sends a request: an envelope with a fresh correlation id (returned) and a deadline
  // `timeout` from now, after which the recipient drops it. The reply is the first envelope
  // from `recipient` with the same correlation id (see reply()); it reaches on_message as
  // usual. When no reply has come within `timeout`, or the recipient's node is lost
  // (Control.peerLost), Actor::on_request_failed runs once with Errc::timeout or
  // Errc::peer_unavailable: a request never hangs. Errors now: as send().
  virtual Result<uint64_t> request(std::string_view recipient,
                                   const std::function<void(msg::Envelope::Builder)>& fill,
                                   std::chrono::milliseconds timeout) = 0;

  // Answers `request` (its sender, its correlation id).
  Status reply(msg::Envelope::Reader request, const std::function<void(msg::Envelope::Builder)>& fill) {
    SendOptions options;
    options.correlation_id = request.getCorrelationId();
    return send(request.getSender().cStr(), fill, options);
  }

  // The names of every actor of a role, in index order ("evaluator" -> evaluator.0, ...).
  virtual std::vector<std::string> members(std::string_view role) const = 0;

  // Calls Actor::on_timer(token) on this actor's thread once `delay` has passed.
  virtual void start_timer(std::chrono::milliseconds delay, uint64_t token) = 0;

  // Milliseconds since the Unix epoch, from the runtime's clock (a seam for tests).
  virtual int64_t now_unix_ms() const = 0;

  // Records a stretch of this actor's own work (an evaluation's phase) for `drk trace`, when
  // the run records traces (supervision.trace, docs/traces.md); otherwise does nothing.
  virtual void record_span(trace::WorkSpan /*span*/) {}
};

class Actor {
 public:
  virtual ~Actor() = default;
  virtual void on_start(ActorContext&) {}
  virtual void on_message(ActorContext& context, msg::Envelope::Reader envelope) = 0;
  virtual void on_timer(ActorContext&, uint64_t /*token*/) {}
  // A request (ActorContext::request) got no reply in time, or its recipient was lost.
  virtual void on_request_failed(ActorContext&, uint64_t /*correlation_id*/, const Error& /*why*/) {}
  virtual void on_stop(ActorContext&) {}
};

using ActorFactory = std::function<std::unique_ptr<Actor>(const ActorSpec&)>;

// Roles are registered once, before a topology starts (tools/drk registers the six).
// Thread-safety: call from one thread before any actor host starts.
void register_role(const std::string& role, ActorFactory factory);
// A role an actor of `role` cannot work without (a Learner sends its rollouts to Generators):
// `drk run` refuses a topology with a `role` actor and no `peer` actor before anything starts,
// naming the entry and `why`, instead of an actor that fails at start until the restart limit.
void register_required_peer(const std::string& role, const std::string& peer, const std::string& why);
Result<std::unique_ptr<Actor>> create_actor(const ActorSpec& spec);

}  // namespace drk::runtime
