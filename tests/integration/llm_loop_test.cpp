// `drk run` with a language-model Generator (experiment.generator.backend: openai) against a
// scripted OpenAI-compatible server in this process: real processes, real HTTP on loopback. The
// model's first answers are a 500 (retried) and one without a code block (a failed turn, told to
// the model); every other answer is the honest ReLU.
#include <nlohmann/json.hpp>

#include <fstream>
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

}  // namespace

DRK_TEST_CASE("drk run completes a 2-turn experiment whose Generator asks a scripted OpenAI-compatible server") {
  RunDir dir;
  const std::string relu = file_text(std::string(DRK_SOURCE_DIR) + "/tests/candidates/relu.cpp");
  ScriptedHttpServer server(
      {ScriptedReply::answer(500, "{\"error\":\"warming up\"}"), ScriptedReply::answer(200, chat_answer("I am not sure.", kLogprobs))},
      [&](const RecordedRequest&) { return ScriptedReply::answer(200, chat_answer("Here:\n```cpp\n" + relu + "```\n", kLogprobs)); });
  const std::string topology_path = dir.write("llm.yaml", topology(dir.file("run"), server.url("/v1")));
  drk::testing::SpawnedProgram run({DRK_BINARY, "run", topology_path, "--fresh"}, dir.file("output.txt"));
  const bool ended = run.wait_for(240'000);
  const std::string output = dir.read("output.txt");
  DRK_REQUIRE_MESSAGE(ended, "the run did not end in time:\n" << output);
  DRK_REQUIRE_MESSAGE(run.exit_code() == 0, output);
  DRK_CHECK(output.find("step 1/1") != std::string::npos);
  DRK_CHECK(output.find("== summary ==") != std::string::npos);

  // Two trajectories of two turns: four answers, plus the 500 that was retried.
  const auto requests = server.requests();
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

  auto archive = drk::archivist::Archive::open(drk::archivist::Archive::default_path(dir.file("run")), true);
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
  }
  DRK_CHECK(with_logprobs == 4);
}
