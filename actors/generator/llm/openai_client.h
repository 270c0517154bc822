// OpenAiClient: asks a language model behind an OpenAI-compatible server (vLLM, SGLang,
// llama.cpp's server) for the next answer of a conversation, up to `max_in_flight` requests at
// once on threads of its own (asio's thread_pool); submit() never blocks. Each request is one
// HttpClient::post (runtime/http_client/http_client.h): its deadline, its retries of 429, 5xx
// and dropped connections; streamed answers (sampling.stream) are read event by event.
//
// Outcome: the Completion (text, token log-probabilities, finish reason), or an error value:
// the HTTP failure, a status other than 200 (with the start of the server's body), or an answer
// that is not the API's (openai_api.h). Never an exception.
// Ownership: the destructor waits for the requests in flight (each ends by its deadline) and
// drops those not started; their futures then hold a broken promise.
// Thread-safety: submit() and complete() from any thread.
#pragma once

#include <future>
#include <memory>
#include <string>

#include "actors/generator/llm/chat_message.h"
#include "actors/generator/llm/llm_settings.h"
#include "actors/generator/llm/openai_api.h"
#include "base/result.h"
#include "runtime/http_client/http_client.h"

namespace drk::generator {

class OpenAiClient {
 public:
  // `wait`: how retries wait (runtime/http_client/http_client.h); a sleep when empty.
  OpenAiClient(const LlmSettings& settings, std::string api_key, http_client::Wait wait = {});
  ~OpenAiClient();
  OpenAiClient(const OpenAiClient&) = delete;
  OpenAiClient& operator=(const OpenAiClient&) = delete;

  // `seed`: the sampling seed of this request (settings' seed when unset).
  std::shared_future<Result<Completion>> submit(Conversation conversation, std::optional<uint64_t> seed = std::nullopt);

  // The same, on the calling thread.
  Result<Completion> complete(const Conversation& conversation, std::optional<uint64_t> seed = std::nullopt);

 private:
  struct Pool;

  LlmSettings settings_;
  std::string api_key_;
  http_client::HttpClient http_;
  std::unique_ptr<Pool> pool_;
};

}  // namespace drk::generator
