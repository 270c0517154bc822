// ActorHost: runs the actors of one process, each on its own thread with its own mailbox.
//
// start() binds every actor's mailbox (see transport.h), then starts one thread per actor that
// calls on_start, then on_message / on_timer one at a time, and on_stop when stop() or drain()
// is called.
// Timers run on the actor's thread. An envelope past its deadline, or bytes that do not decode,
// become dead letters: counted, the last few reasons kept, one line logged (runtime/log.h).
// Bytes from another process (the ipc and network mailboxes) are decoded with every check of
// codec.h (decode_checked); bytes on the inproc mailbox, which only this process's Outboxes
// reach, with decode_own (transport.h says why that is safe).
// With HostOptions::trace, each handler call is also a span (trace_span.h), with the trace ids
// of the envelope handled and of those the handler sent: one clock read per envelope of a batch
// frame (a handler's span begins where the one before ended), two for an envelope alone.
// Each actor's statistics (messages, handler times, the handler running now, dead letters; see
// inspection_stats.h) are kept by its thread and read by stats() from any thread. The handlers
// of the envelopes of one frame handled in one go are timed together, decoding and flushing
// included: two clock reads per frame, not per envelope.
//
// stop() ends the threads after the handler running now; drain() (SIGTERM's orderly stop) first
// lets every actor handle what its mailboxes already hold, for a bounded time. Both are seen
// between any two envelopes, also inside a batch frame (up to Outbox::kMaxBatchEnvelopes): the
// rest of a frame cut short by a stop is handled by the drain, or dropped with the mailbox.
//
// Faults: a handler that throws ends the whole process with exit code 70 after writing
// "actor NAME: handler for KIND threw: WHAT" to the log and to RUN_DIR/causes/PROCESS.txt, so
// that the supervisor restarts the process and reports the cause.
//
// Signals: actor threads run with SIGINT, SIGTERM and SIGCHLD blocked, so that the process's
// main thread (which waits for them) receives them. A process an actor starts inherits this
// mask: unblock the signals in the child after fork, before exec.
//
// Thread-safety: construct, add, start and stop from one thread; dead_letters() and stats() from
// any, once start() has returned and until the host is destroyed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/actor.h"
#include "runtime/transport/codec.h"
#include "runtime/inspection/inspection_stats.h"
#include "runtime/trace/trace_recorder.h"
#include "runtime/transport/transport.h"

namespace drk::runtime {

struct HostOptions {
  std::string run_dir;  // absolute
  uint64_t incarnation = 0;
  std::function<int64_t()> clock = system_unix_ms;
  DecodeLimits limits;
  // Where every actor's handler spans and work spans go (runtime/trace/); null: not recorded.
  std::shared_ptr<trace::TraceRecorder> trace;
};

class ActorCell;

class ActorHost {
 public:
  // `transport` (which names this process) must outlive the host.
  ActorHost(Transport& transport, HostOptions options);
  ~ActorHost();
  ActorHost(const ActorHost&) = delete;
  ActorHost& operator=(const ActorHost&) = delete;

  // Creates, through the role registry, every actor the topology places in this process.
  Status add_topology_actors();
  // Adds an actor the runtime builds itself (the head's); its name must be routable.
  void add(ActorSpec spec, std::unique_ptr<Actor> actor);

  // Binds every mailbox, then starts the threads. Errors: io_error when a mailbox cannot bind.
  Status start();
  // Calls on_stop on every actor, closes the sockets and joins the threads. Idempotent.
  void stop();
  // The orderly stop: every actor stops taking new work (timers no longer fire) and handles
  // the messages already in its mailboxes, those ZeroMQ has queued for it included, until they
  // are empty or `timeout` has passed (checked between messages, so a handler that runs past
  // it is waited for), all actors at once; then as stop(). Idempotent; a no-op after
  // stop().
  void drain(std::chrono::milliseconds timeout);

  DeadLetters dead_letters(std::string_view actor) const;
  // Every actor of this host, in the order added.
  std::vector<LocalActorStats> stats() const;

 private:
  Transport& transport_;
  HostOptions options_;
  std::vector<std::unique_ptr<ActorCell>> cells_;
  bool started_ = false;
};

}  // namespace drk::runtime
