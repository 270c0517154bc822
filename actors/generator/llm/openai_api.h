// OpenAI's HTTP API as vLLM, SGLang and llama.cpp's server speak it: the request bodies of
// POST /chat/completions and /completions, and their answers read into a Completion, whole
// (a JSON body) or streamed (server-sent events: one JSON chunk per event, then "[DONE]").
// The answer's token log-probabilities are read where the API puts them: chat's
// choices[0].logprobs.content[].logprob, completions' choices[0].logprobs.token_logprobs[].
// Errors: Errc::protocol_error for a body that is not the API's (not JSON, no choices), naming
// what is missing and quoting the start of the body; an {"error": ...} body is quoted.
// Thread-safety: pure functions; StreamedAnswer is one thread's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/generator/llm/chat_message.h"
#include "base/result.h"

namespace drk::generator {

enum class OpenAiApi { chat, completions };

struct SamplingOptions {
  std::string model;
  double temperature = 1.0;
  double top_p = 1.0;
  uint32_t max_tokens = 4096;
  std::optional<uint64_t> seed;
  bool stream = false;
  bool logprobs = true;
};

// The seed of one request: `sampling.seed` (none: none) plus a hash of the request's id, so that
// each candidate samples differently yet reproducibly. 31 bits: llama.cpp's server reads a 32-bit
// seed, vLLM's and OpenAI's a signed 64-bit one.
std::optional<uint64_t> request_seed(const SamplingOptions& sampling, std::string_view request_id);

struct Completion {
  std::string text;
  std::vector<float> token_logprobs;  // one per sampled token, where the server gave them
  std::string finish_reason;          // "stop", "length", ...
};

// The path below the endpoint: "/chat/completions" or "/completions".
std::string_view api_path(OpenAiApi api);

// The JSON request body. For completions, the conversation becomes one prompt
// (completions_prompt()).
std::string request_body(OpenAiApi api, const Conversation& conversation, const SamplingOptions& sampling);

// A conversation as the plain prompt of the completions API: each message under a "### Role"
// heading, ending with "### Assistant" for the model to continue.
std::string completions_prompt(const Conversation& conversation);

// A whole (non-streamed) answer.
Result<Completion> parse_answer(OpenAiApi api, std::string_view body);

// A streamed answer, one server-sent event's data at a time.
class StreamedAnswer {
 public:
  explicit StreamedAnswer(OpenAiApi api) : api_(api) {}
  Status add_event(std::string_view data);
  bool done() const { return done_; }  // "[DONE]" arrived
  Completion& completion() { return completion_; }

 private:
  OpenAiApi api_;
  bool done_ = false;
  Completion completion_;
};

}  // namespace drk::generator
