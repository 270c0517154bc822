// `drk run` with a language-model Generator (experiment.generator.backend: openai) against a
// scripted OpenAI-compatible server in this process: real processes, real HTTP on loopback. The
// model's first answers are a 500 (retried) and one without a code block (a failed turn, told to
// the model); every other answer is the honest ReLU. The run's archive, exported as JSON Lines,
// is then read by the trainer bridge (tools/trainer_bridge/drk_to_trainer.py) into TRL records
// and a verl batch.
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "actors/archivist/archive.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"
#include "tests/support/scripted_http_server.h"
#include "tests/support/scripted_model.h"
#include "tests/support/spawned_program.h"

namespace {

using drk::testing::RecordedRequest;
using drk::testing::chat_answer;
using drk::testing::file_text;
using drk::testing::RunDir;
using drk::testing::ScriptedHttpServer;
using drk::testing::ScriptedReply;

const std::vector<double> kLogprobs = {-0.5, -0.25, -0.125};

std::string topology(const std::string& run_dir, const std::string& endpoint) {
  return drk::testing::llm_topology("llm-loop-test", run_dir, endpoint, "scripted",
                                    "  steps: 1\n  group_size: 2\n  turns: 2\n  seed: 3\n");
}

// The experiment, run once for the cases below (whichever comes first runs it).
struct LlmRun {
  LlmRun()
      : relu(file_text(std::string(DRK_SOURCE_DIR) + "/tests/candidates/relu.cpp")),
        server({ScriptedReply::answer(500, "{\"error\":\"warming up\"}"),
                ScriptedReply::answer(200, chat_answer("I am not sure.", kLogprobs))},
               [this](const RecordedRequest&) {
                 return ScriptedReply::answer(200, chat_answer("Here:\n```cpp\n" + relu + "```\n", kLogprobs));
               }) {
    const std::string topology_path = dir.write("llm.yaml", topology(dir.file("run"), server.url("/v1")));
    drk::testing::SpawnedProgram run({DRK_BINARY, "run", topology_path, "--fresh"}, dir.file("output.txt"));
    ended = run.wait_for(240'000);
    exit_code = ended ? run.exit_code() : -1;
    output = dir.read("output.txt");
  }

  RunDir dir;
  const std::string relu;
  ScriptedHttpServer server;
  bool ended = false;
  int exit_code = -1;
  std::string output;
};

const LlmRun& llm_run() {
  static const LlmRun run;
  return run;
}

// The run ended well; its output otherwise.
void require_finished(const LlmRun& run) {
  DRK_REQUIRE_MESSAGE(run.ended, "the run did not end in time:\n" << run.output);
  DRK_REQUIRE_MESSAGE(run.exit_code == 0, run.output);
}

// Runs `argv` to its end (a minute at most) and returns what it printed; its exit code must be 0.
std::string run_program(const RunDir& dir, const std::vector<std::string>& argv, const std::string& name) {
  drk::testing::SpawnedProgram program(argv, dir.file(name));
  const bool ended = program.wait_for(60'000);
  const std::string output = dir.read(name);
  DRK_REQUIRE_MESSAGE(ended, argv[0] << " did not end in time:\n" << output);
  DRK_REQUIRE_MESSAGE(program.exit_code() == 0, output);
  return output;
}

std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

}  // namespace

DRK_TEST_CASE("drk run completes a 2-turn experiment whose Generator asks a scripted OpenAI-compatible server") {
  const LlmRun& run = llm_run();
  require_finished(run);
  const std::string& output = run.output;
  DRK_CHECK(output.find("step 1/1") != std::string::npos);
  DRK_CHECK(output.find("== summary ==") != std::string::npos);

  // Two trajectories of two turns: four answers, plus the 500 that was retried.
  const auto requests = run.server.requests();
  DRK_CHECK(requests.size() == 5);
  bool told_no_block = false;
  bool told_feedback = false;
  for (const auto& request : requests) {
    const auto body = nlohmann::json::parse(request.body);
    DRK_CHECK(request.target == "/v1/chat/completions");
    if (body["messages"].size() != 4) continue;
    const std::string feedback = body["messages"][3]["content"];
    told_no_block = told_no_block || feedback.find("no fenced code block") != std::string::npos;
    told_feedback = told_feedback || feedback.find("status=correct") != std::string::npos;
  }
  DRK_CHECK(told_no_block);
  DRK_CHECK_MESSAGE(told_feedback, "no turn-2 prompt carries the Oracle's feedback");

  auto archive = drk::archivist::Archive::open(drk::archivist::Archive::default_path(run.dir.file("run")), true);
  DRK_REQUIRE(archive.ok());
  auto best = archive->best_per_task();
  DRK_REQUIRE(best.ok());
  DRK_REQUIRE(best->size() == 1);
  DRK_CHECK((*best)[0].task == "relu");
  DRK_CHECK((*best)[0].speedup > 0.0);
  auto samples = archive->training_samples();
  DRK_REQUIRE(samples.ok());
  DRK_CHECK(samples->size() == 4);
  size_t with_logprobs = 0;
  for (const auto& sample : *samples) {
    if (sample.logprobs == std::vector<double>{-0.5, -0.25, -0.125}) ++with_logprobs;
    DRK_CHECK(sample.model == "scripted");
    // Each turn's prompt is the conversation its request sent: turn 2's adds turn 1's answer and
    // the feedback on it.
    DRK_CHECK(sample.prompt.size() == (sample.turn == 1 ? 2u : 4u));
    DRK_CHECK(!sample.answer.empty());
  }
  DRK_CHECK(with_logprobs == 4);
}

DRK_TEST_CASE("the run's JSONL export loads into the trainer bridge's TRL records and verl batch") {
  const LlmRun& run = llm_run();
  require_finished(run);
  RunDir dir;
  run_program(dir, {DRK_BINARY, "archive", "export", run.dir.file("run"), "--format", "jsonl", "--out",
                    dir.file("samples.jsonl")},
              "export.txt");
  const auto samples = json_lines(dir.read("samples.jsonl"));
  DRK_REQUIRE(samples.size() == 4);
  std::map<std::string, nlohmann::json> by_candidate;
  for (const auto& sample : samples) {
    DRK_CHECK(sample.at("prompt").is_array());
    DRK_CHECK(sample.at("model") == "scripted");
    by_candidate[sample.at("candidate_id").get<std::string>()] = sample;
  }

  const std::string printed = run_program(
      dir,
      {DRK_PYTHON, std::string(DRK_SOURCE_DIR) + "/tools/trainer_bridge/drk_to_trainer.py", dir.file("samples.jsonl"),
       "--trl", dir.file("trl.jsonl"), "--verl", dir.file("verl.json"), "--objects"},
      "bridge.txt");
  const auto summary = nlohmann::json::parse(printed);
  DRK_CHECK(summary.at("trl_records") == 4);
  DRK_CHECK(summary.at("verl_rows") == 4);
  DRK_CHECK(summary.at("response_tokens") == 3);  // the scripted server's three sampled tokens
  DRK_MESSAGE("built: " << summary.at("trl_object") << ", " << summary.at("verl_object"));

  // TRL: the conversation as the model was asked it, the answer as the completion, the reward.
  const auto records = json_lines(dir.read("trl.jsonl"));
  DRK_REQUIRE(records.size() == 4);
  for (const auto& record : records) {
    const auto& sample = by_candidate.at(record.at("candidate_id").get<std::string>());
    DRK_CHECK(record.at("prompt") == sample.at("prompt"));
    DRK_CHECK(record.at("completion")[0].at("role") == "assistant");
    DRK_CHECK(record.at("completion")[0].at("content") == sample.at("answer"));
    DRK_CHECK(record.at("reward") == sample.at("reward"));
    DRK_CHECK(record.at("advantage") == sample.at("advantage"));
  }

  // verl: the reward on each answer's last token, the advantage on each of its tokens, the
  // server's log-probabilities as the old ones.
  const auto verl = nlohmann::json::parse(dir.read("verl.json"));
  const auto& batch = verl.at("batch");
  const auto& candidates = verl.at("non_tensor_batch").at("candidate_id");
  DRK_REQUIRE(candidates.size() == 4);
  size_t nonzero_advantages = 0;
  for (size_t row = 0; row < candidates.size(); ++row) {
    const auto& sample = by_candidate.at(candidates[row].get<std::string>());
    const double reward = sample.at("reward"), advantage = sample.at("advantage");
    DRK_CHECK(batch.at("token_level_scores")[row] == nlohmann::json::array({0.0, 0.0, reward}));
    DRK_CHECK(batch.at("advantages")[row] == nlohmann::json::array({advantage, advantage, advantage}));
    DRK_CHECK(batch.at("old_log_probs")[row] == nlohmann::json::array({-0.5, -0.25, -0.125}));
    DRK_CHECK(batch.at("response_mask")[row] == nlohmann::json::array({1, 1, 1}));
    if (advantage != 0.0) ++nonzero_advantages;
  }
  // The failed first answer and the correct ones differ in reward: TRLOO gives them advantages.
  DRK_CHECK(nonzero_advantages > 0);
}
