#include "runtime/topology/topology_loading.h"

#include <vector>

namespace drk::runtime {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxExtendsDepth = 8;

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

}  // namespace

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

}  // namespace drk::runtime
