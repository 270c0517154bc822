#include "actors/evaluator/engine/sandbox_session.h"

#include <signal.h>

#include <algorithm>

#include <capnp/serialize.h>

#include "actors/evaluator/engine/engine_clock.h"
#include "actors/evaluator/engine/evaluation_device.h"
#include "actors/evaluator/sandbox_channel.h"

namespace drk::evaluator {
namespace {

// How long the Evaluator waits, after a reply, for the sandbox's threads to sleep before it reads
// their CPU time (exact only then).
constexpr auto kCpuReadWait = std::chrono::microseconds(1000);

// What a request is, as set_request_observer() names it.
const char* request_name(msg::SandboxRequest::Reader request) {
  switch (request.which()) {
    case msg::SandboxRequest::LOAD: return "load request";
    case msg::SandboxRequest::RUN: {
      const auto run = request.getRun();
      if (!run.getTimed()) return "run";
      return run.getReference() ? "timed reference batch" : "timed batch";
    }
    case msg::SandboxRequest::TIME: return "timed round";
    case msg::SandboxRequest::PEAKS: return "peaks";
    case msg::SandboxRequest::ENERGY: return "energy";
    case msg::SandboxRequest::METRICS: return "metrics";
  }
  return "request";
}

}  // namespace

SandboxSession::SandboxSession(const EngineOptions& options, const SharedRegion& region, EvaluationDevice& device)
    : options_(options), region_(region), device_(device) {}

Status SandboxSession::start() {
  auto fresh = fresh_sandbox();
  if (!fresh) return fresh.error();
  spares_.push_back(std::move(*fresh));
  start_spares();
  return {};
}

// A sandbox that has run no candidate: a spare, or one forked now.
Result<std::unique_ptr<SandboxProcess>> SandboxSession::fresh_sandbox() {
  while (!spares_.empty()) {
    auto spare = std::move(spares_.front());
    spares_.pop_front();
    if (spare->alive()) return spare;
  }
  return spawn_sandbox();
}

// A sandbox forked from the zygote now (the zygote started first when it is not running).
Result<std::unique_ptr<SandboxProcess>> SandboxSession::spawn_sandbox() {
  if (!zygote_ || !zygote_->alive()) {
    auto started = SandboxZygote::start(options_.sandbox.executable, options_.sandbox.program_arguments);
    if (!started) return started.error();
    zygote_ = std::move(*started);
  }
  return SandboxProcess::spawn(zygote_, options_.sandbox, region_.fd());
}

// Spares up to the count asked for (eval.sandbox_spares), started when a candidate ends, and, on
// a device that says so (EvaluationDevice::spares_beside_candidate), also when one begins.
void SandboxSession::start_spares() {
  std::erase_if(spares_, [](const auto& spare) { return !spare->alive(); });
  while (spares_.size() < options_.sandbox_spares) {
    auto spawned = spawn_sandbox();
    if (!spawned) return;  // the next candidate meets the reason
    spares_.push_back(std::move(*spawned));
  }
}

// Within one evaluation: the candidate's sandbox, or a fresh one when it died.
Status SandboxSession::ensure_sandbox() {
  if (sandbox_ && sandbox_->alive()) return {};
  sandbox_.reset();
  auto fresh = fresh_sandbox();
  if (!fresh) return fresh.error();
  sandbox_ = std::move(*fresh);
  return {};
}

Status SandboxSession::begin_candidate() {
  sandbox_.reset();
  auto fresh = fresh_sandbox();
  if (!fresh) return fresh.error();
  sandbox_ = std::move(*fresh);
  if (device_.spares_beside_candidate()) start_spares();
  last_candidate_pid_ = sandbox_->pid();
  cpu_at_reply_.reset();
  idle_.reset();
  return {};
}

void SandboxSession::end_candidate() {
  sandbox_.reset();
  start_spares();
}

Result<std::string> SandboxSession::stage_library(const std::string& library_path, const std::string& staged_name) {
  if (auto s = ensure_sandbox(); !s) return s.error();
  return sandbox_->stage_library(library_path, staged_name);
}

Result<std::string> SandboxSession::stage_directory(const std::string& directory, const std::string& staged_name) {
  if (auto s = ensure_sandbox(); !s) return s.error();
  return sandbox_->stage_directory(directory, staged_name);
}

uint64_t SandboxSession::build_request(capnp::MallocMessageBuilder& message, const EvaluationRun& run,
                                       const RequestFill& fill) {
  auto request = message.initRoot<msg::SandboxRequest>();
  const uint64_t id = next_request_id_++;
  request.setId(id);
  request.setRegionBytes(region_.size());
  run.store->lend(request);
  fill(request);
  return id;
}

Result<SandboxAnswer> SandboxSession::call(EvaluationRun& run, std::chrono::milliseconds timeout,
                                           const RequestFill& fill) {
  if (auto s = ensure_sandbox(); !s) return s.error();
  if (auto s = run.store->synchronize(); !s) return s.error();
  capnp::MallocMessageBuilder message;
  const uint64_t id = build_request(message, run, fill);
  const bool asleep_before = sandbox_->asleep();
  const auto cpu_read_before = Clock::now();
  const std::optional<uint64_t> cpu_before = sandbox_->cpu_time_ns();
  auto started = Clock::now();
  if (cpu_at_reply_ && cpu_before) {
    idle_.add(static_cast<double>(*cpu_before - *cpu_at_reply_),
              ns_between(reply_time_, started));
  }
  cpu_at_reply_.reset();
  auto words = sandbox_->call(message, timeout);
  const auto answered = Clock::now();
  if (request_observer_) request_observer_(request_name(message.getRoot<msg::SandboxRequest>()), started, answered);
  const double wall_ns = ns_between(started, answered);
  // Read once the sandbox sleeps again (its reply's tail done), so that the reading is exact and
  // the one before the next request too, which then finds it still asleep.
  std::optional<uint64_t> cpu_after;
  bool asleep_after = false;
  if (sandbox_ && sandbox_->alive()) {
    asleep_after = sandbox_->wait_until_asleep(kCpuReadWait);
    cpu_after = sandbox_->cpu_time_ns();
  }
  reply_time_ = Clock::now();
  if (cpu_after) cpu_at_reply_ = cpu_after;
  device_.after_reply();
  if (!words) {
    // A malformed frame on the reply pipe: not the sandbox's writing.
    if (words.error().code == Errc::protocol_error) run.out.getEvidence().setReplyTampered(words.error().message);
    record_sandbox_failure(run, words.error());
    return words.error();
  }
  capnp::FlatArrayMessageReader reader(*words, frame_reader_options());
  auto reply = reader.getRoot<msg::SandboxReply>();
  if (reply.getId() != id) {
    Error error = make_error(Errc::protocol_error, "the sandbox answered request " + std::to_string(reply.getId()) +
                                                       " instead of " + std::to_string(id));
    run.out.getEvidence().setReplyTampered(error.message);
    sandbox_.reset();
    record_sandbox_failure(run, error);
    return error;
  }
  SandboxAnswer answer = read_answer(reply);
  answer.wall_ns = wall_ns;
  if (cpu_before && cpu_after) {
    answer.cpu_ns = static_cast<double>(*cpu_after - *cpu_before);
    answer.cpu_span_ns = ns_between(cpu_read_before, reply_time_);
    answer.cpu_exact = asleep_before && asleep_after;
  }
  // Evidence for the Verifier: library-table use, and threads a call left running.
  auto evidence = run.out.getEvidence();
  evidence.setLibraryCalls(evidence.getLibraryCalls() + answer.library_calls);
  evidence.setCandidateCalls(evidence.getCandidateCalls() + answer.calls_completed);
  evidence.setThreadsLeftRunning(std::max(evidence.getThreadsLeftRunning(), reply.getThreadsLeftRunning()));
  if (reply.getMathModeChanged().size() != 0 && evidence.getMathModeChanged().size() == 0)
    evidence.setMathModeChanged(reply.getMathModeChanged());
  if (reply.getHarnessSymbol().size() != 0) evidence.setHarnessSymbol(reply.getHarnessSymbol());
  if (reply.getFailedCheck().size() != 0 && !evidence.hasPythonCheck()) {
    auto check = evidence.initPythonCheck();
    check.setCode(reply.getFailedCheck());
    check.setEvidence(reply.getMessage());
  }
  if (answer.status == msg::SandboxStatus::CUDA_ERROR) {
    // The sandbox's CUDA context is dead and it exits: evidence, then a fresh sandbox next time.
    run.out.getEvidence().setCudaError(answer.message);
    sandbox_.reset();
  }
  evidence.setGpuMemoryBytes(std::max(evidence.getGpuMemoryBytes(), reply.getDeviceMemoryBytes()));
  if (answer.status == msg::SandboxStatus::MEMORY_LIMIT) {
    // The sandbox exits after this reply (releasing what the candidate kept): a fresh one next time.
    evidence.setGpuMemoryLimitExceeded(true);
    sandbox_.reset();
  }
  return answer;
}

void SandboxSession::record_sandbox_failure(EvaluationRun& run, const Error& error) {
  run.sandbox_failed = true;
  auto evidence = run.out.getEvidence();
  SandboxExit exit = sandbox_ ? sandbox_->exit() : SandboxExit{};
  if (error.code == Errc::timeout) {
    run.out.setSandbox(msg::SandboxOutcome::TIMED_OUT);
    evidence.setSandboxSignal(SIGKILL);
  } else {
    run.out.setSandbox(msg::SandboxOutcome::CRASHED);
    evidence.setSandboxSignal(exit.signal);
    evidence.setSandboxExitCode(exit.exit_code);
  }
  run.out.setErrorText(error.message);
  run.out.setCorrect(false);
  sandbox_.reset();
}

Result<SandboxAnswer> SandboxSession::call_once(EvaluationRun& run, bool checksum) {
  return call(run, options_.call_timeout, [&](msg::SandboxRequest::Builder request) {
    auto run_request = request.initRun();
    run_request.setCalls(1);
    run_request.setOutputChecksum(checksum);
    fill_buffer_sets(run_request.initSets(1), run.layout, {0});
  });
}

Result<SandboxAnswer> SandboxSession::run_batch(EvaluationRun& run, uint32_t calls) {
  return call(run, options_.call_timeout, [&](msg::SandboxRequest::Builder request) {
    auto run_request = request.initRun();
    run_request.setCalls(calls);
    run_request.setSwapSeed(run.next_swap_seed());
    fill_buffer_sets(run_request.initSets(run.set_count()), run.layout, all_sets(run.set_count()));
  });
}

void SandboxSession::record_idle_cpu(EvaluationRun& run) {
  if (sandbox_ && sandbox_->alive() && cpu_at_reply_)
    if (const auto now = sandbox_->cpu_time_ns()) {
      idle_.add(static_cast<double>(*now - *cpu_at_reply_),
                ns_between(reply_time_, Clock::now()));
    }
  idle_.record(run.out.getEvidence());
}

std::optional<Status> batch_failed(EvaluationRun& run, const Result<SandboxAnswer>& answer, const char* phase) {
  auto out = run.out;
  if (!answer) {
    if (!run.sandbox_failed) return Status(answer.error());
    out.setErrorText(std::string(phase) + ": " + std::string(out.getErrorText().cStr()));
    return Status();
  }
  if (answer->status != msg::SandboxStatus::OK) {
    out.setSandbox(answer->status == msg::SandboxStatus::RETURNED_ERROR ? msg::SandboxOutcome::RETURNED_ERROR
                                                                        : msg::SandboxOutcome::CRASHED);
    out.getEvidence().setCandidateStatus(answer->candidate_status);
    out.setErrorText(std::string(phase) + ": " + answer->message);
    out.setCorrect(false);
    return Status();
  }
  return std::nullopt;
}

}  // namespace drk::evaluator
