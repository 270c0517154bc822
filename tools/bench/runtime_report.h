// The runtime benchmark as one run: drkernel's actors against raw ZeroMQ, side by side, and the
// restart time after kill -9; what `drk bench runtime` prints.
//
// For each transport (inproc, ipc, tcp, tcp+CURVE; tcp+CURVE is left out, with a note, when
// libzmq has no CURVE) and payload (64 B, 64 KiB): messages per second one way and the p50/p99
// round trip (ping-pong), for raw ZeroMQ PUSH/PULL (raw_zmq_bench.h) and for two drkernel actors
// (actor_bench.h), alternating, best of 3 repetitions of 0.5 s each (1 of 0.25 s when quick),
// and the ratios drkernel/raw. Then what tracing costs (runtime/trace/): drkernel's actors over
// inproc and ipc at 64 B with every handler call recorded and not, alternating (`tracing` in
// the JSON, its sides `off` and `on`). Then the restart time (restart_bench.h; median of 7, 3 when
// quick; with a warm spare, which the goal is judged on, and cold) and the node failure detection time (node_failure_bench.h; median of 3, 1 when quick).
// The table names the goals (throughput >= 0.7 of raw, p99 <= 1.5x raw, restart median
// < 200 ms, node failure detected in < 3 s) and ends with a summary line against them; with
// `json`, one JSON object instead, with a `TRANSPORT_PAYLOAD_throughput_ratio` and
// `..._p99_ratio` field per row (e.g. "tcp_curve_64B_throughput_ratio").
//
// Errors: a measurement that fails ends the run (the message is logged, exit code 1).
// Thread-safety: call from the main thread, with no other children of this process running.
#pragma once

#include <ostream>
#include <string>

namespace drk::bench {

struct RuntimeBenchOptions {
  bool quick = false;  // about 12 s instead of about 45
  bool json = false;
  std::string executable;  // answers `host ...` with the bench_echo role (restart_bench.h)
  std::string program;     // names the command in error messages, e.g. "drk bench runtime"
};

// Runs every measurement and prints the result to `out`. Returns the exit code: 0 when
// everything was measured (goals met or not), 1 when a measurement failed.
int run_runtime_bench(const RuntimeBenchOptions& options, std::ostream& out);

}  // namespace drk::bench
