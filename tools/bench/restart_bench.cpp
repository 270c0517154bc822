#include "tools/bench/restart_bench.h"
#include "messages/envelope.capnp.h"

#include <yaml-cpp/yaml.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "runtime/actor_host.h"
#include "runtime/log.h"
#include "runtime/transport/outbox.h"
#include "runtime/supervision/process_launcher.h"
#include "runtime/supervision/supervisor.h"
#include "runtime/topology/topology.h"
#include "runtime/transport/transport.h"
#include "runtime/supervision/warm_spare.h"
#include "tools/bench/temp_dir.h"

namespace drk::bench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kAnswerWithin = 10s;
constexpr auto kProbePeriod = 1ms;
// Between kills with warm spares: long enough for a spare of drk with CUDA LibTorch to load.
constexpr auto kSpareLoads = 1500ms;

class Echo final : public runtime::Actor {
 public:
  explicit Echo(const runtime::ActorSpec& spec) : incarnation_(spec.incarnation) {}

  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    if (!envelope.getBody().isHeartbeat()) return;
    const uint64_t sequence = envelope.getBody().getHeartbeat().getSequence();
    (void)context.send(envelope.getSender().cStr(), [&](msg::Envelope::Builder reply) {
      auto heartbeat = reply.getBody().initHeartbeat();
      heartbeat.setIncarnation(incarnation_);
      heartbeat.setSequence(sequence);
    });
  }

 private:
  uint64_t incarnation_;
};

// The latest answer the probe saw, shared with the measuring thread.
struct Answers {
  std::mutex mutex;
  std::condition_variable changed;
  uint64_t incarnation = 0;
  Clock::time_point at;

  // Waits for an answer from an incarnation other than `old`; its time, or nullopt after 10 s.
  std::optional<Clock::time_point> wait_for_other_than(uint64_t old, uint64_t& now_answering) {
    std::unique_lock lock(mutex);
    if (!changed.wait_for(lock, kAnswerWithin, [&] { return incarnation != 0 && incarnation != old; }))
      return std::nullopt;
    now_answering = incarnation;
    return at;
  }
};

class Probe final : public runtime::Actor {
 public:
  explicit Probe(Answers& answers) : answers_(answers) {}

  void on_start(runtime::ActorContext& context) override { context.start_timer(kProbePeriod, 0); }

  void on_timer(runtime::ActorContext& context, uint64_t) override {
    runtime::SendOptions no_wait;
    no_wait.wait_for_room = 0ms;  // a full pipe to a dead echo: the next period tries again
    (void)context.send(
        "echo", [&](msg::Envelope::Builder out) { out.getBody().initHeartbeat().setSequence(++sequence_); },
        no_wait);
    context.start_timer(kProbePeriod, 0);
  }

  void on_message(runtime::ActorContext&, msg::Envelope::Reader envelope) override {
    if (!envelope.getBody().isHeartbeat()) return;
    const auto now = Clock::now();
    std::lock_guard lock(answers_.mutex);
    const uint64_t incarnation = envelope.getBody().getHeartbeat().getIncarnation();
    if (incarnation == answers_.incarnation) return;
    answers_.incarnation = incarnation;
    answers_.at = now;
    answers_.changed.notify_all();
  }

 private:
  Answers& answers_;
  uint64_t sequence_ = 0;
};

std::string topology_text(const std::string& run_dir) {
  return "name: bench-restart\n"
         "run_dir: " +
         run_dir +
         "\n"
         "supervision: {strategy: one_for_one, max_restarts: 1000, within_s: 60, backoff_initial_ms: 0, "
         "backoff_max_ms: 0}\n"
         "actors:\n"
         "  - {name: echo, role: bench_echo, process: own}\n";
}

Error no_answer(const std::string& when, const log::Capture& said) {
  return make_error(Errc::timeout, "the echo actor did not answer within 10 s " + when +
                                       "; the supervisor said: " + said.str());
}

}  // namespace

void register_echo_role() {
  runtime::register_role("bench_echo", [](const runtime::ActorSpec& spec) { return std::make_unique<Echo>(spec); });
}

Result<std::vector<double>> restart_times_ms(const std::string& executable, int samples, bool warm_spare) {
  const TemporaryDirectory dir = temp_dir("drk-bench-restart");
  auto topology = runtime::parse_topology(YAML::Load(topology_text(dir.path())), "the restart benchmark");
  if (!topology) return topology.error();
  if (auto written = runtime::write_resolved_topology(*topology, dir.path(), dir.path() + "/topology.yaml");
      !written) {
    return written.error();
  }
  std::filesystem::create_directories(dir.path() + "/causes");

  boost::asio::io_context io;
  // Installed before any child exists, so that no death goes unseen.
  boost::asio::signal_set child_signals(io, SIGCHLD);
  // What the supervisor logs (on the io thread), kept off the console: read on failure.
  log::Capture said(log::Capture::Mode::instead);
  runtime::ForkExecLauncher launcher;
  launcher.keep_warm_spare(runtime::spare_argv(executable, warm_spare));
  runtime::SupervisorOptions options;
  options.executable = executable;
  options.run_dir = dir.path();
  options.stop_grace = 1000ms;
  runtime::Supervisor supervisor(io, *topology, launcher, options);

  Answers answers;
  runtime::Transport transport(*topology, std::string(runtime::kHeadProcess), dir.path());
  runtime::HostOptions host_options;
  host_options.run_dir = dir.path();
  runtime::ActorHost host(transport, host_options);
  runtime::ActorSpec probe_spec;
  probe_spec.name = std::string(runtime::kHeadActor);
  probe_spec.role = std::string(runtime::kHeadActor);
  probe_spec.run_dir = dir.path();
  host.add(std::move(probe_spec), std::make_unique<Probe>(answers));
  if (auto started = host.start(); !started) return started.error();

  std::optional<Status> outcome;
  std::function<void(const boost::system::error_code&, int)> on_child =
      [&](const boost::system::error_code& error, int) {
        if (error) return;
        supervisor.children_exited();
        child_signals.async_wait(on_child);
      };
  // The children die with the thread that started them (PR_SET_PDEATHSIG): this one, which
  // lives until the supervisor has stopped them.
  std::thread supervising([&] {
    child_signals.async_wait(on_child);
    supervisor.start([&](Status result) {
      outcome = std::move(result);
      child_signals.cancel();
    });
    io.run();
  });
  const auto stop_supervising = [&] {
    boost::asio::post(io, [&] { supervisor.stop(); });
    supervising.join();
    host.stop();
    std::error_code ignored;
    std::filesystem::remove_all(runtime::socket_dir_for(dir.path()), ignored);
  };

  std::vector<double> times_ms;
  uint64_t incarnation = 0;
  if (!answers.wait_for_other_than(0, incarnation)) {
    stop_supervising();
    return no_answer("after it started", said);
  }
  for (int sample = 0; sample < samples; ++sample) {
    if (warm_spare) std::this_thread::sleep_for(kSpareLoads);
    std::promise<Clock::time_point> killed;
    boost::asio::post(io, [&] {
      const pid_t pid = supervisor.processes().front().pid;
      const auto at = Clock::now();
      ::kill(pid, SIGKILL);
      killed.set_value(at);
    });
    const Clock::time_point killed_at = killed.get_future().get();
    const auto answered_at = answers.wait_for_other_than(incarnation, incarnation);
    if (!answered_at) {
      stop_supervising();
      return no_answer("after a kill -9", said);
    }
    times_ms.push_back(std::chrono::duration<double, std::milli>(*answered_at - killed_at).count());
  }
  stop_supervising();
  if (outcome && !outcome->ok()) return outcome->error();
  return times_ms;
}

}  // namespace drk::bench
