// A drk-like program for the runtime's integration tests: `run` and `host` as in drk, with two
// test roles instead of the six real ones.
//   pinger: sends params.requests numbered Heartbeats to "ponger", re-sends those not yet
//           answered when the ponger restarts (Control.peerRestarted) and on a timer; when all
//           are answered it writes RUN_DIR/pinger-result.txt and sends a finished StepReport.
//   ponger: answers each Heartbeat with the same sequence number. params.fault "kill" or
//           "throw" makes it SIGKILL itself or throw at its params.at-th request, once per run;
//           "always_throw" throws there on every incarnation; "stop" SIGSTOPs its process (which
//           then misses its heartbeats) once the head's inspection shows that process has
//           reported (so the silence is missed heartbeats, not a slow start), and "hang" blocks
//           that handler for params.hang_ms (forever when absent), once per run.
//   streamer: sends a Heartbeat to params.to every params.every_ms, until the run is stopped.
//   sleeper: handles Heartbeats it sends itself, each blocking its handler for params.block_ms
//            (a slow or hung handler, for inspection).
//   quitter: prints "quitter NAME: started" on each start, then ends its process at once:
//            params.how "exit0" (exit code 0) or "kill" (SIGKILL); with params.once, only on its
//            first start in the run (later starts stay up).
//   drainer: sends itself params.count Heartbeats, then a finished StepReport (so the run
//            stops while they wait in its mailbox); handles each in params.handle_ms; on_stop
//            writes "handled N" to RUN_DIR/drained.txt.
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "messages/drk.capnp.h"
#include "runtime/actor.h"
#include "runtime/command_line.h"
#include "runtime/inspection/inspection_server.h"
#include "runtime/process_command_line.h"
#include "runtime/supervision/warm_spare.h"
#include "training/domain_messages.h"
#include "training/step_progress.h"

namespace {

using namespace drk;
using namespace std::chrono_literals;

class Pinger final : public runtime::Actor {
 public:
  explicit Pinger(const runtime::ActorSpec& spec) : requests_(spec.params["requests"].as<uint64_t>()) {}

  void on_start(runtime::ActorContext& context) override {
    resend(context);
    context.start_timer(kResendEvery, 0);
  }

  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    const auto body = envelope.getBody();
    if (body.isControl() && body.getControl().isPeerRestarted() &&
        std::string_view(body.getControl().getPeerRestarted().cStr()) == "ponger") {
      resend(context);
    } else if (body.isHeartbeat()) {
      answered_.insert(body.getHeartbeat().getSequence());
      if (answered_.size() == requests_ && !reported_) report(context);
    }
  }

  void on_timer(runtime::ActorContext& context, uint64_t) override {
    if (reported_) return;
    resend(context);
    context.start_timer(kResendEvery, 0);
  }

 private:
  static constexpr auto kResendEvery = 300ms;

  void resend(runtime::ActorContext& context) {
    for (uint64_t sequence = 1; sequence <= requests_; ++sequence) {
      if (answered_.count(sequence)) continue;
      // A busy or unreachable ponger is retried on the next timer.
      (void)context.send("ponger", [&](msg::Envelope::Builder envelope) {
        envelope.getBody().initHeartbeat().setSequence(sequence);
      });
    }
  }

  void report(runtime::ActorContext& context) {
    reported_ = true;
    std::ofstream(context.spec().run_dir + "/pinger-result.txt")
        << "answered " << answered_.size() << " of " << requests_ << "\n";
    (void)context.send("head", [&](msg::Envelope::Builder envelope) {
      auto report = runtime::init_payload<msg::StepReport>(envelope);
      report.setStep(0);  // the first and only step (steps count from 0)
      report.setPolicyVersion(1);
      report.setCorrectFraction(1.0);
      report.setFinished(true);
    });
  }

  uint64_t requests_;
  std::set<uint64_t> answered_;
  bool reported_ = false;
};

class Ponger final : public runtime::Actor {
 public:
  explicit Ponger(const runtime::ActorSpec& spec)
      : fault_(spec.params["fault"].as<std::string>("none")),
        fault_at_(spec.params["at"].as<uint64_t>(0)),
        hang_(spec.params["hang_ms"].as<int>(1000)),
        hang_forever_(!spec.params["hang_ms"].IsDefined()),
        run_dir_(spec.run_dir),
        marker_(spec.run_dir + "/ponger-fault-injected") {}

  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    if (!envelope.getBody().isHeartbeat()) return;
    if (++seen_ == fault_at_) inject_fault();
    const uint64_t sequence = envelope.getBody().getHeartbeat().getSequence();
    (void)context.send(envelope.getSender().cStr(), [&](msg::Envelope::Builder reply) {
      reply.getBody().initHeartbeat().setSequence(sequence);
    });
  }

 private:
  void inject_fault() {
    if (fault_ == "always_throw") throw std::runtime_error("injected fault");
    if (fault_ == "none" || std::filesystem::exists(marker_)) return;
    std::ofstream(marker_) << fault_ << "\n";
    if (fault_ == "kill") ::raise(SIGKILL);
    if (fault_ == "throw") throw std::runtime_error("injected fault");
    if (fault_ == "stop") {
      wait_until_head_has_a_report();
      ::raise(SIGSTOP);
    }
    if (fault_ == "hang") {
      do {
        std::this_thread::sleep_for(hang_);
      } while (hang_forever_);
    }
  }

  // The reporter thread sends this process's first report as its actors start; on a loaded
  // machine the handler can get here before the head has it. Bounded: a head that never shows
  // it lets the stop go ahead, and the test's own check on the cause then fails.
  void wait_until_head_has_a_report() const {
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < until) {
      if (const auto address = runtime::resolve_inspect_address(run_dir_)) {
        runtime::InspectionClient client(*address);
        if (const auto view = client.fetch(1s)) {
          for (const runtime::ProcessView& process : view->processes) {
            if (process.pid == ::getpid() && process.report_age_seconds >= 0) return;
          }
        }
      }
      std::this_thread::sleep_for(20ms);  // polling the head, a separate process
    }
  }

  std::string fault_;
  uint64_t fault_at_;
  std::chrono::milliseconds hang_{0};
  bool hang_forever_ = false;
  std::string run_dir_;
  std::string marker_;
  uint64_t seen_ = 0;
};

class Streamer final : public runtime::Actor {
 public:
  explicit Streamer(const runtime::ActorSpec& spec)
      : to_(spec.params["to"].as<std::string>()), every_(spec.params["every_ms"].as<int>(10)) {}

  void on_start(runtime::ActorContext& context) override { on_timer(context, 0); }
  void on_message(runtime::ActorContext&, msg::Envelope::Reader) override {}
  void on_timer(runtime::ActorContext& context, uint64_t) override {
    // A busy or restarting recipient misses this one; the next follows.
    (void)context.send(
        to_, [&](msg::Envelope::Builder envelope) { envelope.getBody().initHeartbeat().setSequence(++sent_); },
        {.wait_for_room = 0ms});
    context.start_timer(every_, 0);
  }

 private:
  std::string to_;
  std::chrono::milliseconds every_;
  uint64_t sent_ = 0;
};

class Sleeper final : public runtime::Actor {
 public:
  explicit Sleeper(const runtime::ActorSpec& spec) : block_(spec.params["block_ms"].as<int>()) {}

  void on_start(runtime::ActorContext& context) override { poke(context); }
  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    if (!envelope.getBody().isHeartbeat()) return;
    std::this_thread::sleep_for(block_);  // the slow work this role stands for
    poke(context);
  }

 private:
  void poke(runtime::ActorContext& context) {
    (void)context.send(context.self(), [&](msg::Envelope::Builder envelope) { envelope.getBody().initHeartbeat(); });
  }

  std::chrono::milliseconds block_;
};

class Quitter final : public runtime::Actor {
 public:
  explicit Quitter(const runtime::ActorSpec& spec)
      : how_(spec.params["how"].as<std::string>()),
        once_(spec.params["once"].as<bool>(false)),
        marker_(spec.run_dir + "/" + spec.name + "-quit") {}

  void on_start(runtime::ActorContext& context) override {
    std::cout << "quitter " << context.self() << ": started" << std::endl;
    context.start_timer(0ms, 0);
  }
  void on_message(runtime::ActorContext&, msg::Envelope::Reader) override {}
  void on_timer(runtime::ActorContext&, uint64_t) override {
    if (once_ && std::filesystem::exists(marker_)) return;
    std::ofstream(marker_) << how_ << "\n";
    if (how_ == "kill") ::raise(SIGKILL);
    ::_exit(0);
  }

 private:
  std::string how_;
  bool once_;
  std::string marker_;
};

class Drainer final : public runtime::Actor {
 public:
  explicit Drainer(const runtime::ActorSpec& spec)
      : count_(spec.params["count"].as<uint64_t>()), handle_(spec.params["handle_ms"].as<int>()) {}

  void on_start(runtime::ActorContext& context) override {
    for (uint64_t sequence = 1; sequence <= count_; ++sequence) {
      (void)context.send(context.self(), [&](msg::Envelope::Builder envelope) {
        envelope.getBody().initHeartbeat().setSequence(sequence);
      });
    }
    (void)context.send("head", [&](msg::Envelope::Builder envelope) {
      auto report = runtime::init_payload<msg::StepReport>(envelope);
      report.setStep(0);
      report.setPolicyVersion(1);
      report.setFinished(true);
    });
  }
  void on_message(runtime::ActorContext&, msg::Envelope::Reader envelope) override {
    if (!envelope.getBody().isHeartbeat()) return;
    std::this_thread::sleep_for(handle_);  // the work each message stands for
    ++handled_;
  }
  void on_stop(runtime::ActorContext& context) override {
    std::ofstream(context.spec().run_dir + "/drained.txt") << "handled " << handled_ << "\n";
  }

 private:
  uint64_t count_;
  std::chrono::milliseconds handle_;
  uint64_t handled_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  training::register_domain_messages();
  runtime::register_progress_observer(training::make_step_progress);
  runtime::register_role("pinger",
                         [](const runtime::ActorSpec& spec) { return std::make_unique<Pinger>(spec); });
  runtime::register_role("ponger",
                         [](const runtime::ActorSpec& spec) { return std::make_unique<Ponger>(spec); });
  runtime::register_role("streamer",
                         [](const runtime::ActorSpec& spec) { return std::make_unique<Streamer>(spec); });
  runtime::register_role("sleeper",
                         [](const runtime::ActorSpec& spec) { return std::make_unique<Sleeper>(spec); });
  runtime::register_role("quitter",
                         [](const runtime::ActorSpec& spec) { return std::make_unique<Quitter>(spec); });
  runtime::register_role("drainer",
                         [](const runtime::ActorSpec& spec) { return std::make_unique<Drainer>(spec); });
  runtime::register_required_peer("pinger", "ponger", "it sends its requests to a ponger");
  CLI::App program{"A drk-like program with test roles, for the runtime's tests.", "drk_test_host"};
  runtime::RunOptions run_options;
  runtime::HostArgs host_args;
  const CLI::App* run = runtime::add_run_command(program, run_options);
  const CLI::App* host = runtime::add_host_command(program, host_args);
  if (auto done = runtime::parse_command_line(program, runtime::command_line_or_orders(argc, argv))) return *done;
  if (run->parsed()) {
    run_options.summary = [](const std::string& run_dir) {
      std::ifstream in(run_dir + "/pinger-result.txt");
      std::stringstream result;
      result << in.rdbuf();
      std::cout << "summary: " << result.str() << std::flush;
      return 0;
    };
    return runtime::run_head(run_options);
  }
  if (host->parsed()) return runtime::run_host(host_args);
  std::cout << program.help();
  return 2;
}
