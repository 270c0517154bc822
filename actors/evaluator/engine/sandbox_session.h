// SandboxSession: the engine's sandboxes and its requests to them. A fresh sandbox per candidate
// (forked by the zygote, sandbox_zygote.h), spares started ahead, and every request of an
// evaluation: its id, the shared region's size and the device memory lent, the reply read into a
// SandboxAnswer with this process's clock and the sandbox's CPU time around it, and the evidence
// every reply carries (library calls, threads left running, math modes, CUDA errors, device
// memory, the check a Python candidate's call failed). Between requests it counts the sandbox's CPU time as idle (idle_cpu.h).
//
// A sandbox that dies, hangs or answers out of turn is an outcome of the run, recorded in its
// result (sandbox, errorText, evidence) with run.sandbox_failed set: call() then returns the
// error too, and a later call() gets a fresh sandbox (a device error ends a CUDA sandbox, and the
// evaluation goes on).
//
// Ownership: the options, the shared region and the device outlive the session.
// Thread-safety: the engine's thread only.
// Errors: io_error (or the zygote's error) when no sandbox can be started; protocol_error for a
// malformed reply or one to another request; timeout for a hung sandbox.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <capnp/message.h>

#include "actors/evaluator/engine/evaluation_run.h"
#include "actors/evaluator/engine/idle_cpu.h"
#include "actors/evaluator/engine/sandbox_answer.h"
#include "actors/evaluator/evaluation.h"
#include "actors/evaluator/sandbox_process.h"
#include "actors/evaluator/sandbox_zygote.h"
#include "actors/evaluator/shared_region.h"

namespace drk::evaluator {

class EvaluationDevice;

using RequestFill = std::function<void(msg::SandboxRequest::Builder)>;

class SandboxSession {
 public:
  SandboxSession(const EngineOptions& options, const SharedRegion& region, EvaluationDevice& device);

  // One sandbox ready for the first candidate, and the spares started.
  Status start();
  // A candidate's evaluation begins: the sandbox of the one before is gone, this one gets a
  // sandbox no candidate has run in, and the idle count starts again.
  Status begin_candidate();
  // ...and ends: its sandbox, with everything it started, is killed; spares that died are replaced.
  void end_candidate();
  // The candidate's library (or a module it loads) copied where its sandbox may read it
  // (SandboxProcess::stage_library).
  Result<std::string> stage_library(const std::string& library_path, const std::string& staged_name = "candidate.so");
  // The folder `directory` copied into the candidate's sandbox's directory as `staged_name`
  // (SandboxProcess::stage_directory); the copy's path.
  Result<std::string> stage_directory(const std::string& directory, const std::string& staged_name);
  // The process id of the last candidate's sandbox; 0 before the first.
  pid_t last_candidate_pid() const { return last_candidate_pid_; }

  // A request with a fresh id, the region's size and the run's store lent, as `fill` completes it;
  // returns the id.
  uint64_t build_request(capnp::MallocMessageBuilder& message, const EvaluationRun& run, const RequestFill& fill);
  // Sends a request filled by `fill` to the candidate's sandbox.
  Result<SandboxAnswer> call(EvaluationRun& run, std::chrono::milliseconds timeout, const RequestFill& fill);
  // One checked call of the candidate on buffer set 0; with `checksum`, the sandbox takes its
  // outputs' checksum as the call returns (SandboxAnswer::output_checksum).
  Result<SandboxAnswer> call_once(EvaluationRun& run, bool checksum = false);
  // `calls` calls over every buffer set, with the run's input swaps if any.
  Result<SandboxAnswer> run_batch(EvaluationRun& run, uint32_t calls);
  // The sandbox's CPU time since its last reply, counted as idle, and the evidence of the idle
  // intervals: called when the evaluation's last request has been answered.
  void record_idle_cpu(EvaluationRun& run);
  // Told of every request as its reply is read (or it fails): "load request", "run" (untimed calls:
  // a correctness trial, a check, a warm-up), "timed batch", "timed reference batch", "timed round" (CUDA's
  // candidate and reference calls), "peaks", "energy" or "metrics", with when it was sent and
  // answered; for traces (EvaluationEngine::set_step_observer). Empty: nobody is told.
  void set_request_observer(EvaluationEngine::StepObserver observer) { request_observer_ = std::move(observer); }

 private:
  Result<std::unique_ptr<SandboxProcess>> fresh_sandbox();
  Result<std::unique_ptr<SandboxProcess>> spawn_sandbox();
  void start_spares();
  Status ensure_sandbox();
  void record_sandbox_failure(EvaluationRun& run, const Error& error);

  const EngineOptions& options_;
  const SharedRegion& region_;
  EvaluationDevice& device_;
  // `sandbox_` runs the candidate being evaluated and ends with its evaluation; `spares_` are
  // started ahead and have run nothing.
  std::shared_ptr<SandboxZygote> zygote_;
  std::unique_ptr<SandboxProcess> sandbox_;
  std::deque<std::unique_ptr<SandboxProcess>> spares_;
  pid_t last_candidate_pid_ = 0;
  uint64_t next_request_id_ = 1;
  // The candidate's sandbox between requests: its CPU time and this clock at its last reply.
  std::optional<uint64_t> cpu_at_reply_;
  std::chrono::steady_clock::time_point reply_time_;
  IdleCpu idle_;
  EvaluationEngine::StepObserver request_observer_;
};

// A batch's answer judged for the step that sent it: nullopt when it ran; otherwise what the step
// returns, the result made incorrect and its errorText prefixed with `phase` (a fault is returned
// as it is).
std::optional<Status> batch_failed(EvaluationRun& run, const Result<SandboxAnswer>& answer, const char* phase);

}  // namespace drk::evaluator
