// drk eval: evaluates one candidate file against one task, as the Evaluator actor would, and
// prints the result with the Verifier's verdict.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <capnp/message.h>

#include "actors/evaluator/evaluation.h"
#include "actors/verifier/verify.h"
#include "judging/python_static_check.h"
#include "kernels/catalog/expression.h"
#include "kernels/catalog/task.h"
#include "runtime/capnp_json.h"
#include "runtime/command_line.h"
#include "runtime/log.h"
#include "tools/drk/commands.h"
#include "tools/drk/engine_options.h"
#include "tools/drk/judged_evaluation.h"

namespace drk::tools {
namespace {

// What `drk eval` was asked.
struct EvalArgs {
  std::string task_name;
  std::string candidate_file;
  bool json = false;
  judging::Backend backend = judging::Backend::pytorch;  // a .py candidate's (--backend)
  evaluator::EngineOptions options;
};

std::string timing_line(msg::TimingStats::Reader t) {
  if (t.getSamples() == 0) return "not timed";
  return "median " + fixed(t.getMedianUs(), 2) + " us  (p10 " + fixed(t.getP10Us(), 2) + ", p90 " +
         fixed(t.getP90Us(), 2) + ", cv " + fixed(t.getCv(), 3) + "; " + std::to_string(t.getSamples()) +
         " samples x " + std::to_string(t.getCallsPerSample()) + " calls)";
}

void print_kernels(const char* label, capnp::List<msg::GpuKernel>::Reader kernels) {
  for (auto k : kernels) {
    std::cout << label << (k.getOwn() ? "own  " : "lib  ") << k.getName().cStr() << "  grid(" << k.getGrid()[0] << ","
              << k.getGrid()[1] << "," << k.getGrid()[2] << ") block(" << k.getBlock()[0] << "," << k.getBlock()[1]
              << "," << k.getBlock()[2] << ") " << k.getRegistersPerThread() << " regs, "
              << k.getStaticSharedBytes() + k.getDynamicSharedBytes() << " B shared, median "
              << fixed(k.getMedianUs(), 2) << " us x " << k.getLaunches() << "\n";
  }
}

void print_gpu(msg::GpuProfile::Reader gpu) {
  std::cout << "device      " << gpu.getDevice().cStr() << " (" << (gpu.getShapes() == msg::Device::CUDA ? "KernelBench" : "scaled cpu")
            << " shapes; L2 flush " << gpu.getL2FlushBytes() / (1 << 20) << " MiB before every timed call)\n";
  print_kernels("kernel      ", gpu.getKernels());
  print_kernels("ref kernel  ", gpu.getReferenceKernels());
  std::cout << "coverage    " << fixed(gpu.getCoverage(), 3) << " (own kernels " << fixed(gpu.getOwnKernelUs(), 2)
            << " us of " << fixed(gpu.getAllKernelUs(), 2) << " us GPU time per call)\n"
            << "cupti       " << gpu.getProfiledCalls() << " traced calls: span " << fixed(gpu.getCuptiSpanUs(), 2)
            << " us, events " << fixed(gpu.getProfiledEventUs(), 2) << " us per call; events vs CUPTI "
            << fixed(100 * gpu.getEventCuptiDisagreement(), 1) << " %"
            << (gpu.getTimingDisagrees() ? " (FLAGGED: beyond " : " (within ") << fixed(100 * gpu.getDisagreementThreshold(), 1)
            << " %); the timed calls run untraced\n"
            << "launches    "
            << (gpu.getLaunchLatencyHidden() ? "hidden: both sides timed behind the launch hold, events net of their own " +
                                                   fixed(gpu.getEventFloorUs(), 2) + " us"
                                             : std::string(gpu.getLaunchLatencyNote().cStr()))
            << "\n"
            << "roofline    " << fixed(gpu.getAchievedBytesPerS() / 1e9, 1) << " GB/s of "
            << fixed(gpu.getPeakBytesPerS() / 1e9, 0) << " GB/s measured peak, "
            << fixed(gpu.getAchievedFlopsPerS() / 1e12, 3) << " TFLOP/s of " << fixed(gpu.getPeakFlopsPerS() / 1e12, 1)
            << " TFLOP/s measured FP32 peak\n";
  auto metrics = gpu.getHardwareMetrics();
  if (metrics.getAvailable()) {
    for (auto k : metrics.getKernels())
      std::cout << "metrics     " << (k.getOwn() ? "own  " : "lib  ") << k.getName().cStr() << ": DRAM "
                << fixed(k.getDramThroughputPct(), 1) << " %, SM " << fixed(k.getSmThroughputPct(), 1) << " %, L2 hit "
                << fixed(k.getL2HitRatePct(), 1) << " %, occupancy " << fixed(k.getAchievedOccupancyPct(), 1) << " %\n";
  } else if (metrics.getReason().size() > 0 && std::string(metrics.getReason().cStr()).rfind("not measured", 0) != 0) {
    std::cout << "metrics     unavailable: " << metrics.getReason().cStr() << "\n";
  }
  auto energy = gpu.getEnergy();
  if (!energy.getAvailable()) {
    std::cout << "energy      unavailable: " << energy.getReason().cStr() << "\n";
  } else {
    std::cout << "energy      " << fixed(energy.getCandidateMillijoulesPerCall(), 3) << " mJ per call ("
              << fixed(energy.getCandidateWatts(), 0) << " W over " << energy.getCandidateCalls() << " calls in "
              << fixed(energy.getCandidateBatchMs(), 0) << " ms), reference "
              << fixed(energy.getReferenceMillijoulesPerCall(), 3) << " mJ (" << fixed(energy.getReferenceWatts(), 0)
              << " W); NVML counter updates " << energy.getCounterUpdates()
              << (energy.getResolved() ? "" : std::string(" (NOT RESOLVED: ") + energy.getReason().cStr() + ")") << "\n";
  }
}

void print_human(const kernels::Task& task, const std::string& file, msg::Verdict::Reader verdict) {
  auto r = verdict.getResult();
  auto e = r.getEvidence();
  std::cout << "task        " << task.name << " (" << (task.family.empty() ? "no family of ours" : task.family)
            << "), reference " << (task.reference.empty() ? "the problem's Model: " + task.origin : task.reference) << "\n"
            << "candidate   " << file << "\n";
  if (!r.getCompiled()) {
    std::cout << "compiled    no\n" << r.getCompileLog().cStr() << "\n";
  } else {
    std::cout << "compiled    yes (" << fixed(r.getCompileMs(), 0) << " ms" << (r.getCompileCached() ? ", cached" : "")
              << ")\n"
              << "sandbox     " << sandbox_outcome_name(r.getSandbox());
    if (e.getSandboxSignal() != 0) std::cout << " (signal " << e.getSandboxSignal() << ")";
    if (e.getCandidateStatus() != 0) std::cout << " (drk_kernel returned " << e.getCandidateStatus() << ")";
    std::cout << "\n"
              << "correct     " << (r.getCorrect() ? "yes" : "no") << " (" << r.getTrialsPassed() << "/" << r.getTrials()
              << " trials), max abs error " << r.getMaxAbsError() << ", max rel error " << r.getMaxRelError() << "\n";
    if (r.getErrorText().size() > 0) std::cout << "error       " << r.getErrorText().cStr() << "\n";
    if (e.getRangeShapesTried() > 0)
      std::cout << "shapes      " << e.getRangeShapesHandled() << " of " << e.getRangeShapesTried()
                << " drawn from the task's range handled, " << e.getRangeShapesDeclined() << " declined\n";
    std::cout << "candidate   " << timing_line(r.getCandidateTiming()) << "\n"
              << "reference   " << timing_line(r.getReferenceTiming()) << "\n"
              << "baseline    " << r.getReferenceBuild().cStr()
              << (r.getReferenceBlasUnoptimised()
                      ? "\n            WARNING: netlib's unoptimised reference BLAS: the speedup is over a crippled "
                        "baseline (install libopenblas0-openmp)"
                      : "")
              << "\n"
              << "speedup     " << fixed(r.getSpeedup(), 3) << "x\n";
    for (auto timed : r.getTimedShapes()) {
      std::cout << "timed at    " << timed.getShapes().cStr() << ": ";
      if (timed.getDeclined()) std::cout << "declined (not timed)\n";
      else
        std::cout << "candidate " << fixed(timed.getCandidateTiming().getMedianUs(), 2) << " us, reference "
                  << fixed(timed.getReferenceTiming().getMedianUs(), 2) << " us, speedup "
                  << fixed(timed.getSpeedup(), 3) << "x\n";
    }
    if (r.getTimedShapes().size() > 0 && r.getCorrect())
      std::cout << "over shapes " << fixed(r.getShapesSpeedup(), 3)
                << "x (geometric mean at the task's shape and the timed ones handled: what the reward weighs)\n";
    if (e.getCudaError().size() > 0) std::cout << "cuda error  " << e.getCudaError().cStr() << "\n";
    if (e.getSanitizerRan())
      std::cout << (r.getCandidate().getDevice() == msg::Device::CUDA ? "sanitizer   memcheck: "
                                                                      : "bounds      guard pages: ")
                << (e.getSanitizerErrors().size() > 0 ? e.getSanitizerErrors().cStr() : "no errors") << "\n";
    else if (e.getSanitizerNote().size() > 0)
      std::cout << "sanitizer   not run: " << e.getSanitizerNote().cStr() << "\n";
    if (e.getRooflineRemeasured()) std::cout << "roofline    beyond the bound: timed a second time\n";
    if (r.hasGpu() || e.getGpuMemoryBytes() > 0)
      std::cout << "gpu memory  " << fixed(static_cast<double>(e.getGpuMemoryBytes()) / (1 << 20), 1)
                << " MiB held by the candidate after a call at most"
                << (e.getGpuMemoryLimitExceeded() ? " (OVER ITS LIMIT: the evaluation failed)" : "") << "\n";
    for (auto k : r.getResources())
      std::cout << "resources   " << k.getName().cStr() << ": "
                << (k.getRegisters() > 0 ? std::to_string(k.getRegisters()) : std::string("unknown")) << " registers, "
                << k.getSharedBytes() << " B shared, " << k.getStackFrameBytes() << " B stack, spills "
                << k.getSpillStoreBytes() << " B stored / " << k.getSpillLoadBytes() << " B loaded\n";
    if (r.hasGpu()) print_gpu(r.getGpu());
  }
  std::cout << "verdict     " << (verdict.getHonest() ? "honest: no check failed" : "rejected: these checks failed");
  for (auto check : verdict.getFailedChecks())
    std::cout << "\n  failed    " << check.getCode().cStr() << ": " << check.getEvidence().cStr();
  for (auto warning : verdict.getWarnings())
    std::cout << "\n  warning   " << warning.getCode().cStr() << ": " << warning.getEvidence().cStr();
  std::cout << "\nevaluated   in " << fixed(r.getEvalMs(), 0) << " ms by " << r.getEvaluator().cStr() << "\n";
}

}  // namespace

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string default_compile_cache_dir() {
  if (const char* dir = std::getenv("DRK_CACHE_DIR"); dir && *dir) return dir;
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir && *dir) return std::string(dir) + "/drk/compile-cache";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/drk/compile-cache";
  return (std::filesystem::temp_directory_path() / "drk-compile-cache").string();
}

namespace {

int evaluate(const EvalArgs& args) {
  const std::string& task_name = args.task_name;
  const std::string& candidate_file = args.candidate_file;
  const bool json = args.json;
  evaluator::EngineOptions options = args.options;
  // A .py file is a KernelBench-format candidate (a ModelNew), for a KernelBench problem.
  options.python = std::filesystem::path(candidate_file).extension() == ".py";
  std::ifstream in(candidate_file, std::ios::binary);
  if (!in) {
    log::error() << "drk eval: candidate file '" << candidate_file << "' cannot be read: does it exist?";
    return 1;
  }
  std::ostringstream source;
  source << in.rdbuf();

  options.evaluator_name = "drk eval";
  auto engine = make_engine(options);
  if (!engine) {
    log::error() << "drk eval: " << engine.error().message;
    return 1;
  }
  auto task = (*engine)->find_task(task_name);
  if (!task) {
    log::error() << "drk eval: " << task.error().message;
    return 1;
  }
  const kernels::Task task_copy = **task;
  evaluator::CandidateInput input;
  input.id = "eval/" + std::filesystem::path(candidate_file).filename().string();
  input.task = task_name;
  input.device = options.device;
  input.python = options.python;
  input.python_backend = args.backend;
  input.source = source.str();

  capnp::MallocMessageBuilder verdict_message;
  auto verdict = verdict_message.initRoot<msg::Verdict>();
  if (auto status = evaluate_and_judge(**engine, input, verdict); !status) {
    log::error() << "drk eval: " << status.error().message;
    return 1;
  }

  if (json) {
    std::cout << json_text(runtime::capnp_json(verdict.asReader())) << "\n";
  } else {
    print_human(task_copy, candidate_file, verdict.asReader());
  }
  if (!verdict.getResult().getCompiled()) {
    if (!json) log::error() << "drk eval: the candidate does not compile (the compiler's message is above)";
    return 1;
  }
  return 0;
}

}  // namespace

void add_eval_command(CLI::App& drk, Actions& actions) {
  auto args = std::make_shared<EvalArgs>();
  evaluator::EngineOptions& options = args->options;
  options.energy_min_ms = 500;
  CLI::App* eval = drk.add_subcommand(
      "eval",
      "evaluate one candidate kernel against one task and print the full result\n"
      "\n"
      "Compiles a candidate (docs/candidate-abi.md: C++ for cpu, CUDA C++ for cuda), runs it in a\n"
      "sandbox against the task's LibTorch reference on fresh random inputs, times both side by side,\n"
      "and prints the result with the Verifier's verdict. A .py candidate is KernelBench's format (a\n"
      "ModelNew) for an imported KernelBench problem (--task kernelbench/level1/19_ReLU; docs/kernelbench.md),\n"
      "judged against the problem's own Model. On cuda it also prints nvcc's resource\n"
      "report, every kernel CUPTI saw, the coverage, event/CUPTI agreement and the roofline position\n"
      "(docs/gpu.md).");
  eval->add_option("--task", args->task_name, "the task (`drk tasks` lists them)")->required()->type_name("NAME");
  eval->add_option("--candidate", args->candidate_file, "the candidate's source file (.py: KernelBench's format)")->required()->type_name("FILE");
  eval->add_option("--kernelbench-dir", options.kernelbench_dir,
                   "where KernelBench problems were imported (default $DRK_KERNELBENCH_DIR, else\n"
                   "kernels/tasks/kernelbench)")
      ->type_name("DIR");
  runtime::add_parsed_option(*eval, "--backend", args->backend, judging::parse_backend,
                             "a .py candidate: what it was asked to write, which its static checks judge\n"
                             "it against (pytorch, the default; cuda or cpp through load_inline; triton)")
      ->type_name("cuda|triton|cpp|pytorch");
  add_device_option(*eval, "--device", options.device,
                    "the device (default cpu; cuda needs a build with the CUDA toolkit and a GPU)");
  add_device_option(*eval, "--shapes", options.shapes,
                    "evaluate at these shapes (default: the device's; cuda = KernelBench's)");
  add_engine_options(*eval, options, /*memory_limit=*/true);
  eval->add_option("--energy-ms", options.energy_min_ms,
                   "cuda: energy per call from NVML over back-to-back batches of at least MS\n"
                   "per side (default 500; 0: off; NVML's counter moves only every ~100 ms)")
      ->type_name("MS")
      ->check(runtime::at_least(0));
  eval->add_flag("--metrics", options.hardware_metrics,
                 "cuda: hardware metrics of the candidate's kernels (DRAM and SM throughput, L2\n"
                 "hit rate, achieved occupancy) from one call under CUPTI's Range Profiler");
  eval->add_flag("--sanitize", options.sanitize,
                 "one more call with every tensor in an allocation of its own, for\n"
                 "out-of-bounds accesses: under compute-sanitizer memcheck on cuda (where it\n"
                 "also runs by itself for a result beyond the roofline bound), between\n"
                 "inaccessible guard pages on the cpu");
  runtime::add_megabytes_option(*eval, "--gpu-memory-limit-mb", options.sandbox.gpu_memory_limit_bytes, 0,
                                "cuda: device memory the candidate may hold (default 0: no limit)");
  eval->add_flag("--allow-reference-blas", options.allow_reference_blas,
                 "cpu: evaluate even where LibTorch runs on netlib's unoptimised reference BLAS\n"
                 "(refused otherwise: install libopenblas0-openmp); the result says so");
  eval->add_flag_function(
      "--host-checks", [&options](int64_t) { options.device_resident = false; },
      "cuda: draw and check through host memory and copies instead of on the GPU\n"
      "(the default draws, poisons and compares in device memory lent to the sandbox)");
  eval->add_option("--sets", options.timing_sets, "input sets rotated between timed calls (default 3)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  eval->add_flag("--json", args->json, "print one JSON object (the Verdict, which holds the result) on stdout");
  eval->footer(
      "Exit status: 0 when the candidate was evaluated (correct or not: see the verdict), 1 when it\n"
      "does not compile or cannot be evaluated (unknown task, missing file); a usage error exits with\n"
      "CLI11's code (105 a refused value, 106 a missing option, 109 an unknown one).");
  actions[eval] = [args] { return evaluate(*args); };
}

}  // namespace drk::tools
