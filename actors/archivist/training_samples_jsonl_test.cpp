// drk archive export --format jsonl: a small archive built here (Scored records with their
// feedback, the Learner's trajectory copies, a step report) exported and each line parsed as
// JSON; text that is not UTF-8 or needs escaping still makes valid JSON; a language model's
// turns carry their whole prompt, answer and model, the embedded policy's null there.
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
                                          "policy_version", "step", "screened", "mrs_decision",
                                          "prs_decision", "model", "prompt", "answer"};
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

// A language model's trajectory as its Generator sends it: each turn's request adds the messages
// that follow the previous request (turn 2: the answer to turn 1 and the feedback on it).
void record_llm_trajectory(Archive& archive, const std::string& id) {
  capnp::MallocMessageBuilder message;
  auto trajectory = message.initRoot<msg::Trajectory>();
  trajectory.setId(id);
  trajectory.setStep(1);
  trajectory.setTask("relu");
  trajectory.setPolicyVersion(4);
  auto turns = trajectory.initTurns(2);
  const std::vector<std::vector<std::pair<std::string, std::string>>> added = {
      {{"system", "You write kernels."}, {"user", "Write relu."}},
      {{"assistant", "```cpp\nslow\n```"}, {"user", "status=correct speedup=0.5"}}};
  for (unsigned index = 0; index < 2; ++index) {
    auto turn = turns[index];
    turn.setCandidateId(id + "/t" + std::to_string(index + 1));
    auto messages = turn.initPromptAdded(static_cast<unsigned>(added[index].size()));
    for (unsigned m = 0; m < added[index].size(); ++m) {
      messages[m].setRole(added[index][m].first);
      messages[m].setContent(added[index][m].second);
    }
    turn.setAnswer(index == 0 ? "```cpp\nslow\n```" : "```cpp\nfast\n```");
    turn.setModel("Qwen/Qwen3-8B");
    auto logprobs = turn.initActionLogprobs(3);
    for (unsigned token = 0; token < 3; ++token) logprobs.set(token, -0.5f * static_cast<float>(token + 1));
    turn.setReward(index == 0 ? 0.25 : 1.0);
    turn.setAdvantage(index == 0 ? -0.5 : 0.5);
    turn.setReturn(index == 0 ? 1.25 : 1.0);
    turn.setRejectedBy("malformed");  // the embedded Learner reads no knob decisions in it
    record_scored(archive, id + "/t" + std::to_string(index + 1), id, index + 1, index == 0 ? 0.25 : 1.0,
                  "status=correct");
  }
  DRK_REQUIRE(archive.record_trajectory(trajectory.asReader()).ok());
}

std::vector<nlohmann::json> exported(const Archive& archive) {
  std::ostringstream out;
  auto written = write_training_samples_jsonl(archive, out);
  DRK_REQUIRE(written.ok());
  std::vector<nlohmann::json> lines;
  std::istringstream text(out.str());
  std::string line;
  while (std::getline(text, line)) lines.push_back(nlohmann::json::parse(line));
  DRK_CHECK(lines.size() == *written);
  return lines;
}

DRK_TEST_CASE("a language model's turn exports its whole prompt, answer, model and log-probabilities") {
  testing::RunDir dir;
  auto archive = Archive::open((dir.path() / "a.sqlite").string());
  DRK_REQUIRE(archive.ok());
  record_llm_trajectory(*archive, "s1/relu/0");
  const auto lines = exported(*archive);
  DRK_REQUIRE(lines.size() == 2);
  const auto& first = lines[0];
  const auto& second = lines[1];
  const auto opening = nlohmann::json::array({{{"role", "system"}, {"content", "You write kernels."}},
                                              {{"role", "user"}, {"content", "Write relu."}}});
  DRK_CHECK(first.at("prompt") == opening);
  // Turn 2 was asked with the whole conversation: turn 1's prompt, its answer and the feedback.
  DRK_REQUIRE(second.at("prompt").size() == 4);
  DRK_CHECK(second.at("prompt")[2] == nlohmann::json({{"role", "assistant"}, {"content", "```cpp\nslow\n```"}}));
  DRK_CHECK(second.at("prompt")[3].at("content") == "status=correct speedup=0.5");
  DRK_CHECK(second.at("answer") == "```cpp\nfast\n```");
  DRK_CHECK(second.at("model") == "Qwen/Qwen3-8B");
  DRK_CHECK(second.at("logprobs") == nlohmann::json::array({-0.5, -1.0, -1.5}));
  DRK_CHECK(second.at("policy_version") == 4);
  DRK_CHECK(first.at("advantage") == -0.5);
  DRK_CHECK(first.at("return") == 1.25);
  DRK_CHECK(second.at("reward") == 1.0);
  // Neither MRS nor PRS judged it: its Learner could not read it.
  DRK_CHECK(second.at("rejected_by") == "malformed");
  DRK_CHECK(second.at("mrs_decision").is_null());
  DRK_CHECK(second.at("prs_decision").is_null());
}

DRK_TEST_CASE("the embedded policy's turns export prompt, answer and model as null, and their MRS and PRS decisions") {
  testing::RunDir dir;
  auto archive = Archive::open((dir.path() / "a.sqlite").string());
  DRK_REQUIRE(archive.ok());
  record_trajectory(*archive, "s0/relu/0", {0.5, 1.0});  // turn 1 trained, turn 2 rejected by PRS
  const auto lines = exported(*archive);
  DRK_REQUIRE(lines.size() == 2);
  for (const auto& line : lines) {
    DRK_CHECK(line.at("prompt").is_null());
    DRK_CHECK(line.at("answer").is_null());
    DRK_CHECK(line.at("model").is_null());
  }
  DRK_CHECK(lines[0].at("mrs_decision") == "kept");
  DRK_CHECK(lines[0].at("prs_decision") == "kept");
  DRK_CHECK(lines[1].at("mrs_decision") == "kept");
  DRK_CHECK(lines[1].at("prs_decision") == "rejected");
}

DRK_TEST_CASE("an archive from before prompts were recorded exports, read-only, with them null, and gains the table when written") {
  testing::RunDir dir;
  const std::string path = (dir.path() / "a.sqlite").string();
  {
    auto archive = Archive::open(path);
    DRK_REQUIRE(archive.ok());
    record_llm_trajectory(*archive, "s1/relu/0");
    sqlite3* db = nullptr;
    DRK_REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    DRK_CHECK(sqlite3_exec(db, "DROP TABLE sample_conversations", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  auto old = Archive::open(path, true);
  DRK_REQUIRE(old.ok());
  const auto lines = exported(*old);
  DRK_REQUIRE(lines.size() == 2);
  DRK_CHECK(lines[1].at("prompt").is_null());
  DRK_CHECK(lines[1].at("reward") == 1.0);

  auto migrated = Archive::open(path);
  DRK_REQUIRE(migrated.ok());
  record_llm_trajectory(*migrated, "s1/relu/1");
  const auto after = exported(*migrated);
  DRK_REQUIRE(after.size() == 4);
  DRK_CHECK(after[1].at("prompt").is_null());
  DRK_CHECK(after[3].at("prompt").size() == 4);
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
