// LlmSettings: experiment.generator.* of a Generator whose backend is a language model behind an
// OpenAI-compatible server (generator.backend: openai; the default, policy, is the embedded
// policy). The keys (llm_experiment_keys(), registered by the Generator's role):
//   endpoint            http(s)://HOST[:PORT]/PATH, the API's base, e.g. http://127.0.0.1:8000/v1
//   model               the served model's name
//   api_key_env         the environment variable that holds the API key, or
//   api_key_file        a file that holds it (one of them, or neither for a server without keys)
//   api                 chat (default) | completions
//   temperature, top_p, max_tokens, seed      sampling (seed: per trajectory, seed + sample index)
//   stream              server-sent events (default false)
//   logprobs            ask for the sampled tokens' log-probabilities (default true)
//   max_in_flight       requests at once from one Generator (default 4)
//   request_timeout_s   the deadline of one answer, retries included (default 300)
//   retry_attempts, retry_base_ms, retry_max_ms   runtime/http_client/retry_policy.h
//   ca_file             https: the certificates to trust (default: the system's)
//   prompts_dir         the prompt templates (default configs/prompts of the source tree)
//   kernelbench_backend what a KernelBench problem's ModelNew is to use: cuda | triton | cpp |
//                       pytorch (default cuda with experiment.device cuda, else cpp)
// llm_settings() reads them; llm_experiment_check() is the load-time check (endpoint and model
// present, the endpoint an address, not both key sources); load_api_key() reads the key at start.
// Errors: Errc::invalid_argument naming the key and the fix.
// Thread-safety: values and pure functions (load_api_key reads the environment or a file).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "actors/generator/llm/openai_api.h"
#include "base/result.h"
#include "runtime/http_client/http_url.h"
#include "runtime/http_client/retry_policy.h"
#include "runtime/topology/experiment_keys.h"

namespace drk::generator {

struct LlmSettings {
  http_client::HttpUrl endpoint;
  OpenAiApi api = OpenAiApi::chat;
  SamplingOptions sampling;
  std::string api_key_env;
  std::string api_key_file;
  uint32_t max_in_flight = 4;
  std::chrono::milliseconds request_timeout{300000};
  http_client::RetryPolicy retry;
  std::string ca_file;
  std::string prompts_dir;
  std::string kernelbench_backend;
};

// Whether experiment.generator.backend asks for a language model.
bool uses_llm_backend(const YAML::Node& experiment);

Result<LlmSettings> llm_settings(const YAML::Node& experiment);

Status llm_experiment_check(const YAML::Node& experiment);

std::vector<runtime::ExperimentKey> llm_experiment_keys();

// The API key (empty when neither source is set); an unset variable or unreadable file is an
// error naming it.
Result<std::string> load_api_key(const LlmSettings& settings);

}  // namespace drk::generator
