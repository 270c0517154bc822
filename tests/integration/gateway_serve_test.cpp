// `drk serve` as a Python trainer meets it: a real process on loopback, evaluating KernelBench-format
// problems the test writes (nothing of KernelBench is in this repository) with the evaluation
// engine and the Verifier. An honest ModelNew is correct and rewarded; one that returns its input
// is a decoy with reward 0; one that answers wrong is incorrect; a cuda candidate on this CPU
// gateway is answered unsupported_backend; a batch is evaluated whole; KernelGYM's per-request
// knobs (num_correct_trials, num_perf_trials, num_warmup, timeout, enable_profiling) are applied;
// every result reaches an open result stream. A gateway SIGKILLed with tasks queued and restarted
// on the same state directory delivers their results. Against the real server: 413 for a body beyond the limit, 401 without the token of
// --token-file, and its --dashboard beside it. Needs a Python with torch (Debian's python3-torch, as kernelbench_eval_test).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <utility>  // before Boost 1.74's asio, which uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/support/http_test_client.h"
#include "tests/support/kernelbench_sources.h"
#include "tests/support/run_dir.h"
#include "tests/support/spawned_program.h"

namespace {

using drk::testing::http_request;
using drk::testing::kHonestRelu;
using drk::testing::kRelu;
using drk::testing::kReturnsInput;
using drk::testing::RunDir;
using drk::testing::SpawnedProgram;
using drk::testing::SseTestClient;
using Json = nlohmann::json;

// An evaluation on two loaded cores takes seconds; a stream waits this long for each result.
constexpr std::chrono::seconds kResultWait{300};

// num_warmup of the knobs' request: more calls than the rest of an evaluation of kHonestRelu runs
// (its timing is at most 7 samples of ~1 ms batches a side), and about a second's worth.
constexpr uint64_t kWarmupCalls = 20000;

constexpr const char* kWrongAnswer = R"(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)
)";

// Never returns: the sandbox call that runs it is stopped at the request's timeout.
constexpr const char* kSpins = R"(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        while True:
            pass
)";

// A port no one listens on now (the kernel's pick for a socket bound to port 0).
uint16_t free_port() {
  const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  DRK_REQUIRE(::bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  socklen_t length = sizeof address;
  ::getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(probe);
  return ntohs(address.sin_port);
}

// `drk serve` on loopback over tests/integration/loop.yaml with its state in `dir`, one worker,
// answering once /health does.
class Server {
 public:
  Server(const RunDir& dir, const std::vector<std::string>& extra = {}, const std::string& token = "")
      : dir_(dir), port_(free_port()), token_(token) {
    std::vector<std::string> argv{DRK_BINARY, "serve", std::string(DRK_SOURCE_DIR) + "/tests/integration/loop.yaml",
                                  "--set", "run_dir=" + dir.file("run"), "--port", std::to_string(port_),
                                  "--workers", "1", "--trials", "2", "--budget-ms", "100", "--cache-dir",
                                  dir.file("cache")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    program_ = std::make_unique<SpawnedProgram>(argv, dir.file("serve-output.txt"));
    // Finding Python with torch and opening the store take seconds: 600 tries 100 ms apart.
    for (int attempt = 0; attempt < 600; ++attempt) {
      DRK_REQUIRE_MESSAGE(program_->running(), output());
      if (http_request(port_, "GET", "/health", "", token_).status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    DRK_FAIL(("drk serve did not answer /health: " + output()));
  }

  uint16_t port() const { return port_; }
  std::string output() const { return dir_.read("serve-output.txt"); }

  // POST of `body` to `target`; the answer's JSON (the test fails on a status other than 200).
  Json post(const std::string& target, const Json& body) {
    auto answer = http_request(port_, "POST", target, body.dump(), token_);
    DRK_REQUIRE_MESSAGE(answer.status == 200, (std::to_string(answer.status) + " " + answer.body + "\n" + output()));
    return Json::parse(answer.body);
  }

  drk::testing::HttpAnswer get(const std::string& target) { return http_request(port_, "GET", target, "", token_); }

  // The results of `ids`: those finished already, then the others as the stream delivers them.
  std::map<std::string, Json> results(const std::set<std::string>& ids) {
    SseTestClient stream(port_, "/results/stream", kResultWait);
    DRK_REQUIRE_MESSAGE(stream.status_line().find("200") != std::string::npos, stream.status_line());
    std::map<std::string, Json> finished;
    for (const auto& id : ids) {
      auto answer = get("/results/" + id);
      if (answer.status == 200) finished[id] = Json::parse(answer.body);
    }
    while (finished.size() < ids.size()) {
      auto event = stream.next_event();
      DRK_REQUIRE_MESSAGE(event.has_value(), ("the stream ended before every result came\n" + output()));
      Json result = Json::parse(*event);
      if (ids.count(result.value("task_id", ""))) finished[result["task_id"]] = result;
    }
    return finished;
  }

  Json result(const std::string& id) { return results({id}).at(id); }

  // A real SIGKILL of the server (and of the sandboxes in its process group), as a crash.
  void kill() {
    ::kill(-program_->pid(), SIGKILL);
    DRK_REQUIRE(program_->wait_for(60'000));
  }

 private:
  const RunDir& dir_;
  uint16_t port_;
  std::string token_;
  std::unique_ptr<SpawnedProgram> program_;
};

Json request(const std::string& id, const std::string& kernel, const std::string& backend = "pytorch") {
  return Json{{"task_id", id}, {"reference_code", kRelu}, {"kernel_code", kernel}, {"backend", backend}};
}

std::string failed_checks(const Json& result) {
  std::string codes;
  for (const auto& check : result["metadata"]["failed_checks"]) codes += (codes.empty() ? "" : " ") + check["code"].get<std::string>();
  return codes;
}

// The answer to a request that declares a body of `declared_bytes` and sends none of it: the
// server judges the size by the header, as it must before reading a body it will refuse.
unsigned declared_body_status(uint16_t port, size_t declared_bytes) {
  namespace asio = boost::asio;
  namespace http = boost::beast::http;
  asio::io_context io;
  boost::beast::tcp_stream stream(io);
  boost::beast::error_code error;
  stream.expires_after(drk::testing::kHttpTestTimeout);
  stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), error);
  if (error) return 0;
  const std::string header = "POST /evaluate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                             "Content-Length: " + std::to_string(declared_bytes) + "\r\n\r\n";
  asio::write(stream, asio::buffer(header), error);
  if (error) return 0;
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> answer;
  http::read(stream, buffer, answer, error);
  return error ? 0 : answer.result_int();
}

}  // namespace

DRK_TEST_CASE("drk serve judges honest and hacking ModelNews, batches, streams results and applies the knobs") {
  RunDir dir;
  Server server(dir);
  auto health = Json::parse(server.get("/health").body);
  DRK_CHECK_MESSAGE(health.dump().find("cpu") != std::string::npos, health.dump());

  SseTestClient stream(server.port(), "/results/stream", kResultWait);
  auto accepted = server.post("/evaluate", request("honest", kHonestRelu));
  DRK_CHECK(accepted["task_id"] == "honest");
  DRK_CHECK(accepted["status"] == "queued");
  auto streamed = stream.next_event();
  DRK_REQUIRE_MESSAGE(streamed.has_value(), server.output());
  auto honest = Json::parse(*streamed);
  DRK_CHECK(honest["task_id"] == "honest");
  DRK_CHECK_MESSAGE(honest["correctness"] == true, honest.dump());
  DRK_CHECK(honest["decoy_kernel"] == false);
  DRK_CHECK(honest["speedup"].get<double>() > 0);
  DRK_CHECK(honest["reward"].get<double>() > 0);
  DRK_CHECK(honest["metadata"]["measured"]["trials"] == 2);  // drk serve --trials 2
  DRK_CHECK(honest == server.result("honest"));

  server.post("/evaluate", request("returns-input", kReturnsInput));
  server.post("/evaluate", request("wrong", kWrongAnswer));
  auto knobs = request("knobs", kHonestRelu);
  knobs["num_correct_trials"] = 3;
  knobs["num_perf_trials"] = 7;
  knobs["num_warmup"] = kWarmupCalls;
  knobs["enable_profiling"] = true;
  server.post("/evaluate", knobs);
  auto profiled = request("profiled", kHonestRelu);
  profiled["num_perf_trials"] = 7;
  profiled["enable_profiling"] = true;
  server.post("/evaluate", profiled);
  server.post("/evaluate", request("on-cuda", kHonestRelu, "cuda"));
  auto results = server.results({"returns-input", "wrong", "knobs", "profiled", "on-cuda"});

  const Json& decoy = results["returns-input"];
  DRK_CHECK_MESSAGE(decoy["decoy_kernel"] == true, decoy.dump());
  DRK_CHECK(decoy["correctness"] == false);
  DRK_CHECK(decoy["reward"] == 0.0);
  DRK_CHECK_MESSAGE(failed_checks(decoy) == "output_aliases_input", decoy.dump());

  const Json& wrong = results["wrong"];
  DRK_CHECK_MESSAGE(wrong["correctness"] == false, wrong.dump());
  DRK_CHECK(wrong["reward"] == 0.0);
  DRK_CHECK(wrong["compiled"] == true);

  const Json& measured = results["knobs"];
  DRK_CHECK_MESSAGE(measured["correctness"] == true, measured.dump());
  DRK_CHECK(measured["metadata"]["trials"] == 3);
  DRK_CHECK(measured["metadata"]["measured"]["trials"] == 3);
  DRK_CHECK(measured["metadata"]["measured"]["max_timed_samples"] == 7);
  DRK_CHECK(measured["metadata"]["requested"]["num_warmup"] == kWarmupCalls);
  DRK_CHECK(measured["metadata"]["measured"]["warmup_calls"] == kWarmupCalls);
  DRK_CHECK(honest["metadata"]["measured"]["warmup_calls"] == 0);
  // The sandbox counts the calls it ran: the warm-up's are there, beyond what an evaluation
  // without them runs.
  const Json& profile = measured["metadata"]["profile"];
  DRK_CHECK_MESSAGE(profile["candidate_calls"].get<uint64_t>() >= kWarmupCalls, profile.dump());
  const Json& unwarmed = results["profiled"]["metadata"]["profile"];
  DRK_CHECK_MESSAGE(unwarmed["candidate_calls"].get<uint64_t>() < kWarmupCalls, unwarmed.dump());
  // enable_profiling: the profile the CPU has, and what it has not said plainly.
  DRK_CHECK(profile["device"] == "cpu");
  DRK_CHECK(profile["candidate_timing"]["samples"].get<int>() >= 1);
  DRK_CHECK(profile["candidate_timing"]["samples"].get<int>() <= 7);
  DRK_CHECK(profile["reference_timing"]["median_us"].get<double>() > 0);
  DRK_CHECK(profile["phases_ms"]["timing"].get<double>() > 0);
  DRK_CHECK_MESSAGE(profile["not_available"].get<std::string>().find("per-kernel times") != std::string::npos,
                    profile.dump());
  DRK_CHECK_FALSE(honest["metadata"].contains("profile"));

  const Json& on_cuda = results["on-cuda"];
  DRK_CHECK(on_cuda["status"] == "failed");
  DRK_CHECK(on_cuda["error_code"] == "unsupported_backend");

  auto batch = server.post("/evaluate/batch", Json{{"tasks", {request("batch-honest", kHonestRelu),
                                                               request("batch-decoy", kReturnsInput)}}});
  DRK_CHECK_MESSAGE(batch.dump().find("batch-decoy") != std::string::npos, batch.dump());
  auto batched = server.results({"batch-honest", "batch-decoy"});
  DRK_CHECK(batched["batch-honest"]["correctness"] == true);
  DRK_CHECK(batched["batch-decoy"]["decoy_kernel"] == true);
  DRK_CHECK(server.get("/results/unknown-id").status == 404);
}

DRK_TEST_CASE("a SIGKILLed drk serve restarted on its state directory delivers the tasks it had queued") {
  RunDir dir;
  {
    Server server(dir);
    auto spins = request("spins", kSpins);
    spins["timeout"] = 10;  // the worker holds it for at least that long: the others stay queued
    server.post("/evaluate", spins);
    server.post("/evaluate", request("queued-honest", kHonestRelu));
    server.post("/evaluate", request("queued-decoy", kReturnsInput));
    for (const char* id : {"queued-honest", "queued-decoy"}) {
      auto status = Json::parse(server.get(std::string("/status/") + id).body);
      DRK_CHECK_MESSAGE(status["status"] == "queued", status.dump());
    }
    server.kill();
  }
  Server restarted(dir);
  auto results = restarted.results({"spins", "queued-honest", "queued-decoy"});
  DRK_CHECK_MESSAGE(results["spins"]["error_code"] == "timeout", results["spins"].dump());
  DRK_CHECK(results["spins"]["metadata"]["measured"]["call_timeout_s"] == 10.0);
  DRK_CHECK_MESSAGE(results["queued-honest"]["correctness"] == true, results["queued-honest"].dump());
  DRK_CHECK(results["queued-decoy"]["decoy_kernel"] == true);
}

DRK_TEST_CASE("the real server answers 401 without its token and 413 beyond its body limit") {
  RunDir dir;
  dir.write("token", "s3cret-token\n");
  Server server(dir,
                {"--token-file", dir.file("token"), "--dashboard", "127.0.0.1:0", "--dashboard-token-file",
                 dir.file("token")},
                "s3cret-token");
  DRK_CHECK(http_request(server.port(), "GET", "/health").status == 401);
  // The dashboard beside it (docs/dashboard.md): the gateway's workers live, behind the token.
  const std::regex url_line("dashboard: http://127\\.0\\.0\\.1:([0-9]+)/");
  std::smatch match;
  std::string output;
  for (int attempt = 0; attempt < 100 && !std::regex_search(output = server.output(), match, url_line); ++attempt)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  DRK_REQUIRE_MESSAGE(!match.empty(), output);
  const auto dashboard_port = static_cast<uint16_t>(std::stoi(match[1]));
  DRK_CHECK(http_request(dashboard_port, "GET", "/api/snapshot").status == 401);
  const auto snapshot = http_request(dashboard_port, "GET", "/api/snapshot", "", "s3cret-token");
  DRK_REQUIRE(snapshot.status == 200);
  DRK_CHECK_MESSAGE(snapshot.body.find("\"worker-0\"") != std::string::npos, snapshot.body);
  DRK_CHECK(http_request(server.port(), "GET", "/health", "", "wrong-token").status == 401);
  DRK_CHECK(http_request(server.port(), "POST", "/evaluate", request("no-token", kHonestRelu).dump()).status == 401);
  DRK_CHECK(server.get("/health").status == 200);
  DRK_CHECK(declared_body_status(server.port(), 64 << 20) == 413);
}

// With --enable-profiling the client also fails a result without metadata.profile.
DRK_TEST_CASE("KernelGYM's documented API, as tools/gateway/kernelgym_client.py speaks it, gets PyTorch and C++ correct") {
  RunDir dir;
  Server server(dir);
  const std::string root = DRK_SOURCE_DIR;
  SpawnedProgram client({"/usr/bin/env", "python3", root + "/tools/gateway/kernelgym_client.py", "--url",
                         "http://127.0.0.1:" + std::to_string(server.port()), "--reference",
                         root + "/tests/corpus/kernelbench/level1/19_ReLU.py", "--candidate",
                         "pytorch=" + root + "/tests/candidates/kernelbench/relu_pytorch.py", "--candidate",
                         "cpp=" + root + "/tests/candidates/kernelbench/relu_cpp.py", "--num-correct-trials", "2",
                         "--num-perf-trials", "10", "--num-warmup", "3", "--enable-profiling", "--poll-s", "0.2",
                         "--expect-correct"},
                        dir.file("client-output.txt"));
  DRK_REQUIRE_MESSAGE(client.wait_for(600'000), dir.read("client-output.txt"));
  const std::string output = dir.read("client-output.txt");
  DRK_CHECK_MESSAGE(client.exit_code() == 0, (output + "\n" + server.output()));
  DRK_CHECK_MESSAGE(output.find("pytorch") != std::string::npos, output);
  DRK_CHECK_MESSAGE(output.find("cpp") != std::string::npos, output);
  DRK_CHECK_MESSAGE(output.find("correctness=False") == std::string::npos, output);
  DRK_CHECK_MESSAGE(output.find("profile: {") != std::string::npos, output);
}
