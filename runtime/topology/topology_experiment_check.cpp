#include "runtime/topology/topology_experiment_check.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "runtime/topology/experiment_keys.h"

namespace drk::runtime {
namespace {

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

}  // namespace

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


void check_experiment(const YAML::Node& experiment, Validator& validator) {
  auto views = experiment_views(experiment);
  if (!views) {
    const YAML::Node named = node_named_by(experiment, views.error().message);
    validator.fail(named.IsDefined() ? named : experiment, views.error().message);
    return;
  }
  std::set<std::string> reported;
  for (const ExperimentView& view : *views) {
    const YAML::Node& entry = view.entry;
    for (const auto& check : registered_experiment_checks()) {
      Status status;
      try {
        status = check(view.experiment);
      } catch (const YAML::Exception& error) {
        status = make_error(Errc::invalid_argument, "experiment has a value of an unexpected shape: " + error.msg);
      }
      if (status || !reported.insert(status.error().message).second) continue;
      // The view's own value where it sets the key, else the experiment's. (A YAML::Node is never
      // assigned to here: assignment writes into the node it refers to.)
      const std::string& message = status.error().message;
      const YAML::Node in_entry =
          entry.IsDefined() ? node_named_by(entry, message) : YAML::Node(YAML::NodeType::Undefined);
      const YAML::Node in_experiment = node_named_by(experiment, message);
      const YAML::Node& at = in_entry.IsDefined()        ? in_entry
                             : in_experiment.IsDefined() ? in_experiment
                             : entry.IsDefined()         ? entry
                                                         : experiment;
      const bool in_view = !view.label.empty() && (in_entry.IsDefined() || !in_experiment.IsDefined());
      validator.fail(at, (in_view ? view.label + ": " : std::string()) + message);
    }
  }
}

}  // namespace drk::runtime
