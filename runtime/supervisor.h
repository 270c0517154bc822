// Supervisor: starts one child process per process of a topology and keeps them running.
//
// Each child is `EXECUTABLE host --run-dir DIR --process NAME --incarnation N` (N differs on
// every start). When a child dies unexpectedly the supervisor takes its death cause (exit
// status plus RUN_DIR/causes/NAME.txt), prints one line, and restarts it per the topology's
// strategy: one_for_one restarts the process alone, one_for_all every process, rest_for_one the
// process and those after it in topology order (the others are stopped first). Restarts wait
// a backoff: the first one backoff_initial_ms, then doubling (from at least 50 ms) up to
// backoff_max_ms. After a restart, on_restarted is called with the names of the restarted
// actors (the head sends Control.peerRestarted for each to every actor). More than
// max_restarts restarts within within_s seconds stop the run with an error that names the
// process and its last cause.
//
// stop() is the orderly shutdown: SIGTERM to every child (last started first), SIGKILL to
// those still alive after the grace period, all reaped; then `done` runs with the outcome.
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
#include <iosfwd>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/process_launcher.h"
#include "runtime/result.h"
#include "runtime/topology.h"

namespace drk::runtime {

struct SupervisorOptions {
  std::string executable;       // understands `host --run-dir DIR --process NAME --incarnation N`
  std::string run_dir;          // absolute
  std::ostream* log = nullptr;  // nullptr: std::cerr
  std::chrono::milliseconds stop_grace{3000};
  std::function<void(const std::vector<std::string>& restarted_actors)> on_restarted;
};

struct ProcessRecord {
  enum class Phase { down, running, stopping };
  std::string name;
  pid_t pid = 0;
  Phase phase = Phase::down;
  uint64_t incarnation = 0;
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

  const std::vector<ProcessRecord>& processes() const { return processes_; }

 private:
  using Clock = std::chrono::steady_clock;

  Status launch(std::size_t index);
  void on_death(std::size_t index, pid_t pid, const std::string& cause);
  void stop_process(std::size_t index);
  void restart_pending_when_down();
  void fail(Error error);
  void begin_shutdown();
  void finish_if_done();
  std::chrono::milliseconds backoff(std::size_t index) const;
  std::ostream& log() const;
  uint64_t next_incarnation();

  boost::asio::io_context& io_;
  const Topology& topology_;
  ProcessLauncher& launcher_;
  SupervisorOptions options_;
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
