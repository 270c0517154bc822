// EvaluationQueue: the Oracle's queue of candidates waiting for an Evaluator, and the record
// of what is in flight where. Evaluators pull work by credits: an EvaluatorReady from a new
// incarnation grants `slots` credits (and re-queues whatever was in flight on the dead one);
// one from the same incarnation returns one credit, up to `slots`.
//
// Balance: the next candidate goes to the Evaluator whose result for it is expected first,
// (held + 1) x its mean service time (service_times.h: measured here, from dispatch to result),
// so that a faster GPU gets proportionally more work and a slower one is not handed the last
// candidates of a step. Slots are respected: when that Evaluator holds all its slots the
// candidate waits for its credit rather than going to a slower one, as long as it keeps pace
// (a result, or its oldest request, within kPatience mean service times); one that stalls is
// not waited for. A candidate waiting so counts as held by that Evaluator, and the ones behind it
// go on to whoever is then expected first: an idle Evaluator is not left idle behind it. With
// nothing measured yet: the least loaded, in turn. Time enters as `now_ms`
// from the caller's clock (the Oracle's ActorContext), so tests drive it without sleeps.
//
// Idempotence: a candidate is identified by its id. Submitting an id that is queued or in
// flight does nothing; submitting one that completed reports it as completed, so the caller
// can re-send the cached answer. Nothing is ever dispatched twice at once, and an in-flight
// candidate whose Evaluator died or stayed silent past the deadline is queued again (at the
// front: it has waited longest).
//
// Cost: take_dispatches reads each Evaluator's state in O(1) (its estimate and the dispatch times
// of its requests in flight are kept with it, not looked up), so a call is linear in the
// Evaluators without allocating, and each dispatch one more pass over them; submit and complete
// find a queued id in O(1).
//
// Thread-safety: none; owned by the Oracle's thread. Candidates are kept as owned copies.
#pragma once

#include <capnp/message.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "actors/oracle/service_times.h"
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

  // How many of its mean service times an Evaluator holding all its slots may go without a
  // result and still be waited for.
  static constexpr double kPatience = 4;

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

  // Pairs queued candidates with evaluators that have credit, each with the one whose result is
  // expected first (above), and marks them in flight at `now_ms`.
  std::vector<Dispatch> take_dispatches(int64_t now_ms);
  // A dispatch that could not be sent goes back to the front of the queue with its credit.
  void undo_dispatch(const Dispatch& dispatch);

  // Marks the candidate done and keeps `answer` (the Feedback sent for it) so that a repeated
  // submission can be answered again. Returns false when it had completed before (a duplicate
  // result: the caller drops it). The most recent `completed_memory` answers are kept. A result
  // of the Evaluator it is in flight on (answer.verdict.result.evaluator) is that Evaluator's
  // service time, ending at `now_ms`; one of an Evaluator it was taken from is not.
  bool complete(const std::string& candidate_id, msg::Feedback::Reader answer, int64_t now_ms);
  // The answer kept for a completed candidate, if it is still remembered.
  std::optional<msg::Feedback::Reader> answer(const std::string& candidate_id) const;
  // The answers of the `count` most recently completed candidates, oldest first.
  std::vector<msg::Feedback::Reader> recent_answers(size_t count) const;

  size_t queued() const { return queue_.size(); }
  size_t in_flight() const { return in_flight_.size(); }
  const ServiceTimes& service_times() const { return service_times_; }

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
    const ServiceTimes::Estimate* estimate = nullptr;  // from its first result on
    std::multiset<int64_t> in_flight_since;            // its requests' dispatch times
  };

  void requeue_front(InFlight&& flight);
  // Removes an in-flight request, and its dispatch time from its evaluator's state.
  std::map<std::string, InFlight>::iterator end_flight(std::map<std::string, InFlight>::iterator flight);
  // Whether a request held back for `state` (all slots held) will find it soon (above).
  static bool keeping_pace(const EvaluatorState& state, int64_t now_ms);

  std::deque<std::pair<std::string, Entry>> queue_;
  std::unordered_set<std::string> queued_ids_;  // the ids in queue_, for submit and complete
  std::map<std::string, InFlight> in_flight_;
  std::map<std::string, EvaluatorState> evaluators_;
  std::map<std::string, std::unique_ptr<capnp::MallocMessageBuilder>> completed_;
  std::deque<std::string> completed_order_;  // oldest first, to bound completed_
  size_t completed_memory_;
  size_t next_evaluator_ = 0;  // where ties start: in turn among evaluators alike
  ServiceTimes service_times_;  // kept across an evaluator's loss and restart (same GPU)
};

}  // namespace drk::oracle
