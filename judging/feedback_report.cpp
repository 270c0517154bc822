#include "judging/feedback_report.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

namespace drk::judging {
namespace {

constexpr size_t kQuotedLimit = 400;

// Free text inside a group: no "; " (the group separator), no double quotes.
std::string clean(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == ';') out += ',';
    else if (c == '"') out += '\'';
    else if (c == '\n' || c == '\r' || c == '\t') out += ' ';
    else out += c;
  }
  return out;
}

std::string quoted(std::string_view text) {
  std::string value = clean(text);
  if (value.size() > kQuotedLimit) value = value.substr(0, kQuotedLimit) + "...";
  return "\"" + value + "\"";
}

std::string number(double value, const char* pattern = "%.3g") {
  char text[48];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

// Theoretical occupancy of one launch on an SM of compute capability 9.0 (H100/H200): resident
// warps over the SM's 64, limited by threads, registers (256-register allocation units per warp),
// shared memory (228 KiB, 1 KiB reserved per block) and 32 blocks.
double theoretical_occupancy(msg::GpuKernel::Reader kernel) {
  uint64_t threads = 1;
  for (auto d : kernel.getBlock()) threads *= std::max<uint32_t>(d, 1);
  const uint64_t warps = (threads + 31) / 32;
  if (warps == 0 || warps > 32) return 0.0;
  uint64_t blocks = std::min<uint64_t>(32, 64 / warps);
  if (kernel.getRegistersPerThread() > 0) {
    const uint64_t registers_per_warp = (kernel.getRegistersPerThread() * 32 + 255) / 256 * 256;
    blocks = std::min<uint64_t>(blocks, 65536 / (registers_per_warp * warps));
  }
  const uint64_t shared = uint64_t{kernel.getStaticSharedBytes()} + kernel.getDynamicSharedBytes() + 1024;
  blocks = std::min<uint64_t>(blocks, 233472 / shared);
  return static_cast<double>(blocks * warps) / 64.0;
}

std::string micro_level(msg::EvalResult::Reader result) {
  std::string text = "micro:";
  const auto candidate = result.getCandidate();
  if (candidate.getDevice() == msg::Device::CUDA) {
    uint32_t registers = 0, spills = 0;
    for (auto kernel : result.getResources()) {
      registers = std::max(registers, kernel.getRegisters());
      spills += kernel.getSpillStoreBytes() + kernel.getSpillLoadBytes();
    }
    // Triton's kernels come without a register count (0): known only for nvcc's.
    const bool reported = registers > 0;
    text += " regs=" + (reported ? std::to_string(registers) : std::string("n/a"));
    text += " spills=" + (reported ? std::to_string(spills) : std::string("n/a"));
    std::string occupancy = "n/a";
    double busiest = -1;
    if (result.hasGpu())
      for (auto kernel : result.getGpu().getKernels())
        if (kernel.getOwn() && kernel.getTotalUs() > busiest) {
          busiest = kernel.getTotalUs();
          occupancy = number(theoretical_occupancy(kernel), "%.2f");
        }
    text += " occupancy=" + occupancy;
    return text;
  }
  std::string knobs;
  for (auto decision : candidate.getSchedule().getDecisions()) {
    std::string knob = decision.getKnob().cStr();
    if (knob == "vector_width" || knob == "threads" || knob == "tile" || knob == "inner_tile" || knob == "unroll" ||
        knob == "chunk")
      knobs += " " + knob + "=" + clean(decision.getValue().cStr());
  }
  return text + (knobs.empty() ? " vector_width=n/a threads=n/a" : knobs);
}

std::string function_level(msg::EvalResult::Reader result) {
  std::string text = "function: time_us=" + number(result.getCandidateTiming().getMedianUs()) +
                     " speedup=" + number(result.getSpeedup(), "%.2f");
  const bool cuda = result.getCandidate().getDevice() == msg::Device::CUDA;
  const auto gpu = result.getGpu();
  text += " coverage=" + (cuda ? (result.hasGpu() ? number(gpu.getCoverage(), "%.2f") : std::string("n/a")) : "1.00");
  std::string roofline = "n/a";
  if (cuda && result.hasGpu() && (gpu.getPeakBytesPerS() > 0 || gpu.getPeakFlopsPerS() > 0)) {
    const double memory = gpu.getPeakBytesPerS() > 0 ? gpu.getAchievedBytesPerS() / gpu.getPeakBytesPerS() : 0.0;
    const double compute = gpu.getPeakFlopsPerS() > 0 ? gpu.getAchievedFlopsPerS() / gpu.getPeakFlopsPerS() : 0.0;
    roofline = memory >= compute ? number(memory, "%.2f") + "(memory)" : number(compute, "%.2f") + "(compute)";
  }
  return text + " roofline=" + roofline;
}

std::string application_level(msg::EvalResult::Reader result) {
  std::string text = "application: task=" + clean(result.getCandidate().getTask().cStr()) +
                     " reference_us=" + number(result.getReferenceTiming().getMedianUs()) +
                     " speedup=" + number(result.getSpeedup(), "%.2f") +
                     " trials=" + std::to_string(result.getTrialsPassed()) + "/" + std::to_string(result.getTrials()) +
                     " max_abs_err=" + number(result.getMaxAbsError()) +
                     " max_rel_err=" + number(result.getMaxRelError());
  const auto evidence = result.getEvidence();
  if (evidence.getRangeShapesTried() > 0)
    text += " range_shapes=" + std::to_string(evidence.getRangeShapesHandled()) + "/" +
            std::to_string(evidence.getRangeShapesTried()) +
            " declined=" + std::to_string(evidence.getRangeShapesDeclined());
  if (result.getTimedShapes().size() > 0) {
    std::string timed;
    for (auto shape : result.getTimedShapes())
      timed += (timed.empty() ? "" : " | ") + clean(shape.getShapes().cStr()) + ": " +
               (shape.getDeclined() ? std::string("declined") : number(shape.getSpeedup(), "%.2f") + "x");
    text += " timed_shapes=[" + timed + "] shapes_speedup=" + number(result.getShapesSpeedup(), "%.2f");
  }
  return text;
}

std::string checks(capnp::List<msg::FailedCheck>::Reader list, bool with_evidence) {
  std::string text;
  for (auto check : list) {
    if (!text.empty()) text += with_evidence ? " | " : " ";
    text += "[" + clean(check.getCode().cStr()) + "]";
    if (with_evidence) text += " " + clean(check.getEvidence().cStr());
  }
  return text;
}

}  // namespace

std::string feedback_report(msg::Verdict::Reader verdict, double reward) {
  const auto result = verdict.getResult();
  std::string text;
  if (!result.getCompiled()) {
    text = "status=did_not_compile; compile_log=" + quoted(result.getCompileLog().cStr());
  } else if (!verdict.getHonest()) {
    text = "status=rejected; failed: " + checks(verdict.getFailedChecks(), true);
  } else if (!result.getCorrect()) {
    text = "status=incorrect; " + application_level(result) + " first_mismatch=" + quoted(result.getErrorText().cStr());
  } else {
    text = "status=correct; " + micro_level(result) + "; " + function_level(result) + "; " + application_level(result);
  }
  if (verdict.getWarnings().size() > 0) text += "; warnings: " + checks(verdict.getWarnings(), false);
  return text + "; reward=" + number(reward, "%.3f");
}

std::map<std::string, std::string> parse_feedback_report(const std::string& report) {
  std::map<std::string, std::string> groups;
  size_t begin = 0;
  while (begin < report.size()) {
    // Quoted values may not contain "; " (clean() turns ';' into ','), so a plain split works.
    size_t end = report.find("; ", begin);
    if (end == std::string::npos) end = report.size();
    const std::string group = report.substr(begin, end - begin);
    const size_t colon = group.find(": "), equals = group.find('=');
    const size_t split = std::min(colon, equals);
    if (split != std::string::npos)
      groups[group.substr(0, split)] = group.substr(split + (split == colon ? 2 : 1));
    begin = end + 2;
  }
  return groups;
}

}  // namespace drk::judging
