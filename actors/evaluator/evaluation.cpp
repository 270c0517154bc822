// The engine as a sequence of steps, each a unit of engine/ with its contract: compile and load
// (compile_and_load.h), correctness trials (correctness_trials.h), timing (timer.h: cpu_timer.h,
// cuda_timer.h), out-of-bounds checks (bounds_check.h), over a device (evaluation_device.h) and
// the candidate's sandbox (sandbox_session.h).
#include "actors/evaluator/evaluation.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>

#include <c10/util/Exception.h>
#include <capnp/message.h>
#include <sys/utsname.h>

#include "actors/evaluator/engine/bounds_check.h"
#include "actors/evaluator/engine/compile_and_load.h"
#include "actors/evaluator/engine/correctness_trials.h"
#include "actors/evaluator/engine/device_memory_share.h"
#include "actors/evaluator/engine/engine_clock.h"
#include "actors/evaluator/engine/evaluation_device.h"
#include "actors/evaluator/engine/evaluation_run.h"
#include "actors/evaluator/engine/gpu_profile.h"
#include "actors/evaluator/engine/host_tensor_store.h"
#include "actors/evaluator/python/python_reference.h"
#include "actors/evaluator/engine/sandbox_session.h"
#include "actors/evaluator/engine/timer.h"
#include "actors/evaluator/engine/timing_summary.h"
#include "actors/evaluator/shared_region.h"
#include "judging/best_known_bound.h"
#include "kernels/catalog/dtype_variant.h"
#include "judging/roofline_bound.h"
#include "base/file_system.h"
#include "kernels/catalog/kernelbench_problem.h"
#include "kernels/catalog/reference.h"
#include "kernels/compile/content_hash.h"
#include "kernels/catalog/reference_build.h"
#include "kernels/compile/compiler.h"

namespace drk::evaluator {
namespace {

using kernels::DeviceKind;

uint64_t secret_seed() {
  uint64_t seed = 0;
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  urandom.read(reinterpret_cast<char*>(&seed), sizeof seed);
  if (!urandom) seed = std::random_device{}() ^ (uint64_t{std::random_device{}()} << 32);
  return seed;
}

// What a result is tagged with: the GPU's architecture (sm_90) or the host's machine (x86_64).
std::string architecture_of(const EvaluationDevice& device) {
  if (device.kind() == DeviceKind::cuda) return "sm_" + std::to_string(device.compute_capability());
  utsname host{};
  return ::uname(&host) == 0 ? std::string(host.machine) : std::string("unknown");
}

// What an evaluation uses of the device, as a DeviceMemoryShare claims it: its tensors (every
// set) twice in this process (the run's, and as much again for the reference's outputs and the
// copies the checks keep), and two sets in the candidate's sandbox (its outputs and its working
// memory). On the H200, two evaluations of a 36 GiB problem held 117 GiB in the Evaluator and
// 13 GiB in a sandbox.
// `layout_bytes`: the largest of the run's layouts (its task's shapes, the timed shapes).
size_t device_memory_footprint(size_t layout_bytes, uint32_t sets) {
  const size_t per_set = layout_bytes / std::max<uint32_t>(1, sets);
  return 2 * layout_bytes + 2 * per_set;
}

// The bytes of the largest layout the run's timings use: its own, or a timed shape's.
size_t largest_timed_layout_bytes(const EvaluationRun& run) {
  size_t bytes = run.layout.bytes;
  if (const kernels::ShapeRange* range = run.task->shape_range(run.shapes))
    for (const auto& values : range->timed)
      bytes = std::max(bytes, make_layout(kernels::at_shapes(*run.task, run.shapes, range->at(values)), run.shapes,
                                          run.set_count())
                                  .bytes);
  return bytes;
}

// What the timers write of the task's own shape (the GPU profile, which the Verifier's roofline
// reads, and the CPU timer's wall checks), kept while the timed shapes are measured and put back
// after them. The answer-reuse evidence is the largest of every shape's: a result reused at any
// shape is one.
class OwnShapeProfile {
 public:
  explicit OwnShapeProfile(msg::EvalResult::Builder out) : out_(out) {
    if (out.hasGpu()) gpu_.emplace().setRoot(out.getGpu().asReader());
    auto evidence = out.getEvidence();
    wall_check_ratio_ = evidence.getWallCheckRatio();
    cpu_per_wall_ = evidence.getCpuPerWall();
    answer_reuse_ratio_ = evidence.getAnswerReuseRatio();
  }
  OwnShapeProfile(const OwnShapeProfile&) = delete;
  OwnShapeProfile& operator=(const OwnShapeProfile&) = delete;
  // After a timed shape's timing: its answer-reuse evidence joins the largest.
  void note_timed_shape() {
    answer_reuse_ratio_ = std::max(answer_reuse_ratio_, out_.getEvidence().getAnswerReuseRatio());
  }
  ~OwnShapeProfile() {
    if (gpu_) out_.setGpu(gpu_->getRoot<msg::GpuProfile>().asReader());
    auto evidence = out_.getEvidence();
    evidence.setWallCheckRatio(wall_check_ratio_);
    evidence.setCpuPerWall(cpu_per_wall_);
    evidence.setAnswerReuseRatio(answer_reuse_ratio_);
  }

 private:
  msg::EvalResult::Builder out_;
  std::optional<capnp::MallocMessageBuilder> gpu_;
  double wall_check_ratio_ = 0, cpu_per_wall_ = 0, answer_reuse_ratio_ = 0;
};

}  // namespace

struct EvaluationEngine::Impl {
  kernels::TaskCatalog catalog;
  EngineOptions options;
  std::map<std::string, std::unique_ptr<ReferenceModel>> references;
  // KernelBench problems met so far (python engines): their tasks, made from the import's records.
  std::map<std::string, std::unique_ptr<kernels::Task>> kernelbench_tasks;
  std::unique_ptr<compile::CompilePool> compile_pool;
  std::unique_ptr<EvaluationDevice> device;
  std::optional<SharedRegion> region;
  std::optional<HostTensorStore> shared_store;
  // The steps refer to the members above, which outlive them.
  std::optional<SandboxSession> session;
  std::optional<CompileAndLoad> compile_and_load;
  std::optional<CorrectnessTrials> trials;
  std::unique_ptr<Timer> timer;
  std::optional<BoundsCheck> bounds;
  kernels::ReferenceBuild reference_build;  // what the reference runs on (EvalResult.referenceBuild)
  uint64_t secret = 0;
  uint64_t evaluations = 0;
  StepObserver step_observer;

  // Tells the step observer of a step that began at `began` and ends now.
  void step_ended(const char* step, Clock::time_point began) const {
    if (step_observer) step_observer(step, began, Clock::now());
  }

  kernels::DeviceKind shape_kind() const { return options.shapes.value_or(options.device); }
  // Where runs keep their tensors: the device's memory, or the shared region.
  TensorStore& store() {
    TensorStore* on_device = device->device_store();
    return on_device ? *on_device : *shared_store;
  }

  Status evaluate(msg::Candidate::Reader candidate, msg::EvalResult::Builder out, double best_known_speedup);
  Result<const kernels::Task*> find_task(const std::string& name);
  // A KernelBench problem's task and its Python reference, from its import record and source file.
  Result<const kernels::Task*> load_kernelbench_task(const std::string& name);
  // unsupported for a candidate this engine cannot evaluate (another device or language, a task
  // without shapes for it).
  Status check_candidate(msg::Candidate::Reader candidate, const kernels::Task& task) const;
  EvaluationRun make_run(const kernels::Task& task, msg::EvalResult::Builder out);
  // The steps after a successful load.
  Status check_and_time(EvaluationRun& run, const compile::CompiledCandidate& compiled, double best_known_speedup);
  // swap_between_calls: the re-timing of an implausible result, with input_swaps.h's swaps.
  Status run_timing(EvaluationRun& run, bool swap_between_calls);
  struct Measured {
    TimingSummary candidate, reference;
  };
  // Times candidate and reference on `run`'s sets (inputs drawn afresh), then the checks after
  // timing (CorrectnessTrials::after_timing), which may find the result incorrect. nullopt when
  // nothing was measured (the result is not correct).
  Result<std::optional<Measured>> measure(EvaluationRun& run, bool swap_between_calls);
  // The task's timed shapes (docs/tasks.md, "Shape ranges"), after the timing at its own shape.
  Status time_declared_shapes(EvaluationRun& run);
  // The buffer sets a timing uses (the timer's choice for eval.timing_sets).
  uint32_t timing_sets() const { return timer->buffer_sets(options.timing_sets); }
};

Result<const kernels::Task*> EvaluationEngine::Impl::find_task(const std::string& name) {
  if (name.rfind("kernelbench/", 0) != 0) return catalog.find(name);
  if (!options.python)
    return make_error(Errc::unsupported, "task '" + name +
                                             "' is a KernelBench problem: its candidates are KernelBench-format Python "
                                             "files (a ModelNew), which a python engine evaluates (drk eval with a .py "
                                             "candidate)");
  if (auto known = kernelbench_tasks.find(name); known != kernelbench_tasks.end()) return known->second.get();
  return load_kernelbench_task(name);
}

Result<const kernels::Task*> EvaluationEngine::Impl::load_kernelbench_task(const std::string& name) {
  const std::string directory =
      options.kernelbench_dir.empty() ? kernels::default_kernelbench_directory() : options.kernelbench_dir;
  auto problem = kernels::load_kernelbench_problem(directory, name);
  if (!problem) return problem.error();
  auto source = real_file_system().read_file(problem->source);
  if (!source)
    return make_error(Errc::not_found, "the source of " + name + " (" + problem->source +
                                           ") cannot be read: re-import the problem (drk kernelbench import)");
  if (compile::content_hash(*source) != problem->source_sha256)
    return make_error(Errc::invalid_argument, problem->source + " changed since " + name +
                                                  " was imported: import it again (drk kernelbench import)");
  auto task = kernels::kernelbench_task(*problem);
  if (!task) return task.error();
  const std::string file_name = std::filesystem::path(problem->source).filename().string();
  auto reference = PythonReference::create(*source, file_name, options.device, mix(secret, std::hash<std::string>{}(name)));
  if (!reference) return reference.error();
  references[name] = std::move(*reference);
  auto& stored = kernelbench_tasks[name] = std::make_unique<kernels::Task>(std::move(*task));
  return stored.get();
}

Status EvaluationEngine::Impl::check_candidate(msg::Candidate::Reader candidate, const kernels::Task& task) const {
  DeviceKind kind = candidate.getDevice() == msg::Device::CUDA ? DeviceKind::cuda : DeviceKind::cpu;
  if (kind != options.device)
    return make_error(Errc::unsupported, "candidate '" + std::string(candidate.getId()) + "' is for device " +
                                             std::string(kernels::device_name(kind)) + " but this evaluator runs " +
                                             std::string(kernels::device_name(options.device)));
  const msg::Language language = device->language();
  auto language_name = [](msg::Language l) {
    return l == msg::Language::CUDA ? "CUDA C++" : l == msg::Language::PYTHON ? "KernelBench-format Python" : "C++";
  };
  if (candidate.getLanguage() != language)
    return make_error(Errc::unsupported, std::string("candidate '") + candidate.getId().cStr() + "' is " +
                                             language_name(candidate.getLanguage()) + " but this evaluator compiles " +
                                             language_name(language) + " candidates");
  if (!task.runs_on(shape_kind()))
    return make_error(Errc::unsupported, "task '" + task.name + "' has no " +
                                             std::string(kernels::device_name(shape_kind())) + " shapes: it runs on " +
                                             task.devices_text() + " only (kernels/tasks/" + task.name + ".yaml)");
  if (auto runs = kernels::dtype_runs_on(task.dtype(), device->kind(), device->compute_capability()); !runs)
    return make_error(Errc::unsupported, "task '" + task.name + "': " + runs.error().message);
  return {};
}

EvaluationRun EvaluationEngine::Impl::make_run(const kernels::Task& task, msg::EvalResult::Builder out) {
  EvaluationRun run;
  run.task = &task;
  run.reference = references.at(task.name).get();
  run.shapes = shape_kind();
  run.store = &store();
  run.lay_out(make_layout(task, shape_kind(), timing_sets()));
  run.tolerance = task.output_tolerance();
  run.seed = mix(secret, evaluations++);
  run.out = out;
  return run;
}

Status EvaluationEngine::Impl::evaluate(msg::Candidate::Reader candidate, msg::EvalResult::Builder out,
                                       double best_known_speedup) {
  auto started = Clock::now();
  std::optional<Status> adoption = compile_and_load->take_adoption(candidate.getId().cStr());
  const std::string task_name = candidate.getTask();
  auto task = find_task(task_name);
  if (!task) return task.error();
  if (auto s = check_candidate(candidate, **task); !s) return s;

  compile_and_load->record_artifact(candidate, std::move(adoption), out);
  out.setEvaluator(options.evaluator_name);
  out.setDevice(device->kind() == DeviceKind::cuda ? msg::Device::CUDA : msg::Device::CPU);
  out.setArchitecture(architecture_of(*device));
  out.setDtype(static_cast<msg::DType>(static_cast<uint16_t>((*task)->dtype())));
  out.setTrials(options.trials);
  out.setSandbox(msg::SandboxOutcome::OK);
  struct EvalClock {
    msg::EvalResult::Builder out;
    Clock::time_point started;
    ~EvalClock() { out.setEvalMs(ms_since(started)); }
  } eval_clock{out, started};

  auto compiled = compile_and_load->compile(candidate.getSource(), out, started);
  step_ended("compile", started);
  if (!compiled) return compiled.error();
  if (!*compiled) return {};
  const std::set<std::string> own_kernels = device->record_resources((*compiled)->compiler_output, out);

  EvaluationRun run = make_run(**task, out);
  run.own_kernels = own_kernels;
  const size_t layout_bytes = largest_timed_layout_bytes(run);
  // The device memory this evaluation cached goes back once its sandbox has gone; engines sharing
  // the GPU claim its memory before it is allocated and give its tensors back too (the members
  // below end in the reverse order: sandbox, memory, claim).
  struct DeviceMemoryGivenBack {
    EvaluationDevice* device = nullptr;
    bool shared = false;
    DeviceMemoryShare::Claim claim;
    ~DeviceMemoryGivenBack() {
      if (device) device->give_back_device_memory(shared);
    }
  } device_memory{device.get(), options.device_memory_share != nullptr};
  if (device_memory.shared)
    device_memory.claim = options.device_memory_share->claim(device_memory_footprint(layout_bytes, run.set_count()));
  if (auto s = run.reserve(layout_bytes); !s) return s;
  kernels::set_reference_threads(options.max_threads);
  const std::string baseline = reference_build.describe();
  out.setReferenceBuild(baseline);
  out.setReferenceBlasUnoptimised(reference_build.unoptimised_blas);

  // Whatever ends the evaluation, its sandbox goes with it and the next one is started.
  struct EndCandidate {
    SandboxSession& session;
    ~EndCandidate() { session.end_candidate(); }
  } end_candidate_on_exit{*session};
  const auto load_began = Clock::now();
  auto loaded = compile_and_load->load(run, **compiled);
  step_ended("load", load_began);
  if (!loaded) return loaded.error();
  if (*loaded)
    if (auto s = check_and_time(run, **compiled, best_known_speedup); !s) return s;
  if (!out.getCorrect()) {
    out.setSpeedup(0.0);
    out.setShapesSpeedup(0.0);
  }
  if (const std::string note = run.reference->precision_note(); !note.empty())
    out.setReferenceBuild(baseline + "; " + note);
  session->record_idle_cpu(run);
  out.getEvidence().setMaxThreads(options.max_threads);
  return {};
}

Status EvaluationEngine::Impl::check_and_time(EvaluationRun& run, const compile::CompiledCandidate& compiled,
                                              double best_known_speedup) {
  auto out = run.out;
  auto phase_started = Clock::now();
  if (auto s = trials->run(run); !s) return s;
  if (out.getCorrect())
    if (auto s = trials->second_shape(run); !s) return s;
  if (out.getCorrect())
    if (auto s = trials->range_shapes(run); !s) return s;
  out.setCorrectnessMs(ms_since(phase_started));
  step_ended("correctness", phase_started);
  phase_started = Clock::now();
  if (out.getCorrect()) {
    const auto timing_began = Clock::now();
    auto timed = run_timing(run, false);
    step_ended("timing", timing_began);
    if (!timed) return timed;
  }
  // Beyond the roofline, or far beyond the task's best known speedup: measured again before the
  // Verifier judges it, and checked for out-of-bounds accesses.
  const bool beyond = out.getCorrect() && judging::roofline_position(out.asReader()).beyond;
  const double first_speedup = out.getSpeedup();
  const bool beyond_best = out.getCorrect() && judging::far_beyond_best_known(first_speedup, best_known_speedup);
  if (beyond || beyond_best) {
    auto evidence = out.getEvidence();
    evidence.setRooflineRemeasured(beyond);
    if (beyond_best) evidence.setBestKnownSpeedup(best_known_speedup);
    evidence.setFirstSpeedup(first_speedup);
    evidence.setFirstCandidateUs(out.getCandidateTiming().getMedianUs());
    // Two input elements swapped before every call: no call sees inputs another one saw, so a
    // result memoised on the whole input misses, and the speedup holds only if the work is done.
    const auto remeasure_began = Clock::now();
    auto remeasured = run_timing(run, true);
    step_ended("remeasure", remeasure_began);
    if (!remeasured) return remeasured;
  }
  if (out.getCorrect()) {
    const auto timed_shapes_began = Clock::now();
    auto timed = time_declared_shapes(run);
    step_ended("timed shapes", timed_shapes_began);
    if (!timed) return timed;
  }
  out.setTimingMs(ms_since(phase_started));
  if (out.getCorrect() && (options.sanitize || beyond || beyond_best)) {
    const auto bounds_began = Clock::now();
    device->check_bounds(*bounds, run, compiled);
    step_ended("bounds check", bounds_began);
  }
  return {};
}

Result<std::optional<EvaluationEngine::Impl::Measured>> EvaluationEngine::Impl::measure(EvaluationRun& run,
                                                                                          bool swap_between_calls) {
  auto out = run.out;
  std::unique_lock<std::mutex> device_to_itself;
  if (options.device_timing_lock) device_to_itself = std::unique_lock(*options.device_timing_lock);
  for (uint32_t s = 0; s < run.set_count(); ++s) {
    run.write_inputs(s, mix(run.seed, 1000 + s));
    run.poison_outputs(s);
  }
  TimingSamples samples;
  run.swap_seed = swap_between_calls ? mix(run.seed, 4000) : 0;
  Status timed = timer->time(run, samples);
  // The swaps end with the timing: every input is written afresh below before anything is checked.
  run.swap_seed = 0;
  if (!timed) return timed.error();
  if (!out.getCorrect() || samples.candidate_us.empty()) return std::optional<Measured>();
  Measured measured{summarize(samples.candidate_us, samples.candidate_calls),
                    summarize(samples.reference_us, samples.reference_calls)};
  // A reference that took no time is a measurement that failed, not a speedup of 0 for a correct
  // candidate (seen once on a loaded machine: a reward as if the candidate were slow).
  if (!(measured.reference.median > 0))
    return make_error(Errc::internal, "the reference's timing measured no time over " +
                                          std::to_string(samples.reference_us.size()) +
                                          " samples: evaluate the candidate again");
  if (auto s = trials->after_timing(run, samples.candidate_calls); !s) return s.error();
  return std::optional<Measured>(measured);
}

Status EvaluationEngine::Impl::run_timing(EvaluationRun& run, bool swap_between_calls) {
  auto out = run.out;
  auto measured = measure(run, swap_between_calls);
  if (!measured) return measured.error();
  if (!*measured) return {};
  fill_timing((*measured)->candidate, out.initCandidateTiming());
  fill_timing((*measured)->reference, out.initReferenceTiming());
  fill_roofline(run, (*measured)->candidate.median);
  if (out.getCorrect() && (*measured)->candidate.median > 0)
    out.setSpeedup((*measured)->reference.median / (*measured)->candidate.median);
  return {};
}

// Each timed shape begins with a trial there (a shape the candidate declines is not timed, and
// lowers the reward as a declined draw does; a wrong answer makes the result incorrect, as at a
// drawn shape), then is timed and checked as the task's own shape is. shapesSpeedup is the
// geometric mean of the speedups at the task's shape and at the timed shapes handled.
Status EvaluationEngine::Impl::time_declared_shapes(EvaluationRun& run) {
  auto out = run.out;
  const kernels::ShapeRange* range = run.task->shape_range(run.shapes);
  if (range == nullptr || range->timed.empty() || !out.getCorrect() || !(out.getSpeedup() > 0)) return {};
  OwnShapeProfile own_shape(out);
  auto timed_shapes = out.initTimedShapes(static_cast<unsigned>(range->timed.size()));
  double log_speedups = std::log(out.getSpeedup());
  uint32_t speedups = 1;
  for (size_t i = 0; i < range->timed.size(); ++i) {
    const kernels::Task shaped = kernels::at_shapes(*run.task, run.shapes, range->at(range->timed[i]));
    auto entry = timed_shapes[static_cast<unsigned>(i)];
    entry.setShapes(kernels::input_shapes_text(shaped, run.shapes));
    const std::string phase = "timed shape " + std::to_string(i + 1) + " of " + std::to_string(range->timed.size()) +
                              " (" + entry.getShapes().cStr() + ")";
    auto trial = trials->trial_at(run, shaped, phase, mix(run.seed, 700 + i));
    if (!trial) return trial.error();
    if (trial->outcome == CorrectnessTrials::ShapeTrial::declined) {
      entry.setDeclined(true);
      continue;
    }
    if (trial->outcome == CorrectnessTrials::ShapeTrial::wrong) out.getEvidence().setRangeShapeWrong(trial->failure);
    if (trial->outcome != CorrectnessTrials::ShapeTrial::handled) return {};
    EvaluationRun timed = run.at(shaped, timing_sets());
    auto measured = measure(timed, false);
    own_shape.note_timed_shape();
    if (!measured) return measured.error();
    if (!out.getCorrect()) {  // the checks after timing found it wrong there, or its sandbox failed
      out.setErrorText(phase + ": " + std::string(out.getErrorText().cStr()));
      return {};
    }
    // Correct yet not timed: a measurement that failed, not a speedup of 0.
    if (!*measured || !((*measured)->candidate.median > 0))
      return make_error(Errc::internal, phase + ": the timing measured no time: evaluate the candidate again");
    fill_timing((*measured)->candidate, entry.initCandidateTiming());
    fill_timing((*measured)->reference, entry.initReferenceTiming());
    const double speedup = (*measured)->reference.median / (*measured)->candidate.median;
    entry.setSpeedup(speedup);
    log_speedups += std::log(speedup);
    ++speedups;
  }
  out.setShapesSpeedup(std::exp(log_speedups / speedups));
  return {};
}

EvaluationEngine::EvaluationEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EvaluationEngine::~EvaluationEngine() = default;

Result<bool> parse_launch_latency(std::string_view text) {
  if (text == "hidden") return true;
  if (text == "included") return false;
  return make_error(Errc::invalid_argument, "'" + std::string(text) +
                                                "' is no launch latency setting: included (the events time the "
                                                "host's launches too, the default) or hidden (the device's "
                                                "work only, behind the launch hold)");
}

Result<std::unique_ptr<EvaluationEngine>> EvaluationEngine::create(kernels::TaskCatalog catalog, EngineOptions options) {
  auto device = options.make_device ? options.make_device(options) : make_evaluation_device(options);
  if (!device) return device.error();
  if (options.trials == 0) return make_error(Errc::invalid_argument, "trials must be at least 1");
  if (options.max_threads < 1) return make_error(Errc::invalid_argument, "max_threads must be at least 1");
  auto impl = std::make_unique<Impl>();
  impl->device = std::move(*device);
  auto add_reference = [&](const kernels::Task& task) -> Status {
    auto reference = kernels::Reference::create(task);
    if (!reference) return reference.error();
    impl->references.emplace(task.name, std::make_unique<ExpressionReference>(std::move(*reference)));
    return {};
  };
  for (const auto& task : catalog.tasks())
    if (auto added = add_reference(task); !added) return added.error();
  for (const auto& variant : catalog.variants())
    if (auto added = add_reference(variant); !added) return added.error();
  compile::CompilerOptions compiler_options = compile::compiler_options_for(impl->device->language());
  impl->device->configure_compiler(compiler_options);
  compiler_options.cache_dir = options.cache_dir;
  compiler_options.timeout = options.compile_timeout;
  auto compiler =
      compile::Compiler::create(compiler_options, options.runner ? options.runner : compile::system_command_runner());
  if (!compiler) return compiler.error();
  auto pool = compile::CompilePool::create(std::move(*compiler), options.compile_workers);
  if (!pool) return pool.error();
  impl->compile_pool = std::move(*pool);
  auto region = SharedRegion::create(1);
  if (!region) return region.error();
  impl->region.emplace(std::move(*region));
  impl->secret = options.seed ? *options.seed : secret_seed();
  options.sandbox.max_threads = options.max_threads;
  impl->device->configure_sandbox(options);
  options.sandbox_spares = std::max<uint32_t>(options.sandbox_spares, 1);
  impl->catalog = std::move(catalog);
  impl->options = std::move(options);
  kernels::set_reference_threads(impl->options.max_threads);
  impl->reference_build = kernels::reference_build();
  impl->device->describe_reference(impl->reference_build);
  if (impl->reference_build.unoptimised_blas && !impl->options.allow_reference_blas) {
    return make_error(Errc::unsupported,
                      "the CPU reference would run on " + impl->reference_build.blas +
                          ": speedups over it are not honest. Install an optimised BLAS (apt-get install "
                          "libopenblas0-openmp, as tools/scripts/install-deps.sh does), or accept the crippled "
                          "baseline with eval.allow_reference_blas: true (drk eval --allow-reference-blas)");
  }
  Impl& engine = *impl;
  engine.shared_store.emplace(*engine.region);
  engine.session.emplace(engine.options, *engine.region, *engine.device);
  if (auto s = engine.session->start(); !s) return s.error();
  engine.compile_and_load.emplace(engine.options, *engine.compile_pool, *engine.session, *engine.device,
                                  *engine.shared_store);
  engine.trials.emplace(engine.options, *engine.session);
  engine.timer = engine.device->make_timer(*engine.session, engine.options, mix(engine.secret, 0xC0FFEE));
  engine.bounds.emplace(engine.options, *engine.session, *engine.shared_store, *engine.device);
  engine.device->start_warm_up();
  return std::unique_ptr<EvaluationEngine>(new EvaluationEngine(std::move(impl)));
}

Status EvaluationEngine::evaluate(msg::Candidate::Reader candidate, msg::EvalResult::Builder out,
                                  double best_known_speedup) {
  // Torch throws when this process's share of the device runs out (the reference, the checks):
  // the evaluation's failure, not the process's.
  try {
    return impl_->evaluate(candidate, out, best_known_speedup);
  } catch (const c10::OutOfMemoryError& e) {
    return make_error(Errc::io_error, std::string("the Evaluator ran out of device memory while it evaluated '") +
                                          candidate.getId().cStr() + "': " + e.what_without_backtrace() +
                                          ": evaluate with fewer jobs on this GPU, or at smaller shapes");
  }
}

Status EvaluationEngine::evaluate(const CandidateInput& input, msg::EvalResult::Builder out) {
  capnp::MallocMessageBuilder message;
  auto candidate = message.initRoot<msg::Candidate>();
  candidate.setId(input.id);
  candidate.setTask(input.task);
  candidate.setDevice(input.device == DeviceKind::cuda ? msg::Device::CUDA : msg::Device::CPU);
  candidate.setLanguage(input.python                        ? msg::Language::PYTHON
                        : input.device == DeviceKind::cuda ? msg::Language::CUDA
                                                           : msg::Language::CPP);
  candidate.setSource(input.source);
  if (input.python) candidate.setPythonBackend(judging::backend_message(input.python_backend));
  return evaluate(candidate.asReader(), out, input.best_known_speedup);
}

void EvaluationEngine::compile_ahead(msg::Candidate::Reader candidate) { impl_->compile_and_load->compile_ahead(candidate); }

compile::CompilePool& EvaluationEngine::compile_pool() { return *impl_->compile_pool; }
const kernels::TaskCatalog& EvaluationEngine::catalog() const { return impl_->catalog; }
Result<const kernels::Task*> EvaluationEngine::find_task(const std::string& name) { return impl_->find_task(name); }
const EngineOptions& EvaluationEngine::options() const { return impl_->options; }

Status EvaluationEngine::set_measurement(const Measurement& measurement) {
  if (measurement.trials == 0 || measurement.max_samples == 0 || measurement.call_timeout.count() <= 0)
    return make_error(Errc::invalid_argument, "a measurement needs at least 1 trial, 1 timed sample and a positive "
                                              "call timeout");
  impl_->options.trials = measurement.trials;
  impl_->options.max_samples = measurement.max_samples;
  impl_->options.call_timeout = measurement.call_timeout;
  impl_->options.warmup_calls = measurement.warmup_calls;
  return {};
}
void EvaluationEngine::set_step_observer(StepObserver observer) {
  impl_->session->set_request_observer(observer);
  impl_->step_observer = std::move(observer);
}

pid_t EvaluationEngine::sandbox_pid() const { return impl_->session->last_candidate_pid(); }

}  // namespace drk::evaluator
