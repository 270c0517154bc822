// The inspection model: a running system seen at one moment (docs/inspection.md), as plain
// values, and its Cap'n Proto form (messages/drk.capnp: HostStats, SystemReport).
//
// An ActorView is one actor as its host measured it; a HostView is what one host reports once
// a second; a SystemView is what the head answers `drk inspect` with: every process as the
// supervisor sees it and every actor of the topology.
//
// Reading from Cap'n Proto takes bytes from another process: lists and texts are cut to the
// limits below, so that a report cannot grow a reader's memory without bound.
// Thread-safety: plain values; the functions are reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "messages/envelope.capnp.h"
#include "runtime/inspection/inspection_stats.h"

namespace drk::runtime {

inline constexpr std::size_t kMaxReportedActors = 4096;
inline constexpr std::size_t kMaxReportedText = 512;
inline constexpr std::size_t kMaxReportedTexts = 32;  // in one list (dead letters, causes)

enum class ActorStatus { starting, running, stopped, dead };
enum class ProcessStatus { running, down, stopping };

const char* status_name(ActorStatus status);
const char* status_name(ProcessStatus status);

struct ActorView {
  std::string name;
  std::string role;
  std::string process;
  int32_t pid = 0;
  ActorStatus status = ActorStatus::starting;
  uint64_t messages_received = 0;
  uint64_t messages_handled = 0;
  uint64_t timers_fired = 0;
  uint64_t mailbox_depth = 0;
  uint64_t mailbox_capacity = 0;
  double mean_handler_ms = 0;
  double max_handler_ms = 0;
  std::string current_handler;  // "" when idle
  double current_handler_seconds = 0;
  uint64_t dead_letters = 0;
  std::vector<std::string> recent_dead_letters;
  double messages_per_second = 0;
};

struct HostView {
  std::string process;
  uint64_t incarnation = 0;
  int32_t pid = 0;
  std::vector<ActorView> actors;
};

struct ProcessView {
  std::string name;
  int32_t pid = 0;
  ProcessStatus status = ProcessStatus::running;
  uint64_t incarnation = 0;
  uint32_t restarts = 0;
  std::vector<std::string> recent_causes;  // oldest first
  double report_age_seconds = -1;          // -1: no report from this incarnation yet
};

enum class NodeStatus { waiting, joined, lost };
const char* status_name(NodeStatus status);

// A node of a multi-node run as the head sees it.
struct NodeView {
  std::string name;
  NodeStatus status = NodeStatus::waiting;
  std::string address;  // host:port_base
  double last_heartbeat_age_seconds = -1;  // -1: never
  uint32_t losses = 0;
  std::string last_loss_cause;
};

struct SystemView {
  std::string topology;
  std::string run_dir;
  int64_t taken_unix_ms = 0;
  std::vector<ProcessView> processes;
  std::vector<ActorView> actors;
  std::vector<NodeView> nodes;  // empty on one machine
  uint64_t refused_peers = 0;   // connections refused by CURVE authentication
  std::string training;         // the newest step's progress line; "" before the first step
};

// An ActorView of a local actor's statistics (no process, pid or capacity filled in).
ActorView view_of(const LocalActorStats& local, double messages_per_second);

void write_host_stats(const HostView& host, msg::HostStats::Builder out);
HostView read_host_stats(msg::HostStats::Reader in);
void write_processes(const std::vector<ProcessView>& processes, capnp::List<msg::ProcessReport>::Builder out);
std::vector<ProcessView> read_processes(capnp::List<msg::ProcessReport>::Reader in);
void write_system_report(const SystemView& system, msg::SystemReport::Builder out);
SystemView read_system_report(msg::SystemReport::Reader in);

}  // namespace drk::runtime
