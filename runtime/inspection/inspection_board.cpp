#include "runtime/inspection/inspection_board.h"

#include <algorithm>

namespace drk::runtime {

ProcessView process_view(const ProcessRecord& record) {
  ProcessView process;
  process.name = record.name;
  process.pid = static_cast<int32_t>(record.pid);
  switch (record.phase) {
    case ProcessRecord::Phase::running: process.status = ProcessStatus::running; break;
    case ProcessRecord::Phase::down: process.status = ProcessStatus::down; break;
    case ProcessRecord::Phase::stopping: process.status = ProcessStatus::stopping; break;
  }
  process.incarnation = record.incarnation;
  process.restarts = record.starts > 1 ? static_cast<uint32_t>(record.starts - 1) : 0;
  process.recent_causes.assign(record.recent_causes.begin(), record.recent_causes.end());
  return process;
}

InspectionBoard::InspectionBoard(const Topology& topology, std::string run_dir, std::function<int64_t()> clock)
    : topology_name_(topology.name), run_dir_(std::move(run_dir)), clock_(std::move(clock)) {
  for (const ActorEntry& entry : topology.actors) {
    actors_.push_back({entry.name, entry.role, entry.process, entry.mailbox_capacity});
  }
  actors_.push_back({std::string(kHeadActor), std::string(kHeadActor), std::string(kHeadProcess),
                     ActorEntry{}.mailbox_capacity});
}

void InspectionBoard::update_host(HostView host) {
  const bool known = std::any_of(actors_.begin(), actors_.end(),
                                 [&](const Placement& actor) { return actor.process == host.process; });
  if (!known) return;
  const int64_t now = clock_();
  std::lock_guard lock(mutex_);
  Received& received = hosts_[host.process];
  received.host = std::move(host);
  received.at_unix_ms = now;
}

void InspectionBoard::update_processes(std::vector<ProcessView> processes) {
  std::lock_guard lock(mutex_);
  processes_ = std::move(processes);
}

void InspectionBoard::update_network(std::vector<NodeView> nodes, uint64_t refused_peers) {
  std::lock_guard lock(mutex_);
  nodes_ = std::move(nodes);
  refused_peers_ = refused_peers;
}

void InspectionBoard::update_training(std::string progress_line) {
  std::lock_guard lock(mutex_);
  training_ = std::move(progress_line);
}

SystemView InspectionBoard::view() const {
  SystemView system;
  system.topology = topology_name_;
  system.run_dir = run_dir_;
  system.taken_unix_ms = clock_();
  std::lock_guard lock(mutex_);
  system.nodes = nodes_;
  system.refused_peers = refused_peers_;
  system.training = training_;

  // The latest report of a process, if it comes from the incarnation running now.
  auto current_report = [&](const ProcessView& process) -> const Received* {
    const auto found = hosts_.find(process.name);
    if (found == hosts_.end() || found->second.host.incarnation != process.incarnation) return nullptr;
    return &found->second;
  };

  system.processes = processes_;
  for (ProcessView& process : system.processes) {
    const Received* report = current_report(process);
    process.report_age_seconds =
        report ? static_cast<double>(system.taken_unix_ms - report->at_unix_ms) / 1000.0 : -1.0;
  }

  for (const Placement& placement : actors_) {
    ActorView actor;
    const auto process = std::find_if(processes_.begin(), processes_.end(),
                                      [&](const ProcessView& p) { return p.name == placement.process; });
    const auto host = hosts_.find(placement.process);
    const ActorView* reported = nullptr;
    if (host != hosts_.end()) {
      for (const ActorView& candidate : host->second.host.actors) {
        if (candidate.name == placement.name) reported = &candidate;
      }
    }
    if (process != processes_.end() && process->status == ProcessStatus::down) {
      if (reported) actor = *reported;  // what it had done when it died
      actor.status = ActorStatus::dead;
      actor.current_handler.clear();
      actor.current_handler_seconds = 0;
      actor.mailbox_depth = 0;
      actor.messages_per_second = 0;
    } else if (process != processes_.end() && reported && current_report(*process)) {
      actor = *reported;
    } else {
      actor.status = ActorStatus::starting;
    }
    actor.name = placement.name;
    actor.role = placement.role;
    actor.process = placement.process;
    actor.mailbox_capacity = placement.mailbox_capacity;
    actor.pid = process != processes_.end() ? process->pid : 0;
    system.actors.push_back(std::move(actor));
  }
  return system;
}

}  // namespace drk::runtime
