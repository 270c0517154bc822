#include "actors/generator/llm/openai_api.h"

#include <nlohmann/json.hpp>

#include "base/fnv1a.h"

namespace drk::generator {
namespace {

using Json = nlohmann::json;

std::string quoted_start(std::string_view body) {
  constexpr size_t kShown = 200;
  return "'" + std::string(body.substr(0, kShown)) + (body.size() > kShown ? "...'" : "'");
}

Error not_the_api(std::string_view what, std::string_view body) {
  return make_error(Errc::protocol_error,
                    "the server's answer " + std::string(what) + ": " + quoted_start(body) +
                        " (is generator.endpoint an OpenAI-compatible API, e.g. http://HOST:8000/v1?)");
}

// The text and log-probabilities of choices[0] of an answer or a streamed chunk, appended.
Status take_choice(OpenAiApi api, const Json& answer, Completion& completion, std::string_view body, bool delta) {
  if (answer.contains("error")) return not_the_api("is an error", body);
  const auto choices = answer.find("choices");
  if (choices == answer.end() || !choices->is_array()) return not_the_api("has no choices", body);
  if (choices->empty()) return {};  // a streamed chunk without a choice (usage only)
  const Json& choice = choices->front();
  const Json* text = nullptr;
  if (api == OpenAiApi::completions) {
    text = choice.contains("text") ? &choice["text"] : nullptr;
  } else {
    const char* holder = delta ? "delta" : "message";
    if (choice.contains(holder) && choice[holder].is_object() && choice[holder].contains("content"))
      text = &choice[holder]["content"];
  }
  if (text && text->is_string()) {
    completion.text += text->get<std::string>();
  } else if (!delta && !(text && text->is_null())) {
    return not_the_api(api == OpenAiApi::chat ? "has no choices[0].message.content" : "has no choices[0].text", body);
  }
  if (choice.contains("finish_reason") && choice["finish_reason"].is_string())
    completion.finish_reason = choice["finish_reason"].get<std::string>();
  const auto logprobs = choice.find("logprobs");
  if (logprobs == choice.end() || !logprobs->is_object()) return {};
  if (api == OpenAiApi::chat) {
    if (const auto content = logprobs->find("content"); content != logprobs->end() && content->is_array()) {
      for (const auto& token : *content) {
        if (token.contains("logprob") && token["logprob"].is_number())
          completion.token_logprobs.push_back(token["logprob"].get<float>());
      }
    }
  } else if (const auto tokens = logprobs->find("token_logprobs"); tokens != logprobs->end() && tokens->is_array()) {
    for (const auto& value : *tokens) {
      if (value.is_number()) completion.token_logprobs.push_back(value.get<float>());
    }
  }
  return {};
}

}  // namespace

std::optional<uint64_t> request_seed(const SamplingOptions& sampling, std::string_view request_id) {
  if (!sampling.seed) return std::nullopt;
  return (*sampling.seed + fnv1a_64(request_id)) & 0x7fffffffu;
}

std::string_view api_path(OpenAiApi api) { return api == OpenAiApi::chat ? "/chat/completions" : "/completions"; }

std::string completions_prompt(const Conversation& conversation) {
  std::string prompt;
  for (const auto& message : conversation) {
    std::string role = message.role;
    if (!role.empty()) role[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(role[0])));
    prompt += "### " + role + "\n" + message.content + "\n\n";
  }
  return prompt + "### Assistant\n";
}

std::string request_body(OpenAiApi api, const Conversation& conversation, const SamplingOptions& sampling) {
  Json body = {{"model", sampling.model},
               {"temperature", sampling.temperature},
               {"top_p", sampling.top_p},
               {"max_tokens", sampling.max_tokens},
               {"stream", sampling.stream}};
  if (sampling.seed) body["seed"] = *sampling.seed;
  if (api == OpenAiApi::chat) {
    Json messages = Json::array();
    for (const auto& message : conversation) messages.push_back({{"role", message.role}, {"content", message.content}});
    body["messages"] = std::move(messages);
    if (sampling.logprobs) body["logprobs"] = true;
  } else {
    body["prompt"] = completions_prompt(conversation);
    // The sampled token's log-probability comes with the top 1.
    if (sampling.logprobs) body["logprobs"] = 1;
  }
  // Invalid UTF-8 (a candidate's bytes quoted in feedback) is replaced, never refused.
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<Completion> parse_answer(OpenAiApi api, std::string_view body) {
  const Json answer = Json::parse(body, nullptr, false);
  if (answer.is_discarded() || !answer.is_object()) return not_the_api("is not a JSON object", body);
  Completion completion;
  if (auto taken = take_choice(api, answer, completion, body, false); !taken) return taken.error();
  return completion;
}

Status StreamedAnswer::add_event(std::string_view data) {
  if (data == "[DONE]") {
    done_ = true;
    return {};
  }
  const Json chunk = Json::parse(data, nullptr, false);
  if (chunk.is_discarded() || !chunk.is_object()) return not_the_api("streamed an event that is not JSON", data);
  return take_choice(api_, chunk, completion_, data, true);
}

}  // namespace drk::generator
