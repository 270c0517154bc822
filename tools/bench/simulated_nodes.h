// Simulated nodes for the scale benchmark (scale_bench.h): one process hosts a share of a run's
// nodes, each speaking the real node protocol with the real head (NodeJoin until welcomed, then a
// NodeHeartbeat every network.heartbeat_ms carrying its Evaluator processes' state) and each
// hosting `evaluator` actors of the topology as simulated Evaluators: a real tcp network mailbox
// per Evaluator (bound where NetworkMap::mailbox_endpoint says, as `drk host` binds it), an
// EvaluatorReady (1 slot) to the Oracle, and for every EvalRequest a Verdict after a time drawn
// from the EvaluationTimeModel (from the phase "saturate" on: none, and those running end at
// once), then an
// EvaluatorReady that returns the credit. The Verdict stands for the Evaluator's EvalResult and
// the Verifier's judgement of it: honest, correct, speedup 1. A node's Evaluators share one
// connection to the Oracle's mailbox (the real ones have one each): 8000 more descriptors at the
// head for 1000 nodes would pass this machine's limit (docs/multi-node.md, "Scale").
//
// Commands, one a line on `command_fd`, from the head process:
//   phase NAME   what is counted from now on is counted under NAME
//   kill NODE    NODE stops at once: its sockets close, it never beats or answers again
//   end          (or end of file) write the report and return
// The report, one JSON object on `report_fd`: per phase the heartbeats sent and received, the
// EvalRequests received and re-dispatched (attempt > 1), the evaluations answered, the dispatch
// latencies (ms from the envelope's sentUnixMs to its arrival: a histogram by whole ms), and
// the Evaluators' busy and alive milliseconds; and for a killed node the steady clock (ms) of
// its death.
//
// Run in a child process of its own: it owns a ZeroMQ context and many descriptors.
// Errors: returns a non-zero exit status after writing the reason to stderr.
#pragma once

#include <string>
#include <vector>

#include "runtime/nodes/network_map.h"
#include "runtime/topology/topology.h"
#include "tools/bench/evaluation_time_model.h"

namespace drk::bench {

struct SimulatedNodesPlan {
  const runtime::Topology* topology = nullptr;
  runtime::NetworkMap map;          // every node's address, the head's included
  std::vector<std::string> nodes;   // the nodes this process simulates
  EvaluationTimeFit fit;
  double time_scale = 0.1;
  uint64_t seed = 1;
  int command_fd = -1;
  int report_fd = -1;
};

int run_simulated_nodes(const SimulatedNodesPlan& plan);

}  // namespace drk::bench
