// drk bench SUBCOMMAND: benchmarks of drkernel, each a subcommand of the table below.
//   runtime   the actor runtime against raw ZeroMQ, restart and node failure detection times
//             (tools/bench/runtime_report.h)
//   eval      evaluation latency (cold and warm compile cache, per phase) and throughput with
//             and without the compile pool (tools/bench/eval_bench.h)
//   containment  what hostile candidates cost the evaluations beside them (containment_bench.h)
// A new benchmark is a function and a row of kSubcommands, with its lines in kBenchHelp.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "tools/bench/containment_bench.h"
#include "tools/bench/eval_bench.h"
#include "tools/bench/restart_bench.h"
#include "tools/bench/runtime_report.h"
#include "tools/drk/commands.h"

namespace drk::tools {
namespace {

constexpr const char* kBenchHelp = R"(usage: drk bench SUBCOMMAND [ARGS]

subcommands:
  runtime [--quick] [--json]
        drkernel's actors against raw ZeroMQ sockets, side by side, over inproc, ipc, tcp and
        tcp+CURVE with 64 B and 64 KiB payloads: messages per second, p50/p99 round trip and
        the drkernel/raw ratios; then the restart time after kill -9 and the time to detect a
        failed node (medians). Prints a table with the goals and a summary line; --json prints
        one JSON object whose TRANSPORT_PAYLOAD_throughput_ratio fields give each ratio.
        About 70 s; --quick about 20 s.
  eval [--device cpu|cuda] [--shapes cpu|cuda] [--workers N] [--trials N] [--budget-ms MS]
       [--spares N] [--quick] [--no-stability] [--json]
        The real evaluation engine over one task per family the policy renders (relu,
        softmax, gemm_multiply_leakyrelu on cpu; relu, softmax, matmul on cuda) with the
        honest candidates of tests/candidates: the latency of one evaluation with a cold and
        a warm compile cache (medians, with the compile, load, correctness and timing phases),
        and evaluations per hour (per GPU-hour on cuda) over fresh candidates compiled inline,
        with a pool of 1 compiling one ahead, and with a pool of N (--workers, default 2)
        compiling N ahead. --shapes: whose shapes (default the scaled cpu ones); --trials
        (default 5) and --budget-ms (timing budget, default 100) as in `drk eval`; --spares:
        sandboxes started ahead (eval.sandbox_spares, default 1). --json
        prints one object (cold_latency_ms, warm_latency_ms, evals_per_hour, throughput, ...).
        On cuda it also measures timing stability (unless --no-stability): matmul (2048^3) and
        softmax (4096 x 8192) evaluated 10 times each; CV of the medians across evaluations,
        within-evaluation CV and events-vs-CUPTI agreement (json: stability[].cv_across_evaluations,
        cv_within_evaluation, cupti_agreement).
        About 2 min on cpu; --quick about a third of that.
  containment [--evaluations N] [--memory-mb MB]
        The sandbox's limits under load: an honest relu evaluated again and again (N times at
        least, default 5) alone, then beside each of tests/hacks' fork bomb, memory bomb,
        spinning child and spinning thread, evaluated by a second engine at the same time.
        Prints how each hostile candidate was contained and reported (its failed checks), and
        the honest candidate's and its reference's median time beside it over alone. About
        1 min on 2 cores.

See docs/benchmarks.md.
)";

int bench_runtime(const Args& args) {
  bench::RuntimeBenchOptions options;
  options.program = "drk bench runtime";
  for (const std::string& arg : args) {
    if (arg == "--json") {
      options.json = true;
    } else if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kBenchHelp;
      return 0;
    } else {
      std::cerr << "drk bench runtime: unknown option '" << arg << "'\n\n" << kBenchHelp;
      return 2;
    }
  }
  // The restart measurement's child is `drk host`, which knows the bench_echo role
  // (register_bench_roles).
  std::error_code error;
  options.executable = std::filesystem::read_symlink("/proc/self/exe", error).string();
  if (error) {
    std::cerr << "drk bench runtime: cannot find the drk executable (/proc/self/exe): " << error.message() << "\n";
    return 1;
  }
  return bench::run_runtime_bench(options, std::cout, std::cerr);
}

int bench_eval(const Args& args) {
  bench::EvalBenchOptions options;
  auto whole_number = [&](size_t& i, uint32_t& into) {
    char* end = nullptr;
    long value = i + 1 < args.size() ? std::strtol(args[i + 1].c_str(), &end, 10) : 0;
    if (i + 1 >= args.size() || *end != '\0' || value < 1) {
      std::cerr << "drk bench eval: " << args[i] << " needs a whole number >= 1\n";
      return false;
    }
    into = static_cast<uint32_t>(value);
    ++i;
    return true;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool has_value = i + 1 < args.size();
    if (arg == "--json") {
      options.json = true;
    } else if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--no-stability") {
      options.stability = false;
    } else if ((arg == "--device" || arg == "--shapes") && has_value) {
      auto device = kernels::parse_device(args[++i]);
      if (!device) {
        std::cerr << "drk bench eval: " << arg << ": " << device.error().message << "\n";
        return 2;
      }
      (arg == "--device" ? options.device : options.shapes.emplace()) = *device;
    } else if (arg == "--workers") {
      if (!whole_number(i, options.compile_workers)) return 2;
    } else if (arg == "--trials") {
      if (!whole_number(i, options.trials)) return 2;
    } else if (arg == "--spares") {
      if (!whole_number(i, options.sandbox_spares)) return 2;
    } else if (arg == "--budget-ms" && has_value) {
      char* end = nullptr;
      options.timing_budget_ms = std::strtod(args[++i].c_str(), &end);
      if (*end != '\0' || options.timing_budget_ms < 0) {
        std::cerr << "drk bench eval: --budget-ms needs a number >= 0, got '" << args[i] << "'\n";
        return 2;
      }
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kBenchHelp;
      return 0;
    } else {
      std::cerr << "drk bench eval: unknown option '" << arg << "'\n\n" << kBenchHelp;
      return 2;
    }
  }
  return bench::run_eval_bench(options, std::cout, std::cerr);
}

int bench_containment(const Args& args) {
  bench::ContainmentBenchOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if ((arg == "--evaluations" || arg == "--memory-mb") && i + 1 < args.size()) {
      char* end = nullptr;
      const long value = std::strtol(args[++i].c_str(), &end, 10);
      if (*end != '\0' || value < (arg == "--memory-mb" ? 64 : 1)) {
        std::cerr << "drk bench containment: " << arg << " needs a whole number >= "
                  << (arg == "--memory-mb" ? 64 : 1) << ", got '" << args[i] << "'\n";
        return 2;
      }
      if (arg == "--evaluations") options.honest_evaluations = static_cast<uint32_t>(value);
      else options.memory_bytes = static_cast<uint64_t>(value) << 20;
    } else {
      std::cerr << "drk bench containment: unknown option '" << arg << "'\n\n" << kBenchHelp;
      return 2;
    }
  }
  return bench::run_containment_bench(options, std::cout, std::cerr);
}

struct Subcommand {
  const char* name;
  int (*run)(const Args&);
};

constexpr Subcommand kSubcommands[] = {
    {"runtime", bench_runtime},
    {"eval", bench_eval},
    {"containment", bench_containment},
};

}  // namespace

void register_bench_roles() { bench::register_echo_role(); }

int cmd_bench(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << kBenchHelp;
    return args.empty() ? 2 : 0;
  }
  for (const Subcommand& subcommand : kSubcommands) {
    if (args[0] == subcommand.name) return subcommand.run(Args(args.begin() + 1, args.end()));
  }
  std::cerr << "drk bench: unknown subcommand '" << args[0] << "'\n\n" << kBenchHelp;
  return 2;
}

}  // namespace drk::tools
