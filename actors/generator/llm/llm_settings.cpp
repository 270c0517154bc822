#include "actors/generator/llm/llm_settings.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "actors/generator/llm/prompt_templates.h"
#include "judging/python_static_check.h"

namespace drk::generator {
namespace {

// experiment.generator.NAME into `out` when present (`out` keeps its default otherwise); a value
// of the wrong kind is an error naming the key (load_topology checks kinds first; this guards a
// direct caller).
template <typename T>
Status read_into(const YAML::Node& generator, const std::string& name, T& out) {
  if (!generator || !generator[name]) return {};
  try {
    out = generator[name].as<T>();
    return {};
  } catch (const YAML::Exception&) {
    return make_error(Errc::invalid_argument, "experiment.generator." + name + " has a value of the wrong kind");
  }
}

}  // namespace

bool uses_llm_backend(const YAML::Node& experiment) {
  const YAML::Node generator = experiment["generator"];
  return generator && generator["backend"] && generator["backend"].as<std::string>() == "openai";
}

Result<LlmSettings> llm_settings(const YAML::Node& experiment) {
  const YAML::Node generator = experiment["generator"];
  LlmSettings settings;
  settings.prompts_dir = default_prompts_directory();
  const bool cuda = experiment["device"] && experiment["device"].as<std::string>() == "cuda";
  settings.kernelbench_backend = cuda ? "cuda" : "cpp";
  std::string endpoint;
  std::string api = "chat";
  double timeout_s = 300.0;
  uint32_t retry_base_ms = 500;
  uint32_t retry_max_ms = 30000;
  uint64_t seed = 0;
  for (const Status& read :
       {read_into(generator, "endpoint", endpoint), read_into(generator, "model", settings.sampling.model),
        read_into(generator, "api", api), read_into(generator, "temperature", settings.sampling.temperature),
        read_into(generator, "top_p", settings.sampling.top_p),
        read_into(generator, "max_tokens", settings.sampling.max_tokens),
        read_into(generator, "seed", seed), read_into(generator, "stream", settings.sampling.stream),
        read_into(generator, "logprobs", settings.sampling.logprobs),
        read_into(generator, "max_in_flight", settings.max_in_flight),
        read_into(generator, "request_timeout_s", timeout_s),
        read_into(generator, "retry_attempts", settings.retry.attempts),
        read_into(generator, "retry_base_ms", retry_base_ms), read_into(generator, "retry_max_ms", retry_max_ms),
        read_into(generator, "api_key_env", settings.api_key_env),
        read_into(generator, "api_key_file", settings.api_key_file), read_into(generator, "ca_file", settings.ca_file),
        read_into(generator, "prompts_dir", settings.prompts_dir),
        read_into(generator, "kernelbench_backend", settings.kernelbench_backend)}) {
    if (!read) return read.error();
  }
  if (endpoint.empty() || settings.sampling.model.empty())
    return make_error(Errc::invalid_argument,
                      "experiment.generator.endpoint and experiment.generator.model are needed with "
                      "generator.backend: openai (e.g. endpoint: http://127.0.0.1:8000/v1, model: Qwen/Qwen3-8B)");
  auto url = http_client::parse_http_url(endpoint);
  if (!url) return make_error(Errc::invalid_argument, "experiment.generator.endpoint: " + url.error().message);
  settings.endpoint = std::move(*url);
  if (api != "chat" && api != "completions")
    return make_error(Errc::invalid_argument, "experiment.generator.api must be chat or completions, not '" + api + "'");
  settings.api = api == "chat" ? OpenAiApi::chat : OpenAiApi::completions;
  if (generator && generator["seed"]) settings.sampling.seed = seed;
  settings.max_in_flight = std::max<uint32_t>(settings.max_in_flight, 1);
  if (timeout_s <= 0)
    return make_error(Errc::invalid_argument, "experiment.generator.request_timeout_s must be above 0 (seconds)");
  settings.request_timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000.0));
  settings.retry.attempts = std::max<uint32_t>(settings.retry.attempts, 1);
  settings.retry.base_delay = std::chrono::milliseconds(retry_base_ms);
  settings.retry.max_delay = std::chrono::milliseconds(retry_max_ms);
  if (!settings.api_key_env.empty() && !settings.api_key_file.empty())
    return make_error(Errc::invalid_argument,
                      "experiment.generator.api_key_env and api_key_file are both set: give the key one way");
  if (auto parsed = judging::parse_backend(settings.kernelbench_backend); !parsed)
    return make_error(Errc::invalid_argument, "experiment.generator.kernelbench_backend: " + parsed.error().message);
  return settings;
}

Status llm_experiment_check(const YAML::Node& experiment) {
  if (!uses_llm_backend(experiment)) return {};
  auto settings = llm_settings(experiment);
  if (!settings) return settings.error();
  if (auto templates = load_prompt_templates(settings->prompts_dir); !templates)
    return make_error(Errc::invalid_argument, "experiment.generator.prompts_dir: " + templates.error().message);
  return {};
}

std::vector<runtime::ExperimentKey> llm_experiment_keys() {
  using runtime::ValueKind;
  return {{"generator.backend", ValueKind::text, "openai", {"policy", "openai"}},
          {"generator.endpoint", ValueKind::text, "http://127.0.0.1:8000/v1"},
          {"generator.model", ValueKind::text, "Qwen/Qwen3-8B"},
          {"generator.api_key_env", ValueKind::text, "OPENAI_API_KEY"},
          {"generator.api_key_file", ValueKind::text, "/run/secrets/llm-key"},
          {"generator.api", ValueKind::text, "chat", {"chat", "completions"}},
          {"generator.temperature", ValueKind::number, "1.0", {}, 0.0},
          {"generator.top_p", ValueKind::number, "1.0", {}, 0.0},
          {"generator.max_tokens", ValueKind::integer, "4096", {}, 1},
          {"generator.seed", ValueKind::integer, "1"},
          {"generator.stream", ValueKind::flag, "false"},
          {"generator.logprobs", ValueKind::flag, "true"},
          {"generator.max_in_flight", ValueKind::integer, "4", {}, 1},
          {"generator.request_timeout_s", ValueKind::number, "300"},
          {"generator.retry_attempts", ValueKind::integer, "4", {}, 1},
          {"generator.retry_base_ms", ValueKind::integer, "500"},
          {"generator.retry_max_ms", ValueKind::integer, "30000"},
          {"generator.ca_file", ValueKind::text, "/etc/ssl/certs/my-ca.pem"},
          {"generator.prompts_dir", ValueKind::text, "configs/prompts"},
          {"generator.kernelbench_backend", ValueKind::text, "cuda", {"cuda", "triton", "cpp", "pytorch"}}};
}

Result<std::string> load_api_key(const LlmSettings& settings) {
  std::string key;
  if (!settings.api_key_env.empty()) {
    const char* value = std::getenv(settings.api_key_env.c_str());
    if (!value || !*value)
      return make_error(Errc::invalid_argument, "experiment.generator.api_key_env names " + settings.api_key_env +
                                                    ", which is not set in the environment of drk run");
    key = value;
  } else if (!settings.api_key_file.empty()) {
    std::ifstream in(settings.api_key_file, std::ios::binary);
    if (!in)
      return make_error(Errc::invalid_argument,
                        "experiment.generator.api_key_file " + settings.api_key_file + " cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    key = text.str();
  }
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ')) key.pop_back();
  return key;
}

}  // namespace drk::generator
