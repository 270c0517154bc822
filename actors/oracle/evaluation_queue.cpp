#include "actors/oracle/evaluation_queue.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace drk::oracle {

EvaluationQueue::Submitted EvaluationQueue::submit(msg::Candidate::Reader candidate) {
  const std::string id = candidate.getId().cStr();
  if (completed_.count(id)) return Submitted::completed;
  if (in_flight_.count(id) || queued_ids_.count(id)) return Submitted::duplicate;
  Entry entry;
  entry.message = std::make_unique<capnp::MallocMessageBuilder>();
  entry.message->setRoot(candidate);
  queue_.emplace_back(id, std::move(entry));
  queued_ids_.insert(id);
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
    state.estimate = service_times_.estimate(evaluator);  // kept across a restart (same GPU)
    return;
  }
  state.slots = slots;
  state.credits = std::min(state.credits + 1, slots);
}

void EvaluationQueue::requeue_front(InFlight&& flight) {
  const std::string id = flight.entry.reader().getId().cStr();
  queue_.emplace_front(id, std::move(flight.entry));
  queued_ids_.insert(id);
}

void EvaluationQueue::evaluator_lost(const std::string& evaluator) {
  requeue_in_flight_of(evaluator);
  // Forgotten until it announces itself again, which then grants its full slots.
  evaluators_.erase(evaluator);
}

std::map<std::string, EvaluationQueue::InFlight>::iterator EvaluationQueue::end_flight(
    std::map<std::string, InFlight>::iterator flight) {
  if (auto state = evaluators_.find(flight->second.evaluator); state != evaluators_.end()) {
    auto& since = state->second.in_flight_since;
    if (auto at = since.find(flight->second.dispatched_ms); at != since.end()) since.erase(at);
  }
  return in_flight_.erase(flight);
}

void EvaluationQueue::requeue_in_flight_of(const std::string& evaluator) {
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (it->second.evaluator == evaluator) {
      requeue_front(std::move(it->second));
      it = end_flight(it);
    } else {
      ++it;
    }
  }
}

void EvaluationQueue::requeue_all_in_flight() {
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    requeue_front(std::move(it->second));
    it = end_flight(it);
  }
}

size_t EvaluationQueue::requeue_expired(int64_t now_ms, int64_t timeout_ms) {
  size_t count = 0;
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (now_ms - it->second.dispatched_ms > timeout_ms) {
      requeue_front(std::move(it->second));
      it = end_flight(it);
      ++count;
    } else {
      ++it;
    }
  }
  return count;
}

std::vector<EvaluationQueue::Dispatch> EvaluationQueue::take_dispatches(int64_t now_ms) {
  std::vector<Dispatch> dispatches;
  const bool any_credit = std::any_of(evaluators_.begin(), evaluators_.end(),
                                      [](const auto& evaluator) { return evaluator.second.credits > 0; });
  if (queue_.empty() || !any_credit) return dispatches;
  // Each evaluator's state, settled once per call (a dispatch now adds only newer requests to an
  // evaluator with credit), in a flat list: the loop below runs once per dispatch over all of them.
  struct Option {
    const std::string* name;
    EvaluatorState* state;
    double mean_ms;
    bool keeping_pace;
    uint32_t waited_for = 0;  // requests left queued for it while busy: counted as held by it
  };
  std::optional<double> unmeasured_ms;  // the same for every evaluator not yet measured
  std::vector<Option> options;
  options.reserve(evaluators_.size());
  for (auto& [name, state] : evaluators_) {
    if (!state.estimate && !unmeasured_ms) unmeasured_ms = service_times_.expected_ms(name);
    options.push_back({&name, &state, state.estimate ? state.estimate->mean_ms : *unmeasured_ms,
                       keeping_pace(state, now_ms)});
  }
  size_t next_request = 0;
  while (next_request < queue_.size()) {
    // The evaluator with credit whose result is expected first; at equal times in turn from
    // next_evaluator_, so that alike evaluators share the work.
    Option* chosen = nullptr;
    size_t chosen_at = 0;
    double earliest = 0;
    for (size_t probe = 0; probe < options.size(); ++probe) {
      const size_t at = (next_evaluator_ + probe) % options.size();
      Option& option = options[at];
      if (option.state->credits == 0) continue;
      const double expected = (option.state->slots - option.state->credits + 1.0) * option.mean_ms;
      if (!chosen || expected < earliest) {
        chosen = &option;
        chosen_at = at;
        earliest = expected;
      }
    }
    if (!chosen) break;
    // The requests ahead that a busy evaluator keeping pace is expected to finish sooner wait for
    // it: those k with (held + 1 + k) x its mean < earliest.
    size_t waiting = 0;
    for (Option& option : options) {
      if (option.state->credits > 0 || !option.keeping_pace) continue;
      const double ahead = std::ceil(earliest / option.mean_ms) - (option.state->slots + option.waited_for + 1.0);
      if (ahead <= 0) continue;
      option.waited_for += static_cast<uint32_t>(ahead);
      waiting += static_cast<size_t>(ahead);
    }
    next_request += waiting;
    if (next_request >= queue_.size()) break;
    next_evaluator_ = (chosen_at + 1) % options.size();
    chosen->state->credits -= 1;
    auto [id, entry] = std::move(queue_[next_request]);
    queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(next_request));
    queued_ids_.erase(id);
    entry.attempts += 1;
    const uint32_t attempt = entry.attempts;
    auto& flight = in_flight_[id];
    flight = InFlight{std::move(entry), *chosen->name, now_ms};
    chosen->state->in_flight_since.insert(now_ms);
    dispatches.push_back({*chosen->name, id, attempt, flight.entry.reader()});
  }
  return dispatches;
}

bool EvaluationQueue::keeping_pace(const EvaluatorState& state, int64_t now_ms) {
  // Its latest sign of progress: a result, or its oldest request in flight (none: slots held by
  // requests that expired, a sign of none).
  if (!state.estimate) return false;
  const int64_t progress_ms = std::max(state.estimate->last_result_ms,
                                       state.in_flight_since.empty() ? int64_t{0} : *state.in_flight_since.begin());
  return static_cast<double>(now_ms - progress_ms) <= kPatience * state.estimate->mean_ms;
}

void EvaluationQueue::undo_dispatch(const Dispatch& dispatch) {
  auto it = in_flight_.find(dispatch.candidate_id);
  if (it == in_flight_.end()) return;
  it->second.entry.attempts -= 1;
  requeue_front(std::move(it->second));
  end_flight(it);
  if (auto state = evaluators_.find(dispatch.evaluator); state != evaluators_.end()) {
    state->second.credits = std::min(state->second.credits + 1, state->second.slots);
  }
}

bool EvaluationQueue::complete(const std::string& candidate_id, msg::Feedback::Reader answer, int64_t now_ms) {
  if (const auto flight = in_flight_.find(candidate_id); flight != in_flight_.end()) {
    const std::string& evaluator = flight->second.evaluator;
    if (evaluator == answer.getVerdict().getResult().getEvaluator().cStr()) {
      service_times_.observe_result(evaluator, flight->second.dispatched_ms, now_ms);
      // Its estimate, once made, stays where it is (service_times.h): found at the first result.
      if (auto state = evaluators_.find(evaluator); state != evaluators_.end() && !state->second.estimate)
        state->second.estimate = service_times_.estimate(evaluator);
    }
    end_flight(flight);
  }
  if (queued_ids_.erase(candidate_id) > 0) {
    queue_.erase(std::remove_if(queue_.begin(), queue_.end(),
                                [&](const auto& item) { return item.first == candidate_id; }),
                 queue_.end());
  }
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
