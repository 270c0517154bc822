// GpuProfile: what a CUDA evaluation's result says of the GPU's work beyond the medians: the
// kernels of both sides and the candidate's coverage (its own kernels' share of the kernel time),
// from the calls CUPTI traced once the timing settled; the agreement of CUDA events with CUPTI's
// span; the device's peaks; the roofline (achieved bytes/s and FLOP/s of the median call); energy
// per call (NVML) and hardware metrics (CUPTI's Range Profiler), each measured by one more
// sandbox request when the options ask for it.
//
// Thread-safety: the engine's thread only. Errors: a failed energy or metrics request is the
// candidate's (batch_failed); the profile says "not measured" with the reason otherwise.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/evaluator/engine/evaluation_run.h"
#include "actors/evaluator/engine/sandbox_answer.h"
#include "actors/evaluator/engine/sandbox_session.h"

namespace drk::evaluator {

// A float16 or bfloat16 task's FLOP ceiling over the measured FP32 FMA peak: 16-bit tensor cores
// are its own precision, not a downgrade, and their dense peak is about 16 times FP32 FMA's (A100
// 16, H100/H200 15, bfloat16 as float16), so the roofline's FLOP bound (judging/roofline_bound.h)
// stays a bound.
inline constexpr double kHalfTensorCoresOverFma = 16.0;
// An FP8 variant's: FP8 tensor cores (Ada, Hopper) have twice the 16-bit ones' dense peak.
inline constexpr double kFloat8TensorCoresOverFma = 2 * kHalfTensorCoresOverFma;

// The kernels of one side's timed calls, grouped per (name, grid, block) in first-seen order.
struct KernelGroup {
  KernelRun first;
  std::vector<double> durations_us;
};
std::vector<KernelGroup> group_kernels(const std::vector<TimedCall>& calls, bool candidate);

// A kernel that ends this long after its call's end marker started was not waited for: CUPTI's
// timestamps of one device come from one clock, and a kernel the stream waited for ends before the
// marker starts; the margin keeps the rounding of timestamp conversion out of the verdict.
inline constexpr uint64_t kUnjoinedMarginNs = 500;

// The candidate's kernels that ended after their call's stream had passed the call's end (a
// marked call's end_marker_ns): "name ended N us after ... (K of M marked calls)", the latest of
// each name; empty when none did or no call was marked.
std::string unjoined_work(const std::vector<TimedCall>& calls);

// How the profiled calls were timed.
struct ProfiledTiming {
  double event_floor_us = 0;    // the event pair's own cost taken off held calls (median)
  bool launch_hidden = false;   // the calls were timed behind the launch hold
  std::string launch_note;      // why not, when not
};

// Fills `profile` (coverage, the kernels of both sides, the agreement of events with CUPTI beyond
// `disagreement_threshold`, the peaks when known) from `calls`, whose candidate kernels named in
// `own_kernels` are the candidate's own.
void fill_gpu_profile(msg::GpuProfile::Builder profile, const std::vector<TimedCall>& calls,
                      const ProfiledTiming& timing, const EvaluationRun& run, const std::optional<DevicePeaks>& peaks,
                      double disagreement_threshold);

// Achieved bytes/s and FLOP/s of the candidate's median call (the task's minimum bytes and FLOPs
// at the evaluated shapes), beside the device's measured peaks; nothing for a result without a GPU
// profile.
void fill_roofline(EvaluationRun& run, double median_us);

// Energy per call of both sides and the candidate's hardware metrics, each as the options ask:
// nullopt when measured (or "not measured" said), else what the timing returns.
std::optional<Status> measure_energy_and_metrics(SandboxSession& session, const EngineOptions& options,
                                                 EvaluationRun& run);

}  // namespace drk::evaluator
