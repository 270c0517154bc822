// Loading a topology document: a file and the files it `extends` (maps merged key by key, the
// extending file's keys win), then `--set KEY=VALUE` overrides applied in order.
//
// Thread-safety: free functions. Errors: not_found (a file cannot be read), parse_error (not
// YAML), invalid_argument (a bad `extends` or override), each naming the file or the override.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

#include "base/result.h"
#include "runtime/topology/topology_locator.h"

namespace drk::runtime {

// The document of `path` with every file it extends merged under it; each file is added to
// `locator`.
Result<YAML::Node> load_with_extends(const std::filesystem::path& path, Locator& locator, int depth = 0);
// Applies one `--set KEY=VALUE` to `document` (a dotted key; list entries named by `name`,
// `role` or position), and adds it to `locator`.
Status apply_override(YAML::Node document, const std::string& text, Locator& locator);

}  // namespace drk::runtime
