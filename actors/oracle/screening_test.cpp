#include "actors/oracle/screening.h"
#include "runtime/payload.h"

#include <capnp/message.h>

#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "actors/oracle/oracle_actor.h"
#include "runtime/topology/topology.h"
#include "tests/doctest_drk.h"
#include "tests/support/fake_actor_context.h"
#include "tests/support/run_dir.h"

using drk::oracle::ScreeningReason;
using drk::oracle::Screener;
using drk::oracle::ScreeningSettings;

namespace {

const std::vector<std::string> kVectorWidths = {"1", "4", "8", "16"};
const std::vector<std::string> kChunks = {"1024", "4096", "16384", "65536"};
const std::vector<std::string> kThreads = {"1", "2", "4"};

// An elementwise CPU candidate of task relu; index enumerates the 48 (vector_width, chunk,
// threads) schedules.
void fill_candidate(drk::msg::Candidate::Builder candidate, const std::string& id, size_t index,
                    const std::string& family = "elementwise") {
  candidate.setId(id);
  candidate.setTrajectoryId(id.substr(0, id.rfind("/t")));
  candidate.setTask("relu");
  candidate.setDevice(drk::msg::Device::CPU);
  candidate.setGenerator("generator.0");
  candidate.setStep(0);
  auto schedule = candidate.initSchedule();
  schedule.setFamily(family);
  if (family == "rowwise") {
    auto decisions = schedule.initDecisions(1);
    decisions[0].setKnob("passes");
    decisions[0].setValue("two_pass");
    return;
  }
  auto decisions = schedule.initDecisions(4);
  const std::vector<std::pair<std::string, std::string>> chosen = {
      {"fusion", "fused"},
      {"vector_width", kVectorWidths[index % 4]},
      {"chunk", kChunks[(index / 4) % 4]},
      {"threads", kThreads[(index / 16) % 3]}};
  for (unsigned knob = 0; knob < 4; ++knob) {
    decisions[knob].setKnob(chosen[knob].first);
    decisions[knob].setValue(chosen[knob].second);
  }
}

// The measured truth: vector width 16 is fast (speedup 2.5), everything else runs at 1.
double speedup_of(size_t index) { return index % 4 == 3 ? 2.5 : 1.0; }
double reward_of(size_t index) { return 0.5 + 0.5 * speedup_of(index); }

struct OwnedCandidate {
  capnp::MallocMessageBuilder message;
  drk::msg::Candidate::Reader reader;
  OwnedCandidate(const std::string& id, size_t index, const std::string& family = "elementwise") {
    auto candidate = message.initRoot<drk::msg::Candidate>();
    fill_candidate(candidate, id, index, family);
    reader = candidate.asReader();
  }
};

ScreeningSettings enabled(double measure_top, double explore) {
  ScreeningSettings settings;
  settings.enabled = true;
  settings.measure_top = measure_top;
  settings.explore = explore;
  settings.train_steps = 3;
  return settings;
}

// Measures all 48 schedules twice (the warm-up): the model then knows the truth.
Screener warmed(ScreeningSettings settings) {
  settings.warmup_samples = 96;
  auto screener = Screener::create(settings, {});
  DRK_REQUIRE(screener.ok());
  for (size_t round = 0; round < 2; ++round) {
    for (size_t index = 0; index < 48; ++index) {
      OwnedCandidate candidate("s0/relu/" + std::to_string(index) + "/t" + std::to_string(round + 1), index);
      const auto decision = screener->decide(candidate.reader);
      DRK_CHECK(decision.measure);
      DRK_CHECK(decision.reason == ScreeningReason::warmup);
      screener->observe(candidate.reader, reward_of(index));
    }
  }
  return std::move(*screener);
}

}  // namespace

DRK_TEST_CASE("screening settings: defaults off, ranges checked with the key named") {
  auto defaults = drk::oracle::screening_settings_from(YAML::Load("{steps: 2}"));
  DRK_REQUIRE(defaults.ok());
  DRK_CHECK_FALSE(defaults->enabled);
  auto set = drk::oracle::screening_settings_from(
      YAML::Load("{oracle: {screening: {enabled: true, measure_top: 0.3, explore: 0.2, warmup_samples: 10}}}"));
  DRK_REQUIRE(set.ok());
  DRK_CHECK(set->enabled);
  DRK_CHECK(set->measure_top == doctest::Approx(0.3));
  DRK_CHECK(set->warmup_samples == 10);
  auto wide = drk::oracle::screening_settings_from(YAML::Load("{oracle: {screening: {measure_top: 1.5}}}"));
  DRK_REQUIRE_FALSE(wide.ok());
  DRK_CHECK(wide.error().message.find("measure_top") != std::string::npos);
  DRK_CHECK_FALSE(drk::oracle::screening_settings_from(YAML::Load("{oracle: {screening: {enabled: yes}}}")).ok());
  DRK_CHECK_FALSE(drk::oracle::screening_settings_from(YAML::Load("{oracle: {screening: {window: 0}}}")).ok());
}

DRK_TEST_CASE("screening: the predicted best are measured, the rest screened with the model's reward") {
  Screener screener = warmed(enabled(0.27, 0.0));
  size_t fast_measured = 0, screened = 0;
  for (size_t index = 0; index < 48; ++index) {
    OwnedCandidate candidate("s1/relu/" + std::to_string(index) + "/t1", index);
    const auto decision = screener.decide(candidate.reader);
    DRK_REQUIRE(decision.prediction.has_value());
    if (index % 4 == 3) {
      DRK_CHECK(decision.measure);
      DRK_CHECK(decision.reason == ScreeningReason::predicted_best);
      ++fast_measured;
    } else if (!decision.measure) {
      DRK_CHECK(decision.reason == ScreeningReason::screened);
      DRK_CHECK(decision.prediction->mean == doctest::Approx(1.0).epsilon(0.1));
      ++screened;
    }
  }
  DRK_CHECK(fast_measured == 12);
  DRK_CHECK(screened >= 24);
  DRK_CHECK(screener.counts().screened == screened);
  DRK_CHECK(screener.counts_of_step(0).screened == screened);  // the candidates' step
}

DRK_TEST_CASE("screening: the most uncertain is measured although predicted poor") {
  Screener screener = warmed(enabled(0.0, 0.1));
  OwnedCandidate novel("s1/relu/100/t1", 0, "rowwise");  // a family the model never saw
  const auto decision = screener.decide(novel.reader);
  DRK_CHECK(decision.measure);
  DRK_CHECK(decision.reason == ScreeningReason::uncertain);
  size_t screened = 0;
  double known_stddev = 0;
  for (size_t index = 0; index < 48; ++index) {
    OwnedCandidate known("s1/relu/" + std::to_string(index) + "/t1", index);
    const auto known_decision = screener.decide(known.reader);
    screened += known_decision.measure ? 0 : 1;
    known_stddev += known_decision.prediction->stddev / 48;
  }
  DRK_CHECK(screened >= 36);  // about 10 % measured for their uncertainty
  DRK_CHECK(decision.prediction->stddev > 2 * known_stddev);
}

DRK_TEST_CASE("screening: copies of one schedule share their tie's rank, so most of them are screened") {
  // A window of 48: the copies soon fill it, whatever the model ranks the schedule among the
  // other fast ones (12 of the 48 before them), so the count does not hang on the trained model.
  ScreeningSettings settings = enabled(0.27, 0.0);
  settings.window = 48;
  Screener screener = warmed(settings);
  for (size_t index = 0; index < 48; ++index) {
    OwnedCandidate candidate("s1/relu/" + std::to_string(index) + "/t1", index);
    (void)screener.decide(candidate.reader);
  }
  // The same fast schedule 100 times (new trajectories): one prediction for all of them.
  size_t measured = 0;
  for (size_t copy = 0; copy < 100; ++copy) {
    OwnedCandidate candidate("s2/relu/" + std::to_string(copy) + "/t1", 3);
    measured += screener.decide(candidate.reader).measure ? 1 : 0;
  }
  // A fast schedule: measured while its tie is small (with the copies at the top of the window,
  // the first 26: 0.5 k < 0.27 x 48). Counting only the strictly better would measure all 100.
  DRK_CHECK_MESSAGE(measured >= 1, measured);
  DRK_CHECK_MESSAGE(measured <= 30, measured);
}

DRK_TEST_CASE("screening: a re-sent measured candidate is measured again, never screened") {
  auto screener = Screener::create(enabled(0.0, 0.0), {});
  DRK_REQUIRE(screener.ok());
  OwnedCandidate first("s0/relu/0/t1", 0);
  const auto decision = screener->decide(first.reader);
  DRK_CHECK(decision.measure);
  DRK_CHECK(decision.reason == ScreeningReason::warmup);
  const auto again = screener->decide(first.reader);
  DRK_CHECK(again.measure);
  DRK_CHECK(again.reason == ScreeningReason::repeated);
  DRK_CHECK(screener->counts().measured == 1);
}

namespace {

struct OracleUnderTest {
  drk::testing::FakeActorContext context;
  std::unique_ptr<drk::runtime::Actor> oracle;

  explicit OracleUnderTest(const std::string& experiment)
      : context([&] {
          drk::runtime::ActorSpec spec;
          spec.name = "oracle";
          spec.role = "oracle";
          spec.experiment = YAML::Load(experiment);
          return spec;
        }()) {
    oracle = drk::oracle::make_oracle_actor(context.spec());
    oracle->on_start(context);
    drk::testing::deliver(*oracle, context, [](drk::msg::Envelope::Builder envelope) {
      envelope.setSender("evaluator.0");
      auto ready = drk::runtime::init_payload<drk::msg::EvaluatorReady>(envelope);
      ready.setIncarnation(1);
      ready.setSlots(1000);
    });
  }

  void candidate(const std::string& id, size_t index) {
    drk::testing::deliver(*oracle, context, [&](drk::msg::Envelope::Builder envelope) {
      envelope.setSender("generator.0");
      fill_candidate(drk::runtime::init_payload<drk::msg::Candidate>(envelope), id, index);
    });
  }

  // The Verifier's verdict on every EvalRequest not yet answered (copied first: delivering
  // makes the Oracle send, which moves the context's record of sends).
  void measure_dispatched() {
    std::vector<std::unique_ptr<capnp::MallocMessageBuilder>> requests;
    for (const auto* sent : context.sent_of<drk::msg::EvalRequest>()) {
      requests.push_back(std::make_unique<capnp::MallocMessageBuilder>());
      requests.back()->setRoot(drk::runtime::payload_of<drk::msg::EvalRequest>(sent->envelope()).value());
    }
    for (size_t at = answered; at < requests.size(); ++at) {
      const auto request = requests[at]->getRoot<drk::msg::EvalRequest>().asReader();
      const std::string id = request.getCandidate().getId().cStr();
      const size_t index = std::stoul(id.substr(id.find("relu/") + 5));
      drk::testing::deliver(*oracle, context, [&](drk::msg::Envelope::Builder envelope) {
        envelope.setSender("verifier.0");
        auto verdict = drk::runtime::init_payload<drk::msg::Verdict>(envelope);
        verdict.setHonest(true);
        auto result = verdict.initResult();
        result.setCandidate(request.getCandidate());
        result.setCompiled(true);
        result.setCorrect(true);
        result.setSpeedup(speedup_of(index));
      });
    }
    answered = requests.size();
  }
  size_t answered = 0;
};

}  // namespace

DRK_TEST_CASE("the Oracle with screening: evaluates the predicted best, marks the rest screened") {
  OracleUnderTest under_test(
      "{oracle: {screening: {enabled: true, measure_top: 0.27, explore: 0.0, warmup_samples: 96, train_steps: 3}}}");
  for (size_t round = 0; round < 2; ++round) {
    for (size_t index = 0; index < 48; ++index) {
      under_test.candidate("s0/relu/" + std::to_string(index) + "/t" + std::to_string(round + 1), index);
    }
    under_test.measure_dispatched();
  }
  DRK_CHECK(under_test.context.sent_of<drk::msg::EvalRequest>().size() == 96);
  for (size_t index = 0; index < 48; ++index) under_test.candidate("s1/relu/" + std::to_string(index) + "/t1", index);
  const auto requests = under_test.context.sent_of<drk::msg::EvalRequest>();
  std::set<std::string> evaluated;
  for (size_t at = 96; at < requests.size(); ++at) {
    evaluated.insert(drk::runtime::payload_of<drk::msg::EvalRequest>(requests[at]->envelope()).value().getCandidate().getId().cStr());
  }
  size_t screened = 0;
  std::string a_screened_id;
  for (const auto* sent : under_test.context.sent_of<drk::msg::Feedback>()) {
    const auto feedback = drk::runtime::payload_of<drk::msg::Feedback>(sent->envelope()).value();
    const std::string id = feedback.getCandidateId().cStr();
    if (id.rfind("s1/", 0) != 0) {
      DRK_CHECK_FALSE(feedback.getScreened());
      continue;
    }
    DRK_CHECK(feedback.getScreened());
    DRK_CHECK(evaluated.count(id) == 0);
    DRK_CHECK(std::stoul(id.substr(8)) % 4 != 3);  // never a fast one
    DRK_CHECK(feedback.getReward() == doctest::Approx(1.0).epsilon(0.1));
    DRK_CHECK(std::string(feedback.getSummary().cStr()).find("screened") != std::string::npos);
    ++screened;
    a_screened_id = id;
  }
  for (size_t index = 3; index < 48; index += 4) DRK_CHECK(evaluated.count("s1/relu/" + std::to_string(index) + "/t1"));
  DRK_CHECK(screened >= 24);
  DRK_CHECK(screened + evaluated.size() == 48);
  size_t records_screened = 0;
  for (const auto* sent : under_test.context.sent_of<drk::msg::Scored>()) {
    records_screened += drk::runtime::payload_of<drk::msg::Scored>(sent->envelope()).value().getScreened() ? 1 : 0;
  }
  DRK_CHECK(records_screened == screened);
  // A re-sent screened candidate gets the same answer again.
  DRK_REQUIRE(!a_screened_id.empty());
  const auto before = under_test.context.sent_of<drk::msg::Feedback>().size();
  under_test.candidate(a_screened_id, std::stoul(a_screened_id.substr(8)));
  const auto feedbacks = under_test.context.sent_of<drk::msg::Feedback>();
  DRK_REQUIRE(feedbacks.size() == before + 1);
  DRK_CHECK(drk::runtime::payload_of<drk::msg::Feedback>(feedbacks.back()->envelope()).value().getScreened());
}

DRK_TEST_CASE("the Oracle without screening evaluates everything; bad screening keys stop it") {
  OracleUnderTest under_test("{steps: 1}");
  for (size_t index = 0; index < 8; ++index) under_test.candidate("s0/relu/" + std::to_string(index) + "/t1", index);
  DRK_CHECK(under_test.context.sent_of<drk::msg::EvalRequest>().size() == 8);
  drk::runtime::ActorSpec spec;
  spec.experiment = YAML::Load("{oracle: {screening: {enabled: true, explore: -1}}}");
  bool refused = false;
  try {
    (void)drk::oracle::make_oracle_actor(spec);
  } catch (const std::invalid_argument&) {
    refused = true;
  }
  DRK_CHECK(refused);
}

DRK_TEST_CASE("a topology's oracle.screening keys are known to the loader; a misspelt one is refused") {
  drk::runtime::register_experiment_keys(drk::oracle::oracle_experiment_keys());
  drk::testing::RunDir dir;
  auto good = drk::runtime::load_topology(dir.write(
      "g.yaml", "name: t\nactors: [{role: a}]\nexperiment:\n  oracle:\n    screening: {enabled: true, "
                "measure_top: 0.5, explore: 0.1, warmup_samples: 64, window: 128, train_steps: 2}\n"));
  DRK_REQUIRE_MESSAGE(good.ok(), good.error().message);
  auto bad = drk::runtime::load_topology(
      dir.write("b.yaml", "name: t\nactors: [{role: a}]\nexperiment:\n  oracle:\n    screening: {measure_topp: 0.5}\n"));
  DRK_REQUIRE_FALSE(bad.ok());
  DRK_CHECK(bad.error().message.find("measure_topp") != std::string::npos);
}
