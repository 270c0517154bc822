// drk archive export --format jsonl: a small archive built here (Scored records with their
// feedback, the Learner's trajectory copies, a step report) exported and each line parsed as
// JSON; text that is not UTF-8 or needs escaping still makes valid JSON.
#include "actors/archivist/training_samples_jsonl.h"

#include <capnp/message.h>
#include <nlohmann/json.hpp>

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
  while (std::getline(lines, line)) {
    const auto value = nlohmann::json::parse(line);  // throws on malformed JSON
    DRK_REQUIRE(value.is_object());
    std::set<std::string> fields;
    for (const auto& field : value.items()) fields.insert(field.key());
    const std::string feedback = value.at("feedback"), candidate_id = value.at("candidate_id");
    const double reward = value.at("reward");
    const size_t mask_length = value.at("mask").size(), logprob_count = value.at("logprobs").size();
    for (const auto& name : required) DRK_CHECK_MESSAGE(fields.count(name) == 1, name);
    DRK_CHECK(mask_length == 2);
    DRK_CHECK(logprob_count == 2);
    DRK_CHECK(value.at("actions") == nlohmann::json::array({1, 3}));
    DRK_CHECK(value.at("logprobs") == nlohmann::json::array({-0.5, -1.25}));
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

DRK_TEST_CASE("a sample's text is escaped: quotes, backslashes and control characters come back as they were") {
  TrainingSample sample;
  sample.task = "re\"lu\\2\x01";
  sample.feedback = "line 1\nline 2\t\x1f";
  const auto parsed = nlohmann::json::parse(training_sample_json(sample));  // throws on malformed JSON
  DRK_CHECK(parsed.at("task") == "re\"lu\\2\x01");
  DRK_CHECK(parsed.at("feedback") == "line 1\nline 2\t\x1f");
}

DRK_TEST_CASE("a candidate that is not UTF-8 still exports as valid JSON: its bad bytes become U+FFFD") {
  TrainingSample sample;
  sample.task = "relu";
  sample.source = "// caf\xc3\xa9 \xff\xfe\nint x;";
  const std::string line = training_sample_json(sample);
  DRK_REQUIRE(nlohmann::json::accept(line));
  DRK_CHECK(nlohmann::json::parse(line).at("candidate") == "// caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\nint x;");
}

}  // namespace
}  // namespace drk::archivist
