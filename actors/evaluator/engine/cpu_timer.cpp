#include "actors/evaluator/engine/cpu_timer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "actors/evaluator/engine/engine_clock.h"

namespace drk::evaluator {
namespace {

// The length of the batches that compare a candidate with its outputs holding their own answers
// and holding others' (answerReuseRatio). Several calls, not one: the rotating batch's request
// carries more buffer sets, whose set-up took 3.4 ms of sandbox CPU time on a loaded 2-core
// machine, so that an honest 3 ms matmul read 2-3.3x on one-call batches (0.9 on 30 ms ones).
constexpr double kAnswerReuseBatchMs = 30.0;
// A first pair's ratio under this is an honest candidate's: no second pair. Over it, pairs up to
// kAnswerReusePairs of batches kAnswerReuseConfirmLonger times as long, the smallest ratio kept:
// on a machine with fewer free cores than a threaded candidate's threads, a call waits for a core
// now and then (0.04 ms or 10 ms, as it happens), and a 30 ms batch of a few such calls reads
// anywhere from 0.2x to 5x its twin. Skipped work is as fast in long batches as in short ones.
constexpr double kAnswerReuseConfirmAbove = 2.0;
constexpr int kAnswerReusePairs = 3;
constexpr uint32_t kAnswerReuseConfirmLonger = 8;
// A wall-check ratio over this is confirmed on batches this long: a loaded machine's wake-up
// latency (tens of milliseconds on a busy 2-core machine) can triple even 5 ms batches, while a
// sandbox whose clock lies reads the same ratio on batches of any length.
constexpr double kWallCheckConfirmAbove = 2.0;
constexpr double kWallCheckConfirmBatchMs = 100.0;

}  // namespace

CpuTimer::CpuTimer(SandboxSession& session, const EngineOptions& options, uint64_t order_seed,
                   bool reference_in_sandbox)
    : session_(session), options_(options), order_rng_(order_seed), reference_in_sandbox_(reference_in_sandbox) {}

// `calls` calls in the rotating order (EvaluationRun::rotation_calls). The layout has K + 1
// sets: inputs of sets 0..K-1, outputs of all K + 1.
Result<SandboxAnswer> CpuTimer::run_rotating_batch(EvaluationRun& run, uint32_t calls, bool timed, bool reference) {
  const uint32_t inputs = run.set_count() - 1;
  const uint32_t period = inputs * (inputs + 1);
  const uint64_t first = run.rotation_calls;
  run.rotation_calls += calls;
  return session_.call(run, options_.call_timeout, [&](msg::SandboxRequest::Builder request) {
    auto run_request = request.initRun();
    run_request.setCalls(calls);
    run_request.setSwapSeed(run.next_swap_seed());
    run_request.setTimed(timed);
    run_request.setReference(reference);
    auto list = run_request.initSets(period);
    for (uint32_t j = 0; j < period; ++j)
      fill_buffer_set(list[j], run.layout.sets[(first + j) % inputs].inputs,
                      run.layout.sets[(first + j) % (inputs + 1)].outputs);
  });
}

// CPU: this process's clock around "run M calls" round trips, minus an empty round trip; the
// reference runs here with LibTorch, or (reference_in_sandbox) in the sandbox the same way.
Status CpuTimer::time(EvaluationRun& run, TimingSamples& samples) {
  auto& candidate_us = samples.candidate_us;
  auto& reference_us = samples.reference_us;
  auto& candidate_calls = samples.candidate_calls;
  auto& reference_calls = samples.reference_calls;
  auto out = run.out;
  // The inputs the rotation takes (the last set's outputs only rotate): the reference's too.
  const uint32_t set_count = static_cast<uint32_t>(run.layout.sets.size()) - 1;
  auto candidate_batch = [&](uint32_t calls) { return run_rotating_batch(run, calls, true); };
  auto failed = [&](const Result<SandboxAnswer>& answer, const char* phase) { return batch_failed(run, answer, phase); };

  // The cost of a round trip that runs nothing, subtracted from every sandbox batch: the fastest
  // of a few, because a loaded machine delays some trips by more than a whole 1 ms batch (a median
  // of them once zeroed every sample of a fast candidate), and then of one more each timed round:
  // trips that a loaded moment slowed before the timing would otherwise, once the load passed,
  // exceed whole batches (seen: a reference's 146 samples all 0).
  double round_trip_ns = std::numeric_limits<double>::infinity();
  auto time_empty_trip = [&]() -> std::optional<Status> {
    auto answer = candidate_batch(0);
    if (auto f = failed(answer, "timing (an empty round trip)")) return f;
    round_trip_ns = std::min(round_trip_ns, answer->wall_ns);
    return std::nullopt;
  };
  for (int i = 0; i < 5; ++i)
    if (auto f = time_empty_trip()) return *f;

  // A sandbox batch's wall time in this process net of the empty round trip.
  auto net_of_trip = [&](double wall_ns) { return std::max(wall_ns - round_trip_ns, 0.0); };
  auto net_ns = [&](const SandboxAnswer& answer) { return net_of_trip(answer.wall_ns); };

  // Calibration: double the batch until it lasts half the target (the first batches also warm
  // caches up), then scale it to the target. Each size is the fastest of three batches: one batch
  // stalled by the machine (a preemption, a page fault) would otherwise fix the batch at a call or
  // two, too short for a fast call to stand out of the round trip's noise.
  double target_ns = options_.target_batch_ms * 1e6;
  auto calibrate = [&](const std::function<Result<double>(uint32_t)>& batch_ns) -> Result<uint32_t> {
    uint32_t calls = 1;
    for (;;) {
      double fastest_ns = std::numeric_limits<double>::infinity();
      for (int repeat = 0; repeat < 3; ++repeat) {
        auto ns = batch_ns(calls);
        if (!ns) return ns.error();
        fastest_ns = std::min(fastest_ns, *ns);
      }
      if (fastest_ns >= target_ns / 2 || calls >= 65536)
        return static_cast<uint32_t>(
            std::clamp(std::ceil(calls * target_ns / std::max(fastest_ns, 1.0)), 1.0, 100000.0));
      calls *= 2;
    }
  };
  // Warm-up: a first call faults the output pages in and warms caches; it is not measured.
  if (auto f = failed(candidate_batch(set_count), "timing warm-up")) return *f;
  if (reference_in_sandbox_) {
    if (auto f = failed(run_rotating_batch(run, set_count, true, true), "the reference's timing warm-up")) return *f;
  } else {
    for (uint32_t s = 0; s < set_count; ++s)
      if (auto warm = run.reference->run(run.pristine_copies[s]); !warm) return warm.error();
  }

  std::optional<Status> calibration_failure;
  auto candidate_calls_or = calibrate([&](uint32_t calls) -> Result<double> {
    auto answer = candidate_batch(calls);
    calibration_failure = failed(answer, "timing (calibrating the batch)");
    if (calibration_failure) return make_error(Errc::sandbox_crashed, "the candidate failed during calibration");
    return net_ns(*answer);
  });
  if (!candidate_calls_or) return *calibration_failure;
  candidate_calls = *candidate_calls_or;

  // The reference's batch as read: a round trip's wall time in the sandbox beside the candidate,
  // or this process's clock around the calls; reference_ns makes it net.
  auto reference_batch = [&](uint32_t calls) -> Result<double> {
    if (reference_in_sandbox_) {
      auto answer = run_rotating_batch(run, calls, true, true);
      if (!answer) return answer.error();
      if (answer->status != msg::SandboxStatus::OK)
        return make_error(Errc::invalid_argument, "the reference failed beside the candidate: " + answer->message);
      return answer->wall_ns;
    }
    auto begin = Clock::now();
    for (uint32_t i = 0; i < calls; ++i) {
      auto value = run.reference->run(run.pristine_copies[i % set_count]);
      if (!value) return value.error();
    }
    return std::chrono::duration<double, std::nano>(Clock::now() - begin).count();
  };
  auto reference_ns = [&](double read_ns) { return reference_in_sandbox_ ? net_of_trip(read_ns) : read_ns; };
  auto time_reference = [&](uint32_t calls) -> Result<double> {
    auto read = reference_batch(calls);
    if (!read) return read;
    return reference_ns(*read);
  };
  auto reference_calls_or = calibrate(time_reference);
  if (!reference_calls_or) return reference_calls_or.error();
  reference_calls = *reference_calls_or;

  // Warm-up: one batch of each.
  if (auto f = failed(candidate_batch(candidate_calls), "timing warm-up")) return *f;
  if (auto warm = time_reference(reference_calls); !warm) return warm.error();
  // The calls asked for (EngineOptions::warmup_calls), in batches of the calibrated size, so that
  // no sandbox call lasts longer than a timed batch (call_timeout bounds each).
  for (uint32_t left = options_.warmup_calls; left > 0;) {
    const uint32_t calls = std::min(left, candidate_calls);
    if (auto f = failed(candidate_batch(calls), "timing warm-up")) return *f;
    left -= calls;
  }
  for (uint32_t left = options_.warmup_calls; left > 0;) {
    const uint32_t calls = std::min(left, reference_calls);
    if (auto warm = time_reference(calls); !warm) return warm.error();
    left -= calls;
  }

  // The batches as read; the samples are made net of the fastest trip so far after each round.
  std::vector<double> candidate_walls_ns, reference_reads_ns;
  std::vector<std::pair<double, double>> candidate_clocks_ns;  // (wall, the sandbox's own) per batch
  const auto make_samples_net = [&] {
    candidate_us.clear();
    reference_us.clear();
    for (double wall : candidate_walls_ns) candidate_us.push_back(net_of_trip(wall) / 1000.0 / candidate_calls);
    for (double read : reference_reads_ns) reference_us.push_back(reference_ns(read) / 1000.0 / reference_calls);
  };
  auto timing_started = Clock::now();
  for (;;) {
    if (auto f = time_empty_trip()) return *f;
    bool reference_first_this_round = (order_rng_() & 1) != 0;
    for (int side = 0; side < 2; ++side) {
      if ((side == 0) == reference_first_this_round) {
        auto read = reference_batch(reference_calls);
        if (!read) return read.error();
        reference_reads_ns.push_back(*read);
      } else {
        auto answer = candidate_batch(candidate_calls);
        if (auto f = failed(answer, "timing")) return *f;
        candidate_walls_ns.push_back(answer->wall_ns);
        // Over the span between the two CPU readings: one thread's CPU time cannot exceed it,
        // whatever the sandbox does around the calls or after its reply (the round trip alone, or
        // the calls' own span, is short of that work: OpenMP's threads spinning after the reply
        // read as 3.7 threads of 2). Inexact readings are left out: a tick's error is several
        // batches long.
        if (answer->cpu_span_ns > 0 && answer->cpu_exact)
          run.batch_cpu_per_wall.push_back(answer->cpu_ns / answer->cpu_span_ns);
        if (answer->sandbox_ns > 0) candidate_clocks_ns.emplace_back(answer->wall_ns, double(answer->sandbox_ns));
      }
    }
    make_samples_net();
    if (settle_rule(options_).settled(candidate_us, reference_us, ms_since(timing_started))) break;
  }
  std::vector<double> clock_ratios;  // per batch: this process's time net of the empty trip / the sandbox's
  for (const auto& [wall, sandbox] : candidate_clocks_ns) clock_ratios.push_back(net_of_trip(wall) / sandbox);
  // A low percentile of the batches: a loaded machine delays many round trips (its wake-up
  // latency alone can triple a 1 ms batch), while a sandbox that lies about its clock, or works
  // after it answered, inflates every batch. A high one is confirmed on long batches, where the
  // delays are small beside the calls; the lowest of those is the clocks' ratio (a delay only adds).
  if (!clock_ratios.empty()) {
    double ratio = summarize(clock_ratios, 1).p10;
    if (ratio > kWallCheckConfirmAbove) {
      // Sized by the batches' whole round trips per call, which no call outlasts: a net median
      // can read near 0 and ask for a batch that outlasts the call timeout.
      const double call_us = summarize(candidate_walls_ns, 1).median / 1000.0 / candidate_calls;
      const double longest_calls = 0.25 * options_.call_timeout.count() * 1000.0 / call_us;
      const auto calls = static_cast<uint32_t>(std::clamp(std::ceil(kWallCheckConfirmBatchMs * 1000.0 / call_us),
                                                          double(candidate_calls),
                                                          std::max(double(candidate_calls), longest_calls)));
      for (int repeat = 0; repeat < 3; ++repeat) {
        auto answer = candidate_batch(calls);
        if (auto f = failed(answer, "the wall-clock check")) return *f;
        if (answer->sandbox_ns > 0) ratio = std::min(ratio, net_ns(*answer) / static_cast<double>(answer->sandbox_ns));
      }
    }
    out.getEvidence().setWallCheckRatio(ratio);
  }
  if (!run.batch_cpu_per_wall.empty()) out.getEvidence().setCpuPerWall(summarize(run.batch_cpu_per_wall, 1).median);
  if (auto f = measure_answer_reuse(run, summarize(candidate_us, 1))) return *f;
  return {};
}

// Work skipped when the output already holds the answer (a cheap check of it, then nothing to
// do), which the rotation keeps out of the timed batches: batches where each call's output was
// last written for its own inputs against rotating batches started from poison, two pairs (the
// second only when the first suspects it). The
// smallest ratio is the evidence (answerReuseRatio): an honest candidate takes about as long
// either way.
std::optional<Status> CpuTimer::measure_answer_reuse(EvaluationRun& run, const TimingSummary& call_us) {
  // Batches of about kAnswerReuseBatchMs, so that a skipped call's round trip is not what is
  // measured: from the timing's fast batches (its median, on a loaded machine, can be 100x a
  // threaded call that waits for a core now and then), though never more than a confirmation's
  // calls by the median (a call handing its work to a thread is fast alone, slow in a crowd);
  // then fewer if the first batch took far longer.
  const auto calls_for = [](double estimate_us) {
    return static_cast<uint32_t>(
        std::clamp(std::ceil(kAnswerReuseBatchMs * 1000.0 / std::max(estimate_us, 0.01)), 1.0, 100000.0));
  };
  uint32_t calls = std::min(calls_for(call_us.p10), kAnswerReuseConfirmLonger * calls_for(call_us.median));
  // No batch expected past a quarter of the call timeout, by the first batch's pace.
  uint32_t most_calls = 100000;
  double smallest = std::numeric_limits<double>::infinity();
  for (int pair = 0; pair < kAnswerReusePairs; ++pair) {
    if (pair == 1) calls = std::min(calls * kAnswerReuseConfirmLonger, most_calls);
    // The first plain batch leaves every output holding its own inputs' answer.
    for (int round = 0; round < 2; ++round) {
      auto own = session_.run_batch(run, calls);
      if (auto f = batch_failed(run, own, "timing (the answer-reuse check)")) return f;
      if (round == 0) {
        const double batch_ms = own->wall_ns / 1e6;
        if (pair == 0) {
          const double call_ms = std::max(batch_ms / calls, 1e-6);
          most_calls = static_cast<uint32_t>(
              std::clamp(0.25 * static_cast<double>(options_.call_timeout.count()) / call_ms, 1.0, 100000.0));
          if (batch_ms > kAnswerReuseBatchMs * 4) calls = std::min(calls, calls_for(call_ms * 1000.0));
        }
        continue;
      }
      for (uint32_t s = 0; s < run.set_count(); ++s) run.poison_outputs(s);
      auto other = run_rotating_batch(run, calls, false);
      if (auto f = batch_failed(run, other, "timing (the answer-reuse check)")) return f;
      // The sandbox's CPU time (all its threads), not the wall time: work skipped is CPU time not
      // spent, while a loaded machine stretches a batch's wall time (a threaded candidate's
      // second thread waiting for a core) without its CPU time: wall times read honest threaded
      // candidates as 3x faster with their answers there once in a while. Only exact readings: one
      // taken while a thread ran lacks up to a scheduler tick.
      const bool by_cpu = own->cpu_exact && other->cpu_exact && own->cpu_ns > 0 && other->cpu_ns > 0;
      smallest = std::min(smallest, by_cpu ? other->cpu_ns / own->cpu_ns
                                           : other->wall_ns / std::max(own->wall_ns, 1.0));
    }
    // Further pairs only to confirm a suspicion: it must hold in each.
    if (smallest < kAnswerReuseConfirmAbove) break;
  }
  run.out.getEvidence().setAnswerReuseRatio(smallest);
  return std::nullopt;
}

}  // namespace drk::evaluator
