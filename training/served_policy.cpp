#include "training/served_policy.h"

#include <nlohmann/json.hpp>

namespace drk::training {

std::string served_policy_json(const ServedPolicy& policy) {
  nlohmann::json object = {{"version", policy.version}};
  if (!policy.model.empty()) object["model"] = policy.model;
  if (!policy.endpoint.empty()) object["endpoint"] = policy.endpoint;
  return object.dump();
}

std::optional<ServedPolicy> parse_served_policy(std::string_view bytes) {
  const auto object = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object() || !object.contains("version") || !object["version"].is_number_unsigned())
    return std::nullopt;
  ServedPolicy policy;
  policy.version = object["version"].get<uint32_t>();
  if (object.contains("model") && object["model"].is_string()) policy.model = object["model"].get<std::string>();
  if (object.contains("endpoint") && object["endpoint"].is_string())
    policy.endpoint = object["endpoint"].get<std::string>();
  return policy;
}

}  // namespace drk::training
