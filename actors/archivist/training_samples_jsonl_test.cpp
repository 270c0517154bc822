// drk archive export --format jsonl: a small archive built here (Scored records with their
// feedback, the Learner's trajectory copies, a step report) exported and each line parsed by
// Cap'n Proto's JSON codec.
#include "actors/archivist/training_samples_jsonl.h"

#include <capnp/compat/json.h>
#include <capnp/message.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

namespace drk::archivist {
namespace {

void record_scored(Archive& archive, const std::string& id, const std::string& trajectory, unsigned turn,
                   double reward, const std::string& summary) {
  capnp::MallocMessageBuilder message;
  auto scored = message.initRoot<msg::Scored>();
  scored.setReward(reward);
  scored.setSummary(summary);
  auto verdict = scored.initVerdict();
  verdict.setHonest(true);
  auto result = verdict.initResult();
  result.setCompiled(true);
  result.setCorrect(reward > 0);
  auto candidate = result.initCandidate();
  candidate.setId(id);
  candidate.setTrajectoryId(trajectory);
  candidate.setTurn(turn);
  candidate.setTask("relu");
  candidate.setSource("extern \"C\" int drk_kernel(void) {\n\treturn 0; // \\ done\n}");
  DRK_REQUIRE(archive.record_scored(scored.asReader()).ok());
}

void record_trajectory(Archive& archive, const std::string& id, const std::vector<double>& rewards) {
  capnp::MallocMessageBuilder message;
  auto trajectory = message.initRoot<msg::Trajectory>();
  trajectory.setId(id);
  trajectory.setStep(0);
  trajectory.setTask("relu");
  trajectory.setPolicyVersion(0);
  auto turns = trajectory.initTurns(static_cast<unsigned>(rewards.size()));
  for (unsigned index = 0; index < rewards.size(); ++index) {
    auto turn = turns[index];
    turn.setCandidateId(id + "/t" + std::to_string(index + 1));
    turn.setFamily("elementwise");
    auto actions = turn.initActions(2);
    actions.set(0, 1);
    actions.set(1, 3);
    auto logprobs = turn.initActionLogprobs(2);
    logprobs.set(0, -0.5f);
    logprobs.set(1, -1.25f);
    auto learner = turn.initLearnerLogprobs(2);
    learner.set(0, -0.5f);
    learner.set(1, -1.25f);
    auto kept = turn.initKeptDecisions(2);
    kept.set(1, index > 0);
    turn.setReward(rewards[index]);
    turn.setAdvantage(rewards[index] - 0.25);
    turn.setReturn(rewards[index]);
    turn.setTrained(index == 0);
    turn.setRejectedBy(index == 0 ? "" : "prs");
    turn.setCoverage(1.0);
    record_scored(archive, id + "/t" + std::to_string(index + 1), id, index + 1, rewards[index],
                  "correct \"turn " + std::to_string(index + 1) + "\"\nreward");
  }
  DRK_REQUIRE(archive.record_trajectory(trajectory.asReader()).ok());
}

DRK_TEST_CASE("every exported line is a JSON object with the training fields") {
  testing::RunDir dir;
  auto archive = Archive::open((dir.path() / "a.sqlite").string());
  DRK_REQUIRE(archive.ok());
  record_trajectory(*archive, "s0/relu/0", {0.5, 1.0});
  record_trajectory(*archive, "s0/relu/1", {0.0, 0.75});
  record_trajectory(*archive, "s0/relu/1", {0.0, 0.75});  // delivered twice: recorded once

  std::ostringstream out;
  auto written = write_training_samples_jsonl(*archive, out);
  DRK_REQUIRE(written.ok());
  DRK_CHECK(*written == 4);

  std::istringstream lines(out.str());
  std::string line;
  size_t count = 0;
  const std::set<std::string> required = {"task", "turn", "feedback", "candidate", "reward", "advantage",
                                          "logprobs", "mask", "trajectory_id", "candidate_id",
                                          "policy_version", "step", "screened"};
  capnp::JsonCodec codec;
  while (std::getline(lines, line)) {
    capnp::MallocMessageBuilder message;
    auto value = message.initRoot<capnp::JsonValue>();
    codec.decodeRaw(kj::arrayPtr(line.data(), line.size()), value);  // throws on malformed JSON
    DRK_REQUIRE(value.isObject());
    std::set<std::string> fields;
    std::string feedback, candidate_id;
    double reward = -1;
    size_t mask_length = 0, logprob_count = 0;
    for (auto field : value.getObject()) {
      const std::string name = field.getName().cStr();
      fields.insert(name);
      if (name == "feedback") feedback = field.getValue().getString().cStr();
      if (name == "candidate_id") candidate_id = field.getValue().getString().cStr();
      if (name == "reward") reward = field.getValue().getNumber();
      if (name == "mask") mask_length = field.getValue().getArray().size();
      if (name == "logprobs") logprob_count = field.getValue().getArray().size();
    }
    for (const auto& name : required) DRK_CHECK_MESSAGE(fields.count(name) == 1, name);
    DRK_CHECK(mask_length == 2);
    DRK_CHECK(logprob_count == 2);
    // The feedback of turn t is what the Generator got for turn t-1.
    if (candidate_id == "s0/relu/0/t1") {
      DRK_CHECK(feedback.empty());
      DRK_CHECK(reward == doctest::Approx(0.5));
    }
    if (candidate_id == "s0/relu/0/t2") DRK_CHECK(feedback == "correct \"turn 1\"\nreward");
    ++count;
  }
  DRK_CHECK(count == 4);
  DRK_CHECK(out.str().find("\"mask\":[1,1]") != std::string::npos);
  DRK_CHECK(out.str().find("\"screened\":true") == std::string::npos);  // every turn here was measured
  DRK_CHECK(out.str().find("\"mask\":[0,0]") != std::string::npos);
  DRK_CHECK(out.str().find("\"kept\":[false,true]") != std::string::npos);
}

DRK_TEST_CASE("json_string escapes quotes, backslashes and control characters") {
  DRK_CHECK(json_string("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\n\\u0001\"");
}

}  // namespace
}  // namespace drk::archivist
