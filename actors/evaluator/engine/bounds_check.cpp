#include "actors/evaluator/engine/bounds_check.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "actors/evaluator/compute_sanitizer.h"
#include "actors/evaluator/guarded_tensors.h"
#include "actors/evaluator/sandbox_channel.h"

namespace drk::evaluator {
namespace {

constexpr uint64_t kSanitizerSeedSalt = 0x5a417a45u;  // the sanitized call's inputs: a draw of their own

}  // namespace

struct BoundsCheck::SeparateCall {
  bool ran = false;     // loaded and called once
  std::string failure;  // why not, when the sandbox said
  std::string output;   // what the sandbox (or its launcher) printed
  SandboxExit exit;
};

// One call of the candidate in a sandbox of its own (under `launcher` when it has one) whose
// tensors each have an allocation of their own, on fresh inputs, its outputs poisoned (left
// unwritten on a device): the out-of-bounds check's call. The warm sandbox is untouched.
// nullopt, with the reason in `note`, when that sandbox cannot be had.
std::optional<BoundsCheck::SeparateCall> BoundsCheck::call_separately(EvaluationRun& run, const std::string& library,
                                                                     std::vector<std::string> launcher,
                                                                     std::string& note) {
  SandboxOptions separate = options_.sandbox;
  separate.launcher = std::move(launcher);
  separate.separate_allocations = true;
  // Its tensors in allocations of their own, copied from the shared region: one set there.
  EvaluationRun host = run;
  host.store = &shared_;
  host.lay_out(make_layout(*run.task, run.shapes, 1));
  if (auto s = host.reserve(host.layout.bytes); !s) {
    note = "no shared memory for the separate call: " + s.error().message;
    return std::nullopt;
  }
  auto process = SandboxProcess::start(separate, shared_.region().fd());
  if (!process) {
    note = "its sandbox did not start: " + process.error().message;
    return std::nullopt;
  }
  auto staged = (*process)->stage_library(library);
  if (!staged) {
    note = staged.error().message;
    return std::nullopt;
  }
  host.write_inputs(0, mix(run.seed, kSanitizerSeedSalt));
  host.poison_outputs(0);
  SeparateCall call;
  auto send = [&](const std::function<void(msg::SandboxRequest::Builder)>& fill) {
    capnp::MallocMessageBuilder message;
    session_.build_request(message, host, fill);
    auto words = (*process)->call(message, options_.sanitizer_timeout);
    if (!words) {
      call.failure = words.error().message;
      return false;
    }
    capnp::FlatArrayMessageReader reader(*words, frame_reader_options());
    auto reply = reader.getRoot<msg::SandboxReply>();
    if (reply.getStatus() != msg::SandboxStatus::OK && reply.getStatus() != msg::SandboxStatus::CUDA_ERROR) {
      call.failure = reply.getMessage().cStr();
      return false;
    }
    return true;
  };
  call.ran = send([&](msg::SandboxRequest::Builder request) {
    auto load = request.initLoad();
    load.setLibrary(*staged);
    load.setMaxThreads(options_.max_threads);
  }) && send([&](msg::SandboxRequest::Builder request) {
    auto run_request = request.initRun();
    run_request.setCalls(1);
    fill_buffer_sets(run_request.initSets(1), host.layout, {0});
  });
  call.output = (*process)->finish(std::chrono::milliseconds(30000));
  call.exit = (*process)->exit();
  return call;
}

// CUDA: one call under compute-sanitizer memcheck (initcheck: under initcheck); its error lines
// become evidence.
void BoundsCheck::sanitizer(EvaluationRun& run, const std::string& library, bool initcheck) {
  auto evidence = run.out.getEvidence();
  auto sanitizer = find_compute_sanitizer();
  if (!sanitizer) {
    evidence.setSanitizerNote(sanitizer.error().message);
    return;
  }
  // --padding: invalid bytes after every allocation, so that a read past one tensor cannot land in
  // the next allocation, which cudaMalloc may place right behind it.
  // initcheck: reads of device memory nothing wrote; the sandbox leaves the outputs unwritten there.
  std::vector<std::string> launcher = {*sanitizer, "--tool", initcheck ? "initcheck" : "memcheck"};
  if (!initcheck) launcher.insert(launcher.end(), {"--padding", "4096"});
  launcher.insert(launcher.end(), {"--print-limit", "8", "--error-exitcode", std::to_string(kSanitizerErrorExit)});
  std::string note;
  const auto call = call_separately(run, library, std::move(launcher), note);
  if (!call) {
    evidence.setSanitizerNote("compute-sanitizer: " + note);
    return;
  }
  const std::string why_unfinished = call->failure.empty() ? describe_exit(call->exit) : call->failure;
  if (initcheck) {
    // Only the candidate's device reads count: host API errors are the harness copying back an
    // output left unwritten, which the trials' poison judges.
    const InitcheckReport report = parse_initcheck_output(call->output);
    if (report.device_reads > 0)
      evidence.setInitcheckErrors(report.excerpt);
    else if (!call->ran || !report.finished)
      evidence.setSanitizerNote("compute-sanitizer initcheck did not finish (" + why_unfinished +
                                "): " + call->output.substr(0, 600));
    return;
  }
  const MemcheckReport report = parse_memcheck_output(call->output);
  if (report.errors > 0 || (call->exit.exit_code == kSanitizerErrorExit && !call->exit.timed_out)) {
    evidence.setSanitizerRan(true);
    evidence.setSanitizerErrors(report.excerpt.empty() ? "compute-sanitizer reported errors:\n" + call->output.substr(0, 2000)
                                                       : report.excerpt);
  } else if (call->ran && report.finished) {
    evidence.setSanitizerRan(true);
  } else {
    evidence.setSanitizerNote("compute-sanitizer did not finish (" + why_unfinished + "): " +
                              call->output.substr(0, 600));
  }
}

// CPU: one call with every tensor between guard pages (guarded_tensors.h); a fault in a guard
// becomes evidence.
void BoundsCheck::guarded_call(EvaluationRun& run, const std::string& library) {
  auto evidence = run.out.getEvidence();
  std::string note;
  const auto call = call_separately(run, library, {}, note);
  if (!call) {
    evidence.setSanitizerNote("guard pages: " + note);
    return;
  }
  if (const std::string fault = parse_out_of_bounds(call->output);
      !fault.empty() && call->exit.exit_code == kOutOfBoundsExit && !call->exit.timed_out) {
    evidence.setSanitizerRan(true);
    evidence.setSanitizerErrors(fault);
  } else if (call->ran && call->exit.exit_code == 0 && call->exit.signal == 0 && !call->exit.timed_out) {
    evidence.setSanitizerRan(true);
  } else {
    evidence.setSanitizerNote("the call between guard pages did not finish (" +
                              (call->failure.empty() ? describe_exit(call->exit) : call->failure) + ")");
  }
}

}  // namespace drk::evaluator
