#include "actors/evaluator/engine/cuda_timer.h"

#include <algorithm>

#include "actors/evaluator/engine/engine_clock.h"
#include "actors/evaluator/engine/gpu_profile.h"

namespace drk::evaluator {
namespace {

// Candidate calls timed with their outputs left holding their answers, for answerReuseRatio.
constexpr uint32_t kCudaAnswerReuseCalls = 5;
// A first reading (the timed calls' median against the kept calls') under this is an honest
// candidate's. Over it, up to kAnswerReuseConfirmPairs pairs of adjacent rounds, from poison then
// kept, the smallest ratio kept: evaluations beside this one share the GPU outside its timing
// (their trials, their bounds checks), and an honest cuBLAS GEMM read 3.0x once on an H100 with
// eight evaluations at a time, while skipped work is as fast in every pair.
constexpr double kAnswerReuseConfirmAbove = 2.0;
constexpr int kAnswerReuseConfirmPairs = 3;

}  // namespace

CudaTimer::CudaTimer(SandboxSession& session, const EngineOptions& options, const std::optional<DevicePeaks>& peaks,
                     uint64_t order_seed)
    : session_(session), options_(options), peaks_(peaks), order_rng_(order_seed) {}

// CUDA: calls timed one by one with CUDA events in the sandbox, candidate and reference (LibTorch
// CUDA, in the sandbox) interleaved in random order, each after an L2 flush and a device
// synchronisation, untraced; once the timing settled, a few calls a side traced by CUPTI, for
// the profile.
Status CudaTimer::time(EvaluationRun& run, TimingSamples& samples) {
  auto& candidate_us = samples.candidate_us;
  auto& reference_us = samples.reference_us;
  const uint32_t set_count = run.set_count();
  // Copies every set to the device (a time request uses device memory as it is) and warms up.
  if (auto f = batch_failed(run, session_.run_batch(run, set_count), "timing warm-up")) return *f;

  std::vector<TimedCall> calls;
  // Launch latency hidden (eval.launch_latency: hidden) until a call could not be held; then the
  // evaluation is timed again from the start with it included, so that no median mixes the two.
  // The warm-up is never held: first calls allocate device memory (LibTorch's caching
  // allocator, the workspace), and an allocation waits for the device, hold included.
  bool hold = options_.hide_launch_latency.value_or(options_.python);
  std::string launch_note = hold ? "" : "included (eval.launch_latency, drk eval --launch-latency)";
  auto shuffled_sides = [&](uint32_t per_side) {
    std::vector<bool> sides(2 * per_side);
    for (uint32_t i = 0; i < per_side; ++i) sides[i] = true;
    std::shuffle(sides.begin(), sides.end(), order_rng_);
    return sides;
  };
  auto side_list = [](capnp::List<msg::TimedSide>::Builder list, const std::vector<bool>& sides) {
    for (unsigned i = 0; i < sides.size(); ++i)
      list.set(i, sides[i] ? msg::TimedSide::CANDIDATE : msg::TimedSide::REFERENCE);
  };
  auto fill_time_request = [&](msg::TimeRequest::Builder time, const std::vector<bool>& sides,
                               const std::vector<bool>& profiled, bool held) {
    fill_buffer_sets(time.initSets(set_count), run.layout, all_sets(set_count));
    side_list(time.initSides(static_cast<unsigned>(sides.size())), sides);
    side_list(time.initProfiled(static_cast<unsigned>(profiled.size())), profiled);
    fill_reference_spec(time.initReference(), *run.task);
    time.setFlushL2(true);
    time.setSwapSeed(run.next_swap_seed());
    time.setHoldLaunches(held);
  };
  std::vector<double> floors_us;
  // A round of `per_side` timed calls a side; or, with `profile`, the profiled calls: one call of
  // each side first, which the first launches after CUPTI is switched on slow down on the host
  // (by 0.2 ms on the H200) and which is not used, then cuda_profiled_calls a side.
  auto time_round = [&](uint32_t per_side, bool profile, bool keep,
                        std::chrono::milliseconds timeout) -> std::optional<Status> {
    const std::vector<bool> sides = shuffled_sides(per_side);
    std::vector<bool> profiled;
    if (profile) {
      profiled = {true, false};
      const std::vector<bool> used = shuffled_sides(options_.cuda_profiled_calls);
      profiled.insert(profiled.end(), used.begin(), used.end());
    }
    auto answer = session_.call(run, timeout, [&](msg::SandboxRequest::Builder request) {
      fill_time_request(request.initTime(), sides, profiled, hold && keep);
    });
    if (auto f = batch_failed(run, answer, "timing")) return f;
    if (answer->timed_calls.size() != sides.size() + profiled.size())
      return Status(make_error(Errc::protocol_error, "the sandbox answered a time request with " +
                                                         std::to_string(answer->timed_calls.size()) + " calls instead of " +
                                                         std::to_string(sides.size() + profiled.size())));
    for (size_t i = 0; i < answer->timed_calls.size(); ++i) {
      const TimedCall& timed = answer->timed_calls[i];
      if (timed.profiled != (i >= sides.size()) || (!timed.profiled && !timed.kernels.empty()))
        return Status(make_error(Errc::protocol_error, "the sandbox traced a call it was to time untraced, or the "
                                                       "other way round (call " + std::to_string(i) + ")"));
    }
    if (hold && keep && std::any_of(answer->timed_calls.begin(), answer->timed_calls.end(),
                            [](const TimedCall& timed) { return !timed.launch_hidden; })) {
      hold = false;
      launch_note = "included: " + answer->launch_hold_note;
      candidate_us.clear();
      reference_us.clear();
      calls.clear();
      floors_us.clear();
      return std::nullopt;
    }
    if (!keep) return std::nullopt;
    for (size_t i = 0; i < answer->timed_calls.size(); ++i) {
      TimedCall& timed = answer->timed_calls[i];
      if (timed.profiled) {
        if (i >= sides.size() + 2) calls.push_back(std::move(timed));
        continue;
      }
      (timed.candidate ? candidate_us : reference_us).push_back(timed.event_us);
      floors_us.push_back(timed.event_floor_us);
    }
    return std::nullopt;
  };
  // Warm-up: first calls pay for lazy initialisation (LibTorch, cuBLAS handles, module loads).
  if (auto f = time_round(2, false, false, options_.load_timeout)) return *f;
  // The calls asked for (EngineOptions::warmup_calls), a round of at most cuda_calls_per_round a side
  // at a time, untimed.
  for (uint32_t left = options_.warmup_calls; left > 0;) {
    const uint32_t per_side = std::min(left, std::max<uint32_t>(options_.cuda_calls_per_round, 1));
    if (auto f = time_round(per_side, false, false, options_.call_timeout)) return *f;
    left -= per_side;
  }
  auto timing_started = Clock::now();
  for (;;) {
    const bool held = hold;
    if (auto f = time_round(options_.cuda_calls_per_round, false, true, options_.call_timeout)) return *f;
    if (held == hold && settle_rule(options_).settled(candidate_us, reference_us, ms_since(timing_started))) {
      if (auto f = time_round(0, true, true, options_.call_timeout)) return *f;
      if (held == hold) break;
    }
    if (held != hold) timing_started = Clock::now();  // the hold gave up: timed again, included
  }
  fill_gpu_profile(run.out.initGpu(), calls, ProfiledTiming{summarize(floors_us, 1).median, hold, launch_note}, run,
                   peaks_, options_.cupti_disagreement_threshold);
  // Work skipped when the output already holds the answer: a few candidate calls whose outputs
  // keep what the same set's last call wrote, against calls that started from poison.
  auto candidate_round = [&](bool keep_outputs, std::vector<double>& us) -> std::optional<Status> {
    auto answer = session_.call(run, options_.call_timeout, [&](msg::SandboxRequest::Builder request) {
      auto time = request.initTime();
      fill_time_request(time, std::vector<bool>(kCudaAnswerReuseCalls, true), {}, hold);
      time.setKeepOutputs(keep_outputs);
    });
    if (auto f = batch_failed(run, answer, "timing (the answer-reuse check)")) return f;
    us.clear();
    for (const TimedCall& timed : answer->timed_calls) us.push_back(timed.event_us);
    return std::nullopt;
  };
  auto ratio_of = [](const std::vector<double>& from_poison_us, const std::vector<double>& kept_us) {
    return summarize(from_poison_us, 1).median / std::max(summarize(kept_us, 1).median, 1e-3);
  };
  std::vector<double> kept_us, from_poison_us;
  if (auto f = candidate_round(true, kept_us)) return *f;
  if (!kept_us.empty() && !candidate_us.empty()) {
    double smallest = ratio_of(candidate_us, kept_us);
    for (int pair = 0; pair < kAnswerReuseConfirmPairs && smallest >= kAnswerReuseConfirmAbove; ++pair) {
      if (auto f = candidate_round(false, from_poison_us)) return *f;
      if (auto f = candidate_round(true, kept_us)) return *f;
      if (from_poison_us.empty() || kept_us.empty()) break;
      smallest = std::min(smallest, ratio_of(from_poison_us, kept_us));
    }
    run.out.getEvidence().setAnswerReuseRatio(smallest);
  }
  // Energy per call (NVML) and hardware metrics (CUPTI), after the timing.
  if (auto f = measure_energy_and_metrics(session_, options_, run)) return *f;
  return {};
}

}  // namespace drk::evaluator
