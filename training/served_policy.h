// ServedPolicy: a policy version that a trainer outside drkernel reports (experiment.learner.
// backend: external, docs/llm-generator.md): its version, and optionally the model name and the
// endpoint that serve it. The Learner sends it to the Generators and the Archivist as the
// `parameters` of a PolicyWeights (there are no weights of ours to send), as this JSON object:
// {"version": N, "model": "...", "endpoint": "..."} (model and endpoint absent when not reported).
//
// Thread-safety: values and pure functions. Errors: parse_served_policy() returns nullopt for
// bytes that are not such an object (the embedded policy's LibTorch weights, for one).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace drk::training {

struct ServedPolicy {
  uint32_t version = 0;
  std::string model;     // "": the experiment's generator.model
  std::string endpoint;  // "": the experiment's generator.endpoint

  bool operator==(const ServedPolicy&) const = default;
};

std::string served_policy_json(const ServedPolicy& policy);
std::optional<ServedPolicy> parse_served_policy(std::string_view bytes);

}  // namespace drk::training
