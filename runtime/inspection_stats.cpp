#include "runtime/inspection_stats.h"

#include <algorithm>
#include <cstring>

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

void ActorStats::begin_handler(std::string_view kind, Clock::time_point now) {
  const std::size_t length = std::min(kind.size(), kMaxHandlerKind);
  std::lock_guard lock(mutex_);
  std::memcpy(current_kind_.data(), kind.data(), length);
  current_kind_[length] = '\0';
  in_handler_ = true;
  handler_began_ = now;
}

void ActorStats::end_handler(HandlerKind kind, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (!in_handler_) return;
  in_handler_ = false;
  const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(now - handler_began_);
  ++handler_calls_;
  handler_total_ += took;
  handler_max_ = std::max(handler_max_, took);
  if (kind == HandlerKind::message) ++messages_handled_;
  if (kind == HandlerKind::timer) ++timers_fired_;
}

uint64_t ActorStats::dead_letter(const std::string& reason) {
  std::lock_guard lock(mutex_);
  dead_letters_.recent.push_back(reason);
  if (dead_letters_.recent.size() > kRecentDeadLetters) dead_letters_.recent.erase(dead_letters_.recent.begin());
  return ++dead_letters_.count;
}

ActorStatsSnapshot ActorStats::snapshot(Clock::time_point now) const {
  ActorStatsSnapshot taken;
  std::lock_guard lock(mutex_);
  taken.phase = phase_;
  taken.messages_received = messages_received_.load(std::memory_order_relaxed);
  taken.messages_handled = messages_handled_;
  taken.timers_fired = timers_fired_;
  taken.handler_calls = handler_calls_;
  taken.handler_total = handler_total_;
  taken.handler_max = handler_max_;
  if (in_handler_) {
    taken.current_handler = current_kind_.data();
    taken.current_handler_for =
        std::max(std::chrono::nanoseconds{0}, std::chrono::duration_cast<std::chrono::nanoseconds>(now - handler_began_));
  }
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
