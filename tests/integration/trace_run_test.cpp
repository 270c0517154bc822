// drk trace on a real run, as a person would use it: a one-step quickstart run records traces
// (on by default), `drk trace` turns them into one Trace Event file that passes the format's JSON
// schema (tests/integration/trace_event.schema.json, checked with python3-jsonschema), shows
// each evaluation's steps, and follows a candidate from the Generator through the Oracle, the
// Evaluator and the Verifier; a run with supervision.trace=false has none, and says how to get them.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/doctest_drk.h"
#include "tests/support/ran_program.h"
#include "tests/support/run_dir.h"
#include "tests/support/spawned_program.h"

namespace {

using drk::testing::RunDir;
using drk::testing::SpawnedProgram;
using nlohmann::json;

constexpr int kRunTimeoutMs = 480'000;

std::vector<std::string> quickstart(const RunDir& dir, const std::vector<std::string>& more = {}) {
  std::vector<std::string> argv{DRK_BINARY,     "run",   std::string(DRK_SOURCE_DIR) + "/configs/quickstart.yaml",
                                "--fresh",      "--set", "run_dir=" + dir.file("run"),
                                "--set",        "experiment.steps=1",
                                "--set",        "experiment.group_size=2"};
  argv.insert(argv.end(), more.begin(), more.end());
  return argv;
}

bool python_has_jsonschema(const RunDir& dir) {
  SpawnedProgram probe({"/usr/bin/env", "python3", "-c", "import jsonschema"}, dir.file("probe.txt"));
  return probe.wait_for(60'000) && probe.exit_code() == 0;
}

// The role of an actor or track name: "evaluator.0/sandbox" -> "evaluator".
std::string role_of(const std::string& track) { return track.substr(0, track.find_first_of("./")); }

DRK_TEST_CASE("drk trace of a one-step quickstart run: the Trace Event schema, evaluation steps, a candidate's flow") {
  RunDir dir;
  SpawnedProgram run(quickstart(dir), dir.file("run-output.txt"));
  const bool ended = run.wait_for(kRunTimeoutMs);
  const std::string run_output = dir.read("run-output.txt");
  DRK_REQUIRE_MESSAGE(ended, "the run did not end in time:\n" << run_output);
  DRK_REQUIRE_MESSAGE(run.exit_code() == 0, run_output);

  const auto traced = drk::testing::run_program(dir, DRK_BINARY, {"trace", dir.file("run"), "--out", dir.file("trace.json")});
  DRK_REQUIRE_MESSAGE(traced.exit_code == 0, traced.output);
  DRK_CHECK(traced.output.find("ui.perfetto.dev") != std::string::npos);

  if (python_has_jsonschema(dir)) {
    const auto validated = drk::testing::run_program(
        dir, "/usr/bin/env",
        {"python3", "-c", "import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))",
         dir.file("trace.json"), std::string(DRK_SOURCE_DIR) + "/tests/integration/trace_event.schema.json"});
    DRK_CHECK_MESSAGE(validated.exit_code == 0, validated.output);
  } else {
    DRK_MESSAGE("the schema check is skipped: python3's jsonschema is missing (Debian's python3-jsonschema; "
                "tools/scripts/install-deps.sh --tests installs it)");
  }

  const json trace = json::parse(dir.read("trace.json"));
  std::map<std::pair<int, int>, std::string> tracks;
  for (const json& event : trace["traceEvents"])
    if (event["ph"] == "M" && event["name"] == "thread_name")
      tracks[{event["pid"].get<int>(), event["tid"].get<int>()}] = event["args"]["name"];
  auto track_of = [&](const json& event) { return tracks[{event["pid"].get<int>(), event["tid"].get<int>()}]; };

  // A track per actor, and the Evaluators' sandboxes.
  std::set<std::string> roles;
  for (const auto& [key, name] : tracks) roles.insert(role_of(name) + (name.find("/sandbox") != std::string::npos ? "/sandbox" : ""));
  for (const char* role : {"generator", "oracle", "evaluator", "evaluator/sandbox", "verifier", "learner", "archivist", "head"})
    DRK_CHECK_MESSAGE(roles.count(role) == 1, "no track of " << role);

  // Each step of an evaluation, and each request to the sandbox within it (a correctness trial's
  // run, a timed batch), is a slice on a sandbox track, naming its candidate.
  std::set<std::string> steps;
  std::set<std::string> handled;
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] != "X") continue;
    if (event["cat"] == "handler") handled.insert(event["name"].get<std::string>());
    if (track_of(event).find("/sandbox") == std::string::npos) continue;
    steps.insert(event["name"].get<std::string>());
    DRK_CHECK(event["args"].contains("candidate"));
  }
  for (const char* step : {"compile", "load", "correctness", "timing", "run", "timed batch"})
    DRK_CHECK_MESSAGE(steps.count(step) == 1, "no " << step << " slice");
  for (const char* message : {"rolloutRequest", "candidate", "evalRequest", "evalResult", "verdict", "feedback"})
    DRK_CHECK_MESSAGE(handled.count(message) == 1, "no handler slice of " << message);

  // Some candidate's flow passes through the Generator, the Oracle, an Evaluator and the Verifier.
  std::map<std::string, std::vector<std::string>> flows;  // by id: the roles in order
  for (const json& event : trace["traceEvents"]) {
    const std::string phase = event["ph"];
    if (phase == "s" || phase == "t" || phase == "f") flows[event["id"].dump()].push_back(role_of(track_of(event)));
  }
  DRK_REQUIRE_FALSE(flows.empty());
  bool whole = false;
  for (const auto& [id, path] : flows) {
    const std::set<std::string> through(path.begin(), path.end());
    if (path.front() == "generator" && through.count("oracle") && through.count("evaluator") &&
        through.count("verifier")) {
      whole = true;
      break;
    }
  }
  DRK_CHECK_MESSAGE(whole, "no flow from a Generator through the Oracle, an Evaluator and the Verifier");
}

DRK_TEST_CASE("a run with traces off has none, and drk trace says how to record them") {
  RunDir dir;
  SpawnedProgram run(quickstart(dir, {"--set", "supervision.trace=false", "--set", "experiment.tasks=[relu]"}),
                     dir.file("run-output.txt"));
  DRK_REQUIRE(run.wait_for(kRunTimeoutMs));
  DRK_REQUIRE_MESSAGE(run.exit_code() == 0, dir.read("run-output.txt"));
  const auto traced = drk::testing::run_program(dir, DRK_BINARY, {"trace", dir.file("run")});
  DRK_CHECK(traced.exit_code == 1);
  DRK_CHECK_MESSAGE(traced.output.find("has no trace files") != std::string::npos, traced.output);
  DRK_CHECK_MESSAGE(traced.output.find("supervision.trace") != std::string::npos, traced.output);
}

}  // namespace
