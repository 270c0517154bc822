// What the tests' scripted language model says (tests/support/scripted_http_server.h): a chat
// completion in the OpenAI API's form, with the sampled tokens' log-probabilities when given, and
// the text of a file of the source tree it answers with (a candidate); and the topology of a
// `drk run` whose Generator asks it.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace drk::testing {

inline std::string chat_answer(const std::string& text, const std::vector<double>& token_logprobs = {}) {
  nlohmann::json choice = {{"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", "stop"}};
  if (!token_logprobs.empty()) {
    nlohmann::json content = nlohmann::json::array();
    for (const double logprob : token_logprobs) content.push_back({{"logprob", logprob}});
    choice["logprobs"] = {{"content", content}};
  }
  return nlohmann::json({{"choices", {choice}}}).dump();
}

// The whole text of `path` ("" when it cannot be read).
inline std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The six actors, one process each, on the CPU; the Generator asks `model` at `endpoint` (the
// scripted server's url()). `experiment`: more lines of the experiment, each "  key: value\n".
inline std::string llm_topology(const std::string& name, const std::string& run_dir, const std::string& endpoint,
                                const std::string& model, const std::string& experiment) {
  return "name: " + name + "\nrun_dir: " + run_dir +
         "\nactors:\n"
         "  - {role: archivist, process: own}\n"
         "  - {role: oracle, process: own}\n"
         "  - {role: verifier, process: own}\n"
         "  - {role: evaluator, count: 1, process: own}\n"
         "  - {role: generator, count: 1, process: own}\n"
         "  - {role: learner, process: own}\n"
         "experiment:\n"
         "  device: cpu\n  tasks: [relu]\n" +
         experiment +
         "  eval: {trials: 2, timing_budget_ms: 20, max_threads: 1}\n"
         "  generator: {backend: openai, endpoint: '" + endpoint + "', model: " + model +
         ", max_in_flight: 2, retry_base_ms: 10, request_timeout_s: 60}\n";
}

}  // namespace drk::testing
