#include "actors/evaluator/engine/bounds_check.h"

#include "actors/evaluator/compute_sanitizer.h"
#include "actors/evaluator/engine/seed_mix.h"
#include "actors/evaluator/guarded_tensors.h"

namespace drk::evaluator {
namespace {

constexpr uint64_t kSanitizerSeedSalt = 0x5a417a45u;  // the sanitized call's inputs: a draw of their own

}  // namespace

// The check's call: fresh inputs of its own, each tensor in an allocation of its own.
std::optional<SeparateCallOutcome> BoundsCheck::call(EvaluationRun& run, const compile::CompiledCandidate& compiled,
                                                     std::vector<std::string> launcher, std::string& note) {
  SeparateCallSpec spec;
  spec.sandbox = options_.sandbox;
  spec.sandbox.launcher = std::move(launcher);
  spec.sandbox.separate_allocations = true;
  spec.max_threads = options_.max_threads;
  spec.input_seed = mix(run.seed, kSanitizerSeedSalt);
  spec.timeout = options_.sanitizer_timeout;
  spec.fill_load = [&](msg::LoadRequest::Builder load) { device_.fill_load(run, load); };
  return call_separately(spec, compiled, run, session_, shared_, note);
}

// CUDA: one call under compute-sanitizer memcheck (initcheck: under initcheck); its error lines
// become evidence.
void BoundsCheck::sanitizer(EvaluationRun& run, const compile::CompiledCandidate& compiled, bool initcheck) {
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
  const auto call = this->call(run, compiled, std::move(launcher), note);
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
void BoundsCheck::guarded_call(EvaluationRun& run, const compile::CompiledCandidate& compiled) {
  auto evidence = run.out.getEvidence();
  std::string note;
  const auto call = this->call(run, compiled, {}, note);
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
