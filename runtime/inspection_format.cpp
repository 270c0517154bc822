#include "runtime/inspection_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace drk::runtime {
namespace {

// The length of the valid UTF-8 sequence at `at`, or 0 when the byte there does not start one.
std::size_t utf8_sequence(const std::string& text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  std::size_t length = 0;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) length = 3;
  else if (lead >= 0xf0 && lead <= 0xf4) length = 4;
  else return 0;
  if (at + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return 0;
  }
  return length;
}

// Bytes from other processes may be anything: control characters are escaped and bytes that
// are not UTF-8 become U+FFFD, so that the output is always valid JSON.
void append_json_string(std::string& out, const std::string& text) {
  out += '"';
  for (std::size_t at = 0; at < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[at]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (const std::size_t length = utf8_sequence(text, at); length > 0) {
      out.append(text, at, length);
      at += length;
      continue;
    } else {
      out += "\\ufffd";
    }
    ++at;
  }
  out += '"';
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

// A JSON object written field by field.
class JsonObject {
 public:
  explicit JsonObject(std::string& out) : out_(out) { out_ += '{'; }
  ~JsonObject() { out_ += '}'; }
  JsonObject(const JsonObject&) = delete;
  JsonObject& operator=(const JsonObject&) = delete;

  std::string& key(const char* name) {
    if (!first_) out_ += ',';
    first_ = false;
    out_ += '"';
    out_ += name;
    out_ += "\":";
    return out_;
  }
  void text(const char* name, const std::string& value) { append_json_string(key(name), value); }
  void integer(const char* name, uint64_t value) { key(name) += std::to_string(value); }
  void signed_integer(const char* name, int64_t value) { key(name) += std::to_string(value); }
  void number(const char* name, double value) { key(name) += json_number(value); }
  void boolean(const char* name, bool value) { key(name) += value ? "true" : "false"; }
  void texts(const char* name, const std::vector<std::string>& values) {
    std::string& out = key(name);
    out += '[';
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i != 0) out += ',';
      append_json_string(out, values[i]);
    }
    out += ']';
  }

 private:
  std::string& out_;
  bool first_ = true;
};

template <typename Item, typename Write>
void json_array(std::string& out, const std::vector<Item>& items, Write write) {
  out += '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) out += ',';
    write(items[i]);
  }
  out += ']';
}

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
  std::string out;
  {
    JsonObject root(out);
    root.text("topology", system.topology);
    root.text("run_dir", system.run_dir);
    root.signed_integer("taken_unix_ms", system.taken_unix_ms);
    root.number("hung_after_s", hung_after_seconds);
    root.text("training", system.training);
    json_array(root.key("processes"), system.processes, [&](const ProcessView& process) {
      JsonObject object(out);
      object.text("name", process.name);
      object.signed_integer("pid", process.pid);
      object.text("status", status_name(process.status));
      object.integer("incarnation", process.incarnation);
      object.integer("restarts", process.restarts);
      object.texts("recent_causes", process.recent_causes);
      if (process.report_age_seconds < 0) {
        object.key("report_age_s") += "null";
      } else {
        object.number("report_age_s", process.report_age_seconds);
      }
    });
    json_array(root.key("actors"), system.actors, [&](const ActorView& actor) {
      JsonObject object(out);
      object.text("name", actor.name);
      object.text("role", actor.role);
      object.text("process", actor.process);
      object.signed_integer("pid", actor.pid);
      object.text("status", status_name(actor.status));
      // Its process's, repeated here so that a reader of one actor needs nothing else.
      const auto process = std::find_if(system.processes.begin(), system.processes.end(),
                                        [&](const ProcessView& p) { return p.name == actor.process; });
      const bool known = process != system.processes.end();
      object.integer("restarts", known ? process->restarts : 0);
      if (known && !process->recent_causes.empty()) {
        object.text("last_cause", process->recent_causes.back());
      } else {
        object.key("last_cause") += "null";
      }
      object.integer("messages_received", actor.messages_received);
      object.integer("messages_handled", actor.messages_handled);
      object.integer("timers_fired", actor.timers_fired);
      object.number("messages_per_s", actor.messages_per_second);
      object.integer("mailbox_depth", actor.mailbox_depth);
      object.integer("mailbox_capacity", actor.mailbox_capacity);
      object.number("mean_handler_ms", actor.mean_handler_ms);
      object.number("max_handler_ms", actor.max_handler_ms);
      if (actor.current_handler.empty()) {
        object.key("current_handler") += "null";
      } else {
        JsonObject current(object.key("current_handler"));
        current.text("kind", actor.current_handler);
        current.number("seconds", actor.current_handler_seconds);
      }
      object.boolean("hung", is_hung(actor, hung_after_seconds));
      JsonObject dead_letters(object.key("dead_letters"));
      dead_letters.integer("count", actor.dead_letters);
      dead_letters.texts("recent", actor.recent_dead_letters);
    });
    json_array(root.key("nodes"), system.nodes, [&](const NodeView& node) {
      JsonObject object(out);
      object.text("name", node.name);
      object.text("status", status_name(node.status));
      object.text("address", node.address);
      if (node.last_heartbeat_age_seconds < 0) {
        object.key("last_heartbeat_age_s") += "null";
      } else {
        object.number("last_heartbeat_age_s", node.last_heartbeat_age_seconds);
      }
      object.integer("losses", node.losses);
      object.text("last_loss_cause", node.last_loss_cause);
    });
    root.integer("refused_peers", system.refused_peers);
  }
  out += '\n';
  return out;
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
