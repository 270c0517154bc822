// drk bench SUBCOMMAND: benchmarks of drkernel, each a subcommand of bench.
//   runtime   the actor runtime against raw ZeroMQ, restart and node failure detection times
//             (tools/bench/runtime_report.h)
//   eval      evaluation latency (cold and warm compile cache, per phase) and throughput with
//             and without the compile pool (tools/bench/eval_bench.h)
//   containment  what hostile candidates cost the evaluations beside them (containment_bench.h)
//   load-inline  KernelBench load_inline builds: torch's against ours (load_inline_bench.h)
//   kernelbench  KernelBench's evaluation workflow and fast_p table (tools/drk/kernelbench_bench.h)
//   gateway   drk serve's throughput and latency against its evaluators driven directly, and
//             its result stream against KernelGYM's 1 s polling (tools/bench/gateway_bench.h)
//   scale     one head and its Oracle against 10, 100, 1000 simulated nodes (tools/bench/scale_bench.h)
// A new benchmark is a subcommand of bench in add_bench_command.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <memory>

#include "actors/evaluator/engine/shared_gpu.h"
#include "actors/oracle/reward.h"
#include "base/program_path.h"
#include "kernels/compile/command_runner.h"
#include "runtime/command_line.h"
#include "runtime/log.h"
#include "tools/bench/containment_bench.h"
#include "tools/bench/eval_bench.h"
#include "tools/bench/gateway_bench.h"
#include "tools/bench/load_inline_bench.h"
#include "tools/bench/restart_bench.h"
#include "tools/bench/runtime_report.h"
#include "tools/bench/scale_bench.h"
#include "tools/drk/commands.h"
#include "tools/drk/engine_options.h"
#include "tools/drk/kernelbench_bench.h"
#include "tools/drk/kernelbench_candidates.h"
#include "tools/drk/kernelbench_import.h"
#include "tools/gateway/engine_task_evaluator.h"
#include "tools/bench/temp_dir.h"

namespace drk::tools {
namespace {

int bench_runtime(bench::RuntimeBenchOptions options) {
  options.program = "drk bench runtime";
  // The restart measurement's child is `drk host`, which knows the bench_echo role
  // (register_bench_roles).
  options.executable = this_program_path();
  if (options.executable.empty()) {
    log::error() << "drk bench runtime: cannot find the drk executable (/proc/self/exe)";
    return 1;
  }
  return bench::run_runtime_bench(options, std::cout);
}

}  // namespace

struct GatewayBenchArgs {
  bench::GatewayBenchOptions bench;
  uint32_t poll_ms = 1000;
  evaluator::EngineOptions engine;
};

// The gateway's evaluators as drk serve makes them, over references imported into a directory of
// the bench's own.
int bench_gateway(GatewayBenchArgs args) {
  args.bench.poll_interval = std::chrono::milliseconds(args.poll_ms);
  auto python = find_python_with_torch(std::nullopt, *compile::system_command_runner());
  if (!python) {
    log::error() << "drk bench gateway: " << python.error().message;
    return 1;
  }
  auto bodies = bench::gateway_bench_bodies(args.engine.trials);
  if (!bodies) {
    log::error() << "drk bench gateway: " << bodies.error().message;
    return 1;
  }
  auto references_dir = bench::temp_dir("drk-bench-gateway-references");
  evaluator::share_one_gpu(args.engine, args.bench.workers);
  gateway::EngineEvaluatorSettings settings{
      args.engine, oracle::RewardWeights{},
      std::make_shared<gateway::ReferenceProblems>(references_dir.path(), *python)};
  return bench::run_gateway_bench(
      args.bench, [settings](size_t worker) { return gateway::EngineTaskEvaluator::create(settings, worker); }, *bodies,
      std::cout);
}

void register_bench_roles() { bench::register_echo_role(); }

void add_bench_command(CLI::App& drk, Actions& actions) {
  CLI::App* bench_command = drk.add_subcommand("bench", "drkernel's benchmarks (docs/benchmarks.md)");

  auto runtime_options = std::make_shared<bench::RuntimeBenchOptions>();
  CLI::App* runtime_command = bench_command->add_subcommand(
      "runtime",
      "the runtime against raw ZeroMQ, restart and node failure times\n"
      "\n"
      "drkernel's actors against raw ZeroMQ sockets, side by side, over inproc, ipc, tcp and\n"
      "tcp+CURVE with 64 B and 64 KiB payloads: messages per second, p50/p99 round trip and\n"
      "the drkernel/raw ratios; then the restart time after kill -9 and the time to detect a\n"
      "failed node (medians). Prints a table with the goals and a summary line. About 70 s.");
  runtime_command->add_flag("--quick", runtime_options->quick, "fewer samples: about 20 s");
  runtime_command->add_flag("--json", runtime_options->json,
                            "one JSON object whose TRANSPORT_PAYLOAD_throughput_ratio fields give each ratio");
  actions[runtime_command] = [runtime_options] { return bench_runtime(*runtime_options); };

  auto eval_options = std::make_shared<bench::EvalBenchOptions>();
  CLI::App* eval_command = bench_command->add_subcommand(
      "eval",
      "evaluations per hour, the latency of one evaluation, timing stability\n"
      "\n"
      "The real evaluation engine over one task per family the policy renders (relu,\n"
      "softmax, gemm_multiply_leakyrelu on cpu; relu, softmax, matmul on cuda) with the\n"
      "honest candidates of tests/candidates: the latency of one evaluation with a cold and\n"
      "a warm compile cache, back to back and after 1 s idle (medians, with the compile, load,\n"
      "correctness and timing phases),\n"
      "and evaluations per hour (per GPU-hour on cuda) over fresh candidates compiled inline,\n"
      "with a pool of 1 compiling one ahead, and with a pool of N (--workers) compiling N ahead.\n"
      "On cuda it also measures timing stability (unless --no-stability): matmul (2048^3) and\n"
      "softmax (4096 x 8192) evaluated 10 times each; CV of the medians across evaluations,\n"
      "within-evaluation CV and events-vs-CUPTI agreement (json: stability[].cv_across_evaluations,\n"
      "cv_within_evaluation, cupti_agreement). About 2 min on cpu; --quick about a third of that.");
  add_device_option(*eval_command, "--device", eval_options->device, "the device (default cpu)");
  add_device_option(*eval_command, "--shapes", eval_options->shapes, "whose shapes (default the scaled cpu ones)");
  eval_command->add_option("--workers", eval_options->compile_workers, "the widest compile pool measured (default 2)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  eval_command->add_option("--trials", eval_options->trials, "correctness trials, as in `drk eval` (default 5)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  eval_command->add_option("--budget-ms", eval_options->timing_budget_ms, "timing budget, as in `drk eval` (default 100)")
      ->type_name("MS")
      ->check(runtime::at_least(0));
  eval_command->add_option("--spares", eval_options->sandbox_spares,
                           "sandboxes started ahead (eval.sandbox_spares, default 1)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  eval_command->add_flag("--quick", eval_options->quick, "fewer samples: about a third of the time");
  eval_command->add_flag_function(
      "--no-stability", [eval_options](int64_t) { eval_options->stability = false; }, "cuda: skip the stability section");
  eval_command->add_flag("--json", eval_options->json,
                         "one object (cold_latency_ms, warm_latency_ms, evals_per_hour, throughput, ...)");
  actions[eval_command] = [eval_options] { return bench::run_eval_bench(*eval_options, std::cout); };

  auto containment_options = std::make_shared<bench::ContainmentBenchOptions>();
  CLI::App* containment_command = bench_command->add_subcommand(
      "containment",
      "hostile candidates (bombs, spinners) beside an honest one\n"
      "\n"
      "The sandbox's limits under load: an honest relu evaluated again and again alone, then beside\n"
      "each of tests/hacks' fork bomb, memory bomb, spinning child and spinning thread, evaluated by a\n"
      "second engine at the same time. Prints how each hostile candidate was contained and reported\n"
      "(its failed checks), and the honest candidate's and its reference's median time beside it over\n"
      "alone. About 1 min on 2 cores.");
  containment_command
      ->add_option("--evaluations", containment_options->honest_evaluations,
                   "honest evaluations alone, and at least beside each hostile one (default 5)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  runtime::add_megabytes_option(*containment_command, "--memory-mb", containment_options->memory_bytes, 64,
                                "each sandbox's host memory budget (default 1024)");
  actions[containment_command] = [containment_options] {
    return bench::run_containment_bench(*containment_options, std::cout);
  };
  auto load_inline_options = std::make_shared<bench::LoadInlineBenchOptions>();
  CLI::App* load_inline_command = bench_command->add_subcommand(
      "load-inline",
      "KernelBench load_inline builds: torch's own against drkernel's\n"
      "\n"
      "One C++ candidate (and one CUDA candidate when the Python's torch has CUDA), built by torch's\n"
      "load_inline in a fresh build directory, then by drkernel (docs/kernelbench.md): with an empty\n"
      "cache (the precompiled torch/extension.h built too), with the header present and the cache\n"
      "cold (the median of --samples new candidates), and on a cache hit. Seconds of each, side by side.\n"
      "A few minutes on 2 cores.");
  load_inline_command->add_option("--python", load_inline_options->python, "a Python with torch (default /usr/bin/python3)")
      ->type_name("PATH");
  load_inline_command->add_option("--arch", load_inline_options->cuda_architecture, "the GPU's architecture (default sm_90)")
      ->type_name("SM");
  load_inline_command->add_option("--kind", load_inline_options->kinds, "cpp or cuda (repeatable; default cpp, and cuda when the torch has CUDA)")
      ->type_name("KIND")
      ->check(CLI::IsMember({"cpp", "cuda"}));
  load_inline_command->add_option("--samples", load_inline_options->samples,
                                  "candidates new to the cache built with the header present, and as many cache hits (default 3)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  load_inline_command->add_flag("--json", load_inline_options->json,
                                "one object: per kind (cpp, cuda) torch_cold_s, drk_cold_s, drk_pch_present_s, drk_warm_s");
  actions[load_inline_command] = [load_inline_options] {
    return bench::run_load_inline_bench(*load_inline_options, std::cout);
  };

  auto kernelbench_options = std::make_shared<KernelBenchBenchOptions>();
  CLI::App* kernelbench_command = bench_command->add_subcommand(
      "kernelbench",
      "KernelBench's evaluation of a run's candidates: eval_results.json and fast_p\n"
      "\n"
      "Evaluates every candidate of a KernelBench run directory (ModelNew files) against its imported\n"
      "problem with the engine of `drk eval`, writes KernelBench's eval_results.json (with drkernel's\n"
      "verdict and failed checks under metadata.drk) and prints per level the problems, candidates,\n"
      "compiled, correct and fast_p at p = 0, 1.0, 1.2, 1.5, 2.0 (speedup: the reference's time over the\n"
      "candidate's, timed side by side). --references evaluates each imported problem's own Model as\n"
      "its candidate: which references run here, and their speedups over themselves (docs/kernelbench.md).");
  auto* candidates_option = kernelbench_command
                                ->add_option("--candidates", kernelbench_options->candidates,
                                             "the run directory, in a layout of:\n" + kernelbench_run_layouts())
                                ->type_name("RUN_DIR");
  kernelbench_command
      ->add_flag("--references", kernelbench_options->references,
                 "evaluate every imported problem's own Model as its candidate (ModelNew = Model)")
      ->excludes(candidates_option);
  kernelbench_command->add_option("--kernelbench-dir", kernelbench_options->kernelbench_dir,
                                  "where the problems were imported, as drk eval's (default $DRK_KERNELBENCH_DIR,\n"
                                  "else kernels/tasks/kernelbench)")
      ->type_name("DIR");
  kernelbench_command->add_option("--import-from", kernelbench_options->import_from,
                                  "a KernelBench checkout (or levelN folder) to import the problems not imported yet from")
      ->type_name("PATH");
  kernelbench_command->add_option("--level", kernelbench_options->levels, "only this level (repeatable; default all)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  kernelbench_command->add_option("--out", kernelbench_options->out,
                                  "eval_results.json (default RUN_DIR/eval_results.json; with several levels one\n"
                                  "file per level, FILE's name with _level<N>; --references: none unless given)")
      ->type_name("FILE");
  kernelbench_command->add_flag("--resume", kernelbench_options->resume,
                                "keep what the results file(s) already hold and evaluate only the samples they lack\n"
                                "(a sweep cut short goes on where it stopped)");
  kernelbench_command->add_option("--jobs", kernelbench_options->jobs,
                                  "candidates evaluated at once, each with its own engine and sandbox (default 1;\n"
                                  "more share the cores their timings run on; on cuda they take turns to time)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  runtime::add_parsed_option(*kernelbench_command, "--backend", kernelbench_options->backend, judging::parse_backend,
                             "what the run's candidates were asked to write, which their static checks judge\n"
                             "them against (pytorch, the default; cuda or cpp through load_inline; triton)")
      ->type_name("cuda|triton|cpp|pytorch");
  add_device_option(*kernelbench_command, "--device", kernelbench_options->engine.device, "the device (default cpu)");
  add_engine_options(*kernelbench_command, kernelbench_options->engine, /*memory_limit=*/true);
  kernelbench_command->footer(
      "Exit status: 0 when every candidate was evaluated or recorded with why it could not be (a\n"
      "candidate that fails is a result); 1 for a bad run directory, problems not imported, or a results\n"
      "file that cannot be written.");
  actions[kernelbench_command] = [kernelbench_options] { return run_kernelbench_bench(*kernelbench_options, std::cout); };
  auto gateway_args = std::make_shared<GatewayBenchArgs>();
  gateway_args->engine.cache_dir = default_compile_cache_dir();
  gateway_args->engine.trials = 2;
  gateway_args->engine.timing_budget_ms = 50;
  CLI::App* gateway_command = bench_command->add_subcommand(
      "gateway",
      "drk serve under load: its throughput and latency against the same evaluators driven directly,\n"
      "and its result stream against KernelGYM's polling client\n"
      "\n"
      "C clients (--clients) each submit the next of --tasks evaluations of a KernelBench-format ReLU\n"
      "(a PyTorch and a load_inline C++ ModelNew in turn, tests/candidates/kernelbench/) and wait for its result:\n"
      "to --workers evaluators in this process (direct), to the gateway over HTTP with results read\n"
      "from /results/stream (stream), and with GET /status every --poll-ms (polling). Prints per run\n"
      "evaluations per second, p50 and p95 latency, and the ratios to the direct run. About 3 min on\n"
      "2 cores with the defaults.");
  gateway_command->add_option("--clients", gateway_args->bench.clients, "concurrent clients, one run each (default 1 8 32)")
      ->type_name("N ...");
  gateway_command->add_option("--polling-clients", gateway_args->bench.polling_clients,
                              "concurrent polling clients, one run each (default 8)")
      ->type_name("N ...");
  gateway_command->add_option("--tasks", gateway_args->bench.tasks, "evaluations per run (default 32)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  gateway_command->add_option("--workers", gateway_args->bench.workers, "evaluators (default 2)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  gateway_command->add_option("--poll-ms", gateway_args->poll_ms, "the polling client's interval (default 1000, KernelGYM's)")
      ->type_name("MS")
      ->check(runtime::at_least(1));
  add_engine_options(*gateway_command, gateway_args->engine, /*memory_limit=*/true);
  actions[gateway_command] = [gateway_args] { return bench_gateway(*gateway_args); };

  auto scale_options = std::make_shared<bench::ScaleBenchOptions>();
  CLI::App* scale_command = bench_command->add_subcommand(
      "scale",
      "one head against many simulated nodes: the real node registry and Oracle, simulated Evaluators\n"
      "\n"
      "Per size, a head process runs the node registry and the Oracle of `drk run`; child processes\n"
      "simulate the nodes (the real node protocol, one tcp mailbox per Evaluator, evaluation times\n"
      "from a lognormal fitted to measured ones). Phases: idle (heartbeats), load (one node killed\n"
      "halfway), saturate (evaluations take no time). Prints, per size side by side: the head's CPU\n"
      "and memory, heartbeat load, dispatch latency, GPU busy fraction, loss detection and the\n"
      "dispatch ceiling (docs/multi-node.md, \"Scale\"). About 50 s a size with the defaults.");
  scale_command->add_option("--nodes", scale_options->nodes, "the sizes, nodes (default 10 100 1000)")
      ->type_name("N ...")
      ->delimiter(',')
      ->check(runtime::at_least(1));
  scale_command->add_option("--gpus-per-node", scale_options->gpus_per_node, "simulated Evaluators per node (default 8)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  scale_command->add_option("--time-scale", scale_options->time_scale,
                            "multiplies the measured evaluation times (default 0.1: median 2.04 s)")
      ->type_name("X");
  scale_command->add_option("--idle-s", scale_options->idle_s, "the idle phase (default 5)")->type_name("S");
  scale_command->add_option("--load-s", scale_options->load_s, "the load phase (default 20)")->type_name("S");
  scale_command->add_option("--saturate-s", scale_options->saturate_s, "the saturation phase (default 10)")
      ->type_name("S");
  scale_command->add_option("--heartbeat-ms", scale_options->heartbeat_ms, "network.heartbeat_ms (default 250)")
      ->type_name("MS")
      ->check(runtime::at_least(1));
  scale_command->add_option("--node-timeout-ms", scale_options->node_timeout_ms,
                            "network.node_timeout_ms (default 1500)")
      ->type_name("MS")
      ->check(runtime::at_least(1));
  scale_command->add_option("--nodes-per-process", scale_options->nodes_per_process,
                            "simulated nodes per child process (default 250)")
      ->type_name("N")
      ->check(runtime::at_least(1));
  scale_command->add_flag("--json", scale_options->json, "one JSON object: every size's measurements");
  actions[scale_command] = [scale_options] { return bench::run_scale_bench(*scale_options, std::cout); };
  bench_command->footer("See docs/benchmarks.md.");
}

}  // namespace drk::tools
