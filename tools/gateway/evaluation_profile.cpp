#include "tools/gateway/evaluation_profile.h"

#include "judging/roofline_bound.h"
#include "runtime/capnp_json.h"

namespace drk::gateway {
namespace {

Json timing_json(msg::TimingStats::Reader timing) {
  return Json{{"median_us", timing.getMedianUs()}, {"p10_us", timing.getP10Us()},   {"p90_us", timing.getP90Us()},
              {"cv", timing.getCv()},              {"samples", timing.getSamples()}, {"calls_per_sample", timing.getCallsPerSample()}};
}

}  // namespace

Json evaluation_profile_json(msg::EvalResult::Reader result) {
  const bool cuda = result.getCandidate().getDevice() == msg::Device::CUDA;
  Json profile{{"device", cuda ? "cuda" : "cpu"},
               {"candidate_timing", timing_json(result.getCandidateTiming())},
               {"reference_timing", timing_json(result.getReferenceTiming())},
               {"phases_ms",
                {{"compile_wait", result.getCompileWaitMs()},
                 {"load", result.getLoadMs()},
                 {"correctness", result.getCorrectnessMs()},
                 {"timing", result.getTimingMs()},
                 {"total", result.getEvalMs()}}},
               {"candidate_calls", result.getEvidence().getCandidateCalls()}};
  if (!cuda) {
    profile["cpu_per_wall"] = result.getEvidence().getCpuPerWall();
    profile["not_available"] =
        "per-kernel times, hardware counters (DRAM and SM throughput, L2 hits, occupancy) and the roofline "
        "position: they come from CUPTI and a GPU's measured peaks, and this gateway evaluates on the cpu";
    return profile;
  }
  if (!result.hasGpu()) {
    profile["not_available"] = "the CUPTI profile: the candidate was not timed (it failed before, or was incorrect)";
    return profile;
  }
  profile["gpu"] = runtime::capnp_json(result.getGpu());
  const judging::RooflinePosition roofline = judging::roofline_position(result);
  profile["roofline"] = {{"bytes_fraction", roofline.bytes_fraction},
                         {"flops_fraction", roofline.flops_fraction},
                         {"beyond_bound", roofline.beyond}};
  const auto metrics = result.getGpu().getHardwareMetrics();
  if (!metrics.getAvailable())
    profile["not_available"] = std::string("hardware counters: ") + metrics.getReason().cStr();
  return profile;
}

}  // namespace drk::gateway
