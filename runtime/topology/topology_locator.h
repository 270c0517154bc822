// Locator: finds the file and line a node of a topology document came from, across the chain
// of `extends` files and the `--set` overrides, so that every error names its place.
//
// Thread-safety: a plain value, filled while loading, then read. Ownership: holds the roots of
// the documents it was given (YAML nodes share their data).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace drk::runtime {

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

}  // namespace drk::runtime
