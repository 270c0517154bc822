#include "runtime/topology.h"

#include "runtime/experiment_keys.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string_view>

namespace drk::runtime {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxExtendsDepth = 8;
constexpr std::size_t kMaxNameLength = 64;  // ipc socket paths are limited to ~107 bytes

// Finds the file and line a node came from, across the extends chain and the overrides.
class Locator {
 public:
  void add_override(std::string label, YAML::Node root) {
    overrides_.push_back({std::move(label), std::move(root)});
  }
  void add_file(std::string path, YAML::Node root) {
    if (files_.empty()) top_file_ = path;
    files_.push_back({std::move(path), std::move(root)});
  }

  std::string where(const YAML::Node& node) const {
    if (node.IsDefined()) {
      // Overrides first: an override's value is also linked into the file tree it replaced.
      for (const auto& source : overrides_) {
        if (contains(source.root, node)) return source.label;
      }
      for (const auto& source : files_) {
        // A node made by an override (a map --set created) has no line of its own.
        if (contains(source.root, node)) {
          return node.Mark().line < 0 ? source.label : source.label + ":" + std::to_string(node.Mark().line + 1);
        }
      }
    }
    return top_file_;
  }

 private:
  struct Source {
    std::string label;
    YAML::Node root;
  };

  static bool contains(const YAML::Node& root, const YAML::Node& target) {
    if (!root.IsDefined()) return false;
    if (root.is(target)) return true;
    if (root.IsMap()) {
      for (const auto& pair : root) {
        if (contains(pair.first, target) || contains(pair.second, target)) return true;
      }
    } else if (root.IsSequence()) {
      for (const auto& element : root) {
        if (contains(element, target)) return true;
      }
    }
    return false;
  }

  std::vector<Source> overrides_;
  std::vector<Source> files_;
  std::string top_file_;
};

// Maps merge key by key (the override's keys win); anything else is replaced.
YAML::Node deep_merge(const YAML::Node& base, const YAML::Node& over) {
  if (!base.IsMap() || !over.IsMap()) return over;
  YAML::Node merged(YAML::NodeType::Map);
  for (const auto& pair : base) {
    if (!over[pair.first.Scalar()].IsDefined()) merged.force_insert(pair.first, pair.second);
  }
  for (const auto& pair : over) {
    const YAML::Node base_value = base[pair.first.Scalar()];
    if (base_value.IsDefined()) {
      merged.force_insert(pair.first, deep_merge(base_value, pair.second));
    } else {
      merged.force_insert(pair.first, pair.second);
    }
  }
  return merged;
}

Result<YAML::Node> load_with_extends(const fs::path& path, Locator& locator, int depth) {
  if (depth > kMaxExtendsDepth) {
    return make_error(Errc::invalid_argument, path.string() + ": `extends` nests deeper than " +
                                                  std::to_string(kMaxExtendsDepth) +
                                                  " files: is there a cycle?");
  }
  YAML::Node document;
  try {
    document = YAML::LoadFile(path.string());
  } catch (const YAML::BadFile&) {
    return make_error(Errc::not_found, "topology '" + path.string() +
                                           "' cannot be read: check the path (relative to the "
                                           "current directory, or to the file that extends it)");
  } catch (const YAML::Exception& error) {
    return make_error(Errc::parse_error,
                      path.string() + ":" + std::to_string(error.mark.line + 1) + ": " + error.msg);
  }
  if (!document.IsMap()) {
    return make_error(Errc::invalid_argument,
                      path.string() +
                          ": a topology is a map with `name`, `run_dir` and `actors`, "
                          "e.g. `name: quickstart`");
  }
  locator.add_file(path.string(), document);
  const YAML::Node extends = document["extends"];
  if (!extends.IsDefined()) return document;
  if (!extends.IsScalar()) {
    return make_error(
        Errc::invalid_argument,
        locator.where(extends) + ": extends must be the path of another topology, e.g. `extends: base.yaml`");
  }
  auto base = load_with_extends(path.parent_path() / extends.Scalar(), locator, depth + 1);
  if (!base) return base.error();
  YAML::Node own(YAML::NodeType::Map);
  for (const auto& pair : document) {
    if (pair.first.Scalar() != "extends") own.force_insert(pair.first, pair.second);
  }
  return deep_merge(*base, own);
}

Status apply_override(YAML::Node document, const std::string& text, Locator& locator) {
  const std::string usage = "--set " + text + ": ";
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    return make_error(Errc::invalid_argument, usage + "expected KEY=VALUE, e.g. `--set experiment.steps=3`");
  }
  const std::string key = text.substr(0, equals);
  YAML::Node value;
  try {
    value = YAML::Load(text.substr(equals + 1));
  } catch (const YAML::Exception& error) {
    return make_error(Errc::parse_error, usage + "the value is not YAML: " + error.msg);
  }
  locator.add_override("--set " + text, value);

  std::vector<std::string> segments;
  for (std::size_t start = 0;;) {
    const auto dot = key.find('.', start);
    segments.push_back(key.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  YAML::Node cursor = document;
  std::string walked;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::string& segment = segments[i];
    const bool last = i + 1 == segments.size();
    if (segment.empty()) {
      return make_error(Errc::invalid_argument,
                        usage + "the key has an empty part, e.g. `--set experiment.steps=3`");
    }
    if (cursor.IsSequence()) {
      // Entries of a list are named by their `name` or `role`, or by position.
      YAML::Node chosen;
      int matches = 0;
      for (std::size_t position = 0; position < cursor.size(); ++position) {
        YAML::Node entry = cursor[position];
        const bool by_position = segment == std::to_string(position);
        const bool by_name = entry.IsMap() && entry["name"].IsScalar() && entry["name"].Scalar() == segment;
        const bool by_role = entry.IsMap() && entry["role"].IsScalar() && entry["role"].Scalar() == segment &&
                             !entry["name"].IsDefined();
        if (by_position || by_name || by_role) {
          chosen.reset(entry);
          ++matches;
        }
      }
      if (matches == 0) {
        return make_error(Errc::invalid_argument,
                          usage + "no entry of `" + walked + "` has the name or role '" + segment + "'");
      }
      if (matches > 1) {
        return make_error(Errc::invalid_argument, usage + "several entries of `" + walked + "` match '" +
                                                      segment + "': give them distinct `name`s and use one");
      }
      if (last) {
        return make_error(Errc::invalid_argument, usage + "replace a field of the entry, e.g. `--set " +
                                                      walked + "." + segment + ".count=2`");
      }
      cursor.reset(chosen);
    } else if (cursor.IsMap() || cursor.IsNull()) {
      if (last) {
        cursor[segment] = value;
        return {};
      }
      if (!cursor[segment].IsDefined() || cursor[segment].IsNull()) {
        cursor[segment] = YAML::Node(YAML::NodeType::Map);
      }
      YAML::Node next = cursor[segment];
      cursor.reset(next);
    } else {
      return make_error(Errc::invalid_argument,
                        usage + "`" + walked + "` is a single value, not a map: it has no `" + segment + "`");
    }
    walked += (walked.empty() ? "" : ".") + segment;
  }
  return {};
}

bool is_safe_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::optional<long long> parse_integer(const YAML::Node& node) {
  if (!node.IsDefined() || !node.IsScalar()) return std::nullopt;
  const std::string& text = node.Scalar();
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_number(const YAML::Node& node) {
  if (!node.IsDefined() || !node.IsScalar() || node.Scalar().empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(node.Scalar().c_str(), &end);
  if (*end != '\0') return std::nullopt;
  return value;
}

// A number as a person writes it: 2, 0.5, 1e-06.
std::string format_number(double number) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", number);
  return text;
}

// Collects every schema error of a document, each with its place and expected form.
class Validator {
 public:
  explicit Validator(const Locator& locator) : locator_(locator) {}

  std::string where(const YAML::Node& node) const { return locator_.where(node); }

  void fail(const YAML::Node& at, const std::string& message) { fail_at(locator_.where(at), message); }
  void fail_at(const std::string& where, const std::string& message) { errors_.push_back(where + ": " + message); }

  void check_keys(const YAML::Node& map, const std::string& path, const std::set<std::string>& allowed) {
    for (const auto& pair : map) {
      const std::string key = pair.first.Scalar();
      if (allowed.count(key)) continue;
      std::string expected;
      for (const auto& name : allowed) expected += (expected.empty() ? "" : ", ") + name;
      fail(pair.second, "unknown key `" + key + "`" + (path.empty() ? "" : " in " + path) +
                            "; expected one of " + expected);
    }
  }

  std::optional<std::string> name_field(const YAML::Node& node, const std::string& path,
                                        const std::string& example) {
    if (!node.IsScalar() || !is_safe_name(node.Scalar())) {
      fail(node, path + " must be a name of letters, digits, `_`, `-` or `.` (at most " +
                     std::to_string(kMaxNameLength) + "), e.g. `" + example + "`");
      return std::nullopt;
    }
    return node.Scalar();
  }

  std::optional<long long> integer_field(const YAML::Node& node, const std::string& path, long long minimum,
                                         const std::string& example) {
    const auto value = parse_integer(node);
    if (!value || *value < minimum || *value > 1'000'000'000) {
      fail(node, path + " must be a " + (minimum > 0 ? "positive" : "non-negative") + " integer, e.g. `" +
                     example + "`");
      return std::nullopt;
    }
    return value;
  }

  bool map_field(const YAML::Node& node, const std::string& path, const std::string& example) {
    if (node.IsMap() || node.IsNull()) return true;
    fail(node, path + " must be a map, e.g. `" + example + "`");
    return false;
  }

  bool failed() const { return !errors_.empty(); }

  Result<Topology> finish(Topology topology) {
    if (errors_.empty()) return topology;
    std::string message;
    for (const auto& error : errors_) message += (message.empty() ? "" : "\n") + error;
    return make_error(Errc::invalid_argument, message);
  }

 private:
  const Locator& locator_;
  std::vector<std::string> errors_;
};

// Checks every key of the experiment (below `prefix`, "" or "eval.") against the registered
// experiment keys: unknown keys and values of the wrong kind are errors.
void read_experiment(const YAML::Node& map, const std::string& prefix, Validator& validator) {
  const auto keys = registered_experiment_keys();
  for (const auto& pair : map) {
    const std::string path = prefix + pair.first.Scalar();
    const YAML::Node& value = pair.second;
    const auto key = std::find_if(keys.begin(), keys.end(), [&](const auto& k) { return k.path == path; });
    const bool is_group = std::any_of(keys.begin(), keys.end(),
                                      [&](const auto& k) { return k.path.rfind(path + ".", 0) == 0; });
    if (key == keys.end() && is_group) {
      if (validator.map_field(value, "experiment." + path, path + ": {...}") && value.IsMap()) {
        read_experiment(value, path + ".", validator);
      }
      continue;
    }
    if (key == keys.end()) {
      std::set<std::string> names;  // the keys at this level
      for (const auto& k : keys) {
        if (k.path.rfind(prefix, 0) != 0) continue;
        const std::string name = k.path.substr(prefix.size(), k.path.find('.', prefix.size()) - prefix.size());
        if (!name.ends_with("[]")) names.insert(name);  // the entries of a list of maps
      }
      std::string known;
      for (const auto& name : names) known += (known.empty() ? "" : ", ") + name;
      validator.fail(value, "experiment." + path + " is not a key anything reads; expected one of " + known);
      continue;
    }
    const std::string expected = "experiment." + path + " must be ";
    const std::string example = ", e.g. `" + pair.first.Scalar() + ": " + key->example + "`";
    const std::string why = key->why.empty() ? "" : " (" + key->why + ")";
    auto check_minimum = [&](double number) {
      if (key->minimum && number < *key->minimum)
        validator.fail(value, expected + "at least " + format_number(*key->minimum) + why + example);
    };
    switch (key->kind) {
      case ValueKind::integer:
        if (auto n = validator.integer_field(value, "experiment." + path, 0, pair.first.Scalar() + ": " + key->example))
          check_minimum(static_cast<double>(*n));
        break;
      case ValueKind::number:
        if (auto n = parse_number(value)) check_minimum(*n);
        else validator.fail(value, expected + "a number" + example);
        break;
      case ValueKind::flag: {
        bool flag = false;
        if (!value.IsScalar() || !YAML::convert<bool>::decode(value, flag))
          validator.fail(value, expected + "true or false" + example);
        break;
      }
      case ValueKind::text:
        if (!value.IsScalar()) {
          validator.fail(value, expected + "a single value" + example);
        } else if (!key->choices.empty() &&
                   std::find(key->choices.begin(), key->choices.end(), value.Scalar()) == key->choices.end()) {
          std::string listed;
          for (const auto& choice : key->choices) listed += (listed.empty() ? "" : ", ") + choice;
          validator.fail(value, expected + "one of " + listed + ", not '" + value.Scalar() + "'" + why + example);
        }
        break;
      case ValueKind::text_or_list: {
        bool ok = value.IsScalar() || value.IsSequence();
        if (value.IsSequence()) {
          for (const auto& item : value) ok = ok && item.IsScalar();
        }
        if (!ok) validator.fail(value, expected + "a value or a list of values" + example);
        break;
      }
      case ValueKind::list_of_maps: {
        if (!value.IsSequence()) {
          validator.fail(value, expected + "a list of maps" + example);
          break;
        }
        for (const auto& item : value) {
          if (item.IsMap()) read_experiment(item, path + "[].", validator);
          else validator.fail(item, expected + "a list of maps" + example);
        }
        break;
      }
    }
  }
}

// The node at dotted `path` below `node`, or an undefined node. Recursive, since a YAML::Node is
// never re-pointed: assignment writes into the node it refers to.
YAML::Node node_at(const YAML::Node& node, std::string_view path) {
  if (!node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const size_t dot = std::min(path.find('.'), path.size());
  const YAML::Node child = node[std::string(path.substr(0, dot))];
  if (!child.IsDefined() || dot == path.size()) return child;
  return node_at(child, path.substr(dot + 1));
}

// The node of `experiment` named by the dotted key an error message begins with
// ("experiment.mrs.band must be ..."), or an undefined node.
YAML::Node node_named_by(const YAML::Node& experiment, const std::string& message) {
  constexpr std::string_view kPrefix = "experiment.";
  if (message.rfind(kPrefix, 0) != 0) return YAML::Node(YAML::NodeType::Undefined);
  size_t end = kPrefix.size();
  while (end < message.size() && (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '_' ||
                                  message[end] == '.'))
    ++end;
  std::string_view path = std::string_view(message).substr(kPrefix.size(), end - kPrefix.size());
  if (path.ends_with('.')) path.remove_suffix(1);
  return node_at(experiment, path);
}

// The roles' checks of the whole experiment and of each training stage's view of it; an error
// is placed at the key it names, in the stage's entry where the stage sets it.
void check_experiment(const YAML::Node& experiment, Validator& validator) {
  auto stages = read_training_stages(experiment);
  if (!stages) {
    validator.fail(experiment["training_stages"], stages.error().message);
    return;
  }
  const YAML::Node stage_entries = experiment["training_stages"];
  std::set<std::string> reported;
  for (size_t index = 0; index < stages->size(); ++index) {
    const TrainingStage& stage = (*stages)[index];
    const YAML::Node entry = stage_entries.IsDefined() && stage_entries.IsSequence() && index < stage_entries.size()
                                 ? stage_entries[index]
                                 : YAML::Node(YAML::NodeType::Undefined);
    for (const auto& check : registered_experiment_checks()) {
      Status status;
      try {
        status = check(stage.experiment);
      } catch (const YAML::Exception& error) {
        status = make_error(Errc::invalid_argument, "experiment has a value of an unexpected shape: " + error.msg);
      }
      if (status || !reported.insert(status.error().message).second) continue;
      // The stage's own value where it sets the key, else the experiment's. (A YAML::Node is never
      // assigned to here: assignment writes into the node it refers to.)
      const std::string& message = status.error().message;
      const YAML::Node in_entry =
          entry.IsDefined() ? node_named_by(entry, message) : YAML::Node(YAML::NodeType::Undefined);
      const YAML::Node in_experiment = node_named_by(experiment, message);
      const YAML::Node& at = in_entry.IsDefined()        ? in_entry
                             : in_experiment.IsDefined() ? in_experiment
                             : entry.IsDefined()         ? entry
                                                         : experiment;
      const bool in_stage = !stage.name.empty() && (in_entry.IsDefined() || !in_experiment.IsDefined());
      validator.fail(at, (in_stage ? "training stage '" + stage.name + "': " : std::string()) + message);
    }
  }
}

// A true/false key of the supervision section; `example` is the value the error suggests.
void parse_flag(const YAML::Node& section, const char* key, const char* example, Validator& validator,
                bool& flag) {
  const YAML::Node value = section[key];
  if (!value.IsDefined()) return;
  const std::string text = value.IsScalar() ? value.Scalar() : "";
  if (text == "true" || text == "false") {
    flag = text == "true";
  } else {
    validator.fail(value, std::string("supervision.") + key + " must be true or false, e.g. `" + key + ": " +
                              example + "`");
  }
}

void read_supervision(const YAML::Node& node, Validator& validator, SupervisionPolicy& policy) {
  if (!validator.map_field(node, "supervision", "supervision: {strategy: one_for_one}")) return;
  if (node.IsNull()) return;
  validator.check_keys(node, "supervision",
                       {"strategy", "max_restarts", "within_s", "backoff_initial_ms", "backoff_max_ms", "drain_ms",
                        "heartbeat_ms", "missed_heartbeats", "start_timeout_s", "hung_handler_s", "kill_hung",
                        "warm_spare"});
  if (const YAML::Node strategy = node["strategy"]; strategy.IsDefined()) {
    const std::string text = strategy.IsScalar() ? strategy.Scalar() : "";
    if (text == "one_for_one")
      policy.strategy = RestartStrategy::one_for_one;
    else if (text == "one_for_all")
      policy.strategy = RestartStrategy::one_for_all;
    else if (text == "rest_for_one")
      policy.strategy = RestartStrategy::rest_for_one;
    else
      validator.fail(strategy,
                     "supervision.strategy must be one_for_one, one_for_all or "
                     "rest_for_one, e.g. `strategy: one_for_one`");
  }
  if (const YAML::Node value = node["max_restarts"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "supervision.max_restarts", 0, "max_restarts: 10")) {
      policy.max_restarts = static_cast<int>(*n);
    }
  }
  if (const YAML::Node value = node["within_s"]; value.IsDefined()) {
    const auto seconds = parse_number(value);
    if (!seconds || *seconds <= 0) {
      validator.fail(value, "supervision.within_s must be a positive number of seconds, e.g. `within_s: 60`");
    } else {
      policy.within_s = *seconds;
    }
  }
  if (const YAML::Node value = node["backoff_initial_ms"]; value.IsDefined()) {
    if (auto n =
            validator.integer_field(value, "supervision.backoff_initial_ms", 0, "backoff_initial_ms: 0")) {
      policy.backoff_initial_ms = static_cast<int>(*n);
    }
  }
  if (const YAML::Node value = node["backoff_max_ms"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "supervision.backoff_max_ms", 0, "backoff_max_ms: 2000")) {
      policy.backoff_max_ms = static_cast<int>(*n);
    }
  }
  if (const YAML::Node value = node["drain_ms"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "supervision.drain_ms", 0, "drain_ms: 2000")) {
      policy.drain_ms = static_cast<int>(*n);
    }
  }
  if (const YAML::Node value = node["heartbeat_ms"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "supervision.heartbeat_ms", 1, "heartbeat_ms: 1000")) {
      policy.heartbeat_ms = static_cast<int>(*n);
    }
  }
  if (const YAML::Node value = node["missed_heartbeats"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "supervision.missed_heartbeats", 1, "missed_heartbeats: 5")) {
      policy.missed_heartbeats = static_cast<int>(*n);
    }
  }
  if (const YAML::Node value = node["start_timeout_s"]; value.IsDefined()) {
    const auto seconds = parse_number(value);
    if (!seconds || *seconds <= 0) {
      validator.fail(value, "supervision.start_timeout_s must be a positive number of seconds, e.g. `start_timeout_s: 60`");
    } else {
      policy.start_timeout_s = *seconds;
    }
  }
  if (const YAML::Node value = node["hung_handler_s"]; value.IsDefined()) {
    const auto seconds = parse_number(value);
    if (!seconds || *seconds <= 0) {
      validator.fail(value,
                     "supervision.hung_handler_s must be a positive number of seconds, e.g. `hung_handler_s: 30`");
    } else {
      policy.hung_handler_s = *seconds;
    }
  }
  parse_flag(node, "kill_hung", "false", validator, policy.kill_hung);
  parse_flag(node, "warm_spare", "true", validator, policy.warm_spare);
}

bool is_tcp_endpoint_with_port(const std::string& text) {
  if (text.rfind("tcp://", 0) != 0) return false;
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon < 6) return false;
  const auto port = parse_integer(YAML::Node(text.substr(colon + 1)));
  return port && *port > 0 && *port < 65536;
}

void read_network(const YAML::Node& node, Validator& validator, NetworkSettings& network) {
  if (!validator.map_field(node, "network", "network: {listen: tcp://0.0.0.0:7700}") || node.IsNull()) return;
  validator.check_keys(node, "network", {"listen", "advertise", "heartbeat_ms", "node_timeout_ms", "keys"});
  network.enabled = true;
  const YAML::Node listen = node["listen"];
  if (!listen.IsDefined() || !listen.IsScalar() || !is_tcp_endpoint_with_port(listen.Scalar())) {
    validator.fail(listen.IsDefined() ? listen : node,
                   "network.listen must be a tcp endpoint with a port, where nodes join, e.g. "
                   "`listen: tcp://0.0.0.0:7700`");
  } else {
    network.listen = listen.Scalar();
  }
  if (const YAML::Node advertise = node["advertise"]; advertise.IsDefined()) {
    if (!advertise.IsScalar() || advertise.Scalar().empty() || advertise.Scalar().find(':') != std::string::npos) {
      validator.fail(advertise, "network.advertise must be a host name or address without a port, e.g. "
                                "`advertise: 10.0.0.1`");
    } else {
      network.advertise = advertise.Scalar();
    }
  }
  if (const YAML::Node value = node["heartbeat_ms"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "network.heartbeat_ms", 1, "heartbeat_ms: 250"))
      network.heartbeat_ms = static_cast<int>(*n);
  }
  if (const YAML::Node value = node["node_timeout_ms"]; value.IsDefined()) {
    if (auto n = validator.integer_field(value, "network.node_timeout_ms", 1, "node_timeout_ms: 1500"))
      network.node_timeout_ms = static_cast<int>(*n);
  }
  if (network.node_timeout_ms < 2 * network.heartbeat_ms) {
    validator.fail(node, "network.node_timeout_ms (" + std::to_string(network.node_timeout_ms) +
                             ") must be at least twice network.heartbeat_ms (" +
                             std::to_string(network.heartbeat_ms) + "), or one late heartbeat loses a node");
  }
  if (const YAML::Node keys = node["keys"]; keys.IsDefined()) {
    if (!keys.IsScalar() || keys.Scalar().empty()) {
      validator.fail(keys, "network.keys must be a key directory (drk keys generate DIR head NODE...), e.g. "
                           "`keys: keys/`");
    } else {
      network.keys = keys.Scalar();
    }
  }
}

void read_nodes(const YAML::Node& list, Validator& validator, Topology& topology) {
  if (!list.IsSequence()) {
    validator.fail(list, "`nodes` must be a list of node names, e.g. `nodes: [gpu1, gpu2]`");
    return;
  }
  for (std::size_t position = 0; position < list.size(); ++position) {
    const auto name =
        validator.name_field(list[position], "nodes[" + std::to_string(position) + "]", "nodes: [gpu1]");
    if (!name) continue;
    if (*name == kHeadNode || std::find(topology.nodes.begin(), topology.nodes.end(), *name) != topology.nodes.end()) {
      validator.fail(list[position], "node '" + *name + "' is " +
                                         (*name == kHeadNode ? "the head's own node, which is implicit"
                                                             : "listed twice") +
                                         "; remove it");
      continue;
    }
    topology.nodes.push_back(*name);
  }
}

// Placement rules that span entries: known nodes, one node per process, the head on the head.
void check_placement(Validator& validator, const Topology& topology) {
  std::map<std::string, const ActorEntry*> process_node;
  for (const ActorEntry& actor : topology.actors) {
    if (actor.node != kHeadNode &&
        std::find(topology.nodes.begin(), topology.nodes.end(), actor.node) == topology.nodes.end()) {
      validator.fail_at(actor.where, "actor '" + actor.name + "' is placed on node '" + actor.node +
                             "', which `nodes:` does not list; add it, e.g. `nodes: [" + actor.node + "]`");
      continue;
    }
    if (actor.node != kHeadNode && !topology.network.enabled) {
      validator.fail_at(actor.where, "actor '" + actor.name + "' is on node '" + actor.node +
                             "': other nodes need a `network:` section, e.g. `network: {listen: "
                             "tcp://0.0.0.0:7700}`");
    }
    if (actor.process == kHeadProcess && actor.node != kHeadNode) {
      validator.fail_at(actor.where, "actor '" + actor.name + "' has `process: head` but `node: " +
                             actor.node + "`; the head process is on the head node");
    }
    auto [placed, added] = process_node.emplace(actor.process, &actor);
    if (!added && placed->second->node != actor.node) {
      validator.fail_at(actor.where, "process '" + actor.process + "' would span nodes '" +
                             placed->second->node + "' and '" + actor.node +
                             "'; a process lives on one node: give these actors different processes");
    }
    if (!added && placed->second->gpu != actor.gpu) {
      validator.fail_at(actor.where, "process '" + actor.process + "' would be pinned to GPUs " +
                                         std::to_string(placed->second->gpu) + " and " + std::to_string(actor.gpu) +
                                         "; a process sees one GPU: give these actors different processes");
    }
  }
}

void read_actors(const YAML::Node& list, Validator& validator, Topology& topology) {
  if (!list.IsDefined() || !list.IsSequence() || list.size() == 0) {
    validator.fail(list, "`actors` must be a non-empty list, e.g. `actors: [{role: learner, process: own}]`");
    return;
  }
  std::map<std::string, uint32_t> next_index;
  std::set<std::string> names;
  struct FirstOfProcess {
    std::string name;
    ChildRestart restart;
    std::string where;
  };
  std::map<std::string, FirstOfProcess> process_restart;  // a process is restarted as a whole
  for (std::size_t position = 0; position < list.size(); ++position) {
    const YAML::Node entry = list[position];
    const std::string path = "actors[" + std::to_string(position) + "]";
    if (!entry.IsMap()) {
      validator.fail(entry, path + " must be a map, e.g. `- {role: evaluator, count: 2, process: own}`");
      continue;
    }
    validator.check_keys(entry, path,
                         {"role", "name", "count", "process", "node", "gpu", "mailbox", "restart", "params"});
    const YAML::Node role_node = entry["role"];
    if (!role_node.IsDefined()) {
      validator.fail(entry, path + " needs a `role`, e.g. `role: evaluator`");
      continue;
    }
    const auto role = validator.name_field(role_node, path + ".role", "role: evaluator");
    std::optional<std::string> name;
    if (entry["name"].IsDefined())
      name = validator.name_field(entry["name"], path + ".name", "name: evaluator.gpu");
    std::optional<long long> count;
    if (entry["count"].IsDefined())
      count = validator.integer_field(entry["count"], path + ".count", 1, "count: 2");
    if (count && entry["name"].IsDefined()) {
      validator.fail(entry["name"], path +
                                        " has both `name` and `count`: instances of a count are "
                                        "named role.0, role.1, ...; drop one of them");
    }
    std::string process = "own";
    if (entry["process"].IsDefined()) {
      if (auto given = validator.name_field(entry["process"], path + ".process", "process: own"))
        process = *given;
    }
    std::string node(kHeadNode);
    if (entry["node"].IsDefined()) {
      if (auto given = validator.name_field(entry["node"], path + ".node", "node: gpu1")) node = *given;
    }
    int gpu = -1;
    if (entry["gpu"].IsDefined()) {
      if (auto n = validator.integer_field(entry["gpu"], path + ".gpu", 0, "gpu: 0")) gpu = static_cast<int>(*n);
    }
    ChildRestart restart = ChildRestart::permanent;
    if (const YAML::Node value = entry["restart"]; value.IsDefined()) {
      const std::string text = value.IsScalar() ? value.Scalar() : "";
      if (text == "transient") {
        restart = ChildRestart::transient;
      } else if (text == "temporary") {
        restart = ChildRestart::temporary;
      } else if (text != "permanent") {
        validator.fail(value, path + ".restart must be permanent, transient or temporary, e.g. `restart: permanent`");
      }
    }
    std::size_t capacity = 1000;
    if (entry["mailbox"].IsDefined()) {
      if (auto n = validator.integer_field(entry["mailbox"], path + ".mailbox", 1, "mailbox: 1000")) {
        capacity = static_cast<std::size_t>(*n);
      }
    }
    YAML::Node params = entry["params"];
    if (params.IsDefined() && !validator.map_field(params, path + ".params", "params: {trials: 3}")) continue;
    if (!role) continue;

    const long long instances = count.value_or(1);
    for (long long k = 0; k < instances; ++k) {
      ActorEntry actor;
      actor.role = *role;
      actor.index = next_index[*role]++;
      actor.name = count ? *role + "." + std::to_string(actor.index) : name.value_or(*role);
      actor.process = process == "own" ? actor.name : process;
      actor.node = node;
      // `count` instances with a gpu get consecutive devices: one Evaluator process per GPU.
      actor.gpu = gpu < 0 ? -1 : gpu + static_cast<int>(k);
      actor.restart = restart;
      actor.mailbox_capacity = capacity;
      actor.params = params.IsDefined() ? params : YAML::Node();
      actor.where = validator.where(entry);
      if (actor.name == kHeadActor) {
        validator.fail(entry, path + ": the name 'head' is the built-in progress actor's; choose another");
        break;
      }
      if (!names.insert(actor.name).second) {
        validator.fail(entry, path + ": an actor named '" + actor.name +
                                  "' already exists; give this one "
                                  "a distinct `name`");
        break;
      }
      if (actor.process == kHeadProcess && actor.restart != ChildRestart::permanent) {
        validator.fail(entry["restart"], path + ": actors in process head live as long as `drk run`; drop `restart: " +
                                             std::string(child_restart_name(actor.restart)) +
                                             "` or give the actor a process of its own");
        break;
      }
      const auto [first, inserted] =
          process_restart.emplace(actor.process, FirstOfProcess{actor.name, actor.restart, actor.where});
      if (!inserted && first->second.restart != actor.restart) {
        validator.fail(entry, path + ": process '" + actor.process + "' would have actors '" + first->second.name +
                                  "' (restart: " + std::string(child_restart_name(first->second.restart)) +
                                  ", " + first->second.where + ") and '" + actor.name + "' (restart: " +
                                  std::string(child_restart_name(actor.restart)) +
                                  "); a process is restarted as a whole: give them the same `restart` "
                                  "or different processes");
        break;
      }
      topology.actors.push_back(std::move(actor));
    }
  }
}

Result<Topology> validate_document(const YAML::Node& document, const Locator& locator) {
  Validator validator(locator);
  Topology topology;
  topology.resolved = document;
  if (!document.IsMap()) {
    validator.fail(document,
                   "a topology is a map with `name`, `run_dir` and `actors`, e.g. `name: quickstart`");
    return validator.finish(std::move(topology));
  }
  validator.check_keys(document, "",
                       {"name", "run_dir", "supervision", "network", "nodes", "actors", "experiment"});
  if (!document["name"].IsDefined()) {
    validator.fail(document, "the topology needs a `name`, e.g. `name: quickstart`");
  } else if (auto name = validator.name_field(document["name"], "name", "name: quickstart")) {
    topology.name = *name;
  }
  if (const YAML::Node run_dir = document["run_dir"]; run_dir.IsDefined()) {
    if (!run_dir.IsScalar() || run_dir.Scalar().empty()) {
      validator.fail(run_dir, "run_dir must be a directory path, e.g. `run_dir: runs/quickstart`");
    } else {
      topology.run_dir = run_dir.Scalar();
    }
  } else {
    topology.run_dir = "runs/" + topology.name;
  }
  if (document["supervision"].IsDefined())
    read_supervision(document["supervision"], validator, topology.supervision);
  if (document["network"].IsDefined()) read_network(document["network"], validator, topology.network);
  if (document["nodes"].IsDefined()) read_nodes(document["nodes"], validator, topology);
  read_actors(document["actors"], validator, topology);
  check_placement(validator, topology);
  topology.experiment = YAML::Node(YAML::NodeType::Map);
  if (const YAML::Node experiment = document["experiment"]; experiment.IsDefined()) {
    if (validator.map_field(experiment, "experiment", "experiment: {steps: 8}") && experiment.IsMap()) {
      topology.experiment = experiment;
    }
    if (experiment.IsMap()) {
      read_experiment(experiment, "", validator);
      // Values of the right kinds only: the roles' checks read them as such.
      if (!validator.failed()) check_experiment(experiment, validator);
    }
  }
  return validator.finish(std::move(topology));
}

Result<Topology> validate(const YAML::Node& document, const Locator& locator) {
  try {
    return validate_document(document, locator);
  } catch (const YAML::Exception& error) {
    // A shape the checks above did not foresee: still an input error, not a crash.
    return make_error(Errc::invalid_argument,
                      locator.where(document) + ": the topology has an unexpected shape: " + error.msg);
  }
}

}  // namespace

std::vector<std::string> Topology::child_processes() const {
  std::vector<std::string> processes;
  for (const auto& actor : actors) {
    if (actor.process == kHeadProcess) continue;
    if (std::find(processes.begin(), processes.end(), actor.process) == processes.end()) {
      processes.push_back(actor.process);
    }
  }
  return processes;
}

std::vector<std::string> Topology::child_processes_on(std::string_view node) const {
  std::vector<std::string> processes;
  for (const std::string& process : child_processes()) {
    if (node_of(actors_of(process).front()->name) == node) processes.push_back(process);
  }
  return processes;
}

std::optional<std::string> Topology::node_of(std::string_view actor_name) const {
  if (actor_name == kHeadActor) return std::string(kHeadNode);
  if (const ActorEntry* actor = find(actor_name)) return actor->node;
  return std::nullopt;
}

std::vector<std::string> Topology::mailboxes_on(std::string_view node) const {
  std::vector<std::string> names;
  if (node == kHeadNode) names.emplace_back(kHeadActor);
  for (const ActorEntry& actor : actors) {
    if (actor.node == node) names.push_back(actor.name);
  }
  return names;
}

std::vector<const ActorEntry*> Topology::actors_of(std::string_view process) const {
  std::vector<const ActorEntry*> found;
  for (const auto& actor : actors) {
    if (actor.process == process) found.push_back(&actor);
  }
  return found;
}

const ActorEntry* Topology::find(std::string_view actor_name) const {
  for (const auto& actor : actors) {
    if (actor.name == actor_name) return &actor;
  }
  return nullptr;
}

std::optional<std::string> Topology::process_of(std::string_view actor_name) const {
  if (actor_name == kHeadActor) return std::string(kHeadProcess);
  if (const ActorEntry* actor = find(actor_name)) return actor->process;
  return std::nullopt;
}

std::vector<std::string> Topology::members(std::string_view role) const {
  std::vector<std::string> names;
  for (const auto& actor : actors) {
    if (actor.role == role) names.push_back(actor.name);
  }
  return names;
}

uint32_t Topology::experiment_steps() const {
  const auto steps = parse_integer(experiment["steps"]);
  return steps && *steps > 0 ? static_cast<uint32_t>(*steps) : 0;
}

Result<Topology> load_topology(const std::string& path, const std::vector<std::string>& overrides) {
  Locator locator;
  auto document = load_with_extends(path, locator, 0);
  if (!document) return document.error();
  for (const auto& text : overrides) {
    if (auto applied = apply_override(*document, text, locator); !applied) return applied.error();
  }
  return validate(*document, locator);
}

Result<Topology> parse_topology(const YAML::Node& document, const std::string& source) {
  Locator locator;
  locator.add_file(source, document);
  return validate(document, locator);
}

Status write_resolved_topology(const Topology& topology, const std::string& absolute_run_dir,
                               const std::string& path) {
  YAML::Node resolved = YAML::Clone(topology.resolved);
  resolved["run_dir"] = absolute_run_dir;
  YAML::Emitter emitter;
  emitter << resolved;
  std::ofstream out(path, std::ios::trunc);
  out << "# The topology of this run after `extends` and `--set` (written by drk run).\n"
      << emitter.c_str() << "\n";
  out.close();
  if (!out) {
    return make_error(Errc::io_error, "cannot write the resolved topology to '" + path +
                                          "': check that the run directory is writable");
  }
  return {};
}

}  // namespace drk::runtime
