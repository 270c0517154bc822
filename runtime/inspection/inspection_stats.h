// ActorStats: what one actor's host measures about it, for inspection (docs/inspection.md).
//
// The actor's own thread records: a frame taken off the mailbox, a handler that begins and
// ends (its kind and duration), a dead letter, the actor's phase. Any thread may take a
// snapshot. A received frame is one relaxed store to a counter only the actor's thread writes
// (so a snapshot may count it a moment before the handler begins). Handlers are timed in runs:
// a run is one handler, or the handlers of the envelopes of one frame, called back to back,
// timed together by one clock read at each end (a clock read costs as much as a small
// envelope's handling). Beginning and ending a handler are a few plain stores under a
// sequence lock (the writer never waits; snapshot() retries a read that a write overlapped).
// Recording never allocates (the running handler's kind is kept as a pointer to a name that
// lives as long as the program, truncated to kMaxHandlerKind characters in a snapshot),
// except for a dead letter's reason, which is rare and takes a mutex, as the phase does.
//
// ThroughputWindow turns successive snapshots of a count into a rate over the last few
// seconds. It is a plain value for one thread.
//
// Thread-safety: ActorStats: record from the actor's thread, snapshot() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace drk::runtime {

inline constexpr std::size_t kRecentDeadLetters = 8;
inline constexpr std::size_t kMaxHandlerKind = 47;

struct DeadLetters {
  uint64_t count = 0;
  std::vector<std::string> recent;  // the last kRecentDeadLetters reasons, oldest first
};

enum class ActorPhase { starting, running, stopped };

struct ActorStatsSnapshot {
  ActorPhase phase = ActorPhase::starting;
  uint64_t messages_received = 0;
  uint64_t messages_handled = 0;
  uint64_t timers_fired = 0;
  uint64_t handler_calls = 0;  // messages, timers, on_start and on_stop
  std::chrono::nanoseconds handler_total{0};
  std::chrono::nanoseconds handler_max{0};  // the longest run: one handler, or one frame's
  std::string current_handler;  // "" when idle
  std::chrono::nanoseconds current_handler_for{0};  // since its run began
  DeadLetters dead_letters;

  // Received and neither handled nor dropped.
  uint64_t mailbox_depth() const;
  double mean_handler_ms() const;
};

// One actor's statistics at one moment, with its name, as its host reports them.
struct LocalActorStats {
  std::string name;
  std::string role;
  ActorStatsSnapshot stats;
};

enum class HandlerKind { message, timer, lifecycle };

class ActorStats {
 public:
  using Clock = std::chrono::steady_clock;

  void set_phase(ActorPhase phase);
  void received();
  // Begins a run with its first handler. `kind` names the handler: a NUL-terminated string of
  // static storage duration (a literal, or a body_kind() name).
  void begin_handler(const char* kind, Clock::time_point now = Clock::now());
  // Ends the running handler, of kind `ended`, and begins the next of the same run.
  void next_handler(HandlerKind ended, const char* kind);
  // Ends the run's last handler; the run's time adds to the total and may be the new maximum.
  void end_handler(HandlerKind kind, Clock::time_point now = Clock::now());
  // Returns the count of dead letters so far, this one included.
  uint64_t dead_letter(const std::string& reason);

  ActorStatsSnapshot snapshot(Clock::time_point now = Clock::now()) const;
  DeadLetters dead_letters() const;

 private:
  // Runs `write` under the sequence lock (odd while a write is under way).
  template <typename Write>
  void locked_write(Write&& write);
  // Counts a handler that ended (under the sequence lock).
  void count_ended(HandlerKind kind);

  mutable std::mutex mutex_;  // phase_ and dead_letters_
  ActorPhase phase_ = ActorPhase::starting;
  DeadLetters dead_letters_;
  std::atomic<uint64_t> messages_received_{0};
  // Under the sequence lock: written by the actor's thread only.
  std::atomic<uint64_t> sequence_{0};
  std::atomic<uint64_t> messages_handled_{0};
  std::atomic<uint64_t> timers_fired_{0};
  std::atomic<uint64_t> handler_calls_{0};
  std::atomic<int64_t> handler_total_ns_{0};
  std::atomic<int64_t> handler_max_ns_{0};
  std::atomic<const char*> current_kind_{nullptr};  // nullptr: no handler runs
  std::atomic<Clock::rep> run_began_{0};
};

// The rate of a growing count over the last `window` (at least two samples apart).
class ThroughputWindow {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ThroughputWindow(std::chrono::milliseconds window = std::chrono::seconds(5)) : window_(window) {}

  // Adds a sample and returns the count per second since the oldest sample in the window;
  // 0 before there are two samples. A count that went down (a restart) starts over.
  double add(Clock::time_point when, uint64_t count);

 private:
  struct Sample {
    Clock::time_point when;
    uint64_t count;
  };
  std::chrono::milliseconds window_;
  std::deque<Sample> samples_;
};

}  // namespace drk::runtime
