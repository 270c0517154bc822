// `drk generate` (test-time scaling) with a language model: a topology whose
// experiment.generator.backend is openai, against a scripted OpenAI-compatible server in this
// process. Real processes, real HTTP on loopback, real evaluations of the answers' candidates.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"
#include "tests/support/scripted_http_server.h"
#include "tests/support/scripted_model.h"
#include "tests/support/spawned_program.h"

namespace {

using drk::testing::chat_answer;
using drk::testing::file_text;
using drk::testing::RecordedRequest;
using drk::testing::RunDir;
using drk::testing::ScriptedHttpServer;
using drk::testing::ScriptedReply;
using drk::testing::SpawnedProgram;

constexpr int kTimeoutMs = 240'000;

std::string topology(const RunDir& dir, const std::string& endpoint) {
  return drk::testing::llm_topology("llm-generate-test", dir.file("run"), endpoint, "scripted", "");
}

SpawnedProgram generate(const RunDir& dir, const std::string& topology_path, const std::string& output) {
  return SpawnedProgram({DRK_BINARY, "generate", topology_path, "--task", "relu", "--iterations", "2", "--window", "1",
                         "--samples", "2", "--trials", "2", "--budget-ms", "20", "--cache-dir", dir.file("cache"),
                         "--set", "experiment.generator.retry_attempts=1", "--out", dir.file("best.cpp")},
                        dir.file(output));
}

}  // namespace

DRK_TEST_CASE("drk generate refines with a language model: its feedback goes back to the model, the best verified candidate is written") {
  RunDir dir;
  const std::string relu = file_text(std::string(DRK_SOURCE_DIR) + "/tests/candidates/relu.cpp");
  // Iteration 1 asks twice: one answer without a code block, one with the ReLU. Iteration 2 edits
  // the ReLU twice: the same edit both times, evaluated once.
  ScriptedHttpServer server({ScriptedReply::answer(200, chat_answer("I am not sure."))}, [&](const RecordedRequest& request) {
    const bool edit = nlohmann::json::parse(request.body)["messages"].size() > 2;
    return ScriptedReply::answer(200, chat_answer("```cpp\n" + relu + (edit ? "// edited\n" : "") + "```\n"));
  });
  SpawnedProgram run = generate(dir, dir.write("llm.yaml", topology(dir, server.url("/v1"))), "output.txt");
  DRK_REQUIRE_MESSAGE(run.wait_for(kTimeoutMs), dir.read("output.txt"));
  const std::string output = dir.read("output.txt");
  DRK_CHECK_MESSAGE(run.exit_code() == 0, output);
  DRK_CHECK_MESSAGE(output.find("model scripted at " + server.url("/v1")) != std::string::npos, output);
  DRK_CHECK_MESSAGE(output.find("3 attempts (1 candidates sampled again, not re-run)") != std::string::npos, output);
  DRK_CHECK_MESSAGE(output.find("no candidate: ") != std::string::npos, output);
  DRK_CHECK_MESSAGE(output.find("best verified: #") != std::string::npos, output);
  DRK_CHECK(dir.read("best.cpp").find("drk_kernel") != std::string::npos);

  const auto requests = server.requests();
  DRK_REQUIRE(requests.size() == 4);
  size_t edits = 0;
  for (const auto& request : requests) {
    const auto messages = nlohmann::json::parse(request.body)["messages"];
    DRK_CHECK(request.target == "/v1/chat/completions");
    if (messages.size() == 2) continue;
    // An edit continues the ReLU's conversation: its answer, then the Oracle's feedback on it.
    ++edits;
    DRK_REQUIRE(messages.size() == 4);
    DRK_CHECK(std::string(messages[2]["content"]).find("drk_kernel") != std::string::npos);
    DRK_CHECK_MESSAGE(std::string(messages[3]["content"]).find("status=correct") != std::string::npos, messages[3]);
  }
  DRK_CHECK(edits == 2);
}

DRK_TEST_CASE("drk generate with a model whose endpoint does not answer fails, naming the endpoint") {
  RunDir dir;
  // A loopback port nobody listens on: one that was free a moment ago.
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor probe(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const std::string endpoint = "http://127.0.0.1:" + std::to_string(probe.local_endpoint().port()) + "/v1";
  probe.close();
  SpawnedProgram run = generate(dir, dir.write("llm.yaml", topology(dir, endpoint)), "output.txt");
  DRK_REQUIRE_MESSAGE(run.wait_for(kTimeoutMs), dir.read("output.txt"));
  const std::string output = dir.read("output.txt");
  DRK_CHECK(run.exit_code() == 1);
  // The error, after the line that says what is asked: the model, its endpoint, and why.
  DRK_CHECK_MESSAGE(output.find("model scripted at " + endpoint + ": ") != std::string::npos, output);
  DRK_CHECK(output.find("best verified") == std::string::npos);
}
