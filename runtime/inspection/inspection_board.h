// InspectionBoard: the head's live picture of a running system, from which it answers
// `drk inspect` (docs/inspection.md).
//
// Three sources feed it: every actor host's HostView (once a second: children through the
// head actor, the head's own through its reporter), and the supervisor's view of the processes
// (pid, status, incarnation, restarts and their causes). view() joins them over the topology's
// actors: an actor whose process is down is dead (with the counters its last report had); one
// whose process has not reported since it last started is starting; otherwise it is as its
// host reported it. Reports for a process or an actor the topology does not name are ignored.
//
// Thread-safety: every member may be called from any thread (one mutex).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/inspection/inspection_view.h"
#include "runtime/supervision/supervisor.h"
#include "runtime/topology/topology.h"

namespace drk::runtime {

// The supervisor's record of a process, as inspection shows it (no report age yet).
ProcessView process_view(const ProcessRecord& record);

class InspectionBoard {
 public:
  // Copies what it needs from `topology`; `clock` gives Unix milliseconds (a seam for tests).
  InspectionBoard(const Topology& topology, std::string run_dir, std::function<int64_t()> clock);

  void update_host(HostView host);
  // Every process, the head's included.
  void update_processes(std::vector<ProcessView> processes);
  // The nodes of a multi-node run, and the peers CURVE refused so far.
  void update_network(std::vector<NodeView> nodes, uint64_t refused_peers);
  // The newest training step as the head printed it.
  void update_training(std::string progress_line);

  SystemView view() const;

 private:
  struct Placement {
    std::string name;
    std::string role;
    std::string process;
    uint64_t mailbox_capacity = 0;
  };
  struct Received {
    HostView host;
    int64_t at_unix_ms = 0;
  };

  std::string topology_name_;
  std::string run_dir_;
  std::function<int64_t()> clock_;
  std::vector<Placement> actors_;
  mutable std::mutex mutex_;
  std::vector<ProcessView> processes_;
  std::vector<NodeView> nodes_;
  uint64_t refused_peers_ = 0;
  std::string training_;
  std::map<std::string, Received, std::less<>> hosts_;
};

}  // namespace drk::runtime
