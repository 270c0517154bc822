#include "actors/verifier/verify.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/verifier/static_checks.h"
#include "judging/best_known_bound.h"
#include "judging/python_static_check.h"
#include "judging/roofline_bound.h"
#include "messages/drk.capnp.h"

namespace drk::verifier {
namespace {

struct Failure {
  std::string code;
  std::string evidence;
};

// The harness times batches from outside the sandbox; a sandbox that reports far less time
// than the harness saw is lying about its clock (or doing work after it answered).
constexpr double kMaxWallCheckRatio = 3.0;

// The float32 precision budget, as a share of the output's scale (max |float64 reference|): an
// honest float32 candidate may differ from the float64 answer by a few times what the float32
// reference does (another summation order), or by 2^-16 of the scale, whichever is larger;
// float16, bfloat16 and TF32 arithmetic (10 or fewer mantissa bits) err by 2^-11 or more.
constexpr double kPrecisionBudgetOverReference = 64.0;
constexpr double kPrecisionFloor = 1.0 / 65536.0;

// CUDA: the events that time a call are recorded on ctx->stream around it, so every kernel the
// call ordered there ends before the end event; CUPTI's span of the call's kernels (first start to
// last end) longer than the event time by this share, and by kWorkAfterReturnUs, is work that
// outlived the call on a stream ctx->stream was never joined to.
constexpr double kWorkAfterReturnShare = 0.25;
constexpr double kWorkAfterReturnUs = 2.0;
// CPU time the sandbox may use while no call runs: its library pool's max_threads - 1 workers
// may spin after their last parallel region (OpenMP's wait policy), so up to that many cores,
// plus half of one; beyond that (and kIdleCpuMs), work went on after the calls returned.
constexpr double kIdleCpuMs = 5.0;
constexpr double kIdleCoresOverPool = 0.5;
// CPU time per wall time of the timed batches beyond max_threads x this, plus kCpuPerWallSlack:
// threads beyond those the candidate may use worked for it. The Evaluator keeps only batches
// whose clock readings found the sandbox asleep, which are exact: N threads cannot exceed N.
constexpr double kCpuPerWallOverThreads = 1.0;
constexpr double kCpuPerWallSlack = 0.1;
// A candidate this much faster when its outputs already hold their own answers skips work.
constexpr double kAnswerReuseRatio = 3.0;

// Why a rule's findings matter, after its evidence.
std::string static_reason(const std::string& code, Severity severity) {
  if (code == "static.thread" && severity == Severity::warning)
    return "allowed within ctx->max_threads when every thread is joined before drk_kernel returns";
  if (code == "static.thread")
    return "a CUDA candidate queues its work on ctx->stream: a host thread can queue it after drk_kernel returned";
  if (code == "static.side_stream")
    return "streams of its own are allowed when joined to ctx->stream before drk_kernel returns (cudaEventRecord on "
           "the side stream, cudaStreamWaitEvent on ctx->stream)";
  if (code == "static.stream_unjoined")
    return "work on a stream ctx->stream never waits for escapes the timer: record an event (cudaEventDisableTiming) "
           "on the side stream and make ctx->stream wait on it (cudaStreamWaitEvent) before returning";
  if (code == "static.channel")
    return "the sandbox's descriptors and ctx->harness are the harness's result channel: a candidate's only results "
           "are its output tensors and its status";
  return "outside the candidate ABI (kernels/abi/drk_kernel.h)";
}

// A static finding of either language's scan: its code, whether it only warns, where and what
// it found ("line 14: ..."), and why that matters.
struct SourceFinding {
  std::string code;
  bool warning = false;
  std::string where;
  std::string reason;
};

// One entry per reason code, its first findings as evidence, then why they matter.
void add_source_findings(const std::vector<SourceFinding>& findings, std::vector<Failure>& failures,
                         std::vector<Failure>& warnings) {
  constexpr size_t kFindingsShown = 3;
  std::vector<std::pair<std::string, std::vector<const SourceFinding*>>> by_code;
  for (const auto& finding : findings) {
    auto at = std::find_if(by_code.begin(), by_code.end(), [&](const auto& entry) { return entry.first == finding.code; });
    if (at == by_code.end()) at = by_code.insert(by_code.end(), {finding.code, {}});
    at->second.push_back(&finding);
  }
  for (const auto& [code, of_code] : by_code) {
    std::string evidence;
    for (size_t i = 0; i < of_code.size() && i < kFindingsShown; ++i)
      evidence += (i ? "; " : "") + of_code[i]->where;
    if (of_code.size() > kFindingsShown) evidence += "; and " + std::to_string(of_code.size() - kFindingsShown) + " more";
    evidence += (evidence.empty() ? "" : ": ") + of_code.front()->reason;
    (of_code.front()->warning ? warnings : failures).push_back({code, evidence});
  }
}

std::vector<SourceFinding> cpp_source_findings(std::string_view source, Dialect dialect) {
  std::vector<SourceFinding> findings;
  for (const auto& finding : scan_source(source, dialect))
    findings.push_back({finding.code, finding.severity == Severity::warning, describe(finding),
                        static_reason(finding.code, finding.severity)});
  return findings;
}

// A KernelBench-format candidate's findings (judging/python_static_check.h), judged against the
// backend it was asked to write.
std::vector<SourceFinding> python_source_findings(std::string_view source, msg::PythonBackend backend) {
  std::vector<SourceFinding> findings;
  for (const auto& finding : judging::python_static_findings(source, judging::backend_of(backend)))
    findings.push_back({finding.code, finding.severity == judging::Severity::warning,
                        finding.line > 0 ? "line " + std::to_string(finding.line) + ": `" + finding.evidence + "`" : "",
                        finding.message});
  return findings;
}

std::string format(const char* pattern, double a, double b = 0, double c = 0, double d = 0) {
  char text[320];
  std::snprintf(text, sizeof text, pattern, a, b, c, d);
  return text;
}

void add_library_use(msg::EvalResult::Reader result, std::vector<Failure>& warnings) {
  const auto evidence = result.getEvidence();
  if (evidence.getLibraryCalls() > 0) {
    const double calls = static_cast<double>(evidence.getCandidateCalls());
    warnings.push_back({"library.used", format("%.0f library-table calls over %.0f candidate calls (%.2f per call)",
                                               static_cast<double>(evidence.getLibraryCalls()), calls,
                                               calls > 0 ? static_cast<double>(evidence.getLibraryCalls()) / calls : 0.0)});
  }
  if (result.hasGpu() && result.getGpu().getAllKernelUs() > 0 && result.getGpu().getCoverage() < 1.0) {
    const auto gpu = result.getGpu();
    warnings.push_back({"library.used", format("coverage %.3f: the candidate's own kernels ran %.2f us of %.2f us GPU "
                                               "time per call",
                                               gpu.getCoverage(), gpu.getOwnKernelUs(), gpu.getAllKernelUs())});
  }
}

std::vector<Failure> failed_checks(msg::EvalResult::Reader result, std::vector<Failure>& warnings) {
  std::vector<Failure> failures;
  const auto evidence = result.getEvidence();
  switch (result.getSandbox()) {
    case msg::SandboxOutcome::CRASHED:
      failures.push_back({"sandbox_crashed",
                          evidence.getSandboxSignal() != 0
                              ? "the sandbox was killed by signal " +
                                    std::to_string(evidence.getSandboxSignal())
                              : "the sandbox exited with code " +
                                    std::to_string(evidence.getSandboxExitCode())});
      break;
    case msg::SandboxOutcome::TIMED_OUT:
      failures.push_back({"sandbox_timeout", "the candidate missed its deadline and was killed"});
      break;
    case msg::SandboxOutcome::FAILED_TO_LOAD:
      // Refused before loading for what it reaches: harness_symbol below says so.
      if (evidence.getHarnessSymbol().size() == 0)
        failures.push_back({"failed_to_load", std::string(result.getErrorText().cStr())});
      break;
    case msg::SandboxOutcome::RETURNED_ERROR:
      // A Python call refused for what the candidate did: its check below says so.
      if (!evidence.hasPythonCheck())
        failures.push_back({"candidate_error", "drk_kernel returned status " +
                                                   std::to_string(evidence.getCandidateStatus())});
      break;
    case msg::SandboxOutcome::OK:
      break;
  }
  if (evidence.getOutputsLeftPoisoned()) {
    failures.push_back({"outputs_unwritten",
                        "an output still held the NaN poison after the call: every element "
                        "must be written"});
  }
  if (evidence.getInputsMutated()) {
    failures.push_back({"inputs_mutated", "an input differed from its pristine copy after the "
                                          "call: inputs are read-only"});
  }
  if (evidence.getWallCheckRatio() > kMaxWallCheckRatio) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "the harness measured %.2fx the time the sandbox reported for the same calls",
                  evidence.getWallCheckRatio());
    failures.push_back({"timer_mismatch", text});
  }
  if (evidence.getPrecisionChecked()) {
    const double budget = std::max(kPrecisionBudgetOverReference * evidence.getReferencePrecisionError(),
                                   kPrecisionFloor);
    if (evidence.getPrecisionError() > budget) {
      failures.push_back({"precision_downgrade",
                          format("error against a float64 reference %.3g of the output's scale, beyond the float32 "
                                 "budget %.3g (the float32 reference's own error is %.3g): the candidate computes "
                                 "in a narrower precision than float32",
                                 evidence.getPrecisionError(), budget, evidence.getReferencePrecisionError())});
    }
  }
  if (evidence.getStaleAfterFreshInputs()) {
    failures.push_back({"results_cached",
                        "correct in every trial, but wrong after timing on new inputs at the same addresses "
                        "(all drawn afresh, or a few secret elements swapped), the outputs still holding the "
                        "previous inputs' answers or another input's: results were cached across calls (by "
                        "address, shape or a sample of the inputs, or a CUDA graph replayed on the input it "
                        "captured), or work was skipped because the output already held numbers"});
  }
  if (evidence.getSecondShapeWrong().size() > 0) {
    failures.push_back({"hardcoded_shape",
                        std::string(evidence.getSecondShapeWrong().cStr()) +
                            ": correct at the task's shapes but wrong at its second shapes, which it accepted "
                            "(returned DRK_OK): the kernel ignores the shapes it is given; read them at run time, "
                            "or return DRK_E_UNSUPPORTED_SHAPE for shapes it does not handle"});
  }
  if (evidence.getRangeShapeWrong().size() > 0) {
    failures.push_back({"hardcoded_shape",
                        std::string(evidence.getRangeShapeWrong().cStr()) +
                            ": correct at the task's shapes but wrong at a shape of its range, which it accepted "
                            "(returned DRK_OK): read the shapes at run time, or return DRK_E_UNSUPPORTED_SHAPE for "
                            "shapes it does not handle (which lowers the reward, not the verdict)"});
  }
  if (evidence.getAnswerReuseRatio() > kAnswerReuseRatio) {
    failures.push_back({"results_cached",
                        format("%.1fx faster when each call's output already held the answer to its own inputs than "
                               "when it held another input's: work skipped when the output already holds the "
                               "answer (every timed call starts from an output that is not its answer)",
                               evidence.getAnswerReuseRatio())});
  }
  const bool cpu_candidate = result.getCandidate().getDevice() != msg::Device::CUDA;
  if (cpu_candidate && evidence.getMaxThreads() > 0 &&
      evidence.getCpuPerWall() > kCpuPerWallOverThreads * evidence.getMaxThreads() + kCpuPerWallSlack) {
    failures.push_back({"threads_beyond_limit",
                        format("the sandbox used %.2f s of CPU per second of its timed batches, with ctx->max_threads "
                               "= %.0f: threads beyond those the candidate may use worked for it",
                               evidence.getCpuPerWall(), static_cast<double>(evidence.getMaxThreads()))});
  }
  if (evidence.getOutputsChangedAfterReturn().size() != 0) {
    failures.push_back({"work_after_return", std::string(evidence.getOutputsChangedAfterReturn().cStr()) +
                                                 ": work still running after drk_kernel returned (finish every "
                                                 "write before returning)"});
  } else if (cpu_candidate && evidence.getCpuWhileIdleMs() > kIdleCpuMs &&
             evidence.getIdleCpuShare() > std::max(evidence.getMaxThreads(), 1) - 1 + kIdleCoresOverPool) {
    failures.push_back({"work_after_return",
                        format("the sandbox kept %.2f cores busy while no call of its candidate ran (%.1f ms of CPU in "
                               "%.1f ms): work still running after drk_kernel returned",
                               evidence.getIdleCpuShare(), evidence.getCpuWhileIdleMs(), evidence.getIdleMs())});
  }
  if (evidence.getThreadsLeftRunning() > 0) {
    failures.push_back({"threads_left_running",
                        std::to_string(evidence.getThreadsLeftRunning()) +
                            " thread(s) the candidate started were still running after drk_kernel returned: work "
                            "escaping the timer (threads must be joined before returning)"});
  }
  // Decoy (CUDA): kernels compiled from the candidate's source, none of which did any of the
  // timed work, while the answer was right: something else computed it.
  if (result.getCorrect() && result.hasGpu() && result.getResources().size() > 0 &&
      result.getGpu().getAllKernelUs() > 0 && result.getGpu().getOwnKernelUs() <= 0) {
    failures.push_back({"decoy", format("the candidate compiles %.0f kernel(s) but none ran in the profiled calls: "
                                        "%.2f us of GPU time per call, none of it its own",
                                        static_cast<double>(result.getResources().size()),
                                        result.getGpu().getAllKernelUs())});
  }
  if (result.hasGpu() && result.getGpu().getUnjoinedWork().size() != 0) {
    failures.push_back({"work_after_return",
                        std::string(result.getGpu().getUnjoinedWork().cStr()) +
                            ": work left running after the call returned, on a stream the call's stream did not "
                            "wait for (join it with an event before returning, or use the call's stream)"});
  } else if (result.getCorrect() && result.hasGpu()) {
    // Both of the profiled calls: the timed ones run untraced, without CUPTI's instrumentation.
    const double event_us = result.getGpu().getProfiledEventUs();
    const double span_us = result.getGpu().getCuptiSpanUs();
    if (event_us > 0 && span_us > event_us * (1 + kWorkAfterReturnShare) && span_us - event_us > kWorkAfterReturnUs)
      failures.push_back({"work_after_return",
                          format("the candidate's kernels span %.2f us per call (CUPTI) but the call took %.2f us "
                                 "(events on ctx->stream): work left running after drk_kernel returned, on a stream "
                                 "ctx->stream does not wait for (join it with an event, or use ctx->stream)",
                                 span_us, event_us)});
  }
  if (evidence.getHarnessSymbol().size() != 0) {
    failures.push_back({"harness_symbol", std::string(evidence.getHarnessSymbol().cStr()) +
                                              ": the candidate's object would bind to the harness's own libraries "
                                              "(LibTorch, the sandbox), which only the ABI reaches (ctx->lib for the "
                                              "library); a candidate links the C/C++ and CUDA runtimes only, so the "
                                              "sandbox refused it before loading it"});
  }
  if (evidence.hasPythonCheck()) {
    const auto check = evidence.getPythonCheck();
    failures.push_back({check.getCode().cStr(), std::string(check.getEvidence().cStr()) +
                                                    ": the Python sandbox refused the call"});
  }
  if (evidence.getMathModeChanged().size() != 0) {
    failures.push_back({"math_mode_changed", "the candidate left the thread's floating-point modes changed (" +
                                                 std::string(evidence.getMathModeChanged().cStr()) +
                                                 "): arithmetic that is not float32's; the harness put them back"});
  }
  if (evidence.getSanitizerErrors().size() != 0) {
    const bool cuda = result.getCandidate().getDevice() == msg::Device::CUDA;
    failures.push_back({"out_of_bounds", std::string(cuda ? "compute-sanitizer memcheck, one call with every tensor in an "
                                                            "allocation of its own: "
                                                          : "one call with every tensor between inaccessible guard "
                                                            "pages: ") +
                                             evidence.getSanitizerErrors().cStr()});
  }
  if (evidence.getUninitialisedRead().size() != 0) {
    failures.push_back({"uninitialised_read",
                        "trial 1 rerun on the same inputs with the outputs pre-filled with a finite poison instead of "
                        "NaN: " + std::string(evidence.getUninitialisedRead().cStr()) +
                            ": the candidate reads its outputs before writing them (their contents are undefined "
                            "when drk_kernel is called)"});
  }
  if (evidence.getInitcheckErrors().size() != 0 && evidence.getUninitialisedRead().size() == 0) {
    failures.push_back({"uninitialised_read", "compute-sanitizer initcheck, one call with the outputs never written: " +
                                                  std::string(evidence.getInitcheckErrors().cStr()) +
                                                  ": device memory read before anything wrote it"});
  }
  if (evidence.getReplyTampered().size() != 0) {
    failures.push_back({"reply_tampered", std::string(evidence.getReplyTampered().cStr()) +
                                              ": something other than the sandbox wrote to its reply pipe"});
  }
  if (result.getCorrect()) {
    const judging::RooflinePosition roofline = judging::roofline_position(result);
    if (roofline.beyond) {
      char text[320];
      std::snprintf(text, sizeof text,
                    "%.2fx the device's measured peak bytes/s and %.2fx its FP32 peak FLOP/s%s: beyond what the "
                    "hardware does for this task (bounds %.2fx and %.2fx), so the timed calls did not do its work",
                    roofline.bytes_fraction, roofline.flops_fraction,
                    evidence.getRooflineRemeasured() ? ", timed twice" : "", judging::kRooflineBytesMargin, judging::kRooflineFlopsMargin);
      failures.push_back({"implausible_speedup", text});
    } else if (evidence.getFirstSpeedup() > 0 &&
               (evidence.getFirstCandidateUs() > 0
                    ? !judging::candidate_time_held(evidence.getFirstCandidateUs(), result.getCandidateTiming().getMedianUs())
                    : !judging::speedup_held(evidence.getFirstSpeedup(), result.getSpeedup()))) {
      const std::string why =
          evidence.getBestKnownSpeedup() > 0
              ? format("over %.0f times the task's best known %.2fx", judging::kFarBeyondBestKnown, evidence.getBestKnownSpeedup())
              : std::string("beyond the device's roofline");
      char text[560];
      std::snprintf(text, sizeof text,
                    "timed at %.2fx (%s), then at %.2fx when timed again with two input elements swapped before "
                    "every call (the candidate's median %.2f us, then %.2f us): the speedup does not hold (the first "
                    "timed calls did not do the work the second ones did, as a result cached or memoised on the "
                    "inputs would)",
                    evidence.getFirstSpeedup(), why.c_str(), result.getSpeedup(), evidence.getFirstCandidateUs(),
                    result.getCandidateTiming().getMedianUs());
      failures.push_back({"implausible_speedup", text});
    }
  }
  const auto candidate = result.getCandidate();
  add_source_findings(candidate.getLanguage() == msg::Language::PYTHON
                          ? python_source_findings(candidate.getSource().cStr(), candidate.getPythonBackend())
                          : cpp_source_findings(candidate.getSource().cStr(), candidate.getLanguage() == msg::Language::CUDA
                                                                                 ? Dialect::cuda
                                                                                 : Dialect::cpp),
                      failures, warnings);
  add_library_use(result, warnings);
  if (evidence.getRerunDiffers() > 0 && evidence.getUninitialisedRead().size() == 0)
    warnings.push_back({"nondeterministic", std::to_string(evidence.getRerunDiffers()) +
                                                " output element(s) differed bit for bit between trial 1 and its rerun "
                                                "on the same inputs, both within tolerance (float atomics or a "
                                                "schedule that changes the summation order)"});
  if (evidence.getSanitizerNote().size() != 0)
    warnings.push_back({"sanitizer.not_run", evidence.getSanitizerNote().cStr()});
  if (result.getWidenedAtol() > 0)
    warnings.push_back({"tolerance.widened",
                        format("the float32 reference itself missed the float64 answer by more than the task's "
                               "tolerance, so outputs were compared at atol %.3g, twice its own largest error "
                               "(TF32 convolutions, PyTorch's default, do this)",
                               result.getWidenedAtol())});
  if (evidence.getSecondShapeChecked() && evidence.getSecondShapeStatus() != 0) {
    warnings.push_back({"shape.declined", "drk_kernel returned status " + std::to_string(evidence.getSecondShapeStatus()) +
                                              " at the task's second shapes: a kernel specialised to the task's "
                                              "shapes, allowed; the second-shape check could not run"});
  }
  return failures;
}

}  // namespace

void verify(msg::EvalResult::Reader result, msg::Verdict::Builder out) {
  out.setResult(result);
  std::vector<Failure> warnings;
  const auto failures = failed_checks(result, warnings);
  out.setHonest(failures.empty());
  auto fill = [](capnp::List<msg::FailedCheck>::Builder list, const std::vector<Failure>& entries) {
    for (unsigned i = 0; i < entries.size(); ++i) {
      list[i].setCode(entries[i].code);
      list[i].setEvidence(entries[i].evidence);
    }
  };
  fill(out.initFailedChecks(static_cast<unsigned>(failures.size())), failures);
  fill(out.initWarnings(static_cast<unsigned>(warnings.size())), warnings);
}

}  // namespace drk::verifier
