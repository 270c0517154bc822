#include "runtime/inspection/inspection_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "base/json_text.h"

namespace drk::runtime {
namespace {

std::string fixed(double value, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// Columns padded to their widest cell; the last column is not padded.
std::string layout(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t column = 0; column < row.size(); ++column) {
      widths[column] = std::max(widths[column], row[column].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t column = 0; column < row.size(); ++column) {
      line += row[column];
      if (column + 1 < row.size()) line += std::string(widths[column] - row[column].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string clock_time(int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[16];
  std::strftime(text, sizeof text, "%H:%M:%S", &local);
  return text;
}

}  // namespace

bool is_hung(const ActorView& actor, double hung_after_seconds) {
  return !actor.current_handler.empty() && actor.current_handler_seconds >= hung_after_seconds;
}

std::string actor_state(const ActorView& actor, double hung_after_seconds) {
  if (actor.status == ActorStatus::running && !actor.current_handler.empty() &&
      actor.current_handler_seconds >= kBusyShownAfterSeconds) {
    return std::string(is_hung(actor, hung_after_seconds) ? "HUNG " : "busy ") +
           fixed(actor.current_handler_seconds, 1) + " s in " + actor.current_handler;
  }
  return status_name(actor.status);
}

std::string format_json(const SystemView& system, double hung_after_seconds) {
  // A negative age means never: null.
  const auto age = [](double seconds) { return seconds < 0 ? Json() : Json(seconds); };
  Json processes = Json::array();
  for (const ProcessView& process : system.processes) {
    processes.push_back({{"name", process.name},
                         {"pid", process.pid},
                         {"status", status_name(process.status)},
                         {"incarnation", process.incarnation},
                         {"restarts", process.restarts},
                         {"recent_causes", process.recent_causes},
                         {"report_age_s", age(process.report_age_seconds)}});
  }
  Json actors = Json::array();
  for (const ActorView& actor : system.actors) {
    // Its process's, repeated here so that a reader of one actor needs nothing else.
    const auto process = std::find_if(system.processes.begin(), system.processes.end(),
                                      [&](const ProcessView& p) { return p.name == actor.process; });
    const bool known = process != system.processes.end();
    actors.push_back({{"name", actor.name},
                      {"role", actor.role},
                      {"process", actor.process},
                      {"pid", actor.pid},
                      {"status", status_name(actor.status)},
                      {"restarts", known ? process->restarts : 0},
                      {"last_cause", known && !process->recent_causes.empty() ? Json(process->recent_causes.back()) : Json()},
                      {"messages_received", actor.messages_received},
                      {"messages_handled", actor.messages_handled},
                      {"timers_fired", actor.timers_fired},
                      {"messages_per_s", actor.messages_per_second},
                      {"mailbox_depth", actor.mailbox_depth},
                      {"mailbox_capacity", actor.mailbox_capacity},
                      {"mean_handler_ms", actor.mean_handler_ms},
                      {"max_handler_ms", actor.max_handler_ms},
                      {"current_handler", actor.current_handler.empty()
                                              ? Json()
                                              : Json{{"kind", actor.current_handler},
                                                     {"seconds", actor.current_handler_seconds}}},
                      {"hung", is_hung(actor, hung_after_seconds)},
                      {"dead_letters", {{"count", actor.dead_letters}, {"recent", actor.recent_dead_letters}}}});
  }
  Json nodes = Json::array();
  for (const NodeView& node : system.nodes) {
    nodes.push_back({{"name", node.name},
                     {"status", status_name(node.status)},
                     {"address", node.address},
                     {"last_heartbeat_age_s", age(node.last_heartbeat_age_seconds)},
                     {"losses", node.losses},
                     {"last_loss_cause", node.last_loss_cause}});
  }
  return json_text({{"topology", system.topology},
                    {"run_dir", system.run_dir},
                    {"taken_unix_ms", system.taken_unix_ms},
                    {"hung_after_s", hung_after_seconds},
                    {"training", system.training},
                    {"processes", std::move(processes)},
                    {"actors", std::move(actors)},
                    {"nodes", std::move(nodes)},
                    {"refused_peers", system.refused_peers}}) +
         "\n";
}

std::string format_table(const SystemView& system, double hung_after_seconds) {
  std::string out = "topology " + system.topology + "  " + system.run_dir + "  at " +
                    clock_time(system.taken_unix_ms) + "\n";
  // The Learner's newest step: rollbacks and diagnostic mode show here while the run goes on.
  out += system.training.empty() ? "no training step yet\n\n" : "training: " + system.training + "\n\n";
  std::vector<std::vector<std::string>> processes{{"PROCESS", "PID", "STATUS", "RESTARTS", "REPORT", "LAST CAUSE"}};
  for (const ProcessView& process : system.processes) {
    processes.push_back({process.name, process.pid ? std::to_string(process.pid) : "-", status_name(process.status),
                         std::to_string(process.restarts),
                         process.report_age_seconds < 0 ? "none" : fixed(process.report_age_seconds, 1) + " s ago",
                         process.recent_causes.empty() ? "" : process.recent_causes.back()});
  }
  out += layout(processes) + "\n";

  if (!system.nodes.empty()) {
    std::vector<std::vector<std::string>> nodes{{"NODE", "STATUS", "ADDRESS", "HEARD", "LOSSES", "LAST LOSS"}};
    for (const NodeView& node : system.nodes) {
      nodes.push_back({node.name, status_name(node.status), node.address,
                       node.last_heartbeat_age_seconds < 0 ? "never"
                                                           : fixed(node.last_heartbeat_age_seconds, 1) + " s ago",
                       std::to_string(node.losses), node.last_loss_cause});
    }
    out += layout(nodes) + "refused peers: " + std::to_string(system.refused_peers) + "\n\n";
  }

  std::vector<std::vector<std::string>> actors{
      {"ACTOR", "PROCESS", "PID", "STATE", "HANDLED", "MSG/S", "MEAN MS", "MAX MS", "DEPTH", "DEAD"}};
  for (const ActorView& actor : system.actors) {
    actors.push_back({actor.name, actor.process, actor.pid ? std::to_string(actor.pid) : "-",
                      actor_state(actor, hung_after_seconds), std::to_string(actor.messages_handled),
                      fixed(actor.messages_per_second, 1), fixed(actor.mean_handler_ms, 3),
                      fixed(actor.max_handler_ms, 1),
                      std::to_string(actor.mailbox_depth) + "/" + std::to_string(actor.mailbox_capacity),
                      std::to_string(actor.dead_letters)});
  }
  out += layout(actors);

  std::string dead_letters;
  for (const ActorView& actor : system.actors) {
    if (actor.recent_dead_letters.empty()) continue;
    dead_letters += "  " + actor.name + " (" + std::to_string(actor.dead_letters) + "): " +
                    actor.recent_dead_letters.back() + "\n";
  }
  if (!dead_letters.empty()) out += "\nlatest dead letters\n" + dead_letters;
  return out;
}

}  // namespace drk::runtime
