// Supervisor: starts one child process per process of a topology on one node (`drk run` the
// head's, `drk node` its own) and keeps them running.
//
// Each child is `EXECUTABLE host --run-dir DIR --process NAME --incarnation N` (N differs on
// every start). When a child dies unexpectedly the supervisor takes its death cause (the cause
// given to kill(), else the exit status; plus RUN_DIR/causes/NAME.txt), logs one line, and
// decides by the process's child type (its actors' `restart`, as in Erlang/OTP):
//   permanent: restarted; transient: restarted unless it ended normally (exit code 0, not
//   killed by the supervisor), in which case it is done; temporary: never restarted.
// A death that is not restarted touches no other process and does not count as a restart.
// A restart follows the topology's strategy: one_for_one restarts the process alone, one_for_all
// every process, rest_for_one the process and those after it in topology order (the others are
// stopped first). As in OTP, a group restart starts again every permanent and transient member
// (a transient one that had finished too: the group starts over), while a temporary member is
// stopped and not started again. Restarts wait a backoff: the first one backoff_initial_ms, then
// doubling (from at least 50 ms) up to backoff_max_ms. After a restart, on_restarted is called
// with the names of the restarted actors (the head sends Control.peerRestarted for each to every
// actor). More than max_restarts restarts within within_s seconds stop the run with an error
// that names the process and its last cause (the escalation to `drk run`, the parent).
//
// kill() is how a health check (heartbeat_monitor.h) ends a running process: SIGKILL, with the
// cause it gives recorded and printed instead of "killed by SIGKILL"; it counts as an abnormal
// end.
//
// stop() is the orderly shutdown: SIGTERM to every child (last started first; a host then drains
// its mailboxes for supervision.drain_ms, process_main.h), SIGKILL to those still alive after
// the grace period (drain_ms + 1 s unless stop_grace says otherwise), all reaped; then `done`
// runs with the outcome.
//
// Thread-safety: every member runs on the io_context's thread (post() to it from elsewhere).
// The io_context's owner calls children_exited() on SIGCHLD.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/supervision/process_launcher.h"
#include "base/result.h"
#include "runtime/topology/topology.h"

namespace drk::runtime {

struct SupervisorOptions {
  std::string executable;       // understands `host --run-dir DIR --process NAME --incarnation N`
  std::string node = std::string(kHeadNode);  // supervises the child processes of this node
  std::string run_dir;          // absolute
  // SIGTERM to SIGKILL; absent: supervision.drain_ms + kStopMargin.
  std::optional<std::chrono::milliseconds> stop_grace;
  std::function<void(const std::vector<std::string>& restarted_actors)> on_restarted;
  std::function<std::chrono::steady_clock::time_point()> clock = std::chrono::steady_clock::now;  // a seam
};

// What a draining host gets beyond drain_ms: on_stop and the process's own exit.
inline constexpr std::chrono::milliseconds kStopMargin{1000};

struct ProcessRecord {
  enum class Phase { down, running, stopping };
  std::string name;
  ChildRestart restart = ChildRestart::permanent;
  pid_t pid = 0;
  Phase phase = Phase::down;
  bool finished = false;  // down for good: a temporary one that ended, a transient one that is done
  uint64_t incarnation = 0;
  std::chrono::steady_clock::time_point started_at{};  // of this incarnation (options.clock)
  std::string kill_cause;  // set by kill() until the process is reaped
  int starts = 0;
  std::string last_cause;  // "killed by SIGKILL", "exited with code 70: actor x: ..."
  // Why it ended, for each of its latest ends during the run (not at shutdown), oldest first;
  // a process stopped to restart with its group says so.
  std::deque<std::string> recent_causes;
  std::unique_ptr<boost::asio::steady_timer> kill_timer;
};

inline constexpr std::size_t kRecentCauses = 8;

class Supervisor {
 public:
  // `topology` and `launcher` must outlive the supervisor.
  Supervisor(boost::asio::io_context& io, const Topology& topology, ProcessLauncher& launcher,
             SupervisorOptions options);

  // Starts every process in topology order; `done` runs once, when the run is over: ok after
  // stop(), or the error that ended it (a process that cannot start, the restart limit).
  void start(std::function<void(Status)> done);
  // Reaps the children that ended and reacts; cheap when none did.
  void children_exited();
  void stop();
  // SIGKILLs process `name` if it is running as `incarnation` and no kill is under way; its
  // death cause is then `cause` ("missed 5 heartbeats (no report for 5.2 s)"). False otherwise.
  bool kill(std::string_view name, uint64_t incarnation, std::string cause);

  const std::vector<ProcessRecord>& processes() const { return processes_; }

 private:
  using Clock = std::chrono::steady_clock;

  Status launch(std::size_t index);
  void on_death(std::size_t index, pid_t pid, const std::string& cause, bool normal_end);
  void note_cause(ProcessRecord& process, std::string text);
  void stop_process(std::size_t index);
  void restart_pending_when_down();
  void fail(Error error);
  void begin_shutdown();
  void finish_if_done();
  std::chrono::milliseconds backoff(std::size_t index) const;
  uint64_t next_incarnation();

  boost::asio::io_context& io_;
  const Topology& topology_;
  ProcessLauncher& launcher_;
  SupervisorOptions options_;
  std::chrono::milliseconds stop_grace_;
  std::vector<ProcessRecord> processes_;
  std::function<void(Status)> done_;

  struct Restart {
    Clock::time_point at;
    std::size_t process;
  };
  std::deque<Restart> recent_restarts_;  // within the intensity window
  std::set<std::size_t> pending_;        // processes to start once they are all down
  std::chrono::milliseconds pending_delay_{0};
  boost::asio::steady_timer backoff_timer_;
  bool backoff_armed_ = false;
  bool shutting_down_ = false;
  bool finished_ = false;
  Status outcome_;
  uint64_t incarnation_counter_ = 0;
};

}  // namespace drk::runtime
