#include "actors/oracle/evaluation_queue.h"

#include <algorithm>

namespace drk::oracle {

EvaluationQueue::Submitted EvaluationQueue::submit(msg::Candidate::Reader candidate) {
  const std::string id = candidate.getId().cStr();
  if (completed_.count(id)) return Submitted::completed;
  if (in_flight_.count(id)) return Submitted::duplicate;
  for (const auto& [queued_id, entry] : queue_) {
    if (queued_id == id) return Submitted::duplicate;
  }
  Entry entry;
  entry.message = std::make_unique<capnp::MallocMessageBuilder>();
  entry.message->setRoot(candidate);
  queue_.emplace_back(id, std::move(entry));
  return Submitted::queued;
}

void EvaluationQueue::evaluator_ready(const std::string& evaluator, uint64_t incarnation,
                                      uint32_t slots) {
  auto [it, inserted] = evaluators_.try_emplace(evaluator);
  auto& state = it->second;
  if (inserted || state.incarnation != incarnation) {
    if (!inserted) requeue_in_flight_of(evaluator);
    state.incarnation = incarnation;
    state.slots = slots;
    state.credits = slots;
    return;
  }
  state.slots = slots;
  state.credits = std::min(state.credits + 1, slots);
}

void EvaluationQueue::requeue_front(InFlight&& flight) {
  const std::string id = flight.entry.reader().getId().cStr();
  queue_.emplace_front(id, std::move(flight.entry));
}

void EvaluationQueue::evaluator_lost(const std::string& evaluator) {
  requeue_in_flight_of(evaluator);
  // Forgotten until it announces itself again, which then grants its full slots.
  evaluators_.erase(evaluator);
}

void EvaluationQueue::requeue_in_flight_of(const std::string& evaluator) {
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (it->second.evaluator == evaluator) {
      requeue_front(std::move(it->second));
      it = in_flight_.erase(it);
    } else {
      ++it;
    }
  }
}

void EvaluationQueue::requeue_all_in_flight() {
  for (auto& [id, flight] : in_flight_) requeue_front(std::move(flight));
  in_flight_.clear();
}

size_t EvaluationQueue::requeue_expired(int64_t now_ms, int64_t timeout_ms) {
  size_t count = 0;
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (now_ms - it->second.dispatched_ms > timeout_ms) {
      requeue_front(std::move(it->second));
      it = in_flight_.erase(it);
      ++count;
    } else {
      ++it;
    }
  }
  return count;
}

std::vector<EvaluationQueue::Dispatch> EvaluationQueue::take_dispatches(int64_t now_ms) {
  std::vector<Dispatch> dispatches;
  std::vector<std::string> names;
  for (const auto& [name, state] : evaluators_) names.push_back(name);
  while (!queue_.empty() && !names.empty()) {
    // The evaluator whose result is expected first, waited for when its slots are all held and it
    // keeps pace; at equal times one with credit, then in turn from next_evaluator_, so that
    // alike evaluators share the work.
    std::string chosen;
    size_t chosen_at = 0;
    double earliest = 0;
    bool chosen_has_credit = false;
    for (size_t probe = 0; probe < names.size(); ++probe) {
      const size_t at = (next_evaluator_ + probe) % names.size();
      const EvaluatorState& state = evaluators_[names[at]];
      const bool has_credit = state.credits > 0;
      if (!has_credit && !keeping_pace(names[at], now_ms)) continue;
      const double expected = service_times_.expected_completion_ms(names[at], state.slots - state.credits);
      if (chosen.empty() || expected < earliest || (expected == earliest && has_credit && !chosen_has_credit)) {
        chosen = names[at];
        chosen_at = at;
        earliest = expected;
        chosen_has_credit = has_credit;
      }
    }
    if (chosen.empty() || !chosen_has_credit) break;
    next_evaluator_ = (chosen_at + 1) % names.size();
    evaluators_[chosen].credits -= 1;
    auto [id, entry] = std::move(queue_.front());
    queue_.pop_front();
    entry.attempts += 1;
    const uint32_t attempt = entry.attempts;
    auto& flight = in_flight_[id];
    flight = InFlight{std::move(entry), chosen, now_ms};
    dispatches.push_back({chosen, id, attempt, flight.entry.reader()});
  }
  return dispatches;
}

bool EvaluationQueue::keeping_pace(const std::string& evaluator, int64_t now_ms) const {
  const auto mean_ms = service_times_.measured_ms(evaluator);
  if (!mean_ms) return false;
  // Its latest sign of progress: a result, or the oldest request in flight on it (none: slots
  // held by requests that expired, a sign of none).
  std::optional<int64_t> oldest_request_ms;
  for (const auto& [id, flight] : in_flight_) {
    if (flight.evaluator != evaluator) continue;
    oldest_request_ms = std::min(oldest_request_ms.value_or(flight.dispatched_ms), flight.dispatched_ms);
  }
  const int64_t progress_ms = std::max(service_times_.last_result_ms(evaluator), oldest_request_ms.value_or(0));
  return static_cast<double>(now_ms - progress_ms) <= kPatience * *mean_ms;
}

void EvaluationQueue::undo_dispatch(const Dispatch& dispatch) {
  auto it = in_flight_.find(dispatch.candidate_id);
  if (it == in_flight_.end()) return;
  it->second.entry.attempts -= 1;
  requeue_front(std::move(it->second));
  in_flight_.erase(it);
  if (auto state = evaluators_.find(dispatch.evaluator); state != evaluators_.end()) {
    state->second.credits = std::min(state->second.credits + 1, state->second.slots);
  }
}

bool EvaluationQueue::complete(const std::string& candidate_id, msg::Feedback::Reader answer, int64_t now_ms) {
  if (const auto flight = in_flight_.find(candidate_id); flight != in_flight_.end()) {
    if (flight->second.evaluator == answer.getVerdict().getResult().getEvaluator().cStr()) {
      service_times_.observe_result(flight->second.evaluator, flight->second.dispatched_ms, now_ms);
    }
    in_flight_.erase(flight);
  }
  queue_.erase(std::remove_if(queue_.begin(), queue_.end(),
                              [&](const auto& item) { return item.first == candidate_id; }),
               queue_.end());
  if (completed_.count(candidate_id)) return false;
  auto& kept = completed_[candidate_id];
  kept = std::make_unique<capnp::MallocMessageBuilder>();
  kept->setRoot(answer);
  completed_order_.push_back(candidate_id);
  if (completed_order_.size() > completed_memory_) {
    completed_.erase(completed_order_.front());
    completed_order_.pop_front();
  }
  return true;
}

std::optional<msg::Feedback::Reader> EvaluationQueue::answer(const std::string& candidate_id) const {
  auto it = completed_.find(candidate_id);
  if (it == completed_.end()) return std::nullopt;
  return it->second->getRoot<msg::Feedback>().asReader();
}

std::vector<msg::Feedback::Reader> EvaluationQueue::recent_answers(size_t count) const {
  std::vector<msg::Feedback::Reader> answers;
  const size_t first = completed_order_.size() > count ? completed_order_.size() - count : 0;
  for (size_t index = first; index < completed_order_.size(); ++index) {
    answers.push_back(completed_.at(completed_order_[index])->getRoot<msg::Feedback>().asReader());
  }
  return answers;
}

}  // namespace drk::oracle
