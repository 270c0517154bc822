#include "actors/evaluator/engine/gpu_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "actors/evaluator/engine/timing_summary.h"
#include "kernels/catalog/reference.h"

namespace drk::evaluator {
namespace {

void fill_kernels(const std::vector<KernelGroup>& groups, const std::set<std::string>& own,
                  capnp::List<msg::GpuKernel>::Builder list) {
  for (unsigned g = 0; g < groups.size(); ++g) {
    const KernelRun& k = groups[g].first;
    auto out = list[g];
    out.setName(k.name);
    out.setOwn(own.count(k.name) > 0);
    out.setLaunches(static_cast<uint32_t>(groups[g].durations_us.size()));
    double total = 0;
    for (double d : groups[g].durations_us) total += d;
    out.setTotalUs(total);
    std::vector<double> sorted = groups[g].durations_us;
    std::sort(sorted.begin(), sorted.end());
    out.setMedianUs(sorted[sorted.size() / 2]);
    auto grid = out.initGrid(3);
    auto block = out.initBlock(3);
    for (unsigned d = 0; d < 3; ++d) {
      grid.set(d, k.grid[d]);
      block.set(d, k.block[d]);
    }
    out.setRegistersPerThread(k.registers);
    out.setStaticSharedBytes(k.static_shared);
    out.setDynamicSharedBytes(k.dynamic_shared);
  }
}

// Energy per call of both sides (the sandbox's energy request); nullopt when it was measured.
std::optional<Status> measure_energy(SandboxSession& session, const EngineOptions& options, EvaluationRun& run) {
  const uint32_t set_count = run.set_count();
  auto energy = session.call(run, options.call_timeout + std::chrono::milliseconds(4 * options.energy_min_ms + 4000),
                     [&](msg::SandboxRequest::Builder request) {
                       auto energy_request = request.initEnergy();
                       fill_buffer_sets(energy_request.initSets(set_count), run.layout, all_sets(set_count));
                       fill_reference_spec(energy_request.initReference(), *run.task);
                       energy_request.setMinMs(options.energy_min_ms);
                     });
  if (auto f = batch_failed(run, energy, "measuring energy")) return f;
  energy->energy.value_or(SandboxEnergy::unavailable("the sandbox gave no energy reading"))
      .fill(run.out.getGpu().initEnergy());
  return std::nullopt;
}

}  // namespace

std::vector<KernelGroup> group_kernels(const std::vector<TimedCall>& calls, bool candidate) {
  std::vector<KernelGroup> groups;
  std::map<std::string, size_t> index;
  for (const auto& call : calls) {
    if (call.candidate != candidate) continue;
    for (const auto& k : call.kernels) {
      std::string key = k.name;
      for (int d = 0; d < 3; ++d) key += "/" + std::to_string(k.grid[d]) + "," + std::to_string(k.block[d]);
      auto [at, added] = index.emplace(key, groups.size());
      if (added) groups.push_back(KernelGroup{k, {}});
      groups[at->second].durations_us.push_back(static_cast<double>(k.end_ns - k.start_ns) / 1000.0);
    }
  }
  return groups;
}

std::string unjoined_work(const std::vector<TimedCall>& calls) {
  std::map<std::string, uint64_t> latest_ns;  // per kernel name: how long after the marker it ended
  unsigned marked = 0, late = 0;
  for (const auto& call : calls) {
    if (!call.candidate || call.end_marker_ns == 0) continue;
    ++marked;
    bool any_late = false;
    for (const auto& k : call.kernels) {
      if (k.end_ns <= call.end_marker_ns + kUnjoinedMarginNs) continue;
      any_late = true;
      uint64_t& after = latest_ns[k.name];
      after = std::max(after, k.end_ns - call.end_marker_ns);
    }
    late += any_late ? 1 : 0;
  }
  if (late == 0) return "";
  std::string text;
  char buffer[64];
  for (const auto& [name, after_ns] : latest_ns) {
    std::snprintf(buffer, sizeof buffer, " ended %.2f us", static_cast<double>(after_ns) / 1000.0);
    text += (text.empty() ? "" : ", ") + name + buffer;
  }
  return text + " after the call's stream had passed the call's end (" + std::to_string(late) + " of " +
         std::to_string(marked) + " marked calls)";
}

// Coverage, the kernels of both sides, and the agreement of events with CUPTI.
void fill_gpu_profile(msg::GpuProfile::Builder profile, const std::vector<TimedCall>& calls,
                      const ProfiledTiming& timing, const EvaluationRun& run, const std::optional<DevicePeaks>& peaks,
                      double disagreement_threshold) {
  profile.setLaunchLatencyHidden(timing.launch_hidden);
  profile.setLaunchLatencyNote(timing.launch_note);
  if (peaks) profile.setDevice(peaks->name);
  profile.setShapes(run.shapes == kernels::DeviceKind::cuda ? msg::Device::CUDA : msg::Device::CPU);
  auto candidate_groups = group_kernels(calls, true);
  auto reference_groups = group_kernels(calls, false);
  fill_kernels(candidate_groups, run.own_kernels, profile.initKernels(static_cast<unsigned>(candidate_groups.size())));
  fill_kernels(reference_groups, {}, profile.initReferenceKernels(static_cast<unsigned>(reference_groups.size())));
  std::vector<double> own_us, all_us, span_us, event_us;
  double own_total = 0, all_total = 0;
  for (const auto& timed : calls) {
    if (!timed.candidate) continue;
    event_us.push_back(timed.event_us);
    double own = 0, all = 0;
    uint64_t first = UINT64_MAX, last = 0;
    for (const auto& k : timed.kernels) {
      double us = static_cast<double>(k.end_ns - k.start_ns) / 1000.0;
      all += us;
      if (run.own_kernels.count(k.name)) own += us;
      first = std::min(first, k.start_ns);
      last = std::max(last, k.end_ns);
    }
    own_us.push_back(own);
    all_us.push_back(all);
    span_us.push_back(timed.kernels.empty() ? 0.0 : static_cast<double>(last - first) / 1000.0);
    own_total += own;
    all_total += all;
  }
  profile.setCoverage(all_total > 0 ? own_total / all_total : 0.0);
  profile.setOwnKernelUs(summarize(own_us, 1).median);
  profile.setAllKernelUs(summarize(all_us, 1).median);
  double span = summarize(span_us, 1).median;
  profile.setCuptiSpanUs(span);
  const double event_median_us = summarize(event_us, 1).median;
  profile.setProfiledCalls(static_cast<uint32_t>(event_us.size()));
  profile.setProfiledEventUs(event_median_us);
  profile.setEventFloorUs(timing.event_floor_us);
  double disagreement = event_median_us > 0 ? std::fabs(event_median_us - span) / event_median_us : 0.0;
  profile.setEventCuptiDisagreement(disagreement);
  profile.setDisagreementThreshold(disagreement_threshold);
  profile.setTimingDisagrees(disagreement > disagreement_threshold);
  profile.setUnjoinedWork(unjoined_work(calls));
  if (peaks) {
    profile.setPeakBytesPerS(peaks->copy_bytes_per_s);
    const kernels::DType dtype = run.task->dtype();
    const bool sixteen_bit = dtype == kernels::DType::float16 || dtype == kernels::DType::bfloat16;
    const double over_fma = kernels::is_float8(dtype) ? kFloat8TensorCoresOverFma
                            : sixteen_bit           ? kHalfTensorCoresOverFma
                                                    : 1.0;
    profile.setPeakFlopsPerS(peaks->fma_flops_per_s * over_fma);
    profile.setL2FlushBytes(2 * peaks->l2_bytes);
  }
}

void fill_roofline(EvaluationRun& run, double median_us) {
  if (median_us <= 0 || !run.out.hasGpu()) return;
  auto profile = run.out.getGpu();
  double seconds = median_us * 1e-6;
  profile.setAchievedBytesPerS(kernels::estimate_min_bytes(*run.task, run.shapes) / seconds);
  profile.setAchievedFlopsPerS(kernels::estimate_flops(*run.task, run.shapes) / seconds);
}

std::optional<Status> measure_energy_and_metrics(SandboxSession& session, const EngineOptions& options,
                                                 EvaluationRun& run) {
  if (options.energy_min_ms == 0)
    SandboxEnergy::unavailable("not measured (eval.energy_min_ms = 0)").fill(run.out.getGpu().initEnergy());
  else if (auto f = measure_energy(session, options, run))
    return f;
  if (!options.hardware_metrics) {
    SandboxMetrics::unavailable("not measured (eval.hardware_metrics: false; drk eval --metrics)")
        .fill(run.own_kernels, run.out.getGpu().initHardwareMetrics());
    return std::nullopt;
  }
  auto metrics = session.call(run, options.call_timeout, [&](msg::SandboxRequest::Builder request) {
    fill_buffer_sets(request.initMetrics().initSets(1), run.layout, {0});
  });
  if (auto f = batch_failed(run, metrics, "measuring hardware metrics")) return f;
  metrics->metrics.value_or(SandboxMetrics::unavailable("the sandbox gave no metrics"))
      .fill(run.own_kernels, run.out.getGpu().initHardwareMetrics());
  return std::nullopt;
}

}  // namespace drk::evaluator
