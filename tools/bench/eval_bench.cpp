#include "tools/bench/eval_bench.h"

#include <capnp/message.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iostream>
#include <iomanip>
#include <random>
#include <cmath>
#include <span>
#include <sstream>
#include <thread>
#include <vector>

#include "actors/evaluator/evaluation.h"
#include "base/json_text.h"
#include "runtime/log.h"
#include "runtime/progress_meter.h"
#include "tools/bench/source_tree.h"
#include "tools/bench/statistics.h"
#include "tools/bench/temp_dir.h"

namespace drk::bench {
namespace {

using Clock = std::chrono::steady_clock;
using kernels::DeviceKind;

// One task of each family the embedded policy renders, with its honest hand-written candidate.
struct MixEntry {
  const char* task;
  const char* family;
  const char* candidate;  // below tests/candidates
};

// How long the engine idles before each sample of the third latency row.
constexpr auto kIdleBeforeSample = std::chrono::milliseconds(1000);

constexpr MixEntry kCpuMix[] = {{"relu", "elementwise", "relu.cpp"},
                                {"softmax", "rowwise", "softmax.cpp"},
                                {"gemm_multiply_leakyrelu", "gemm", "gemm_multiply_leakyrelu.cpp"}};
constexpr MixEntry kCudaMix[] = {{"relu", "elementwise", "cuda/relu.cu"},
                                 {"softmax", "rowwise", "cuda/softmax.cu"},
                                 {"matmul", "gemm", "cuda/matmul.cu"}};

struct Phases {
  double eval = 0, compile = 0, compile_wait = 0, load = 0, correctness = 0, timing = 0;
};

struct Sample {
  std::string task;
  bool correct = false;
  bool compile_cached = false;
  std::string error;
  Phases ms;
};

struct ThroughputRow {
  std::string name;
  uint32_t workers = 1;
  uint32_t ahead = 0;
  size_t evaluations = 0;
  double seconds = 0;
  Phases mean_ms;
  double per_hour() const { return seconds > 0 ? 3600.0 * static_cast<double>(evaluations) / seconds : 0; }
};

Phases median_phases(const std::vector<Sample>& samples) {
  auto column = [&](double Phases::*field) {
    std::vector<double> values;
    for (const auto& s : samples) values.push_back(s.ms.*field);
    return median(values);
  };
  return {column(&Phases::eval),        column(&Phases::compile),     column(&Phases::compile_wait),
          column(&Phases::load),        column(&Phases::correctness), column(&Phases::timing)};
}

Phases mean_phases(const std::vector<Sample>& samples) {
  Phases sum;
  for (const auto& s : samples) {
    sum.eval += s.ms.eval;
    sum.compile += s.ms.compile;
    sum.compile_wait += s.ms.compile_wait;
    sum.load += s.ms.load;
    sum.correctness += s.ms.correctness;
    sum.timing += s.ms.timing;
  }
  double n = samples.empty() ? 1.0 : static_cast<double>(samples.size());
  return {sum.eval / n, sum.compile / n, sum.compile_wait / n, sum.load / n, sum.correctness / n, sum.timing / n};
}

double cv_of(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double square = 0;
  for (double v : values) square += (v - mean) * (v - mean);
  return mean > 0 ? std::sqrt(square / static_cast<double>(values.size() - 1)) / mean : 0;
}

// The kernels the stability section times, at shapes where one call lasts well over 50 us on an
// H200; `shape_line` replaces the task's `cuda:` shapes line ("" keeps KernelBench's).
struct StabilityEntry {
  const char* task;
  const char* shape_line;
  const char* shape;
  bool launch_hidden;  // timed behind the launch hold (eval.launch_latency: hidden)
};
// KernelBench's own shapes: with the checks on the device an evaluation there takes seconds, and
// every call lasts milliseconds on an H200 (12.9 GB moved by relu and softmax; matmul 4096^3),
// then mid-sized kernels (256 MiB moved, 50-100 us), where the host's launch latency is a few
// per cent of a call: timed with it included and with it hidden.
constexpr const char* kMidShape = "  cuda: {x: [4096, 8192], y: [4096, 8192]}";
constexpr StabilityEntry kStability[] = {
    {"matmul", "", "4096x4096 @ 4096x4096 (KernelBench)", false},
    {"softmax", "", "4096x393216 (KernelBench)", false},
    {"relu", "", "4096x393216 (KernelBench)", false},
    {"softmax", kMidShape, "4096x8192", false},
    {"softmax", kMidShape, "4096x8192", true},
    {"relu", kMidShape, "4096x8192", false},
    {"relu", kMidShape, "4096x8192", true}};

struct StabilityRow {
  std::string task, shape;
  bool launch_hidden = false;
  std::vector<double> medians_us, cvs, disagreements;
  std::vector<double> tracing_costs;  // traced calls' event median / the untraced timing's median - 1
  double median_us() const { return median(medians_us); }
  double tracing_cost() const { return median(tracing_costs); }
  double cv_across() const { return cv_of(medians_us); }
  double cv_within() const { return median(cvs); }
  double cupti_agreement() const { return median(disagreements); }  // |event - CUPTI| / event
  double cupti_agreement_worst() const {
    return disagreements.empty() ? 0 : *std::max_element(disagreements.begin(), disagreements.end());
  }
};

// A candidate never seen by any compile cache: the honest source with a unique last line.
struct Candidate {
  std::string task;
  std::string source;
};

class Bench {
 public:
  explicit Bench(const EvalBenchOptions& options) : options_(options) {
    std::random_device entropy;
    nonce_ = (static_cast<uint64_t>(entropy()) << 32) ^ entropy() ^
             static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  }

  bool load_mix() {
    const bool cuda = options_.device == DeviceKind::cuda;
    for (const MixEntry& entry : cuda ? std::span<const MixEntry>(kCudaMix) : std::span<const MixEntry>(kCpuMix)) {
      const std::string relative = std::string("tests/candidates/") + entry.candidate;
      auto text = read_source_file(relative);
      if (!text) {
        log::error() << options_.program << ": cannot read the candidate '" << source_dir() << "/" << relative
                     << "': set DRK_SOURCE_DIR to the drkernel source tree";
        return false;
      }
      mix_.push_back({entry.task, *text});
      families_.push_back(entry.family);
    }
    return true;
  }

  Candidate fresh(size_t index) {
    const Candidate& base = mix_[index % mix_.size()];
    return {base.task, base.source + "\n// drk bench eval " + std::to_string(nonce_) + " " + std::to_string(serial_++) + "\n"};
  }

  Result<std::unique_ptr<evaluator::EvaluationEngine>> make_engine(uint32_t workers) {
    auto catalog = kernels::TaskCatalog::load(kernels::TaskCatalog::default_directory());
    if (!catalog) return catalog.error();
    evaluator::EngineOptions engine;
    engine.device = options_.device;
    engine.shapes = options_.shapes.value_or(DeviceKind::cpu);
    engine.trials = options_.trials;
    engine.timing_budget_ms = options_.timing_budget_ms;
    engine.max_threads = 1;
    engine.cache_dir = cache_.path() + "/compile-cache";
    engine.compile_workers = workers;
    engine.sandbox_spares = options_.sandbox_spares;
    engine.evaluator_name = options_.program;
    auto created = evaluator::EvaluationEngine::create(std::move(*catalog), engine);
    if (!created) return created.error();
    // One-time costs out of every measurement: the sandbox's first load, LibTorch's lazy set-up,
    // and on CUDA the device peaks the first timed evaluation measures.
    for (const Candidate& candidate : mix_) {
      auto sample = evaluate(**created, candidate);
      if (!sample) return sample.error();
    }
    return created;
  }

  Result<Sample> evaluate(evaluator::EvaluationEngine& engine, const Candidate& candidate) {
    capnp::MallocMessageBuilder message;
    auto result = message.initRoot<msg::EvalResult>();
    evaluator::CandidateInput input{"bench/" + candidate.task + "/" + std::to_string(evaluated_++), candidate.task,
                                    options_.device, candidate.source};
    if (auto status = engine.evaluate(input, result); !status) return status.error();
    Sample sample;
    sample.task = candidate.task;
    sample.correct = result.getCorrect();
    sample.compile_cached = result.getCompileCached();
    sample.error = result.getErrorText().size() ? std::string(result.getErrorText().cStr())
                                                : std::string(result.getCompileLog().cStr());
    sample.ms = {result.getEvalMs(), result.getCompileMs(),     result.getCompileWaitMs(),
                 result.getLoadMs(), result.getCorrectnessMs(), result.getTimingMs()};
    if (!sample.correct)
      return make_error(Errc::internal, "the honest candidate for '" + candidate.task +
                                            "' was not found correct, so the numbers would measure a failure: " +
                                            sample.error);
    return sample;
  }

  // Evaluates `count` fresh candidates as an Evaluator holding ahead + 1 requests does: before
  // each evaluation the next `ahead` are submitted to the pool.
  Result<ThroughputRow> throughput(const std::string& name, uint32_t workers, uint32_t ahead, size_t count) {
    auto engine = make_engine(workers);
    if (!engine) return engine.error();
    std::vector<Candidate> stream;
    for (size_t i = 0; i < count; ++i) stream.push_back(fresh(i));
    std::vector<Sample> samples;
    size_t next = 1;  // the first stream candidate to submit ahead
    runtime::ProgressMeter progress("drk bench eval: " + name, "evaluations", stream.size(), &std::cerr,
                                    runtime::stderr_progress_options());
    auto started = Clock::now();
    for (size_t i = 0; i < stream.size(); ++i) {
      next = std::max(next, i + 1);
      while (next < stream.size() && next <= i + ahead) (void)(*engine)->compile_pool().submit(stream[next++].source);
      auto sample = evaluate(**engine, stream[i]);
      if (!sample) return sample.error();
      samples.push_back(*sample);
      progress.add_done();
    }
    ThroughputRow row;
    row.name = name;
    row.workers = workers;
    row.ahead = ahead;
    row.evaluations = samples.size();
    row.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    row.mean_ms = mean_phases(samples);
    return row;
  }

  // The same candidate evaluated `count` times at the stability shapes (a catalog of its own in
  // the bench's temporary folder), after one evaluation that is not kept.
  Result<StabilityRow> stability(const StabilityEntry& entry, uint32_t count) {
    const Candidate* base = nullptr;
    for (const auto& candidate : mix_)
      if (candidate.task == entry.task) base = &candidate;
    if (!base) return make_error(Errc::not_found, std::string("the stability task '") + entry.task + "' is not in the mix");
    std::string tasks = cache_.path() + "/stability-tasks-" + entry.task;
    std::filesystem::create_directories(tasks);
    std::string yaml_path = source_dir() + "/kernels/tasks/" + entry.task + ".yaml";
    std::ifstream in(yaml_path);
    if (!in) return make_error(Errc::not_found, "cannot read " + yaml_path);
    std::ostringstream yaml;
    bool replaced = std::string(entry.shape_line).empty();
    for (std::string line; std::getline(in, line);) {
      if (!replaced && line.rfind("  cuda:", 0) == 0) {
        line = entry.shape_line;
        replaced = true;
      }
      yaml << line << "\n";
    }
    if (!replaced) return make_error(Errc::parse_error, yaml_path + " has no '  cuda:' shapes line to replace");
    std::ofstream(tasks + "/" + entry.task + ".yaml") << yaml.str();
    auto catalog = kernels::TaskCatalog::load(tasks);
    if (!catalog) return catalog.error();
    evaluator::EngineOptions engine;
    engine.device = DeviceKind::cuda;
    engine.shapes = DeviceKind::cuda;
    engine.trials = 1;
    engine.timing_budget_ms = options_.quick ? 500 : 2000;
    engine.timing_sets = 2;  // 25.6 GB of tensors per set at the published elementwise shapes
    engine.cache_dir = cache_.path() + "/compile-cache";
    engine.compile_workers = 1;
    engine.evaluator_name = options_.program;
    engine.call_timeout = std::chrono::milliseconds(60000);
    engine.hide_launch_latency = entry.launch_hidden;
    auto created = evaluator::EvaluationEngine::create(std::move(*catalog), engine);
    if (!created) return created.error();
    StabilityRow row;
    row.task = entry.task;
    row.shape = entry.shape;
    row.launch_hidden = entry.launch_hidden;
    for (uint32_t i = 0; i <= count; ++i) {
      capnp::MallocMessageBuilder message;
      auto result = message.initRoot<msg::EvalResult>();
      evaluator::CandidateInput input{"bench/stability/" + row.task + "/" + std::to_string(i), row.task,
                                      DeviceKind::cuda, base->source};
      if (auto status = (*created)->evaluate(input, result); !status) return status.error();
      if (!result.getCorrect())
        return make_error(Errc::internal, "the honest candidate for '" + row.task +
                                              "' was not found correct at the stability shapes: " +
                                              std::string(result.getErrorText().cStr()));
      if (result.getGpu().getLaunchLatencyHidden() != entry.launch_hidden)
        return make_error(Errc::internal, "the stability row for '" + row.task + "' asked for launch latency " +
                                              (entry.launch_hidden ? "hidden" : "included") + " and got: " +
                                              std::string(result.getGpu().getLaunchLatencyNote().cStr()));
      if (i == 0) continue;  // warm-up: the sandbox's first load, the peaks, lazy initialisation
      row.medians_us.push_back(result.getCandidateTiming().getMedianUs());
      row.cvs.push_back(result.getCandidateTiming().getCv());
      row.disagreements.push_back(result.getGpu().getEventCuptiDisagreement());
      const double untraced_us = result.getCandidateTiming().getMedianUs();
      if (untraced_us > 0) row.tracing_costs.push_back(result.getGpu().getProfiledEventUs() / untraced_us - 1);
    }
    return row;
  }

  const EvalBenchOptions& options_;
  TemporaryDirectory cache_ = temp_dir("drk-bench-eval");
  std::vector<Candidate> mix_;
  std::vector<std::string> families_;
  uint64_t nonce_ = 0;
  uint64_t serial_ = 0;
  uint64_t evaluated_ = 0;
};

std::string fixed(double value, int digits) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(digits) << value;
  return text.str();
}

Json phases_json(const Phases& p) {
  return {{"eval", p.eval},   {"compile", p.compile},         {"compile_wait", p.compile_wait},
          {"load", p.load},   {"correctness", p.correctness}, {"timing", p.timing}};
}

std::string phases_line(const Phases& p) {
  return "compile " + fixed(p.compile, 1) + " (waited " + fixed(p.compile_wait, 1) + "), load " + fixed(p.load, 1) +
         ", correctness " + fixed(p.correctness, 1) + ", timing " + fixed(p.timing, 1) + " ms";
}

}  // namespace

int run_eval_bench(const EvalBenchOptions& options, std::ostream& out) {
  Bench bench(options);
  if (!bench.load_mix()) return 1;
  const size_t mix = bench.mix_.size();
  const size_t latency_samples = options.quick ? mix : 3 * mix;
  const size_t stream = options.quick ? 2 * mix : 6 * mix;
  const uint32_t workers = std::max<uint32_t>(options.compile_workers, 1);
  const bool cuda = options.device == DeviceKind::cuda;
  auto fail = [&](const Error& error) {
    log::error() << options.program << ": " << error.describe();
    return 1;
  };

  // Latency: cold (sources no cache has seen), then warm (the same sources again, back to back),
  // then warm once the engine has been idle long enough for its spare sandbox to start (a CUDA
  // sandbox's runtimes take 0.3-0.45 s): what an evaluation meets when the Evaluator keeps up.
  auto engine = bench.make_engine(1);
  if (!engine) return fail(engine.error());
  std::vector<Candidate> sources;
  for (size_t i = 0; i < latency_samples; ++i) sources.push_back(bench.fresh(i));
  // The sources once each, after `idle` before every one.
  auto latencies = [&](std::chrono::milliseconds idle) -> Result<std::vector<Sample>> {
    std::vector<Sample> samples;
    for (const auto& candidate : sources) {
      std::this_thread::sleep_for(idle);
      auto sample = bench.evaluate(**engine, candidate);
      if (!sample) return sample.error();
      samples.push_back(*sample);
    }
    return samples;
  };
  auto cold = latencies(std::chrono::milliseconds(0));
  if (!cold) return fail(cold.error());
  auto warm = latencies(std::chrono::milliseconds(0));
  if (!warm) return fail(warm.error());
  auto idle_warm = latencies(kIdleBeforeSample);
  if (!idle_warm) return fail(idle_warm.error());
  engine->reset();

  // Throughput, side by side: inline compiles, a pool of 1 ahead by 1, a pool of N ahead by N.
  std::vector<ThroughputRow> rows;
  struct Config {
    std::string name;
    uint32_t workers, ahead;
  };
  std::vector<Config> configs = {{"inline (pool 1, no compile ahead)", 1, 0},
                                 {"pool 1, 1 ahead", 1, 1},
                                 {"pool " + std::to_string(workers) + ", " + std::to_string(workers) + " ahead", workers,
                                  workers}};
  for (const auto& config : configs) {
    auto row = bench.throughput(config.name, config.workers, config.ahead, stream);
    if (!row) return fail(row.error());
    rows.push_back(*row);
  }

  // Stability (cuda): the same kernel evaluated again and again.
  std::vector<StabilityRow> stability;
  if (cuda && options.stability) {
    for (const auto& entry : kStability) {
      auto row = bench.stability(entry, std::max<uint32_t>(options.stability_evaluations, 2));
      if (!row) return fail(row.error());
      stability.push_back(*row);
    }
  }

  const Phases cold_p = median_phases(*cold), warm_p = median_phases(*warm), idle_warm_p = median_phases(*idle_warm);
  const ThroughputRow& best = rows.back();
  const std::string shapes(kernels::device_name(options.shapes.value_or(DeviceKind::cpu)));
  std::string tasks;
  for (size_t i = 0; i < mix; ++i) tasks += (i ? ", " : "") + bench.mix_[i].task + " (" + bench.families_[i] + ")";

  if (options.json) {
    Json task_names = Json::array();
    for (size_t i = 0; i < mix; ++i) task_names.push_back(bench.mix_[i].task);
    Json report = {{"device", kernels::device_name(options.device)},
                            {"shapes", shapes},
                            {"tasks", std::move(task_names)},
                            {"trials", options.trials},
                            {"timing_budget_ms", options.timing_budget_ms},
                            {"latency_samples", latency_samples},
                            {"cold_latency_ms", cold_p.eval},
                            {"warm_latency_ms", warm_p.eval},
                            {"idle_warm_latency_ms", idle_warm_p.eval},
                            {"cold_phases_ms", phases_json(cold_p)},
                            {"warm_phases_ms", phases_json(warm_p)},
                            {"idle_warm_phases_ms", phases_json(idle_warm_p)},
                            {"evals_per_hour", best.per_hour()}};
    if (cuda) report["evals_per_gpu_hour"] = best.per_hour();
    report["evals_per_hour_compile_workers"] = best.workers;
    report["evals_per_hour_ahead"] = best.ahead;
    Json& throughput = report["throughput"] = Json::array();
    for (const auto& r : rows) {
      throughput.push_back({{"compile_workers", r.workers},
                            {"ahead", r.ahead},
                            {"evaluations", r.evaluations},
                            {"seconds", r.seconds},
                            {"evals_per_hour", r.per_hour()},
                            {"mean_phases_ms", phases_json(r.mean_ms)}});
    }
    report["speedup_pool_vs_inline"] = rows[0].per_hour() > 0 ? best.per_hour() / rows[0].per_hour() : 0;
    if (!stability.empty()) {
      Json& stability_json = report["stability"] = Json::array();
      for (const auto& s : stability) {
        stability_json.push_back({{"task", s.task},
                             {"shape", s.shape},
                             {"launch_latency", s.launch_hidden ? "hidden" : "included"},
                             {"evaluations", s.medians_us.size()},
                             {"median_us", s.median_us()},
                             {"cv_across_evaluations", s.cv_across()},
                             {"cv_within_evaluation", s.cv_within()},
                             {"cupti_agreement", s.cupti_agreement()},
                             {"cupti_agreement_worst", s.cupti_agreement_worst()},
                             {"cupti_tracing_cost", s.tracing_cost()},
                             {"medians_us", s.medians_us}});
      }
    }
    out << json_text(report) << "\n";
    return 0;
  }

  out << "drk bench eval: device " << kernels::device_name(options.device) << ", " << shapes << " shapes, "
      << options.trials << " trials, timing budget " << fixed(options.timing_budget_ms, 0) << " ms, one thread\n"
      << "mix: " << tasks << "; every candidate a source no cache has seen unless said\n\n"
      << "latency of one evaluation (median of " << latency_samples << ")\n"
      << "  cold compile cache  " << std::setw(9) << fixed(cold_p.eval, 1) << " ms: " << phases_line(cold_p) << "\n"
      << "  warm compile cache  " << std::setw(9) << fixed(warm_p.eval, 1) << " ms: " << phases_line(warm_p) << "\n"
      << "  warm, after 1 s idle" << std::setw(9) << fixed(idle_warm_p.eval, 1) << " ms: " << phases_line(idle_warm_p)
      << "\n\n"
      << "throughput over " << stream << " fresh candidates (mean phases per evaluation)\n";
  for (const auto& r : rows) {
    out << "  " << std::left << std::setw(36) << r.name << std::right << std::setw(9) << fixed(r.per_hour(), 0)
        << " evals/" << (cuda ? "GPU-hour" : "hour") << "  (" << fixed(r.seconds, 1) << " s; eval "
        << fixed(r.mean_ms.eval, 0) << " ms, waited for compile " << fixed(r.mean_ms.compile_wait, 0) << " ms)\n";
  }
  if (!stability.empty()) {
    out << "\ntiming stability: the same candidate evaluated " << stability[0].medians_us.size()
        << " times (goals: CV <= 1 % for kernels >= 50 us; events and CUPTI within 2 %)\n";
    for (const auto& s : stability)
      out << "  " << std::left << std::setw(8) << s.task << std::right << " " << s.shape << " (launches "
          << (s.launch_hidden ? "hidden" : "included") << "): median "
          << fixed(s.median_us(), 1) << " us; CV of the medians " << fixed(100 * s.cv_across(), 2)
          << " %, within an evaluation " << fixed(100 * s.cv_within(), 2) << " %; events vs CUPTI "
          << fixed(100 * s.cupti_agreement(), 2) << " % (worst " << fixed(100 * s.cupti_agreement_worst(), 2)
          << " %); traced calls " << fixed(100 * s.tracing_cost(), 1) << " % longer than the untraced timing\n";
  }
  out << "\n" << fixed(best.per_hour(), 0) << " evals/" << (cuda ? "GPU-hour" : "hour") << " (" << best.name << ", "
      << fixed(rows[0].per_hour() > 0 ? best.per_hour() / rows[0].per_hour() : 0, 2) << "x inline); latency cold "
      << fixed(cold_p.eval, 0) << " ms, warm " << fixed(warm_p.eval, 0) << " ms (" << fixed(idle_warm_p.eval, 0)
      << " ms after 1 s idle)"
      << (cuda ? " (goal: 1000 evals/GPU-hour)" : "");
  for (const auto& st : stability)
    out << "; " << st.task << (st.launch_hidden ? " hidden" : "") << " CV " << fixed(100 * st.cv_across(), 2)
        << " % across, events/CUPTI "
        << fixed(100 * st.cupti_agreement(), 2) << " %";
  out << "\n";
  return 0;
}

}  // namespace drk::bench
