// drk bench scale: one head against many simulated nodes (docs/multi-node.md, "Scale").
//
// Per size (a number of nodes of `gpus_per_node` Evaluators each), a process of its own is the
// head: the real NodeRegistry (the head's node endpoint, as `drk run` starts it through
// HeadNetwork) and the real Oracle (make_oracle_actor) in a real ActorHost on the real
// transport, with a candidate feeder (a Generator that keeps a window of candidates in flight)
// and a sink for the Archivist's records beside it; the head's loss handling is the real one
// (tell_every_actor: Control.peerLost for the lost node's actors to every actor elsewhere). The
// nodes are simulated (simulated_nodes.h) in child processes of the head, `nodes_per_process`
// each, whose CPU and memory are not the head's.
// The phases, in order: idle (heartbeats only), load (evaluation times from the
// EvaluationTimeModel; halfway one node is killed), saturate (evaluations take no time: what the
// head and Oracle dispatch at most), then a drain until every candidate is answered.
// Measured: the head's CPU (getrusage of its process) and memory (resident once every node has
// joined, against the size before: what a node costs; and the peak, which also holds the
// Oracle's memory of up to 100,000 answers, so grows with evaluations), join time,
// heartbeat messages per second and the head's CPU in the idle phase, dispatch latency
// percentiles (EvalRequest's sentUnixMs to its arrival, ms resolution), evaluations per second,
// the Evaluators' busy fraction, the lost node's detection time and its re-dispatched
// requests, and whether every candidate was answered exactly once.
//
// Thread-safety: not reentrant (forks). Errors: a size that cannot run (no ports, too few
// descriptors, a head that crashed) is reported in its column, with the reason.
#pragma once

#include <ostream>
#include <vector>

#include "base/json_text.h"
#include "tools/bench/evaluation_time_model.h"

namespace drk::bench {

struct ScaleBenchOptions {
  std::vector<int> nodes{10, 100, 1000};
  int gpus_per_node = 8;
  EvaluationTimeFit fit;
  double time_scale = 0.1;
  double idle_s = 5;
  double load_s = 20;
  double saturate_s = 10;
  int heartbeat_ms = 250;      // network.heartbeat_ms, the default
  int node_timeout_ms = 1500;  // network.node_timeout_ms, the default
  int nodes_per_process = 250;
  bool kill_one_node = true;
  bool json = false;
};

// One size, its head in a child process. The measurements as one JSON object; `error` set
// when it could not run.
Json measure_scale(const ScaleBenchOptions& options, int nodes);

// Every size of options.nodes, then the table (or one JSON object) on `out`. 0 when every size
// ran and answered every candidate once; 1 otherwise.
int run_scale_bench(const ScaleBenchOptions& options, std::ostream& out);

}  // namespace drk::bench
