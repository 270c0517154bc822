#include "actors/oracle/evaluation_queue.h"

#include <capnp/message.h>

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
  DRK_CHECK(queue.complete("a", feedback_for(answer, "a")));
  DRK_CHECK_FALSE(queue.complete("a", feedback_for(answer, "a")));
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
    queue.complete(id, feedback_for(answer, id));
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
