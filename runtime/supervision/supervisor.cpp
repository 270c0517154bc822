#include "runtime/supervision/supervisor.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <csignal>
#include <sstream>
#include <utility>

#include "runtime/supervision/death_cause.h"
#include "runtime/log.h"
#include "runtime/transport/transport.h"

namespace drk::runtime {
namespace {

constexpr std::chrono::milliseconds kBackoffFloor{50};

std::string format_seconds(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

}  // namespace

Supervisor::Supervisor(boost::asio::io_context& io, const Topology& topology, ProcessLauncher& launcher,
                       SupervisorOptions options)
    : io_(io),
      topology_(topology),
      launcher_(launcher),
      options_(std::move(options)),
      stop_grace_(options_.stop_grace.value_or(std::chrono::milliseconds{topology.supervision.drain_ms} +
                                               kStopMargin)),
      backoff_timer_(io) {
  for (const auto& name : topology_.child_processes_on(options_.node)) {
    ProcessRecord record;
    record.name = name;
    // The topology checks that every actor of a process has the same type.
    const auto actors = topology_.actors_of(name);
    if (!actors.empty()) record.restart = actors.front()->restart;
    record.kill_timer = std::make_unique<boost::asio::steady_timer>(io_);
    processes_.push_back(std::move(record));
  }
}

uint64_t Supervisor::next_incarnation() {
  // Unique across restarts of the head too: the clock in the high bits, a counter in the low.
  return (static_cast<uint64_t>(system_unix_ms()) << 16) | (++incarnation_counter_ & 0xffff);
}

void Supervisor::start(std::function<void(Status)> done) {
  done_ = std::move(done);
  for (std::size_t index = 0; index < processes_.size(); ++index) {
    if (auto launched = launch(index); !launched) {
      fail(launched.error());
      return;
    }
  }
}

Status Supervisor::launch(std::size_t index) {
  ProcessRecord& process = processes_[index];
  const uint64_t incarnation = next_incarnation();
  auto pid = launcher_.start({options_.executable, "host", "--run-dir", options_.run_dir, "--process",
                              process.name, "--incarnation", std::to_string(incarnation)});
  if (!pid) {
    return make_error(pid.error().code,
                      "cannot start process '" + process.name + "': " + pid.error().message);
  }
  process.pid = *pid;
  process.phase = ProcessRecord::Phase::running;
  process.finished = false;
  process.incarnation = incarnation;
  process.started_at = options_.clock();
  process.kill_cause.clear();
  ++process.starts;
  return {};
}

bool Supervisor::kill(std::string_view name, uint64_t incarnation, std::string cause) {
  const auto found = std::find_if(processes_.begin(), processes_.end(),
                                  [&](const ProcessRecord& p) { return p.name == name; });
  if (found == processes_.end() || shutting_down_ || found->phase != ProcessRecord::Phase::running ||
      found->incarnation != incarnation || !found->kill_cause.empty()) {
    return false;
  }
  found->kill_cause = std::move(cause);
  launcher_.signal(found->pid, SIGKILL);
  return true;
}

void Supervisor::note_cause(ProcessRecord& process, std::string text) {
  if (shutting_down_) return;  // the ends of an orderly shutdown are not deaths
  process.recent_causes.push_back(std::move(text));
  if (process.recent_causes.size() > kRecentCauses) process.recent_causes.pop_front();
}

void Supervisor::children_exited() {
  for (const auto& [pid, status] : launcher_.reap()) {
    const auto found = std::find_if(processes_.begin(), processes_.end(),
                                    [pid = pid](const ProcessRecord& p) { return p.pid == pid; });
    if (found == processes_.end()) continue;
    const std::size_t index = static_cast<std::size_t>(found - processes_.begin());
    const bool expected = found->phase == ProcessRecord::Phase::stopping;
    const bool killed = !found->kill_cause.empty();
    found->pid = 0;
    found->phase = ProcessRecord::Phase::down;
    found->kill_timer->cancel();
    std::string cause = killed ? std::exchange(found->kill_cause, {}) : status.describe();
    if (const std::string recorded = take_death_cause(options_.run_dir, found->name); !recorded.empty()) {
      cause += ": " + recorded;
    }
    found->last_cause = cause;
    if (expected) {
      note_cause(*found, pending_.count(index) ? "stopped to restart with its group (" + cause + ")"
                                               : "stopped with its group, not restarted: temporary (" + cause + ")");
    } else if (!shutting_down_) {
      on_death(index, pid, cause, !killed && status.signal == 0 && status.exit_code == 0);
    }
  }
  restart_pending_when_down();
  finish_if_done();
}

std::chrono::milliseconds Supervisor::backoff(std::size_t index) const {
  const auto earlier = std::count_if(recent_restarts_.begin(), recent_restarts_.end(),
                                     [&](const Restart& r) { return r.process == index; });
  const auto& policy = topology_.supervision;
  if (earlier == 0) return std::chrono::milliseconds{policy.backoff_initial_ms};
  auto delay = std::max(std::chrono::milliseconds{policy.backoff_initial_ms}, kBackoffFloor);
  for (long doubling = 0; doubling < earlier && delay.count() < policy.backoff_max_ms; ++doubling) delay *= 2;
  return std::min(delay, std::chrono::milliseconds{policy.backoff_max_ms});
}

void Supervisor::on_death(std::size_t index, pid_t pid, const std::string& cause, bool normal_end) {
  ProcessRecord& dead = processes_[index];
  const std::string died =
      "supervisor: process '" + dead.name + "' (pid " + std::to_string(pid) + ") died: " + cause;
  if (dead.restart == ChildRestart::temporary ||
      (dead.restart == ChildRestart::transient && normal_end)) {
    const std::string why = dead.restart == ChildRestart::temporary
                                ? "not restarted: temporary"
                                : "not restarted: transient, and it ended normally";
    dead.finished = true;
    note_cause(dead, cause + " (" + why + ")");
    log::warn() << died << "; " << why;
    return;
  }
  note_cause(dead, cause);

  const auto& policy = topology_.supervision;
  const auto now = options_.clock();
  const auto window =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(policy.within_s));
  while (!recent_restarts_.empty() && now - recent_restarts_.front().at > window)
    recent_restarts_.pop_front();

  const std::string& name = dead.name;
  const std::string limit =
      std::to_string(policy.max_restarts) + " in " + format_seconds(policy.within_s) + " s";
  if (static_cast<int>(recent_restarts_.size()) >= policy.max_restarts) {
    log::error() << died << "; not restarting it: the restart limit (at most " << limit
                 << ") is reached; stopping the run";
    fail(make_error(Errc::peer_unavailable,
                    "process '" + name + "' keeps dying: the restart limit (supervision.max_restarts: " +
                        std::to_string(policy.max_restarts) + " within " + format_seconds(policy.within_s) +
                        " s) is reached; its last cause: " + cause));
    return;
  }

  const auto delay = backoff(index);
  recent_restarts_.push_back({now, index});

  std::vector<std::size_t> group{index};
  if (policy.strategy == RestartStrategy::one_for_all) {
    for (std::size_t other = 0; other < processes_.size(); ++other) {
      if (other != index) group.push_back(other);
    }
  } else if (policy.strategy == RestartStrategy::rest_for_one) {
    for (std::size_t later = index + 1; later < processes_.size(); ++later) group.push_back(later);
  }
  // A temporary member is stopped with its group and not started again.
  std::string also;
  std::string stopped;
  for (std::size_t k = 1; k < group.size(); ++k) {
    const ProcessRecord& member = processes_[group[k]];
    if (member.restart != ChildRestart::temporary) {
      also += (also.empty() ? " with '" : "', '") + member.name;
    } else if (member.phase == ProcessRecord::Phase::running) {
      stopped += (stopped.empty() ? "; stopping '" : "', '") + member.name;
    }
  }
  if (!also.empty()) also += "'";
  if (!stopped.empty()) stopped += "' for good (temporary)";
  log::warn() << died << "; restarting" << also << " in " << delay.count() << " ms (restart "
              << recent_restarts_.size() << " of at most " << limit << ")" << stopped;

  for (std::size_t member : group) {
    ProcessRecord& process = processes_[member];
    if (process.restart == ChildRestart::temporary && member != index) {
      process.finished = true;
    } else {
      pending_.insert(member);
    }
    if (process.phase == ProcessRecord::Phase::running) stop_process(member);
  }
  pending_delay_ = std::max(pending_delay_, delay);
}

void Supervisor::stop_process(std::size_t index) {
  ProcessRecord& process = processes_[index];
  if (process.phase != ProcessRecord::Phase::running) return;
  launcher_.signal(process.pid, SIGTERM);
  process.phase = ProcessRecord::Phase::stopping;
  process.kill_timer->expires_after(stop_grace_);
  process.kill_timer->async_wait([this, index, pid = process.pid](const boost::system::error_code& error) {
    if (error) return;
    const ProcessRecord& still = processes_[index];
    if (still.phase == ProcessRecord::Phase::stopping && still.pid == pid) launcher_.signal(pid, SIGKILL);
  });
}

void Supervisor::restart_pending_when_down() {
  if (shutting_down_ || pending_.empty() || backoff_armed_) return;
  for (std::size_t member : pending_) {
    if (processes_[member].phase != ProcessRecord::Phase::down) return;
  }
  backoff_armed_ = true;
  backoff_timer_.expires_after(pending_delay_);
  backoff_timer_.async_wait([this](const boost::system::error_code& error) {
    backoff_armed_ = false;
    if (error || shutting_down_) return;
    for (std::size_t member : pending_) {
      if (processes_[member].phase != ProcessRecord::Phase::down) return;  // re-armed when it is
    }
    std::vector<std::string> restarted_actors;
    for (std::size_t member : pending_) {  // std::set: topology order
      if (auto launched = launch(member); !launched) {
        fail(launched.error());
        return;
      }
      for (const ActorEntry* actor : topology_.actors_of(processes_[member].name)) {
        restarted_actors.push_back(actor->name);
      }
    }
    pending_.clear();
    pending_delay_ = std::chrono::milliseconds{0};
    if (options_.on_restarted) options_.on_restarted(restarted_actors);
  });
}

void Supervisor::fail(Error error) {
  if (outcome_.ok()) outcome_ = Status(std::move(error));
  begin_shutdown();
}

void Supervisor::stop() { begin_shutdown(); }

void Supervisor::begin_shutdown() {
  if (!shutting_down_) {
    shutting_down_ = true;
    backoff_timer_.cancel();
    pending_.clear();
    for (std::size_t index = processes_.size(); index-- > 0;) stop_process(index);
  }
  finish_if_done();
}

void Supervisor::finish_if_done() {
  if (!shutting_down_ || finished_) return;
  for (const auto& process : processes_) {
    if (process.phase != ProcessRecord::Phase::down) return;
  }
  finished_ = true;
  if (done_) boost::asio::post(io_, [this] { done_(outcome_); });
}

}  // namespace drk::runtime
