#include "actors/oracle/evaluation_queue.h"

#include <capnp/message.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/doctest_drk.h"

using drk::oracle::EvaluationQueue;

namespace {

struct Candidates {
  capnp::MallocMessageBuilder message;
  drk::msg::Candidate::Reader make(const std::string& id) {
    auto candidate = message.initRoot<drk::msg::Candidate>();
    candidate.setId(id);
    candidate.setGenerator("generator.0");
    return candidate.asReader();
  }
};

drk::msg::Feedback::Reader feedback_for(capnp::MallocMessageBuilder& message, const std::string& id) {
  auto feedback = message.initRoot<drk::msg::Feedback>();
  feedback.setCandidateId(id);
  feedback.setReward(0.75);
  return feedback.asReader();
}

}  // namespace

DRK_TEST_CASE("candidates wait until an evaluator has credit, one per slot") {
  EvaluationQueue queue;
  Candidates a, b;
  DRK_CHECK(queue.submit(a.make("a")) == EvaluationQueue::Submitted::queued);
  DRK_CHECK(queue.submit(b.make("b")) == EvaluationQueue::Submitted::queued);
  DRK_CHECK(queue.take_dispatches(0).empty());
  queue.evaluator_ready("evaluator.0", 7, 1);
  auto first = queue.take_dispatches(0);
  DRK_REQUIRE(first.size() == 1);
  DRK_CHECK(first[0].candidate_id == "a");
  DRK_CHECK(std::string(first[0].candidate.getId().cStr()) == "a");
  DRK_CHECK(queue.take_dispatches(0).empty());
  queue.evaluator_ready("evaluator.0", 7, 1);  // one credit back
  auto second = queue.take_dispatches(0);
  DRK_REQUIRE(second.size() == 1);
  DRK_CHECK(second[0].candidate_id == "b");
}

DRK_TEST_CASE("a re-submitted candidate is not queued twice and a completed one keeps its answer") {
  EvaluationQueue queue;
  Candidates a, again, later;
  queue.submit(a.make("a"));
  DRK_CHECK(queue.submit(again.make("a")) == EvaluationQueue::Submitted::duplicate);
  queue.evaluator_ready("evaluator.0", 1, 2);
  DRK_CHECK(queue.take_dispatches(0).size() == 1);
  capnp::MallocMessageBuilder answer;
  DRK_CHECK(queue.complete("a", feedback_for(answer, "a"), 0));
  DRK_CHECK_FALSE(queue.complete("a", feedback_for(answer, "a"), 0));
  DRK_CHECK(queue.submit(later.make("a")) == EvaluationQueue::Submitted::completed);
  DRK_REQUIRE(queue.answer("a").has_value());
  DRK_CHECK(queue.answer("a")->getReward() == doctest::Approx(0.75));
  DRK_CHECK(queue.in_flight() == 0);
}

DRK_TEST_CASE("a dead evaluator's in-flight work is dispatched again to another") {
  EvaluationQueue queue;
  Candidates a;
  queue.submit(a.make("a"));
  queue.evaluator_ready("evaluator.0", 1, 1);
  auto first = queue.take_dispatches(0);
  DRK_REQUIRE(first.size() == 1);
  DRK_CHECK(first[0].evaluator == "evaluator.0");
  queue.evaluator_lost("evaluator.0");
  queue.evaluator_ready("evaluator.1", 5, 1);
  auto again = queue.take_dispatches(0);
  DRK_REQUIRE(again.size() == 1);
  DRK_CHECK(again[0].evaluator == "evaluator.1");
  DRK_CHECK(again[0].attempt == 2);
}

DRK_TEST_CASE("a restarted evaluator (new incarnation) gives back what the old one held") {
  EvaluationQueue queue;
  Candidates a;
  queue.submit(a.make("a"));
  queue.evaluator_ready("evaluator.0", 1, 1);
  DRK_CHECK(queue.take_dispatches(0).size() == 1);
  queue.evaluator_ready("evaluator.0", 2, 1);
  DRK_CHECK(queue.in_flight() == 0);
  auto again = queue.take_dispatches(0);
  DRK_REQUIRE(again.size() == 1);
  DRK_CHECK(again[0].candidate_id == "a");
}

DRK_TEST_CASE("in-flight work past its deadline is queued again; an undone dispatch keeps its credit") {
  EvaluationQueue queue;
  Candidates a;
  queue.submit(a.make("a"));
  queue.evaluator_ready("evaluator.0", 1, 1);
  DRK_CHECK(queue.take_dispatches(1000).size() == 1);
  DRK_CHECK(queue.requeue_expired(1500, 1000) == 0);
  DRK_CHECK(queue.requeue_expired(2500, 1000) == 1);
  auto again = queue.take_dispatches(2500);
  DRK_REQUIRE(again.size() == 0);  // the credit is still held by the lost dispatch
  queue.evaluator_ready("evaluator.0", 1, 1);
  again = queue.take_dispatches(2600);
  DRK_REQUIRE(again.size() == 1);
  queue.undo_dispatch(again[0]);
  DRK_CHECK(queue.queued() == 1);
  DRK_CHECK(queue.take_dispatches(2700).size() == 1);
}

DRK_TEST_CASE("the most recent answers come back oldest first, bounded by the memory") {
  EvaluationQueue queue(/*completed_memory=*/3);
  for (const char* id : {"a", "b", "c", "d"}) {
    capnp::MallocMessageBuilder answer;
    queue.complete(id, feedback_for(answer, id), 0);
  }
  const auto recent = queue.recent_answers(2);
  DRK_REQUIRE(recent.size() == 2);
  DRK_CHECK(std::string(recent[0].getCandidateId().cStr()) == "c");
  DRK_CHECK(std::string(recent[1].getCandidateId().cStr()) == "d");
  DRK_CHECK(queue.recent_answers(10).size() == 3);
  DRK_CHECK_FALSE(queue.answer("a").has_value());
}

DRK_TEST_CASE("an evaluator whose node was lost gets its full slots back when it announces itself again") {
  EvaluationQueue queue;
  Candidates a;
  for (const char* id : {"a", "b", "c"}) queue.submit(a.make(id));
  queue.evaluator_ready("evaluator.0", 7, 2);
  DRK_REQUIRE(queue.take_dispatches(0).size() == 2);
  queue.evaluator_lost("evaluator.0");
  DRK_CHECK(queue.in_flight() == 0);
  DRK_CHECK(queue.take_dispatches(0).empty());
  queue.evaluator_ready("evaluator.0", 7, 2);  // the same process: its node came back
  DRK_CHECK(queue.take_dispatches(0).size() == 2);
}

namespace {

// The Feedback of a result that `evaluator` produced.
drk::msg::Feedback::Reader result_from(capnp::MallocMessageBuilder& message, const std::string& id,
                                        const std::string& evaluator) {
  auto feedback = message.initRoot<drk::msg::Feedback>();
  feedback.setCandidateId(id);
  feedback.initVerdict().initResult().setEvaluator(evaluator);
  return feedback.asReader();
}

// A fast and a slow evaluator with `slots` each, measured once: a candidate each, dispatched at 0,
// its result back at `fast_ms` and `slow_ms`.
void measure_fast_and_slow(EvaluationQueue& queue, uint32_t slots, int64_t fast_ms, int64_t slow_ms) {
  queue.evaluator_ready("fast", 1, slots);
  queue.evaluator_ready("slow", 1, slots);
  Candidates first, second;
  queue.submit(first.make("warm-up 1"));
  queue.submit(second.make("warm-up 2"));
  const auto dispatches = queue.take_dispatches(0);
  DRK_REQUIRE(dispatches.size() == 2);  // nothing measured yet: one each
  DRK_CHECK(dispatches[0].evaluator != dispatches[1].evaluator);
  for (const auto& dispatch : dispatches) {
    capnp::MallocMessageBuilder answer;
    queue.complete(dispatch.candidate_id, result_from(answer, dispatch.candidate_id, dispatch.evaluator),
                   dispatch.evaluator == "fast" ? fast_ms : slow_ms);
    queue.evaluator_ready(dispatch.evaluator, 1, slots);
  }
}

// Evaluators that take a fixed time per candidate, one at a time in the order they got them,
// driven by a simulated clock: each result completes its candidate and returns a credit at the
// time it is due, and the queue dispatches again then.
struct SimulatedEvaluators {
  struct Evaluator {
    std::string name;
    int64_t service_ms;
    std::deque<std::string> held;
    int64_t busy_until = 0;
    int evaluated = 0;
  };
  EvaluationQueue& queue;
  std::vector<Evaluator> evaluators;
  std::map<std::string, int64_t> finish_at;  // candidate -> when its result arrives
  int64_t now = 0;

  void dispatch() {
    for (const auto& dispatch : queue.take_dispatches(now)) {
      for (Evaluator& evaluator : evaluators) {
        if (evaluator.name != dispatch.evaluator) continue;
        evaluator.busy_until = std::max(evaluator.busy_until, now) + evaluator.service_ms;
        finish_at[dispatch.candidate_id] = evaluator.busy_until;
        evaluator.held.push_back(dispatch.candidate_id);
      }
    }
  }

  // Runs until nothing is held; returns when the last result arrived.
  int64_t run() {
    for (const Evaluator& evaluator : evaluators) queue.evaluator_ready(evaluator.name, 1, 4);
    dispatch();
    for (;;) {
      Evaluator* next = nullptr;
      for (Evaluator& evaluator : evaluators) {
        if (!evaluator.held.empty() &&
            (!next || finish_at[evaluator.held.front()] < finish_at[next->held.front()])) {
          next = &evaluator;
        }
      }
      if (!next) return now;
      const std::string id = next->held.front();
      next->held.pop_front();
      now = finish_at[id];
      capnp::MallocMessageBuilder answer;
      queue.complete(id, result_from(answer, id, next->name), now);
      queue.evaluator_ready(next->name, 1, 4);
      next->evaluated += 1;
      dispatch();
    }
  }
};

}  // namespace

DRK_TEST_CASE("a burst goes to evaluators in proportion to their measured speed, not in turn") {
  EvaluationQueue queue;
  measure_fast_and_slow(queue, 8, 100, 310);
  DRK_CHECK(*queue.service_times().measured_ms("fast") == doctest::Approx(100));
  DRK_CHECK(*queue.service_times().measured_ms("slow") == doctest::Approx(310));

  std::vector<std::unique_ptr<Candidates>> burst;
  for (int k = 0; k < 8; ++k) {
    burst.push_back(std::make_unique<Candidates>());
    queue.submit(burst.back()->make("b" + std::to_string(k)));
  }
  std::map<std::string, int> sent;
  for (const auto& dispatch : queue.take_dispatches(310)) sent[dispatch.evaluator] += 1;
  // Expected completions (held + 1) x 100 against (held + 1) x 310: 6 and 2, where turns give 4 and 4.
  DRK_CHECK(sent["fast"] == 6);
  DRK_CHECK(sent["slow"] == 2);
}

DRK_TEST_CASE("over a run, a three times faster evaluator evaluates about three times as many") {
  EvaluationQueue queue;
  std::vector<std::unique_ptr<Candidates>> candidates;
  for (int k = 0; k < 40; ++k) {
    candidates.push_back(std::make_unique<Candidates>());
    queue.submit(candidates.back()->make("c" + std::to_string(k)));
  }
  SimulatedEvaluators simulated{queue, {{"fast", 100, {}, 0, 0}, {"slow", 300, {}, 0, 0}}};
  const int64_t makespan = simulated.run();
  DRK_CHECK(simulated.evaluators[0].evaluated + simulated.evaluators[1].evaluated == 40);
  DRK_CHECK(simulated.evaluators[0].evaluated >= 28);
  DRK_CHECK(simulated.evaluators[1].evaluated >= 7);
  // 40 candidates at 13.3 per second at best (10 + 3.3): 3 s; within one slow evaluation of it.
  DRK_CHECK(makespan <= 3000 + 300);
  DRK_CHECK(*queue.service_times().measured_ms("fast") == doctest::Approx(100));
  DRK_CHECK(*queue.service_times().measured_ms("slow") == doctest::Approx(300));
}

DRK_TEST_CASE("a lost evaluator gets no work, however fast it was, and its requests go to the others") {
  EvaluationQueue queue;
  Candidates c, d;
  measure_fast_and_slow(queue, 2, 10, 1000);
  queue.submit(c.make("c"));
  const auto to_fast = queue.take_dispatches(1000);
  DRK_REQUIRE(to_fast.size() == 1);
  DRK_CHECK(to_fast[0].evaluator == "fast");
  queue.evaluator_lost("fast");
  queue.submit(d.make("d"));
  const auto again = queue.take_dispatches(1001);
  DRK_REQUIRE(again.size() == 2);
  for (const auto& dispatch : again) DRK_CHECK(dispatch.evaluator == "slow");
  DRK_CHECK(again[0].candidate_id == "c");  // the lost one's request first: it has waited longest
  // The lost evaluator's late result is not the new one's service time.
  capnp::MallocMessageBuilder late;
  queue.complete("c", result_from(late, "c", "fast"), 5000);
  DRK_CHECK(*queue.service_times().measured_ms("slow") == doctest::Approx(1000));
}

DRK_TEST_CASE("a candidate waits for a faster evaluator's credit while it keeps pace, not once it stalls") {
  EvaluationQueue queue;
  Candidates held, waiting;
  measure_fast_and_slow(queue, 1, 100, 300);
  queue.submit(held.make("held"));
  const auto to_fast = queue.take_dispatches(1000);
  DRK_REQUIRE(to_fast.size() == 1);
  DRK_CHECK(to_fast[0].evaluator == "fast");
  queue.submit(waiting.make("waiting"));
  // Fast holds its one slot: its next result is expected at 2 x 100 ms, before the slow one's 300.
  DRK_CHECK(queue.take_dispatches(1050).empty());
  // Nothing from it for more than kPatience x 100 ms: the slow one takes the candidate.
  const auto to_slow = queue.take_dispatches(1000 + 100 * static_cast<int64_t>(EvaluationQueue::kPatience) + 1);
  DRK_REQUIRE(to_slow.size() == 1);
  DRK_CHECK(to_slow[0].evaluator == "slow");
}

DRK_TEST_CASE("a request waited for on a faster evaluator does not hold back the next ones from an idle one") {
  EvaluationQueue queue;
  Candidates held, w1, w2, w3;
  measure_fast_and_slow(queue, 1, 100, 300);
  queue.submit(held.make("held"));
  DRK_REQUIRE(queue.take_dispatches(1000).size() == 1);
  queue.submit(w1.make("w1"));
  queue.submit(w2.make("w2"));
  queue.submit(w3.make("w3"));
  // w1 waits for fast (expected at 2 x 100 ms, before slow's 300); w2 then ties fast's 3 x 100
  // with idle slow's 300 and goes to slow; w3 waits for fast again (4 x 100 before 2 x 300).
  const auto sent = queue.take_dispatches(1050);
  DRK_REQUIRE(sent.size() == 1);
  DRK_CHECK(sent[0].evaluator == "slow");
  DRK_CHECK(sent[0].candidate_id == "w2");
}
