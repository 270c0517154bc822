// The two kinds of drkernel process, as functions that return an exit code.
//
// run_head() is `drk run`: it loads and validates the topology (with --set overrides), checks
// that every role is registered, takes RUN_DIR (one run per directory: RUN_DIR/run.lock),
// (--fresh: removes what an earlier run left there; otherwise the actors resume from it),
// writes RUN_DIR/topology.yaml, starts the supervisor (one `host` child per process), hosts the
// actors placed in process "head" and the built-in "head" actor, and prints the progress lines
// of the application's progress observer (progress_observer.h; drkernel's: one per training
// step). It checks the children's heartbeats and handlers (heartbeat_monitor.h). Progress that
// says finished stops the run in order: children first (SIGTERM, then SIGKILL
// after supervision.drain_ms + 1 s), then the head's own actors (drained as below); then
// `summary(run_dir)` runs and its value is the exit code. An application's head_service (below)
// starts once the head's actors run, before any child, and stops when the run ends, before the
// summary. Exit codes: 0 (or the summary's), 1 when the run could not start or stopped with an
// error (the restart limit), 130 after SIGINT, 143 after SIGTERM.
//
// run_host() is `drk host`: it hosts the actors of one process (from RUN_DIR/topology.yaml),
// reporting to the head every supervision.heartbeat_ms, until SIGTERM or SIGINT; then it drains
// (ActorHost::drain: the messages already in the mailboxes are handled, for at most
// supervision.drain_ms), runs on_stop and exits 0. A handler that throws ends it with 70.
//
// Both need the roles registered first (runtime::register_role), and the application's payload
// types (transport/payload_types.h) and progress observer. Call from the main thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "runtime/topology/visible_gpus.h"

namespace drk::runtime {

class InspectionBoard;

// What an application runs in the head beside the run, for as long as the run lasts (drkernel's:
// `drk run --dashboard`, an HTTP service). Destroyed when the run ends, before the summary.
class HeadService {
 public:
  virtual ~HeadService() = default;
};

// Starts the head's service once the head's actors run, with the board inspection reads (it
// outlives the service; every member is thread-safe) and the run's absolute directory. An error
// stops the run before any child starts (exit code 1).
using HeadServiceStart =
    std::function<Result<std::unique_ptr<HeadService>>(const InspectionBoard& board, const std::string& run_dir)>;

// The command lines that fill RunOptions and HostArgs: runtime/process_command_line.h.
struct RunOptions {
  std::string topology_path;
  std::vector<std::string> overrides;  // "key=value"
  bool fresh = false;                  // start over: remove what an earlier run left in RUN_DIR
  std::string executable;  // the program children run as `EXECUTABLE host ...`; empty: this one
  std::function<int(const std::string& run_dir)> summary;  // may be empty
  HeadServiceStart head_service;                            // may be empty
  // This machine's GPUs, for `gpus: all` and the check of `gpus:` lists (topology.h); empty:
  // `gpus: all` is refused.
  VisibleGpusQuery visible_gpus;
  // Resolve and check the topology, print it as RUN_DIR/topology.yaml would hold it and the
  // processes it would start (their node and GPU), and exit 0; nothing starts, nothing is written.
  bool dry_run = false;
};

int run_head(const RunOptions& options);

struct HostArgs {
  std::string run_dir;
  std::string process;
  uint64_t incarnation = 0;
};

int run_host(const HostArgs& args);

}  // namespace drk::runtime
