#include "runtime/inspection/inspection_stats.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace drk::runtime {

uint64_t ActorStatsSnapshot::mailbox_depth() const {
  const uint64_t done = messages_handled + dead_letters.count;
  return messages_received > done ? messages_received - done : 0;
}

double ActorStatsSnapshot::mean_handler_ms() const {
  if (handler_calls == 0) return 0;
  return std::chrono::duration<double, std::milli>(handler_total).count() / static_cast<double>(handler_calls);
}

void ActorStats::set_phase(ActorPhase phase) {
  std::lock_guard lock(mutex_);
  phase_ = phase;
}

void ActorStats::received() {
  messages_received_.store(messages_received_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// A sequence lock's writer (one thread): the fence keeps the field stores after the odd count.
template <typename Write>
void ActorStats::locked_write(Write&& write) {
  const uint64_t sequence = sequence_.load(std::memory_order_relaxed);
  sequence_.store(sequence + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  write();
  sequence_.store(sequence + 2, std::memory_order_release);
}

namespace {

void add_one(std::atomic<uint64_t>& counter) {
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

}  // namespace

void ActorStats::begin_handler(const char* kind, Clock::time_point now) {
  locked_write([&] {
    current_kind_.store(kind, std::memory_order_relaxed);
    run_began_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
  });
}

void ActorStats::count_ended(HandlerKind kind) {
  add_one(handler_calls_);
  if (kind == HandlerKind::message) add_one(messages_handled_);
  if (kind == HandlerKind::timer) add_one(timers_fired_);
}

void ActorStats::next_handler(HandlerKind ended, const char* kind) {
  if (current_kind_.load(std::memory_order_relaxed) == nullptr) return;
  locked_write([&] {
    count_ended(ended);
    current_kind_.store(kind, std::memory_order_relaxed);
  });
}

void ActorStats::end_handler(HandlerKind kind, Clock::time_point now) {
  if (current_kind_.load(std::memory_order_relaxed) == nullptr) return;
  const Clock::time_point began{Clock::duration{run_began_.load(std::memory_order_relaxed)}};
  const int64_t took = std::chrono::duration_cast<std::chrono::nanoseconds>(now - began).count();
  locked_write([&] {
    current_kind_.store(nullptr, std::memory_order_relaxed);
    count_ended(kind);
    handler_total_ns_.store(handler_total_ns_.load(std::memory_order_relaxed) + took, std::memory_order_relaxed);
    if (took > handler_max_ns_.load(std::memory_order_relaxed)) handler_max_ns_.store(took, std::memory_order_relaxed);
  });
}

uint64_t ActorStats::dead_letter(const std::string& reason) {
  std::lock_guard lock(mutex_);
  dead_letters_.recent.push_back(reason);
  if (dead_letters_.recent.size() > kRecentDeadLetters) dead_letters_.recent.erase(dead_letters_.recent.begin());
  return ++dead_letters_.count;
}

ActorStatsSnapshot ActorStats::snapshot(Clock::time_point now) const {
  ActorStatsSnapshot taken;
  const char* kind = nullptr;
  Clock::rep began = 0;
  // A sequence lock's reader: retry while the actor's thread writes, or when it wrote meanwhile.
  while (true) {
    const uint64_t before = sequence_.load(std::memory_order_acquire);
    if (before % 2 == 1) {
      std::this_thread::yield();
      continue;
    }
    taken.messages_handled = messages_handled_.load(std::memory_order_relaxed);
    taken.timers_fired = timers_fired_.load(std::memory_order_relaxed);
    taken.handler_calls = handler_calls_.load(std::memory_order_relaxed);
    taken.handler_total = std::chrono::nanoseconds{handler_total_ns_.load(std::memory_order_relaxed)};
    taken.handler_max = std::chrono::nanoseconds{handler_max_ns_.load(std::memory_order_relaxed)};
    kind = current_kind_.load(std::memory_order_relaxed);
    began = run_began_.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (sequence_.load(std::memory_order_relaxed) == before) break;
  }
  if (kind != nullptr) {
    taken.current_handler.assign(kind, strnlen(kind, kMaxHandlerKind));
    const Clock::time_point began_at{Clock::duration{began}};
    taken.current_handler_for =
        std::max(std::chrono::nanoseconds{0}, std::chrono::duration_cast<std::chrono::nanoseconds>(now - began_at));
  }
  taken.messages_received = messages_received_.load(std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  taken.phase = phase_;
  taken.dead_letters = dead_letters_;
  return taken;
}

DeadLetters ActorStats::dead_letters() const {
  std::lock_guard lock(mutex_);
  return dead_letters_;
}

double ThroughputWindow::add(Clock::time_point when, uint64_t count) {
  if (!samples_.empty() && count < samples_.back().count) samples_.clear();
  samples_.push_back({when, count});
  // Keep one sample at or before the window's start, so that the rate spans the whole window.
  while (samples_.size() > 2 && samples_[1].when <= when - window_) samples_.pop_front();
  if (samples_.size() < 2) return 0;
  const double seconds = std::chrono::duration<double>(samples_.back().when - samples_.front().when).count();
  if (seconds <= 0) return 0;
  return static_cast<double>(samples_.back().count - samples_.front().count) / seconds;
}

}  // namespace drk::runtime
