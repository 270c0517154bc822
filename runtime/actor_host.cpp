#include "runtime/actor_host.h"

#include <kj/exception.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <queue>
#include <span>
#include <thread>

#include "runtime/supervision/death_cause.h"
#include "runtime/log.h"
#include "runtime/transport/mailbox_poller.h"
#include "runtime/transport/payload_types.h"
#include "runtime/transport/outbox.h"
#include "runtime/supervision/process_signals.h"
#include "base/unique_fd.h"

namespace drk::runtime {
namespace {

constexpr int kFaultExitCode = 70;      // EX_SOFTWARE
// Envelopes handled per wakeup, then timers get their turn (a stop is seen between any two):
// one full batch frame, so that a frame costs one poll; a frame cut short is continued at the
// next wakeup.
constexpr int kMessagesPerWakeup = static_cast<int>(Outbox::kMaxBatchEnvelopes);

// Who wrote a mailbox's bytes: this process's own Outboxes (the inproc mailbox), or a peer
// whose bytes are untrusted (the ipc and network mailboxes).
enum class Origin { own, peer };

// An eventfd that wakes an actor's thread to stop: the plain descriptor of its MailboxPoller, so
// that watching for a stop costs a wakeup nothing but one more descriptor in its poll(2).
class StopSignal {
 public:
  explicit StopSignal(UniqueFd fd) : fd_(std::move(fd)) {}

  int fd() const { return fd_.get(); }
  void raise() const {
    const uint64_t one = 1;
    // Cannot fail short of a bad descriptor: the counter is far from its maximum.
    [[maybe_unused]] const ssize_t written = write(fd_.get(), &one, sizeof one);
  }

 private:
  UniqueFd fd_;
};

}  // namespace

// One actor, its thread, its sockets and its timers.
class ActorCell final : public ActorContext {
 public:
  ActorCell(Transport& transport, const HostOptions& options, ActorSpec spec, std::unique_ptr<Actor> actor)
      : transport_(transport), options_(options), spec_(std::move(spec)), actor_(std::move(actor)) {}

  const std::string& name() const { return spec_.name; }

  Status bind() {
    auto mailboxes = transport_.bind_mailbox(spec_.name);
    if (!mailboxes) return mailboxes.error();
    own_mailbox_ = std::move(mailboxes->in_process);
    node_mailbox_ = std::move(mailboxes->node);
    auto network_mailbox = transport_.bind_network_mailbox(spec_.name);
    if (!network_mailbox) return network_mailbox.error();
    network_mailbox_ = std::move(*network_mailbox);
    UniqueFd stop_fd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!stop_fd) {
      return make_error(Errc::io_error, "actor '" + spec_.name + "' cannot make its stop eventfd: " +
                                            std::strerror(errno) + " (too many open files? raise ulimit -n)");
    }
    stop_signal_.emplace(std::move(stop_fd));
    return {};
  }

  void start() {
    thread_ = std::thread([this] { run(); });
  }

  // Asks the thread to stop: at once, or once it has drained its mailboxes (until `drain_until`
  // at the latest). Only the first request counts.
  void request_stop(std::optional<std::chrono::steady_clock::time_point> drain_until) {
    if (!thread_.joinable() || stop_requested_) return;
    stop_requested_ = true;
    stop_drain_until_.store(drain_until ? drain_until->time_since_epoch().count() : 0, std::memory_order_relaxed);
    stop_drain_.store(drain_until.has_value(), std::memory_order_release);
    stop_raised_.store(true, std::memory_order_release);
    stop_signal_->raise();
  }

  void join() {
    if (thread_.joinable()) thread_.join();
  }

  void stop() {
    request_stop(std::nullopt);
    join();
  }

  DeadLetters dead_letters() const { return stats_.dead_letters(); }
  LocalActorStats stats() const { return {spec_.name, spec_.role, stats_.snapshot()}; }

  // ActorContext
  const ActorSpec& spec() const override { return spec_; }

  Status send(std::string_view recipient, const std::function<void(msg::Envelope::Builder)>& fill,
              const SendOptions& options) override {
    if (trace_buffer_ && options.trace_id != 0 &&
        std::find(sent_trace_ids_.begin(), sent_trace_ids_.end(), options.trace_id) == sent_trace_ids_.end()) {
      sent_trace_ids_.push_back(options.trace_id);
    }
    return outbox_->send(recipient, fill, options);
  }

  void flush() override {
    for (const Error& lost : outbox_->flush()) dead_letter(lost.message);
  }

  std::vector<std::string> members(std::string_view role) const override {
    return transport_.topology().members(role);
  }

  void start_timer(std::chrono::milliseconds delay, uint64_t token) override {
    timers_.push(Timer{std::chrono::steady_clock::now() + delay, next_timer_sequence_++, token, false});
  }

  Result<uint64_t> request(std::string_view recipient, const std::function<void(msg::Envelope::Builder)>& fill,
                           std::chrono::milliseconds timeout) override {
    // Unique across this actor's restarts: the incarnation in the high bits.
    const uint64_t id = (options_.incarnation << 20) ^ ++requests_sent_;
    SendOptions options;
    options.correlation_id = id;
    options.deadline_unix_ms = options_.clock() + timeout.count();
    if (auto sent = send(recipient, fill, options); !sent) return sent.error();
    pending_requests_.emplace(id, PendingRequest{std::string(recipient), timeout});
    timers_.push(Timer{std::chrono::steady_clock::now() + timeout, next_timer_sequence_++, id, true});
    return id;
  }

  int64_t now_unix_ms() const override { return options_.clock(); }

  void record_span(trace::WorkSpan span) override {
    if (!trace_buffer_) return;
    trace_buffer_->record(trace::Span{options_.trace->track(span.track), span.name, false,
                                      options_.trace->unix_ns(span.start), duration_ns(span.start, span.end),
                                      span.trace_id, {}, std::move(span.args)});
  }

 private:
  // What request_stop asked for.
  struct StopRequest {
    bool drain;
    std::chrono::steady_clock::rep drain_until;
  };

  struct Timer {
    std::chrono::steady_clock::time_point due;
    uint64_t sequence;  // timers due at the same time fire in the order started
    uint64_t token;     // the actor's token, or a request's correlation id
    bool request_deadline;
    bool operator>(const Timer& other) const {
      return due != other.due ? due > other.due : sequence > other.sequence;
    }
  };

  void run() {
    block_process_signals_in_this_thread();
    log::set_thread_actor(spec_.name);
    if (options_.trace) {
      trace_buffer_ = options_.trace->buffer();
      trace_track_ = options_.trace->track(spec_.name);
    }
    outbox_.emplace(transport_, spec_.name, options_.clock, OutboxMode::batching);
    guarded("on_start", HandlerKind::lifecycle, [&] { actor_->on_start(*this); });
    log::debug() << "actor " << spec_.name << " (" << spec_.role << "): started";
    stats_.set_phase(ActorPhase::running);
    // The network mailbox, when there is one, is polled last: a missing one is not polled.
    zmq::socket_t* const mailboxes[] = {&own_mailbox_, &node_mailbox_,
                                        network_mailbox_ ? &*network_mailbox_ : nullptr};
    const Origin origins[] = {Origin::own, Origin::peer, Origin::peer};
    const std::size_t polled = network_mailbox_ ? 3 : 2;
    MailboxPoller poller(stop_signal_->fd(), std::span(mailboxes, polled));
    while (true) {
      std::chrono::milliseconds timeout{-1};
      if (!timers_.empty()) {
        timeout =
            std::max(std::chrono::milliseconds{0}, std::chrono::ceil<std::chrono::milliseconds>(
                                                       timers_.top().due - std::chrono::steady_clock::now()));
      }
      if (!pending_rest_.empty()) timeout = std::chrono::milliseconds{0};  // a frame to finish
      poller.wait(timeout);
      if (poller.plain_ready()) {
        if (const StopRequest request = take_stop_request(); request.drain) {
          using std::chrono::steady_clock;
          drain_mailboxes(steady_clock::time_point(steady_clock::duration(request.drain_until)));
        }
        break;
      }
      if (int received = 0; handle_pending(received, std::nullopt)) {
        for (std::size_t index = 0; index < polled; ++index) {
          if (poller.mailbox_ready(index)) poller.set_drained(index, receive_some(*mailboxes[index], origins[index]));
        }
      }
      fire_due_timers();
    }
    guarded("on_stop", HandlerKind::lifecycle, [&] { actor_->on_stop(*this); });
    log::debug() << "actor " << spec_.name << ": stopped";
    stats_.set_phase(ActorPhase::stopped);
    outbox_.reset();
    own_mailbox_.close();
    node_mailbox_.close();
    network_mailbox_.reset();
  }

  // Whether the envelope loop may handle one more: within a wakeup's share, and before a drain's
  // deadline (in a drain) or while no stop is requested (otherwise).
  bool may_handle_more(int received, const std::optional<std::chrono::steady_clock::time_point>& drain_until) const {
    if (received >= kMessagesPerWakeup) return false;
    if (drain_until) return std::chrono::steady_clock::now() < *drain_until;
    return !stop_raised_.load(std::memory_order_acquire);
  }

  // Handles the pending frame's envelopes while may_handle_more(); true when none is left. A
  // frame holds one envelope or, from a batching sender, several back to back: those handled in
  // one go are one timed run (inspection_stats.h).
  bool handle_pending(int& received, const std::optional<std::chrono::steady_clock::time_point>& drain_until) {
    while (!pending_rest_.empty()) {
      if (!may_handle_more(received, drain_until)) {
        end_run();
        return false;
      }
      ++received;
      stats_.received();
      auto length = first_message_bytes(pending_rest_);
      if (!length) {
        dead_letter("the rest of a frame that does not decode (" + length.error().message + ")");
        pending_rest_ = {};
        break;
      }
      handle_envelope(pending_rest_.first(*length), pending_origin_);
      pending_rest_ = pending_rest_.subspan(*length);
    }
    end_run();
    return true;
  }

  // Takes frames off `mailbox` and handles their envelopes, up to a wakeup's share; a frame cut
  // short stays pending for the next wakeup (or the drain), and what a stop leaves pending is
  // dropped with the mailbox. True when the mailbox was read until it was empty (MailboxPoller).
  bool receive_some(zmq::socket_t& mailbox, Origin origin,
                    const std::optional<std::chrono::steady_clock::time_point>& drain_until = std::nullopt) {
    int received = 0;
    if (!handle_pending(received, drain_until)) return false;
    while (may_handle_more(received, drain_until)) {
      if (!mailbox.recv(pending_frame_, zmq::recv_flags::dontwait)) return true;
      if (pending_frame_.more()) {
        handle_two_parts(mailbox, origin, received);
        continue;
      }
      pending_rest_ = {static_cast<const std::byte*>(pending_frame_.data()), pending_frame_.size()};
      pending_origin_ = origin;
      if (!handle_pending(received, drain_until)) return false;
    }
    return false;
  }

  // An envelope in two parts (codec.h), whose first part pending_frame_ holds: ZeroMQ delivers
  // every part of a message at once, so the second is there. Its payload part is offered to the
  // Outbox while the handler runs, so that a reply that borrows it shares it (outbox.h). A
  // second part missing, or a third, is a dead letter.
  void handle_two_parts(zmq::socket_t& mailbox, Origin origin, int& received) {
    ++received;
    stats_.received();
    const bool has_tail = mailbox.recv(pending_tail_, zmq::recv_flags::dontwait).has_value();
    if (!has_tail || pending_tail_.more()) {
      zmq::message_t extra;
      for (bool more = has_tail; more && mailbox.recv(extra, zmq::recv_flags::dontwait);) more = extra.more();
      dead_letter(has_tail ? "a message of more than two parts" : "a message whose second part is missing");
      return;
    }
    const std::span<const std::byte> head(static_cast<const std::byte*>(pending_frame_.data()), pending_frame_.size());
    const std::span<const std::byte> tail(static_cast<const std::byte*>(pending_tail_.data()), pending_tail_.size());
    auto decoded = origin == Origin::own ? decode_own_parts(head, tail, options_.limits)
                                         : decode_checked_parts(head, tail, options_.limits, envelope_check());
    if (!decoded) {
      dead_letter("a message that does not decode (" + decoded.error().message + ")");
      return;
    }
    outbox_->share_received_tail(&pending_tail_);
    dispatch(*decoded);
    outbox_->share_received_tail(nullptr);
    end_run();
  }

  void handle_envelope(std::span<const std::byte> bytes, Origin origin) {
    // The frame (pending_frame_, replaced only once all of it is handled) outlives the decoded
    // message: an owner that owns nothing lets decode read it in place without allocating.
    const std::shared_ptr<const void> borrowed(std::shared_ptr<void>(), bytes.data());
    auto decoded = origin == Origin::own ? decode_own(bytes, borrowed, options_.limits)
                                         : decode_checked(bytes, borrowed, options_.limits, envelope_check());
    if (!decoded) {
      dead_letter("a message that does not decode (" + decoded.error().message + ")");
      return;
    }
    dispatch(*decoded);
  }

  // Runs the handler on a decoded envelope, unless its deadline has passed.
  void dispatch(DecodedMessage& decoded) {
    // decode_checked read the whole envelope against its schema, and our own Outboxes built
    // theirs with its builders: reading it cannot throw.
    const auto envelope = decoded.root<msg::Envelope>();
    const std::string_view kind = body_kind(envelope);
    const int64_t deadline = envelope.getDeadlineUnixMs();
    if (deadline != 0) {
      const int64_t late_ms = options_.clock() - deadline;
      if (late_ms > 0) {
        dead_letter("a " + std::string(kind) + " from '" + envelope.getSender().cStr() + "' " +
                    std::to_string(late_ms) + " ms past its deadline");
        return;
      }
    }
    settle_requests(envelope);
    if (run_open_) {
      stats_.next_handler(HandlerKind::message, kind.data());
    } else {
      stats_.begin_handler(kind.data());
      run_open_ = true;
    }
    // In a run, a handler's span begins where the one before it ended (one clock read per
    // envelope of a batch frame; the decoding between them counts as the next handler's).
    std::chrono::steady_clock::time_point handler_began{};
    if (trace_buffer_) {
      handler_began = trace_run_mark_ != kNoMark ? trace_run_mark_ : std::chrono::steady_clock::now();
    }
    run_guarded(kind.data(), [&] { actor_->on_message(*this, envelope); });
    if (trace_buffer_) trace_run_mark_ = record_handler_span(kind.data(), handler_began, envelope.getTraceId());
  }

  static int64_t duration_ns(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count();
  }

  // One handler call as a span, with the trace ids of what it sent (send()); returns its end.
  std::chrono::steady_clock::time_point record_handler_span(const char* kind, std::chrono::steady_clock::time_point began,
                                                            uint64_t trace_id) {
    const auto now = std::chrono::steady_clock::now();
    trace_buffer_->record(trace::Span{trace_track_, kind, true, options_.trace->unix_ns(began),
                                      duration_ns(began, now), trace_id, std::move(sent_trace_ids_), {}});
    sent_trace_ids_.clear();
    return now;
  }

  // Ends the timed run of a frame's message handlers, if one is open.
  void end_run() {
    trace_run_mark_ = kNoMark;
    if (!run_open_) return;
    run_open_ = false;
    stats_.end_handler(HandlerKind::message);
  }

  StopRequest take_stop_request() {
    const bool drain = stop_drain_.load(std::memory_order_acquire);
    return StopRequest{drain, stop_drain_until_.load(std::memory_order_relaxed)};
  }

  // Handles what the mailboxes hold until they are empty or `until` has passed; no timers fire.
  void drain_mailboxes(std::chrono::steady_clock::time_point until) {
    zmq::pollitem_t items[] = {{own_mailbox_.handle(), 0, ZMQ_POLLIN, 0},
                               {node_mailbox_.handle(), 0, ZMQ_POLLIN, 0},
                               {network_mailbox_ ? network_mailbox_->handle() : nullptr, 0, ZMQ_POLLIN, 0}};
    const std::size_t polled = network_mailbox_ ? 3 : 2;
    while (std::chrono::steady_clock::now() < until) {
      if (int received = 0; !handle_pending(received, until)) continue;  // its share, or the deadline
      poll_sockets(items, polled, std::chrono::milliseconds{0});
      const bool own = items[0].revents & ZMQ_POLLIN;
      const bool node = items[1].revents & ZMQ_POLLIN;
      const bool network = network_mailbox_ && (items[2].revents & ZMQ_POLLIN);
      if (!own && !node && !network) return;
      if (own) receive_some(own_mailbox_, Origin::own, until);
      if (node) receive_some(node_mailbox_, Origin::peer, until);
      if (network) receive_some(*network_mailbox_, Origin::peer, until);
    }
  }

  void fire_due_timers() {
    const auto now = std::chrono::steady_clock::now();
    while (!timers_.empty() && timers_.top().due <= now) {
      const Timer timer = timers_.top();
      timers_.pop();
      if (!timer.request_deadline) {
        guarded("on_timer", HandlerKind::timer, [&] { actor_->on_timer(*this, timer.token); });
        continue;
      }
      const auto pending = pending_requests_.find(timer.token);
      if (pending == pending_requests_.end()) continue;  // answered, or failed already
      const std::string message = "no reply from '" + pending->second.recipient + "' within " +
                                  std::to_string(pending->second.timeout.count()) + " ms";
      pending_requests_.erase(pending);
      fail_request(timer.token, make_error(Errc::timeout, message));
    }
  }

  void fail_request(uint64_t id, const Error& why) {
    guarded("on_request_failed", HandlerKind::timer, [&] { actor_->on_request_failed(*this, id, why); });
  }

  // Replies settle their request; news of a lost peer fails every request it holds.
  void settle_requests(msg::Envelope::Reader envelope) {
    if (!pending_requests_.empty() && envelope.getCorrelationId() != 0) {
      const auto pending = pending_requests_.find(envelope.getCorrelationId());
      if (pending != pending_requests_.end() && pending->second.recipient == envelope.getSender().cStr()) {
        pending_requests_.erase(pending);
      }
    }
    const auto body = envelope.getBody();
    if (!body.isControl() || !body.getControl().isPeerLost()) return;
    const std::string lost = body.getControl().getPeerLost().cStr();
    for (auto pending = pending_requests_.begin(); pending != pending_requests_.end();) {
      if (pending->second.recipient != lost) {
        ++pending;
        continue;
      }
      const uint64_t id = pending->first;
      pending = pending_requests_.erase(pending);
      fail_request(id, make_error(Errc::peer_unavailable, "'" + lost + "' was lost with its node"));
    }
  }

  void dead_letter(const std::string& reason) {
    const uint64_t count = stats_.dead_letter(reason);
    log::warn() << "actor " << spec_.name << ": dropped " << reason << " (" << count << " dead letters so far)";
  }

  // Runs a handler timed on its own (ending a frame's run first: a request that fails between
  // two envelopes of a frame), then flushes what it sent. `kind`: as ActorStats::begin_handler.
  template <typename Handler>
  void guarded(const char* kind, HandlerKind handler_kind, Handler&& handler) {
    end_run();
    const auto began = std::chrono::steady_clock::now();
    stats_.begin_handler(kind, began);
    run_guarded(kind, [&] {
      handler();
      stats_.end_handler(handler_kind);
    });
    if (trace_buffer_) record_handler_span(kind, began, 0);
  }

  // Runs a handler whose timing the caller records, then flushes what it sent; a handler that
  // throws ends the process.
  template <typename Handler>
  void run_guarded(const char* kind, Handler&& handler) {
    try {
      handler();
      flush();
    } catch (const kj::Exception& fault) {
      die(kind, fault.getDescription().cStr());
    } catch (const std::exception& fault) {
      die(kind, fault.what());
    } catch (...) {
      die(kind, "an exception that is not a std::exception");
    }
  }

  [[noreturn]] void die(std::string_view kind, const std::string& what) {
    const std::string cause = "actor " + spec_.name + ": handler for " + std::string(kind) + " threw: " + what;
    write_death_cause(options_.run_dir, transport_.local_process(), cause);
    log::error() << cause;
    std::fflush(stdout);
    // Other actors' threads are mid-handler: no destructor may run under them.
    _exit(kFaultExitCode);
  }

  Transport& transport_;
  const HostOptions& options_;
  ActorSpec spec_;
  std::unique_ptr<Actor> actor_;
  zmq::socket_t own_mailbox_;   // inproc: this process's Outboxes only
  zmq::socket_t node_mailbox_;  // ipc: the node's other processes
  std::optional<zmq::socket_t> network_mailbox_;  // multi-node runs only
  std::optional<StopSignal> stop_signal_;  // from bind()
  std::atomic<bool> stop_drain_{false};   // stored before the signal is raised
  std::atomic<std::chrono::steady_clock::rep> stop_drain_until_{0};
  std::optional<Outbox> outbox_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  uint64_t next_timer_sequence_ = 0;
  struct PendingRequest {
    std::string recipient;
    std::chrono::milliseconds timeout;
  };
  std::map<uint64_t, PendingRequest> pending_requests_;
  uint64_t requests_sent_ = 0;
  ActorStats stats_;
  // Tracing (HostOptions::trace): this actor's buffer and track, and the trace ids the running
  // handler has sent so far.
  std::shared_ptr<trace::TraceBuffer> trace_buffer_;
  uint32_t trace_track_ = 0;
  std::vector<uint64_t> sent_trace_ids_;
  // The end of the run's last handler span; kNoMark outside a run.
  static constexpr std::chrono::steady_clock::time_point kNoMark{};
  std::chrono::steady_clock::time_point trace_run_mark_ = kNoMark;
  bool run_open_ = false;        // a frame's message handlers are being timed
  // The frame being handled and what is left of it (empty: none), whose origin it had.
  zmq::message_t pending_frame_;
  zmq::message_t pending_tail_;  // the second part of a two-part envelope (handle_two_parts)
  std::span<const std::byte> pending_rest_;
  Origin pending_origin_ = Origin::own;
  bool stop_requested_ = false;  // by the owner's thread
  std::atomic<bool> stop_raised_{false};  // read between envelopes: a batch does not delay a stop
  std::thread thread_;
};

ActorHost::ActorHost(Transport& transport, HostOptions options)
    : transport_(transport), options_(std::move(options)) {}

ActorHost::~ActorHost() { stop(); }

Status ActorHost::add_topology_actors() {
  const Topology& topology = transport_.topology();
  for (const ActorEntry* entry : topology.actors_of(transport_.local_process())) {
    ActorSpec spec;
    spec.name = entry->name;
    spec.role = entry->role;
    spec.index = entry->index;
    // Each actor reads its own copy: YAML nodes are not safe to share between threads.
    spec.params = YAML::Clone(entry->params);
    spec.experiment = YAML::Clone(topology.experiment);
    spec.run_dir = options_.run_dir;
    spec.incarnation = options_.incarnation;
    auto actor = create_actor(spec);
    if (!actor) return actor.error();
    add(std::move(spec), std::move(*actor));
  }
  return {};
}

void ActorHost::add(ActorSpec spec, std::unique_ptr<Actor> actor) {
  cells_.push_back(std::make_unique<ActorCell>(transport_, options_, std::move(spec), std::move(actor)));
}

Status ActorHost::start() {
  for (auto& cell : cells_) {
    if (auto bound = cell->bind(); !bound) return bound;
  }
  for (auto& cell : cells_) cell->start();
  started_ = true;
  return {};
}

void ActorHost::stop() {
  if (!started_) return;
  started_ = false;
  for (auto cell = cells_.rbegin(); cell != cells_.rend(); ++cell) (*cell)->stop();
}

void ActorHost::drain(std::chrono::milliseconds timeout) {
  if (!started_) return;
  started_ = false;
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (auto& cell : cells_) cell->request_stop(until);
  for (auto cell = cells_.rbegin(); cell != cells_.rend(); ++cell) (*cell)->join();
}

DeadLetters ActorHost::dead_letters(std::string_view actor) const {
  for (const auto& cell : cells_) {
    if (cell->name() == actor) return cell->dead_letters();
  }
  return {};
}

std::vector<LocalActorStats> ActorHost::stats() const {
  std::vector<LocalActorStats> all;
  all.reserve(cells_.size());
  for (const auto& cell : cells_) all.push_back(cell->stats());
  return all;
}

}  // namespace drk::runtime
