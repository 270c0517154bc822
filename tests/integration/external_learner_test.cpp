// `drk run` with experiment.learner.backend external: the test is the trainer. It reports policy
// versions over HTTP (POST /policy), waits for steps with GET /policy?steps_done=N, and serves the
// language model as a scripted OpenAI-compatible server whose answers name the model they were
// asked of. Real processes, real HTTP on loopback; the order of events comes from the protocol
// (a step starts after the versions it waits for are sent to the Generator), not from time.
//
// max_staleness 1, three steps of two trajectories of one turn: steps 0 and 1 are played by v0
// (the experiment's model, "base"); v1 ("policy-v1") is reported after step 0; step 2 waits for
// it, and while its first answer is out the trainer reports v2 and v3, so that its turns come back
// more than one version behind and are marked stale.
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <chrono>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "actors/archivist/archive.h"
#include "tests/doctest_drk.h"
#include "tests/support/http_test_client.h"
#include "tests/support/run_dir.h"
#include "tests/support/scripted_http_server.h"
#include "tests/support/scripted_model.h"
#include "tests/support/spawned_program.h"

namespace {

using drk::testing::http_request;
using drk::testing::HttpAnswer;
using drk::testing::RecordedRequest;
using drk::testing::chat_answer;
using drk::testing::file_text;
using drk::testing::RunDir;
using drk::testing::ScriptedHttpServer;
using drk::testing::ScriptedReply;

std::string topology(const std::string& run_dir, const std::string& endpoint) {
  return drk::testing::llm_topology("external-learner-test", run_dir, endpoint, "base",
                                    "  steps: 3\n  group_size: 2\n  turns: 1\n  seed: 3\n  max_staleness: 1\n"
                                    "  learner: {backend: external, port: 0}\n");
}

uint16_t port_of(const std::string& endpoint_file) {
  const std::string url = file_text(endpoint_file);
  return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
}

HttpAnswer post_version(uint16_t port, const std::string& body) { return http_request(port, "POST", "/policy", body); }

// The rows of `sql` on the archive, each column as text.
std::vector<std::vector<std::string>> archive_rows(const std::string& archive_path, const char* sql) {
  std::vector<std::vector<std::string>> rows;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(archive_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* query = nullptr;
    sqlite3_prepare_v2(db, sql, -1, &query, nullptr);
    while (query && sqlite3_step(query) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int column = 0; column < sqlite3_column_count(query); ++column) {
        const auto* text = sqlite3_column_text(query, column);
        row.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
      }
      rows.push_back(std::move(row));
    }
    sqlite3_finalize(query);
  }
  sqlite3_close(db);
  return rows;
}

}  // namespace

DRK_TEST_CASE("an external trainer's reported versions tag the turns, gate the steps and mark stale answers") {
  RunDir dir;
  const std::string relu = file_text(std::string(DRK_SOURCE_DIR) + "/tests/candidates/relu.cpp");
  std::promise<uint16_t> learner_port;
  std::mutex answers_mutex;
  bool port_known = false;
  bool reported_during_step_2 = false;
  std::vector<HttpAnswer> reports_during_step_2;
  ScriptedHttpServer server({}, [&](const RecordedRequest& request) {
    const std::string model = nlohmann::json::parse(request.body)["model"];
    std::lock_guard lock(answers_mutex);
    // The Learner wrote its endpoint before it sent the first rollout.
    if (!port_known) learner_port.set_value(port_of(dir.file("run/learner_endpoint")));
    port_known = true;
    if (model == "policy-v1" && !reported_during_step_2) {
      reported_during_step_2 = true;
      const uint16_t port = port_of(dir.file("run/learner_endpoint"));
      reports_during_step_2.push_back(post_version(port, R"({"version": 2, "model": "policy-v2"})"));
      reports_during_step_2.push_back(post_version(port, R"({"version": 3, "model": "policy-v3"})"));
    }
    return ScriptedReply::answer(200, chat_answer("Served by " + model + ":\n```cpp\n// model " + model + "\n" +
                                                  relu + "```\n"));
  });
  const std::string topology_path = dir.write("external.yaml", topology(dir.file("run"), server.url("/v1")));
  drk::testing::SpawnedProgram run({DRK_BINARY, "run", topology_path, "--fresh"}, dir.file("output.txt"));

  auto port_future = learner_port.get_future();
  DRK_REQUIRE_MESSAGE(port_future.wait_for(std::chrono::seconds(240)) == std::future_status::ready,
                      "the Generator never asked the model:\n" << dir.read("output.txt"));
  const uint16_t port = port_future.get();

  // Bad reports name the field; nothing changes.
  const auto not_json = post_version(port, "version 1");
  DRK_CHECK(not_json.status == 400);
  const auto no_version = post_version(port, R"({"model": "m"})");
  DRK_CHECK(no_version.status == 400);
  DRK_CHECK(no_version.body.find("'version'") != std::string::npos);
  const auto text_version = post_version(port, R"({"version": "1"})");
  DRK_CHECK(text_version.status == 400);
  DRK_CHECK(text_version.body.find("'version'") != std::string::npos);
  const auto unknown = post_version(port, R"({"version": 1, "modle": "m"})");
  DRK_CHECK(unknown.status == 400);
  DRK_CHECK(unknown.body.find("'modle'") != std::string::npos);
  const auto bad_endpoint = post_version(port, R"({"version": 1, "endpoint": "ftp://x"})");
  DRK_CHECK(bad_endpoint.status == 400);
  DRK_CHECK(bad_endpoint.body.find("'endpoint'") != std::string::npos);

  // The current version again: a retry is answered 200, another model for it 409.
  DRK_CHECK(post_version(port, R"({"version": 0})").status == 200);
  DRK_CHECK(post_version(port, R"({"version": 0, "model": "other"})").status == 409);

  // The trainer waits for step 0's samples (each GET waits up to 60 s), then reports v1.
  nlohmann::json state = nlohmann::json::object();
  for (int attempt = 0; attempt < 5 && state.value("steps_done", 0) < 1; ++attempt) {
    const auto answer = http_request(port, "GET", "/policy?steps_done=1", "", "", std::chrono::seconds(90));
    DRK_REQUIRE(answer.status == 200);
    state = nlohmann::json::parse(answer.body);
  }
  DRK_REQUIRE(state["steps_done"] >= 1);
  DRK_CHECK(state["version"] == 0);
  DRK_CHECK(post_version(port, R"({"version": 1, "model": "policy-v1"})").status == 200);
  const auto backwards = post_version(port, R"({"version": 0})");
  DRK_CHECK(backwards.status == 409);
  DRK_CHECK(backwards.body.find("goes back") != std::string::npos);

  const bool ended = run.wait_for(300'000);
  const std::string output = dir.read("output.txt");
  DRK_REQUIRE_MESSAGE(ended, "the run did not end in time:\n" << output);
  DRK_REQUIRE_MESSAGE(run.exit_code() == 0, output);
  DRK_CHECK(output.find("step 3/3") != std::string::npos);
  {
    std::lock_guard lock(answers_mutex);
    DRK_REQUIRE(reports_during_step_2.size() == 2);
    DRK_CHECK(reports_during_step_2[0].status == 200);
    DRK_CHECK(reports_during_step_2[1].status == 200);
  }

  // Each candidate carries the version whose model answered: steps 0 and 1 v0 (step 1 started
  // before v1 was reported), step 2 v1 (it waited for v1: max_staleness 1).
  const std::string archive_path = drk::archivist::Archive::default_path(dir.file("run"));
  const auto candidates = archive_rows(archive_path, "SELECT id, step, policy_version, source FROM candidates");
  DRK_CHECK(candidates.size() == 6);
  for (const auto& row : candidates) {
    const std::string expected = row[1] == "2" ? "1" : "0";
    DRK_CHECK_MESSAGE(row[2] == expected, row[0] << " is tagged v" << row[2]);
    const std::string model = expected == "1" ? "policy-v1" : "base";
    DRK_CHECK_MESSAGE(row[3].find("// model " + model + "\n") != std::string::npos, row[0] << " was not asked of " << model);
  }
  // Every reported version is on record, with what the trainer said of it.
  const auto versions = archive_rows(archive_path, "SELECT version, CAST(parameters AS TEXT) FROM policy_versions ORDER BY version");
  std::string recorded;
  for (const auto& row : versions) recorded += row[0] + ": " + row[1] + "\n";
  DRK_REQUIRE_MESSAGE(versions.size() == 4, recorded);
  DRK_CHECK(versions[0][1] == R"({"version":0})");
  DRK_CHECK(versions[3][1] == R"({"model":"policy-v3","version":3})");

  // Step 2's answers came back when v3 was current: more than max_staleness behind, marked stale.
  auto archive = drk::archivist::Archive::open(archive_path, true);
  DRK_REQUIRE(archive.ok());
  auto samples = archive->training_samples();
  DRK_REQUIRE(samples.ok());
  DRK_CHECK(samples->size() == 6);
  for (const auto& sample : *samples) {
    DRK_CHECK(!sample.trained);
    DRK_CHECK(sample.policy_version == (sample.step == 2 ? 1u : 0u));
    DRK_CHECK_MESSAGE(sample.rejected_by == (sample.step == 2 ? "stale" : ""),
                      sample.candidate_id << " rejected_by '" << sample.rejected_by << "'");
  }
}
