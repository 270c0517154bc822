// drk bench gateway: what `drk serve` costs and gives, on the CPU (docs/benchmarks.md). The same
// load, C concurrent clients each submitting the next evaluation and waiting for its result until
// `tasks` are done, goes to three ways of reaching the same Evaluators (`workers` of them, made by
// one TaskEvaluatorFactory):
//   direct     the evaluators driven in this process (a queue, no HTTP, no store): the baseline;
//   stream     drk serve's gateway over HTTP on loopback, results read from /results/stream;
//   polling    the same gateway, each client polling GET /status/{id} every `poll_interval`, then
//              GET /results/{id}, as KernelGYM's client does.
// Per run: the throughput (evaluations per second over the run's wall time) and the latency of one
// evaluation as its client sees it (submission to result: p50, p95), and the ratios to the direct
// run with as many clients. Before the runs, one evaluation of each request body fills the
// compile cache and the imported references, so no run pays for a first compile.
//
// Thread-safety: run_gateway_bench uses threads of its own and returns when they are joined.
// Errors: a run that cannot start (no gateway, no server) or a result that is not a completed
// evaluation is reported on `out`, and the function returns 1.
#pragma once

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "base/json_text.h"
#include "base/result.h"
#include "tools/gateway/task_evaluator.h"

namespace drk::bench {

struct GatewayBenchOptions {
  std::vector<size_t> clients{1, 8, 32};
  std::vector<size_t> polling_clients{8};
  size_t tasks = 32;  // evaluations per run
  size_t workers = 2;
  std::chrono::milliseconds poll_interval{1000};
};

// The bench's requests: KernelBench's ReLU problem (tests/corpus/kernelbench) with a PyTorch
// candidate (backend pytorch) and a C++ one through load_inline (backend cpp, both in
// tests/candidates/kernelbench), each with `trials` correctness
// trials; not_found naming the file and the fix (DRK_SOURCE_DIR) when one cannot be read.
Result<std::vector<Json>> gateway_bench_bodies(uint32_t trials);

// `bodies`: the evaluation requests (KernelGYM's fields, without task_id), submitted in turn.
int run_gateway_bench(const GatewayBenchOptions& options, const gateway::TaskEvaluatorFactory& evaluators,
                      const std::vector<Json>& bodies, std::ostream& out);

}  // namespace drk::bench
