// `drk node`: a machine that joins a running head and hosts the actors the topology places on
// it (docs/multi-node.md).
//
// run_node() connects to the head's node endpoint (--join tcp://HOST:PORT; CURVE with --keys),
// sends NodeJoin until the head welcomes it (the head waits for every node before the run
// starts), writes the welcome's topology and network map into its own run directory, and
// supervises its processes (`drk host` children) as `drk run` does its own: restarts, causes,
// Control.peerRestarted to every actor. It sends a NodeHeartbeat every network.heartbeat_ms
// with its processes' state; when the head has been silent for network.node_timeout_ms it says
// so once and joins again, while its actors keep running. A welcome from a head that started
// again (a new run id) restarts its processes with the new topology.
//
// It ends when the head sends Control.shutdown (the run is over; exit 0), on SIGINT / SIGTERM
// (130 / 143), or with 1 when the head refuses it or its processes exceed the restart limit.
// Call from the main thread, after the roles are registered.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace drk::runtime {

// Its command line: runtime/process_command_line.h.
struct NodeArgs {
  std::string join;          // tcp://HEAD:PORT (the head's network.listen)
  std::string name;          // the node's name in the topology's `nodes:`
  std::string advertise;     // the host other nodes reach this one at; empty: the head's host
                             // when it is on loopback, else this machine's host name
  std::string bind_host = "0.0.0.0";
  uint16_t port = 7800;      // the first port of this node's mailboxes
  std::string keys;          // key directory (NAME.key, head.pub, ...); empty: no CURVE
  std::string run_dir;       // default runs/node-NAME
  std::string executable;    // what children run as `EXECUTABLE host ...`; empty: this program
};

int run_node(const NodeArgs& args);

}  // namespace drk::runtime
