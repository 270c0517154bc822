// EvaluationQueue: the Oracle's queue of candidates waiting for an Evaluator, and the record
// of what is in flight where. Evaluators pull work by credits: an EvaluatorReady from a new
// incarnation grants `slots` credits (and re-queues whatever was in flight on the dead one);
// one from the same incarnation returns one credit, up to `slots`.
//
// Idempotence: a candidate is identified by its id. Submitting an id that is queued or in
// flight does nothing; submitting one that completed reports it as completed, so the caller
// can re-send the cached answer. Nothing is ever dispatched twice at once, and an in-flight
// candidate whose Evaluator died or stayed silent past the deadline is queued again (at the
// front: it has waited longest).
//
// Thread-safety: none; owned by the Oracle's thread. Candidates are kept as owned copies.
#pragma once

#include <capnp/message.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "messages/drk.capnp.h"

namespace drk::oracle {

class EvaluationQueue {
 public:
  enum class Submitted { queued, duplicate, completed };

  struct Dispatch {
    std::string evaluator;
    std::string candidate_id;
    uint32_t attempt = 0;
    msg::Candidate::Reader candidate;  // valid until the candidate completes or is re-queued
  };

  explicit EvaluationQueue(size_t completed_memory = 100000)
      : completed_memory_(completed_memory) {}

  Submitted submit(msg::Candidate::Reader candidate);
  void evaluator_ready(const std::string& evaluator, uint64_t incarnation, uint32_t slots);
  // The evaluator died or its node was lost: its in-flight candidates go back to the queue; it
  // gets no credit until it announces itself again (any EvaluatorReady then grants its slots).
  void evaluator_lost(const std::string& evaluator);
  // Re-queues every in-flight candidate (their results may have been lost downstream).
  void requeue_all_in_flight();
  // Re-queues in-flight candidates dispatched before `now_ms - timeout_ms`. Returns how many.
  size_t requeue_expired(int64_t now_ms, int64_t timeout_ms);

  // Pairs queued candidates with evaluators that have credit, marks them in flight at `now_ms`.
  std::vector<Dispatch> take_dispatches(int64_t now_ms);
  // A dispatch that could not be sent goes back to the front of the queue with its credit.
  void undo_dispatch(const Dispatch& dispatch);

  // Marks the candidate done and keeps `answer` (the Feedback sent for it) so that a repeated
  // submission can be answered again. Returns false when it had completed before (a duplicate
  // result: the caller drops it). The most recent `completed_memory` answers are kept.
  bool complete(const std::string& candidate_id, msg::Feedback::Reader answer);
  // The answer kept for a completed candidate, if it is still remembered.
  std::optional<msg::Feedback::Reader> answer(const std::string& candidate_id) const;
  // The answers of the `count` most recently completed candidates, oldest first.
  std::vector<msg::Feedback::Reader> recent_answers(size_t count) const;

  size_t queued() const { return queue_.size(); }
  size_t in_flight() const { return in_flight_.size(); }

 private:
  struct Entry {
    std::unique_ptr<capnp::MallocMessageBuilder> message;
    uint32_t attempts = 0;
    msg::Candidate::Reader reader() { return message->getRoot<msg::Candidate>().asReader(); }
  };
  void requeue_in_flight_of(const std::string& evaluator);

  struct InFlight {
    Entry entry;
    std::string evaluator;
    int64_t dispatched_ms = 0;
  };
  struct EvaluatorState {
    uint64_t incarnation = 0;
    uint32_t slots = 0;
    uint32_t credits = 0;
  };

  void requeue_front(InFlight&& flight);

  std::deque<std::pair<std::string, Entry>> queue_;
  std::map<std::string, InFlight> in_flight_;
  std::map<std::string, EvaluatorState> evaluators_;
  std::map<std::string, std::unique_ptr<capnp::MallocMessageBuilder>> completed_;
  std::deque<std::string> completed_order_;  // oldest first, to bound completed_
  size_t completed_memory_;
  size_t next_evaluator_ = 0;  // round robin among evaluators with credit
};

}  // namespace drk::oracle
