// drk-llm-loop-bench: an end-to-end training loop whose Generator asks a language model
// (generator.backend: openai) against the scripted OpenAI-compatible server of the tests
// (tests/support/scripted_http_server.h, as llm_loop_test uses it: one connection at a time, every
// answer the honest ReLU of tests/candidates/relu.cpp with token log-probabilities), beside the
// same experiment with the embedded policy (docs/benchmarks.md).
//
// Per run, `drk run` of a topology written here (relu, `--steps` steps of `--group` trajectories of
// `--turns` turns, `--evaluators` Evaluators): steps per hour (the run's own summary: steps over
// the seconds of training), the model's requests (answered by the server) and how many were in
// flight, sampled every 20 ms as the client's open connections to the server (/proc/net/tcp:
// each request is a connection of its own), and the time the Evaluators waited: their count times
// the training's seconds, less the evaluations' own time (the archive's results.eval_ms).
// `--answer-ms` holds each answer that long in the server first: a model that answers one request
// at a time (a single-slot server), whose queue the in-flight count shows.
//
// Usage: drk-llm-loop-bench [--drk PATH] [--steps N] [--group N] [--turns N] [--evaluators N]
//        [--max-in-flight N] [--answer-ms MS ...]
#include <sqlite3.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tools/bench/source_tree.h"
#include "tests/support/run_dir.h"
#include "tests/support/scripted_http_server.h"
#include "tests/support/scripted_model.h"
#include "tests/support/spawned_program.h"

namespace {

using drk::testing::RecordedRequest;
using drk::testing::RunDir;
using drk::testing::ScriptedHttpServer;
using drk::testing::ScriptedReply;
using drk::testing::chat_answer;

struct Settings {
  std::string drk = DRK_BINARY;
  int steps = 3, group = 4, turns = 2, evaluators = 2, max_in_flight = 4;
  std::vector<int> answer_ms{0, 250};
};

struct RunNumbers {
  std::string label;
  bool ok = false;
  std::string failure;
  double training_s = 0;
  int steps = 0;
  size_t requests = 0;
  double mean_in_flight = 0;  // over the samples taken while any was open or the run trained
  int max_in_flight = 0;
  size_t evaluations = 0;
  double eval_s = 0;          // the evaluations' own time, summed
  double wall_s = 0;          // drk run, start to end
};

std::string topology(const Settings& settings, const std::string& run_dir, const std::string& endpoint) {
  std::ostringstream text;
  text << "name: llm-loop-bench\nrun_dir: " << run_dir << "\nactors:\n"
       << "  - {role: archivist, process: own}\n  - {role: oracle, process: own}\n"
       << "  - {role: verifier, process: own}\n"
       << "  - {role: evaluator, count: " << settings.evaluators << ", process: own}\n"
       << "  - {role: generator, count: 1, process: own}\n  - {role: learner, process: own}\n"
       << "experiment:\n  device: cpu\n  tasks: [relu]\n  steps: " << settings.steps << "\n  group_size: "
       << settings.group << "\n  turns: " << settings.turns << "\n  seed: 3\n"
       << "  eval: {trials: 2, timing_budget_ms: 20, max_threads: 1}\n";
  if (!endpoint.empty())
    text << "  generator: {backend: openai, endpoint: '" << endpoint << "', model: scripted, max_in_flight: "
         << settings.max_in_flight << ", retry_base_ms: 10, request_timeout_s: 120}\n";
  return text.str();
}

// The client side's ESTABLISHED connections to 127.0.0.1:`port` (/proc/net/tcp's remote address).
int connections_to(uint16_t port) {
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // the header
  char wanted[16];
  std::snprintf(wanted, sizeof wanted, "0100007F:%04X", port);
  int open = 0;
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if (remote == wanted && state == "01") ++open;
  }
  return open;
}

// The evaluations in the archive and their time (seconds).
std::pair<size_t, double> evaluations_in(const std::string& archive) {
  sqlite3* db = nullptr;
  std::pair<size_t, double> found{0, 0};
  if (sqlite3_open_v2(archive.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* query = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT COUNT(*), COALESCE(SUM(eval_ms), 0) FROM results", -1, &query, nullptr) ==
            SQLITE_OK &&
        sqlite3_step(query) == SQLITE_ROW)
      found = {static_cast<size_t>(sqlite3_column_int64(query, 0)), sqlite3_column_double(query, 1) / 1000.0};
    sqlite3_finalize(query);
  }
  sqlite3_close(db);
  return found;
}

// One drk run; `answer_ms` < 0: the embedded policy (no server).
RunNumbers run_once(const Settings& settings, int answer_ms) {
  RunNumbers numbers;
  numbers.label = answer_ms < 0 ? "policy" : "openai, answer " + std::to_string(answer_ms) + " ms";
  RunDir dir;
  const auto relu = drk::bench::read_source_file("tests/candidates/relu.cpp");
  if (!relu) {
    numbers.failure = "cannot read tests/candidates/relu.cpp: set DRK_SOURCE_DIR";
    return numbers;
  }
  const std::string answer = chat_answer("Here:\n```cpp\n" + *relu + "```\n", {-0.5, -0.25});
  std::unique_ptr<ScriptedHttpServer> server;
  if (answer_ms >= 0)
    server = std::make_unique<ScriptedHttpServer>(std::vector<ScriptedReply>{}, [&](const RecordedRequest&) {
      if (answer_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(answer_ms));  // the model's time
      return ScriptedReply::answer(200, answer);
    });
  const std::string path =
      dir.write("bench.yaml", topology(settings, dir.file("run"), server ? server->url("/v1") : ""));
  const auto started = std::chrono::steady_clock::now();
  drk::testing::SpawnedProgram run({settings.drk, "run", path, "--fresh"}, dir.file("output.txt"));
  long samples = 0, in_flight_sum = 0;
  while (!run.wait_for(20)) {
    if (!server) continue;
    const int open = connections_to(server->port());
    numbers.max_in_flight = std::max(numbers.max_in_flight, open);
    in_flight_sum += open;
    ++samples;
  }
  numbers.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string output = dir.read("output.txt");
  std::smatch summary;
  if (run.exit_code() != 0 || !std::regex_search(output, summary, std::regex(R"(steps: (\d+) \((\d+) s of training\))"))) {
    numbers.failure = "drk run failed (exit " + std::to_string(run.exit_code()) + "):\n" +
                      output.substr(output.size() > 3000 ? output.size() - 3000 : 0);
    return numbers;
  }
  numbers.steps = std::stoi(summary[1]);
  numbers.training_s = std::stod(summary[2]);
  numbers.mean_in_flight = samples > 0 ? static_cast<double>(in_flight_sum) / samples : 0;
  if (server) numbers.requests = server->requests().size();
  std::tie(numbers.evaluations, numbers.eval_s) = evaluations_in(dir.file("run/archive.sqlite"));
  numbers.ok = true;
  return numbers;
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  CLI::App app("an LLM-backed drk run against the scripted OpenAI-compatible server, beside the embedded policy");
  app.add_option("--drk", settings.drk, "the drk binary");
  app.add_option("--steps", settings.steps, "training steps a run (default 3)");
  app.add_option("--group", settings.group, "trajectories a step (default 4)");
  app.add_option("--turns", settings.turns, "turns a trajectory (default 2)");
  app.add_option("--evaluators", settings.evaluators, "Evaluators (default 2)");
  app.add_option("--max-in-flight", settings.max_in_flight, "generator.max_in_flight (default 4)");
  app.add_option("--answer-ms", settings.answer_ms, "the server's time per answer, one run each (default 0 250)");
  CLI11_PARSE(app, argc, argv);

  std::vector<RunNumbers> runs;
  runs.push_back(run_once(settings, -1));
  for (int answer_ms : settings.answer_ms) runs.push_back(run_once(settings, answer_ms));
  std::cout << "drk-llm-loop-bench: relu, " << settings.steps << " steps x " << settings.group << " trajectories x "
            << settings.turns << " turns, " << settings.evaluators << " evaluators, max_in_flight "
            << settings.max_in_flight << "\n\n"
            << std::left << std::setw(22) << "generator" << std::right << std::setw(8) << "steps" << std::setw(11)
            << "train s" << std::setw(11) << "steps/h" << std::setw(10) << "vs policy" << std::setw(10) << "requests"
            << std::setw(11) << "in flight" << std::setw(6) << "max" << std::setw(8) << "evals" << std::setw(13)
            << "eval wait %" << "\n";
  int status = 0;
  const double policy_rate = runs[0].ok && runs[0].training_s > 0 ? runs[0].steps * 3600.0 / runs[0].training_s : 0;
  for (const auto& run : runs) {
    if (!run.ok) {
      std::cout << run.label << ": " << run.failure << "\n";
      status = 1;
      continue;
    }
    const double rate = run.training_s > 0 ? run.steps * 3600.0 / run.training_s : 0;
    const double evaluator_s = settings.evaluators * run.training_s;
    const double waited = evaluator_s > 0 ? std::max(0.0, 1.0 - run.eval_s / evaluator_s) * 100 : 0;
    std::cout << std::left << std::setw(22) << run.label << std::right << std::fixed << std::setprecision(1)
              << std::setw(8) << run.steps << std::setw(11) << run.training_s << std::setw(11) << rate << std::setw(10)
              << std::setprecision(2) << (policy_rate > 0 ? rate / policy_rate : 0) << std::setw(10) << run.requests
              << std::setw(11) << run.mean_in_flight << std::setw(6) << run.max_in_flight << std::setw(8)
              << run.evaluations << std::setw(12) << std::setprecision(1) << waited << "%\n";
  }
  std::cout << "\nin flight: the generator's open connections to the server, mean over 20 ms samples of the whole "
               "run;\neval wait: the share of the Evaluators' time (count x training seconds) not spent evaluating.\n";
  return status;
}
