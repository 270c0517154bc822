#include "actors/evaluator/evaluation.h"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <capnp/message.h>
#include <capnp/serialize.h>

#include "actors/evaluator/compiler.h"
#include "drk_kernel.h"
#include "actors/evaluator/sandbox_channel.h"
#include "actors/evaluator/shared_region.h"
#include "kernels/catalog/reference.h"
#include "messages/sandbox.capnp.h"

namespace drk::evaluator {
namespace {

using Clock = std::chrono::steady_clock;
using kernels::DeviceKind;

constexpr uint32_t kPoisonBits = 0x7FC2DEADu;  // a quiet NaN no arithmetic produces
constexpr size_t kAlignment = 4096;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9E3779B97F4A7C15ull * (b + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t secret_seed() {
  uint64_t seed = 0;
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  urandom.read(reinterpret_cast<char*>(&seed), sizeof seed);
  if (!urandom) seed = std::random_device{}() ^ (uint64_t{std::random_device{}()} << 32);
  return seed;
}

struct TensorSlot {
  size_t offset = 0;
  kernels::Shape shape;
  size_t elements = 1;
};

struct BufferSetLayout {
  std::vector<TensorSlot> inputs;
  std::vector<TensorSlot> outputs;
};

struct Layout {
  std::vector<BufferSetLayout> sets;
  size_t bytes = 0;
};

Layout make_layout(const kernels::Task& task, DeviceKind device, uint32_t sets) {
  Layout layout;
  const auto& shapes = task.shapes(device);
  auto place = [&](const std::string& name) {
    TensorSlot slot;
    slot.shape = shapes.at(name);
    for (int64_t d : slot.shape) slot.elements *= static_cast<size_t>(d);
    slot.offset = layout.bytes;
    layout.bytes += (slot.elements * sizeof(float) + kAlignment - 1) / kAlignment * kAlignment;
    return slot;
  };
  for (uint32_t s = 0; s < sets; ++s) {
    BufferSetLayout set;
    for (const auto& input : task.inputs) set.inputs.push_back(place(input.name));
    for (const auto& output : task.outputs) set.outputs.push_back(place(output));
    layout.sets.push_back(std::move(set));
  }
  return layout;
}

std::string format_index(size_t flat, const kernels::Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<int64_t>(flat % static_cast<size_t>(shape[d]));
    flat /= static_cast<size_t>(shape[d]);
  }
  return kernels::format_shape(index);
}

struct Comparison {
  bool passed = true;
  bool left_poisoned = false;
  bool non_finite = false;
  double max_abs = 0.0;
  double max_rel = 0.0;
  std::string first_failure;
};

Comparison compare(const float* out, const at::Tensor& reference, const TensorSlot& slot, const std::string& name,
                   const kernels::Tolerance& tolerance) {
  Comparison c;
  const float* ref = reference.data_ptr<float>();
  for (size_t i = 0; i < slot.elements; ++i) {
    float o = out[i];
    uint32_t bits;
    std::memcpy(&bits, &o, sizeof bits);
    double r = ref[i];
    bool failed = false;
    std::ostringstream why;
    if (bits == kPoisonBits) {
      c.left_poisoned = true;
      failed = true;
      why << "output " << name << format_index(i, slot.shape) << " still holds the poison (NaN): it was never written";
    } else if (!std::isfinite(o)) {
      c.non_finite = true;
      failed = true;
      why << "output " << name << format_index(i, slot.shape) << " is " << o << " but the reference is " << r;
    } else {
      double diff = std::fabs(static_cast<double>(o) - r);
      c.max_abs = std::max(c.max_abs, diff);
      if (r != 0.0) c.max_rel = std::max(c.max_rel, diff / std::fabs(r));
      if (!(diff <= tolerance.atol + tolerance.rtol * std::fabs(r))) {
        failed = true;
        why << "output " << name << format_index(i, slot.shape) << " is " << o << " but the reference is " << r
            << " (|diff| " << diff << " > atol " << tolerance.atol << " + rtol " << tolerance.rtol << " * |ref|)";
      }
    }
    if (failed) {
      if (c.passed) c.first_failure = why.str();
      c.passed = false;
    }
  }
  return c;
}

struct TimingSummary {
  double median = 0, p10 = 0, p90 = 0, cv = 0;
  uint32_t samples = 0;
  uint32_t calls = 0;
};

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  double position = q * static_cast<double>(sorted.size() - 1);
  size_t low = static_cast<size_t>(position);
  size_t high = std::min(low + 1, sorted.size() - 1);
  double fraction = position - static_cast<double>(low);
  return sorted[low] * (1 - fraction) + sorted[high] * fraction;
}

TimingSummary summarize(std::vector<double> samples, uint32_t calls) {
  TimingSummary s;
  s.samples = static_cast<uint32_t>(samples.size());
  s.calls = calls;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.median = percentile(samples, 0.5);
  s.p10 = percentile(samples, 0.1);
  s.p90 = percentile(samples, 0.9);
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= static_cast<double>(samples.size());
  double variance = 0;
  for (double x : samples) variance += (x - mean) * (x - mean);
  variance /= static_cast<double>(std::max<size_t>(samples.size() - 1, 1));
  s.cv = mean > 0 ? std::sqrt(variance) / mean : 0.0;
  return s;
}

// Standard error of the median relative to the median (normal approximation: 1.2533 sigma/sqrt n).
double relative_error_of_median(const std::vector<double>& samples) {
  if (samples.size() < 2) return 1.0;
  TimingSummary s = summarize(samples, 1);
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= static_cast<double>(samples.size());
  double stddev = s.cv * mean;
  return s.median > 0 ? 1.2533 * stddev / std::sqrt(static_cast<double>(samples.size())) / s.median : 1.0;
}

void fill_timing(const TimingSummary& s, msg::TimingStats::Builder out) {
  out.setMedianUs(s.median);
  out.setP10Us(s.p10);
  out.setP90Us(s.p90);
  out.setCv(s.cv);
  out.setSamples(s.samples);
  out.setCallsPerSample(s.calls);
}

struct SandboxAnswer {
  msg::SandboxStatus status = msg::SandboxStatus::OK;
  std::string message;
  int32_t candidate_status = 0;
  uint32_t calls_completed = 0;
  uint64_t library_calls = 0;
  uint64_t sandbox_ns = 0;
  double wall_ns = 0;  // this process's clock around the round trip
};

}  // namespace

struct EvaluationEngine::Impl {
  kernels::TaskCatalog catalog;
  EngineOptions options;
  std::map<std::string, kernels::Reference> references;
  std::unique_ptr<Compiler> compiler;
  std::optional<SharedRegion> region;
  std::unique_ptr<SandboxProcess> sandbox;
  uint64_t secret = 0;
  uint64_t evaluations = 0;
  uint64_t next_request_id = 1;
  std::mt19937_64 order_rng;

  // What one evaluation is working on.
  struct Run {
    const kernels::Task* task = nullptr;
    const kernels::Reference* reference = nullptr;
    Layout layout;
    kernels::Tolerance tolerance;
    uint64_t seed = 0;
    std::vector<std::vector<at::Tensor>> pristine;  // per buffer set
    msg::EvalResult::Builder out{nullptr};
    bool sandbox_failed = false;
  };

  Status ensure_sandbox() {
    if (sandbox && sandbox->alive()) return {};
    sandbox.reset();
    auto started = SandboxProcess::start(options.sandbox, region->fd());
    if (!started) return started.error();
    sandbox = std::move(*started);
    return {};
  }

  // Sends a request filled by `fill`; on a dead or hung sandbox records the outcome in `run`.
  Result<SandboxAnswer> call(Run& run, std::chrono::milliseconds timeout,
                             const std::function<void(msg::SandboxRequest::Builder)>& fill) {
    if (auto s = ensure_sandbox(); !s) return s.error();
    capnp::MallocMessageBuilder message;
    auto request = message.initRoot<msg::SandboxRequest>();
    uint64_t id = next_request_id++;
    request.setId(id);
    request.setRegionBytes(region->size());
    fill(request);
    auto started = Clock::now();
    auto words = sandbox->call(message, timeout);
    double wall_ns = std::chrono::duration<double, std::nano>(Clock::now() - started).count();
    if (!words) {
      record_sandbox_failure(run, words.error());
      return words.error();
    }
    capnp::FlatArrayMessageReader reader(*words, frame_reader_options());
    auto reply = reader.getRoot<msg::SandboxReply>();
    if (reply.getId() != id) {
      Error error = make_error(Errc::protocol_error, "the sandbox answered request " + std::to_string(reply.getId()) +
                                                         " instead of " + std::to_string(id));
      sandbox.reset();
      record_sandbox_failure(run, error);
      return error;
    }
    SandboxAnswer answer;
    answer.status = reply.getStatus();
    answer.message = reply.getMessage();
    answer.candidate_status = reply.getCandidateStatus();
    answer.calls_completed = reply.getCallsCompleted();
    answer.library_calls = reply.getLibraryCalls();
    answer.sandbox_ns = reply.getSandboxNs();
    answer.wall_ns = wall_ns;
    return answer;
  }

  void record_sandbox_failure(Run& run, const Error& error) {
    run.sandbox_failed = true;
    auto evidence = run.out.getEvidence();
    SandboxExit exit = sandbox ? sandbox->exit() : SandboxExit{};
    if (error.code == Errc::timeout) {
      run.out.setSandbox(msg::SandboxOutcome::TIMED_OUT);
      evidence.setSandboxSignal(SIGKILL);
    } else {
      run.out.setSandbox(msg::SandboxOutcome::CRASHED);
      evidence.setSandboxSignal(exit.signal);
      evidence.setSandboxExitCode(exit.exit_code);
    }
    run.out.setErrorText(error.message);
    run.out.setCorrect(false);
    sandbox.reset();
  }

  // Appends the run request's buffer sets.
  void fill_sets(msg::RunRequest::Builder run_request, const Run& run, const std::vector<uint32_t>& sets) {
    auto list = run_request.initSets(static_cast<unsigned>(sets.size()));
    for (unsigned i = 0; i < sets.size(); ++i) {
      const BufferSetLayout& set = run.layout.sets[sets[i]];
      auto fill_views = [](capnp::List<msg::TensorView>::Builder views, const std::vector<TensorSlot>& slots) {
        for (unsigned t = 0; t < slots.size(); ++t) {
          views[t].setOffset(slots[t].offset);
          views[t].setDtype(DRK_F32);
          auto shape = views[t].initShape(static_cast<unsigned>(slots[t].shape.size()));
          for (unsigned d = 0; d < slots[t].shape.size(); ++d) shape.set(d, slots[t].shape[d]);
        }
      };
      fill_views(list[i].initInputs(static_cast<unsigned>(set.inputs.size())), set.inputs);
      fill_views(list[i].initOutputs(static_cast<unsigned>(set.outputs.size())), set.outputs);
    }
  }

  float* slot_data(const TensorSlot& slot) { return reinterpret_cast<float*>(region->data() + slot.offset); }

  void write_inputs(Run& run, uint32_t set, std::vector<at::Tensor> inputs) {
    const auto& slots = run.layout.sets[set].inputs;
    for (size_t i = 0; i < slots.size(); ++i)
      std::memcpy(slot_data(slots[i]), inputs[i].data_ptr<float>(), slots[i].elements * sizeof(float));
    run.pristine[set] = std::move(inputs);
  }

  void poison_outputs(Run& run, uint32_t set) {
    for (const auto& slot : run.layout.sets[set].outputs) {
      float* data = slot_data(slot);
      for (size_t i = 0; i < slot.elements; ++i) std::memcpy(&data[i], &kPoisonBits, sizeof kPoisonBits);
    }
  }

  bool inputs_mutated(Run& run, uint32_t set) {
    const auto& slots = run.layout.sets[set].inputs;
    for (size_t i = 0; i < slots.size(); ++i)
      if (std::memcmp(slot_data(slots[i]), run.pristine[set][i].data_ptr<float>(), slots[i].elements * sizeof(float)) != 0)
        return true;
    return false;
  }

  // Checks the outputs of `set` against the reference on its pristine inputs; records evidence.
  Result<Comparison> check_set(Run& run, uint32_t set) {
    auto reference = run.reference->run(run.pristine[set]);
    if (!reference) return reference.error();
    const auto& slot = run.layout.sets[set].outputs[0];
    Comparison c = compare(slot_data(slot), *reference, slot, run.task->outputs[0], run.tolerance);
    auto evidence = run.out.getEvidence();
    if (c.left_poisoned) evidence.setOutputsLeftPoisoned(true);
    if (c.non_finite) evidence.setNonFinite(true);
    if (inputs_mutated(run, set)) {
      evidence.setInputsMutated(true);
      if (c.passed) c.first_failure = "an input differs from its pristine copy after the call (inputs are read-only)";
    }
    run.out.setMaxAbsError(std::max(run.out.getMaxAbsError(), c.max_abs));
    run.out.setMaxRelError(std::max(run.out.getMaxRelError(), c.max_rel));
    return c;
  }

  Status evaluate(msg::Candidate::Reader candidate, msg::EvalResult::Builder out);
  Status run_trials(Run& run);
  Status run_timing(Run& run);
};

Status EvaluationEngine::Impl::evaluate(msg::Candidate::Reader candidate, msg::EvalResult::Builder out) {
  auto started = Clock::now();
  std::string task_name = candidate.getTask();
  auto task = catalog.find(task_name);
  if (!task) return task.error();
  DeviceKind device = candidate.getDevice() == msg::Device::CUDA ? DeviceKind::cuda : DeviceKind::cpu;
  if (device != options.device)
    return make_error(Errc::unsupported, "candidate '" + std::string(candidate.getId()) + "' is for device " +
                                             std::string(kernels::device_name(device)) + " but this evaluator runs " +
                                             std::string(kernels::device_name(options.device)));
  if (candidate.getLanguage() != msg::Language::CPP)
    return make_error(Errc::unsupported, "this evaluator compiles C++ candidates only");

  out.setCandidate(candidate);
  out.setEvaluator(options.evaluator_name);
  out.setTrials(options.trials);
  out.setSandbox(msg::SandboxOutcome::OK);
  struct EvalClock {
    msg::EvalResult::Builder out;
    Clock::time_point started;
    ~EvalClock() { out.setEvalMs(ms_since(started)); }
  } eval_clock{out, started};

  auto compiled = compiler->compile(candidate.getSource());
  if (!compiled) {
    if (compiled.error().code != Errc::compile_error) return compiled.error();
    out.setCompiled(false);
    out.setCompileLog(compiled.error().message);
    out.setCompileMs(ms_since(started));
    out.setErrorText("the candidate does not compile");
    return {};
  }
  out.setCompiled(true);
  out.setCompileCached(compiled->cached);
  out.setCompileMs(compiled->compile_ms);

  Run run;
  run.task = *task;
  run.reference = &references.at(task_name);
  run.layout = make_layout(**task, options.device, std::max<uint32_t>(options.timing_sets, 1));
  run.tolerance = (*task)->tolerance(kernels::DType::float32);
  run.seed = mix(secret, evaluations++);
  run.pristine.resize(run.layout.sets.size());
  run.out = out;
  if (auto s = region->reserve(run.layout.bytes); !s) return s;
  at::set_num_threads(options.max_threads);

  auto loaded = call(run, options.load_timeout, [&](msg::SandboxRequest::Builder request) {
    auto load = request.initLoad();
    load.setLibrary(compiled->library_path);
    load.setMaxThreads(options.max_threads);
  });
  if (!loaded) {
    if (!run.sandbox_failed) return loaded.error();
    out.setErrorText("while loading the candidate: " + std::string(out.getErrorText().cStr()));
  } else if (loaded->status != msg::SandboxStatus::OK) {
    out.setSandbox(msg::SandboxOutcome::FAILED_TO_LOAD);
    out.setErrorText(loaded->message);
  } else {
    if (auto s = run_trials(run); !s) return s;
    if (out.getCorrect())
      if (auto s = run_timing(run); !s) return s;
  }
  if (!out.getCorrect()) out.setSpeedup(0.0);
  // Keep one sandbox warm for the next candidate.
  if (!sandbox || !sandbox->alive()) (void)ensure_sandbox();
  return {};
}

Status EvaluationEngine::Impl::run_trials(Run& run) {
  auto out = run.out;
  uint32_t passed = 0;
  for (uint32_t trial = 0; trial < options.trials; ++trial) {
    write_inputs(run, 0, kernels::draw_inputs(*run.task, options.device, mix(run.seed, trial)));
    poison_outputs(run, 0);
    auto answer = call(run, options.call_timeout, [&](msg::SandboxRequest::Builder request) {
      auto run_request = request.initRun();
      run_request.setCalls(1);
      fill_sets(run_request, run, {0});
    });
    if (!answer) {
      if (!run.sandbox_failed) return answer.error();
      out.setErrorText("trial " + std::to_string(trial + 1) + ": " + std::string(out.getErrorText().cStr()));
      break;
    }
    out.getEvidence().setCandidateStatus(answer->candidate_status);
    if (answer->status != msg::SandboxStatus::OK) {
      out.setSandbox(answer->status == msg::SandboxStatus::RETURNED_ERROR ? msg::SandboxOutcome::RETURNED_ERROR
                                                                          : msg::SandboxOutcome::CRASHED);
      out.setErrorText("trial " + std::to_string(trial + 1) + ": " + answer->message);
      break;
    }
    auto comparison = check_set(run, 0);
    if (!comparison) return comparison.error();
    if (!comparison->passed) {
      std::ostringstream text;
      text << "trial " << trial + 1 << ": " << comparison->first_failure << "; max abs error "
           << out.getMaxAbsError() << ", max rel error " << out.getMaxRelError();
      out.setErrorText(text.str());
      break;
    }
    // Mutated inputs with matching outputs still pass the numbers; the evidence goes to the Verifier.
    if (out.getEvidence().getInputsMutated() && out.getErrorText().size() == 0)
      out.setErrorText("trial " + std::to_string(trial + 1) + ": " + comparison->first_failure);
    ++passed;
  }
  out.setTrialsPassed(passed);
  out.setCorrect(passed == options.trials);
  return {};
}

Status EvaluationEngine::Impl::run_timing(Run& run) {
  auto out = run.out;
  uint32_t set_count = static_cast<uint32_t>(run.layout.sets.size());
  std::vector<uint32_t> all_sets;
  for (uint32_t s = 0; s < set_count; ++s) {
    all_sets.push_back(s);
    write_inputs(run, s, kernels::draw_inputs(*run.task, options.device, mix(run.seed, 1000 + s)));
    poison_outputs(run, s);
  }
  auto candidate_batch = [&](uint32_t calls) {
    return call(run, options.call_timeout, [&](msg::SandboxRequest::Builder request) {
      auto run_request = request.initRun();
      run_request.setCalls(calls);
      fill_sets(run_request, run, all_sets);
    });
  };
  auto failed = [&](const Result<SandboxAnswer>& answer, const char* phase) -> std::optional<Status> {
    if (!answer) {
      if (!run.sandbox_failed) return Status(answer.error());
      out.setErrorText(std::string(phase) + ": " + std::string(out.getErrorText().cStr()));
      return Status();
    }
    if (answer->status != msg::SandboxStatus::OK) {
      out.setSandbox(answer->status == msg::SandboxStatus::RETURNED_ERROR ? msg::SandboxOutcome::RETURNED_ERROR
                                                                          : msg::SandboxOutcome::CRASHED);
      out.getEvidence().setCandidateStatus(answer->candidate_status);
      out.setErrorText(std::string(phase) + ": " + answer->message);
      out.setCorrect(false);
      return Status();
    }
    return std::nullopt;
  };

  // The cost of a round trip that runs nothing, subtracted from every candidate batch.
  std::vector<double> empty_trips;
  for (int i = 0; i < 5; ++i) {
    auto answer = candidate_batch(0);
    if (auto f = failed(answer, "timing")) return *f;
    empty_trips.push_back(answer->wall_ns);
  }
  double round_trip_ns = summarize(empty_trips, 1).median;

  // Calibration: double the batch until it lasts half the target (the first batches also warm
  // caches up), then scale it to the target.
  double target_ns = options.target_batch_ms * 1e6;
  auto calibrate = [&](const std::function<Result<double>(uint32_t)>& batch_ns) -> Result<uint32_t> {
    uint32_t calls = 1;
    for (;;) {
      auto ns = batch_ns(calls);
      if (!ns) return ns.error();
      if (*ns >= target_ns / 2 || calls >= 65536)
        return static_cast<uint32_t>(std::clamp(std::ceil(calls * target_ns / std::max(*ns, 1.0)), 1.0, 100000.0));
      calls *= 2;
    }
  };
  // Warm-up: a first call faults the output pages in and warms caches; it is not measured.
  if (auto f = failed(candidate_batch(set_count), "timing warm-up")) return *f;
  for (uint32_t s = 0; s < set_count; ++s)
    if (auto warm = run.reference->run(run.pristine[s]); !warm) return warm.error();

  std::optional<Status> calibration_failure;
  auto candidate_calls_or = calibrate([&](uint32_t calls) -> Result<double> {
    auto answer = candidate_batch(calls);
    calibration_failure = failed(answer, "timing");
    if (calibration_failure) return make_error(Errc::sandbox_crashed, "the candidate failed during calibration");
    return std::max(answer->wall_ns - round_trip_ns, 0.0);
  });
  if (!candidate_calls_or) return *calibration_failure;
  uint32_t candidate_calls = *candidate_calls_or;

  auto time_reference = [&](uint32_t calls) -> Result<double> {
    auto begin = Clock::now();
    for (uint32_t i = 0; i < calls; ++i) {
      auto value = run.reference->run(run.pristine[i % set_count]);
      if (!value) return value.error();
    }
    return std::chrono::duration<double, std::nano>(Clock::now() - begin).count();
  };
  auto reference_calls_or = calibrate(time_reference);
  if (!reference_calls_or) return reference_calls_or.error();
  uint32_t reference_calls = *reference_calls_or;

  // Warm-up: one batch of each.
  if (auto f = failed(candidate_batch(candidate_calls), "timing warm-up")) return *f;
  if (auto warm = time_reference(reference_calls); !warm) return warm.error();

  std::vector<double> candidate_us, reference_us;
  std::vector<double> clock_ratios;  // per batch: this process's time net of the empty trip / the sandbox's
  auto timing_started = Clock::now();
  for (;;) {
    bool reference_first_this_round = (order_rng() & 1) != 0;
    for (int side = 0; side < 2; ++side) {
      if ((side == 0) == reference_first_this_round) {
        auto ns = time_reference(reference_calls);
        if (!ns) return ns.error();
        reference_us.push_back(*ns / 1000.0 / reference_calls);
      } else {
        auto answer = candidate_batch(candidate_calls);
        if (auto f = failed(answer, "timing")) return *f;
        candidate_us.push_back(std::max(answer->wall_ns - round_trip_ns, 0.0) / 1000.0 / candidate_calls);
        if (answer->sandbox_ns > 0)
          clock_ratios.push_back(std::max(answer->wall_ns - round_trip_ns, 0.0) / static_cast<double>(answer->sandbox_ns));
      }
    }
    size_t n = candidate_us.size();
    bool precise = n >= options.min_samples && relative_error_of_median(candidate_us) < options.target_relative_error &&
                   relative_error_of_median(reference_us) < options.target_relative_error;
    bool budget_spent = ms_since(timing_started) >= options.timing_budget_ms && n >= 3;
    if (precise || budget_spent || n >= options.max_samples) break;
  }
  TimingSummary candidate_summary = summarize(candidate_us, candidate_calls);
  TimingSummary reference_summary = summarize(reference_us, reference_calls);
  fill_timing(candidate_summary, out.initCandidateTiming());
  fill_timing(reference_summary, out.initReferenceTiming());
  // The median batch, so that one batch delayed by the scheduler does not speak for all.
  if (!clock_ratios.empty()) out.getEvidence().setWallCheckRatio(summarize(clock_ratios, 1).median);

  // Fresh values at the same addresses: a result cached across timed calls shows here.
  for (uint32_t s = 0; s < set_count; ++s) {
    write_inputs(run, s, kernels::draw_inputs(*run.task, options.device, mix(run.seed, 2000 + s)));
    poison_outputs(run, s);
  }
  auto check = candidate_batch(std::max(candidate_calls, set_count));
  if (auto f = failed(check, "the batch after timing")) return *f;
  for (uint32_t s = 0; s < set_count; ++s) {
    auto comparison = check_set(run, s);
    if (!comparison) return comparison.error();
    if (!comparison->passed) {
      out.setCorrect(false);
      out.setErrorText("the last timed batch (fresh inputs): " + comparison->first_failure);
      return {};
    }
  }
  if (candidate_summary.median > 0) out.setSpeedup(reference_summary.median / candidate_summary.median);
  return {};
}

EvaluationEngine::EvaluationEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EvaluationEngine::~EvaluationEngine() = default;

Result<std::unique_ptr<EvaluationEngine>> EvaluationEngine::create(kernels::TaskCatalog catalog, EngineOptions options) {
  if (options.device == DeviceKind::cuda)
    return make_error(Errc::unsupported,
                      "this evaluator runs CPU candidates only: the cuda device needs the CUDA evaluation path, "
                      "which is not part of this build; use --device cpu");
  if (options.trials == 0) return make_error(Errc::invalid_argument, "trials must be at least 1");
  if (options.max_threads < 1) return make_error(Errc::invalid_argument, "max_threads must be at least 1");
  auto impl = std::make_unique<Impl>();
  for (const auto& task : catalog.tasks()) {
    auto reference = kernels::Reference::create(task);
    if (!reference) return reference.error();
    impl->references.emplace(task.name, std::move(*reference));
  }
  CompilerOptions compiler_options;
  compiler_options.cache_dir = options.cache_dir;
  compiler_options.timeout = options.compile_timeout;
  auto compiler = Compiler::create(compiler_options, options.runner ? options.runner : system_command_runner());
  if (!compiler) return compiler.error();
  impl->compiler = std::move(*compiler);
  auto region = SharedRegion::create(1);
  if (!region) return region.error();
  impl->region.emplace(std::move(*region));
  impl->secret = options.seed ? *options.seed : secret_seed();
  impl->order_rng.seed(mix(impl->secret, 0xC0FFEE));
  options.sandbox.max_threads = options.max_threads;
  impl->catalog = std::move(catalog);
  impl->options = std::move(options);
  at::set_num_threads(impl->options.max_threads);
  if (auto s = impl->ensure_sandbox(); !s) return s.error();
  return std::unique_ptr<EvaluationEngine>(new EvaluationEngine(std::move(impl)));
}

Status EvaluationEngine::evaluate(msg::Candidate::Reader candidate, msg::EvalResult::Builder out) {
  return impl_->evaluate(candidate, out);
}

Status EvaluationEngine::evaluate(const CandidateInput& input, msg::EvalResult::Builder out) {
  capnp::MallocMessageBuilder message;
  auto candidate = message.initRoot<msg::Candidate>();
  candidate.setId(input.id);
  candidate.setTask(input.task);
  candidate.setDevice(input.device == DeviceKind::cuda ? msg::Device::CUDA : msg::Device::CPU);
  candidate.setLanguage(msg::Language::CPP);
  candidate.setSource(input.source);
  return impl_->evaluate(candidate.asReader(), out);
}

const kernels::TaskCatalog& EvaluationEngine::catalog() const { return impl_->catalog; }
const EngineOptions& EvaluationEngine::options() const { return impl_->options; }
pid_t EvaluationEngine::sandbox_pid() const {
  return impl_->sandbox && impl_->sandbox->alive() ? impl_->sandbox->pid() : 0;
}

}  // namespace drk::evaluator
