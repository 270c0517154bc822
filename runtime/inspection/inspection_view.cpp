#include "runtime/inspection/inspection_view.h"

#include <algorithm>

namespace drk::runtime {
namespace {

std::string bounded(capnp::Text::Reader text) {
  return std::string(text.cStr(), std::min<std::size_t>(text.size(), kMaxReportedText));
}

std::vector<std::string> bounded(capnp::List<capnp::Text>::Reader texts, std::size_t most) {
  std::vector<std::string> read;
  const std::size_t count = std::min<std::size_t>(texts.size(), most);
  // The latest are last: keep those.
  for (std::size_t index = texts.size() - count; index < texts.size(); ++index) {
    read.push_back(bounded(texts[static_cast<unsigned>(index)]));
  }
  return read;
}

void write_texts(const std::vector<std::string>& texts, capnp::List<capnp::Text>::Builder out) {
  for (unsigned index = 0; index < texts.size(); ++index) out.set(index, texts[index]);
}

msg::ActorStatus to_message(ActorStatus status) {
  switch (status) {
    case ActorStatus::starting: return msg::ActorStatus::STARTING;
    case ActorStatus::running: return msg::ActorStatus::RUNNING;
    case ActorStatus::stopped: return msg::ActorStatus::STOPPED;
    case ActorStatus::dead: return msg::ActorStatus::DEAD;
  }
  return msg::ActorStatus::STARTING;
}

ActorStatus from_message(msg::ActorStatus status) {
  switch (status) {
    case msg::ActorStatus::STARTING: return ActorStatus::starting;
    case msg::ActorStatus::RUNNING: return ActorStatus::running;
    case msg::ActorStatus::STOPPED: return ActorStatus::stopped;
    case msg::ActorStatus::DEAD: return ActorStatus::dead;
  }
  return ActorStatus::starting;  // a newer sender's status
}

msg::ProcessStatus to_message(ProcessStatus status) {
  switch (status) {
    case ProcessStatus::running: return msg::ProcessStatus::RUNNING;
    case ProcessStatus::down: return msg::ProcessStatus::DOWN;
    case ProcessStatus::stopping: return msg::ProcessStatus::STOPPING;
  }
  return msg::ProcessStatus::RUNNING;
}

ProcessStatus from_message(msg::ProcessStatus status) {
  switch (status) {
    case msg::ProcessStatus::RUNNING: return ProcessStatus::running;
    case msg::ProcessStatus::DOWN: return ProcessStatus::down;
    case msg::ProcessStatus::STOPPING: return ProcessStatus::stopping;
  }
  return ProcessStatus::running;
}

void write_actor(const ActorView& actor, msg::ActorReport::Builder out) {
  out.setName(actor.name);
  out.setRole(actor.role);
  out.setProcess(actor.process);
  out.setPid(actor.pid);
  out.setStatus(to_message(actor.status));
  out.setMessagesReceived(actor.messages_received);
  out.setMessagesHandled(actor.messages_handled);
  out.setTimersFired(actor.timers_fired);
  out.setMailboxDepth(actor.mailbox_depth);
  out.setMailboxCapacity(actor.mailbox_capacity);
  out.setMeanHandlerMs(actor.mean_handler_ms);
  out.setMaxHandlerMs(actor.max_handler_ms);
  out.setCurrentHandler(actor.current_handler);
  out.setCurrentHandlerSeconds(actor.current_handler_seconds);
  out.setDeadLetters(actor.dead_letters);
  write_texts(actor.recent_dead_letters,
              out.initRecentDeadLetters(static_cast<unsigned>(actor.recent_dead_letters.size())));
  out.setMessagesPerSecond(actor.messages_per_second);
}

ActorView read_actor(msg::ActorReport::Reader in) {
  ActorView actor;
  actor.name = bounded(in.getName());
  actor.role = bounded(in.getRole());
  actor.process = bounded(in.getProcess());
  actor.pid = in.getPid();
  actor.status = from_message(in.getStatus());
  actor.messages_received = in.getMessagesReceived();
  actor.messages_handled = in.getMessagesHandled();
  actor.timers_fired = in.getTimersFired();
  actor.mailbox_depth = in.getMailboxDepth();
  actor.mailbox_capacity = in.getMailboxCapacity();
  actor.mean_handler_ms = in.getMeanHandlerMs();
  actor.max_handler_ms = in.getMaxHandlerMs();
  actor.current_handler = bounded(in.getCurrentHandler());
  actor.current_handler_seconds = in.getCurrentHandlerSeconds();
  actor.dead_letters = in.getDeadLetters();
  actor.recent_dead_letters = bounded(in.getRecentDeadLetters(), kMaxReportedTexts);
  actor.messages_per_second = in.getMessagesPerSecond();
  return actor;
}

std::vector<ActorView> read_actors(capnp::List<msg::ActorReport>::Reader in) {
  std::vector<ActorView> actors;
  const std::size_t count = std::min<std::size_t>(in.size(), kMaxReportedActors);
  actors.reserve(count);
  for (unsigned index = 0; index < count; ++index) actors.push_back(read_actor(in[index]));
  return actors;
}

void write_actors(const std::vector<ActorView>& actors, capnp::List<msg::ActorReport>::Builder out) {
  for (unsigned index = 0; index < actors.size(); ++index) write_actor(actors[index], out[index]);
}

}  // namespace

const char* status_name(ActorStatus status) {
  switch (status) {
    case ActorStatus::starting: return "starting";
    case ActorStatus::running: return "running";
    case ActorStatus::stopped: return "stopped";
    case ActorStatus::dead: return "dead";
  }
  return "unknown";
}

const char* status_name(ProcessStatus status) {
  switch (status) {
    case ProcessStatus::running: return "running";
    case ProcessStatus::down: return "down";
    case ProcessStatus::stopping: return "stopping";
  }
  return "unknown";
}

ActorView view_of(const LocalActorStats& local, double messages_per_second) {
  const ActorStatsSnapshot& stats = local.stats;
  ActorView actor;
  actor.name = local.name;
  actor.role = local.role;
  switch (stats.phase) {
    case ActorPhase::starting: actor.status = ActorStatus::starting; break;
    case ActorPhase::running: actor.status = ActorStatus::running; break;
    case ActorPhase::stopped: actor.status = ActorStatus::stopped; break;
  }
  actor.messages_received = stats.messages_received;
  actor.messages_handled = stats.messages_handled;
  actor.timers_fired = stats.timers_fired;
  actor.mailbox_depth = stats.mailbox_depth();
  actor.mean_handler_ms = stats.mean_handler_ms();
  actor.max_handler_ms = std::chrono::duration<double, std::milli>(stats.handler_max).count();
  actor.current_handler = stats.current_handler;
  actor.current_handler_seconds = std::chrono::duration<double>(stats.current_handler_for).count();
  actor.dead_letters = stats.dead_letters.count;
  actor.recent_dead_letters = stats.dead_letters.recent;
  actor.messages_per_second = messages_per_second;
  return actor;
}

void write_host_stats(const HostView& host, msg::HostStats::Builder out) {
  out.setProcess(host.process);
  out.setIncarnation(host.incarnation);
  out.setPid(host.pid);
  write_actors(host.actors, out.initActors(static_cast<unsigned>(host.actors.size())));
}

HostView read_host_stats(msg::HostStats::Reader in) {
  HostView host;
  host.process = bounded(in.getProcess());
  host.incarnation = in.getIncarnation();
  host.pid = in.getPid();
  host.actors = read_actors(in.getActors());
  return host;
}

const char* status_name(NodeStatus status) {
  switch (status) {
    case NodeStatus::waiting: return "waiting";
    case NodeStatus::joined: return "joined";
    case NodeStatus::lost: return "lost";
  }
  return "unknown";
}

void write_processes(const std::vector<ProcessView>& processes, capnp::List<msg::ProcessReport>::Builder out) {
  for (unsigned index = 0; index < processes.size(); ++index) {
    const ProcessView& process = processes[index];
    auto built = out[index];
    built.setName(process.name);
    built.setPid(process.pid);
    built.setStatus(to_message(process.status));
    built.setIncarnation(process.incarnation);
    built.setRestarts(process.restarts);
    write_texts(process.recent_causes, built.initRecentCauses(static_cast<unsigned>(process.recent_causes.size())));
    built.setReportAgeSeconds(process.report_age_seconds);
  }
}

void write_system_report(const SystemView& system, msg::SystemReport::Builder out) {
  out.setTopology(system.topology);
  out.setRunDir(system.run_dir);
  out.setTakenUnixMs(system.taken_unix_ms);
  write_processes(system.processes, out.initProcesses(static_cast<unsigned>(system.processes.size())));
  write_actors(system.actors, out.initActors(static_cast<unsigned>(system.actors.size())));
  auto nodes = out.initNodes(static_cast<unsigned>(system.nodes.size()));
  for (unsigned index = 0; index < system.nodes.size(); ++index) {
    const NodeView& node = system.nodes[index];
    auto built = nodes[index];
    built.setName(node.name);
    built.setStatus(node.status == NodeStatus::joined ? msg::NodeStatus::JOINED
                    : node.status == NodeStatus::lost ? msg::NodeStatus::LOST
                                                      : msg::NodeStatus::WAITING);
    built.setAddress(node.address);
    built.setLastHeartbeatAgeSeconds(node.last_heartbeat_age_seconds);
    built.setLosses(node.losses);
    built.setLastLossCause(node.last_loss_cause);
  }
  out.setRefusedPeers(system.refused_peers);
  out.setTraining(system.training);
}

std::vector<ProcessView> read_processes(capnp::List<msg::ProcessReport>::Reader processes) {
  std::vector<ProcessView> read_all;
  const std::size_t count = std::min<std::size_t>(processes.size(), kMaxReportedActors);
  for (unsigned index = 0; index < count; ++index) {
    const auto read = processes[index];
    ProcessView process;
    process.name = bounded(read.getName());
    process.pid = read.getPid();
    process.status = from_message(read.getStatus());
    process.incarnation = read.getIncarnation();
    process.restarts = read.getRestarts();
    process.recent_causes = bounded(read.getRecentCauses(), kMaxReportedTexts);
    process.report_age_seconds = read.getReportAgeSeconds();
    read_all.push_back(std::move(process));
  }
  return read_all;
}

SystemView read_system_report(msg::SystemReport::Reader in) {
  SystemView system;
  system.topology = bounded(in.getTopology());
  system.run_dir = bounded(in.getRunDir());
  system.taken_unix_ms = in.getTakenUnixMs();
  system.processes = read_processes(in.getProcesses());
  system.actors = read_actors(in.getActors());
  const auto nodes = in.getNodes();
  const std::size_t count = std::min<std::size_t>(nodes.size(), kMaxReportedActors);
  for (unsigned index = 0; index < count; ++index) {
    const auto read = nodes[index];
    NodeView node;
    node.name = bounded(read.getName());
    node.status = read.getStatus() == msg::NodeStatus::JOINED ? NodeStatus::joined
                  : read.getStatus() == msg::NodeStatus::LOST ? NodeStatus::lost
                                                              : NodeStatus::waiting;
    node.address = bounded(read.getAddress());
    node.last_heartbeat_age_seconds = read.getLastHeartbeatAgeSeconds();
    node.losses = read.getLosses();
    node.last_loss_cause = bounded(read.getLastLossCause());
    system.nodes.push_back(std::move(node));
  }
  system.refused_peers = in.getRefusedPeers();
  system.training = bounded(in.getTraining());
  return system;
}

}  // namespace drk::runtime
