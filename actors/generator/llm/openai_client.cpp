#include "actors/generator/llm/openai_client.h"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "runtime/http_client/sse_decoder.h"

namespace drk::generator {

struct OpenAiClient::Pool {
  explicit Pool(uint32_t threads) : threads(threads) {}
  boost::asio::thread_pool threads;
};

OpenAiClient::OpenAiClient(const LlmSettings& settings, std::string api_key, http_client::Wait wait)
    : settings_(settings),
      api_key_(std::move(api_key)),
      http_(settings.endpoint, settings.retry, settings.ca_file, std::move(wait),
            settings.sampling.seed.value_or(1)),
      pool_(std::make_unique<Pool>(settings.max_in_flight)) {}

OpenAiClient::~OpenAiClient() {
  pool_->threads.stop();
  pool_->threads.join();
}

std::shared_future<Result<Completion>> OpenAiClient::submit(Conversation conversation, std::optional<uint64_t> seed) {
  auto promise = std::make_shared<std::promise<Result<Completion>>>();
  std::shared_future<Result<Completion>> future = promise->get_future().share();
  boost::asio::post(pool_->threads, [this, promise, conversation = std::move(conversation), seed] {
    promise->set_value(complete(conversation, seed));
  });
  return future;
}

Result<Completion> OpenAiClient::complete(const Conversation& conversation, std::optional<uint64_t> seed) {
  SamplingOptions sampling = settings_.sampling;
  if (seed) sampling.seed = seed;
  http_client::HttpRequest request;
  request.target = settings_.endpoint.path;
  while (!request.target.empty() && request.target.back() == '/') request.target.pop_back();
  request.target += api_path(settings_.api);
  request.body = request_body(settings_.api, conversation, sampling);
  if (!api_key_.empty()) request.headers.push_back({"Authorization", "Bearer " + api_key_});
  if (sampling.stream) request.headers.push_back({"Accept", "text/event-stream"});

  http_client::PostOptions options;
  options.deadline = std::chrono::steady_clock::now() + settings_.request_timeout;
  // A streamed answer is read as it comes; a new attempt starts it over.
  uint32_t stream_attempt = 0;
  http_client::SseDecoder decoder;
  StreamedAnswer streamed(settings_.api);
  Status stream_status;
  if (sampling.stream) {
    options.on_body = [&](std::string_view piece, uint32_t attempt) {
      if (attempt != stream_attempt) {
        stream_attempt = attempt;
        decoder = http_client::SseDecoder();
        streamed = StreamedAnswer(settings_.api);
        stream_status = Status();
      }
      for (const auto& event : decoder.feed(piece)) {
        if (stream_status) stream_status = streamed.add_event(event);
      }
    };
  }
  auto response = http_.post(request, options);
  const std::string where = "model " + sampling.model + " at " + settings_.endpoint.base();
  if (!response) return make_error(response.error().code, where + ": " + response.error().message);
  if (response->status != 200) {
    constexpr size_t kShown = 300;
    return make_error(response->status == 429 || response->status / 100 == 5 ? Errc::busy : Errc::invalid_argument,
                      where + " answered HTTP " + std::to_string(response->status) + ": " +
                          response->body.substr(0, kShown));
  }
  if (!sampling.stream) {
    auto answer = parse_answer(settings_.api, response->body);
    if (!answer) return make_error(answer.error().code, where + ": " + answer.error().message);
    return answer;
  }
  if (const std::string last = decoder.finish(); !last.empty() && stream_status) stream_status = streamed.add_event(last);
  if (!stream_status) return make_error(stream_status.error().code, where + ": " + stream_status.error().message);
  if (!streamed.done() && streamed.completion().finish_reason.empty())
    return make_error(Errc::protocol_error, where + ": the streamed answer ended without [DONE] or a finish_reason");
  return std::move(streamed.completion());
}

}  // namespace drk::generator
