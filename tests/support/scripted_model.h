// What the tests' scripted language model says (tests/support/scripted_http_server.h): a chat
// completion in the OpenAI API's form, with the sampled tokens' log-probabilities when given, and
// the text of a file of the source tree it answers with (a candidate).
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

}  // namespace drk::testing
