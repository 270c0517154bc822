// The OpenAI-compatible client against a scripted server on loopback: real HTTP and JSON.
#include "actors/generator/llm/openai_client.h"

#include <nlohmann/json.hpp>

#include <vector>

#include "actors/generator/llm/code_block.h"
#include "tests/doctest_drk.h"
#include "tests/support/scripted_http_server.h"

namespace {

using namespace drk::generator;
using drk::Errc;
using drk::testing::ScriptedHttpServer;
using drk::testing::ScriptedReply;
using namespace std::chrono_literals;

const std::string kAnswerText = "Tiled:\n```cpp\nint drk_kernel();\n```\n";

std::string chat_answer(const std::string& text) {
  nlohmann::json answer = {
      {"id", "chatcmpl-1"},
      {"object", "chat.completion"},
      {"choices",
       {{{"index", 0},
         {"message", {{"role", "assistant"}, {"content", text}}},
         {"finish_reason", "stop"},
         {"logprobs", {{"content", {{{"token", "T"}, {"logprob", -0.5}}, {{"token", "iled"}, {"logprob", -0.25}}}}}}}}}};
  return answer.dump();
}

std::string chat_chunk(const std::string& text, double logprob, const char* finish = nullptr) {
  nlohmann::json choice = {{"index", 0},
                           {"delta", {{"content", text}}},
                           {"logprobs", {{"content", {{{"token", text}, {"logprob", logprob}}}}}}};
  choice["finish_reason"] = finish ? nlohmann::json(finish) : nlohmann::json(nullptr);
  return "data: " + nlohmann::json({{"object", "chat.completion.chunk"}, {"choices", {choice}}}).dump() + "\n\n";
}

LlmSettings settings_for(const ScriptedHttpServer& server, bool stream = false) {
  YAML::Node experiment = YAML::Load("generator: {backend: openai, model: scripted, seed: 7, max_tokens: 512}");
  experiment["generator"]["endpoint"] = server.url("/v1");
  experiment["generator"]["stream"] = stream;
  auto settings = llm_settings(experiment);
  DRK_REQUIRE_MESSAGE(settings.ok(), settings.error().describe());
  settings->request_timeout = 30s;
  return *settings;
}

// Retries wait for nothing here: the waits are recorded.
struct Client {
  Client(const LlmSettings& settings, std::string key = "")
      : client(settings, std::move(key), [this](std::chrono::milliseconds delay) { waits.push_back(delay); }) {}
  std::vector<std::chrono::milliseconds> waits;
  OpenAiClient client;
};

const Conversation kConversation = {{"system", "You write kernels."}, {"user", "Write relu."}};

}  // namespace

DRK_TEST_CASE("chat, not streamed: the answer's text and token log-probabilities; the request is OpenAI's") {
  ScriptedHttpServer server({ScriptedReply::answer(200, chat_answer(kAnswerText))});
  Client client(settings_for(server), "sk-test");
  auto answer = client.client.submit(kConversation).get();
  DRK_REQUIRE_MESSAGE(answer.ok(), answer.error().describe());
  DRK_CHECK(answer->text == kAnswerText);
  DRK_CHECK(answer->token_logprobs == std::vector<float>{-0.5f, -0.25f});
  DRK_CHECK(answer->finish_reason == "stop");
  const auto requests = server.requests();
  DRK_REQUIRE(requests.size() == 1);
  DRK_CHECK(requests[0].target == "/v1/chat/completions");
  DRK_CHECK(requests[0].headers.at("Authorization") == "Bearer sk-test");
  const auto body = nlohmann::json::parse(requests[0].body);
  DRK_CHECK(body["model"] == "scripted");
  DRK_CHECK(body["max_tokens"] == 512);
  DRK_CHECK(body["seed"] == 7);
  DRK_CHECK(body["logprobs"] == true);
  DRK_CHECK(body["stream"] == false);
  DRK_CHECK(body["messages"][1]["content"] == "Write relu.");
}

DRK_TEST_CASE("chat, streamed: the events' pieces and log-probabilities are joined") {
  ScriptedHttpServer server({ScriptedReply::stream(
      {chat_chunk("Tiled:\n```cpp\n", -0.1), chat_chunk("int drk_kernel();\n", -0.2),
       chat_chunk("```\n", -0.3, "stop") + "data: [DONE]\n\n"})});
  Client client(settings_for(server, true));
  auto answer = client.client.complete(kConversation);
  DRK_REQUIRE_MESSAGE(answer.ok(), answer.error().describe());
  DRK_CHECK(answer->text == kAnswerText);
  DRK_CHECK(answer->token_logprobs == std::vector<float>{-0.1f, -0.2f, -0.3f});
  DRK_CHECK(nlohmann::json::parse(server.requests()[0].body)["stream"] == true);
}

DRK_TEST_CASE("completions: the conversation becomes one prompt; token_logprobs are read") {
  ScriptedHttpServer server({ScriptedReply::answer(
      200, R"({"choices":[{"text":"```cpp\nx\n```","finish_reason":"stop","logprobs":{"token_logprobs":[null,-1.5]}}]})")});
  LlmSettings settings = settings_for(server);
  settings.api = OpenAiApi::completions;
  Client client(settings);
  auto answer = client.client.complete(kConversation);
  DRK_REQUIRE_MESSAGE(answer.ok(), answer.error().describe());
  DRK_CHECK(answer->token_logprobs == std::vector<float>{-1.5f});
  const auto requests = server.requests();
  DRK_CHECK(requests[0].target == "/v1/completions");
  const std::string prompt = nlohmann::json::parse(requests[0].body)["prompt"];
  DRK_CHECK(prompt.find("### User\nWrite relu.") != std::string::npos);
  DRK_CHECK(prompt.substr(prompt.size() - 14) == "### Assistant\n");
}

DRK_TEST_CASE("a slow answer past the deadline is a timeout, not a hang") {
  ScriptedHttpServer server({ScriptedReply::hold()});
  LlmSettings settings = settings_for(server);
  settings.request_timeout = 300ms;
  Client client(settings);
  auto answer = client.client.complete(kConversation);
  DRK_REQUIRE_FALSE(answer.ok());
  DRK_CHECK(answer.error().code == Errc::timeout);
}

DRK_TEST_CASE("a 429 with Retry-After is waited out, then answered") {
  ScriptedHttpServer server({ScriptedReply::answer(429, R"({"error":"slow down"})", {{"Retry-After", "3"}}),
                             ScriptedReply::answer(200, chat_answer(kAnswerText))});
  Client client(settings_for(server));
  auto answer = client.client.complete(kConversation);
  DRK_REQUIRE_MESSAGE(answer.ok(), answer.error().describe());
  DRK_CHECK(client.waits == std::vector<std::chrono::milliseconds>{3000ms});
}

DRK_TEST_CASE("a 500 and then success") {
  ScriptedHttpServer server({ScriptedReply::answer(500, "internal"), ScriptedReply::answer(200, chat_answer(kAnswerText))});
  Client client(settings_for(server));
  auto answer = client.client.complete(kConversation);
  DRK_REQUIRE_MESSAGE(answer.ok(), answer.error().describe());
  DRK_CHECK(client.waits.size() == 1);
  DRK_CHECK(server.requests().size() == 2);
}

DRK_TEST_CASE("a stream dropped mid-answer is asked again and read from its start") {
  ScriptedHttpServer server(
      {ScriptedReply::drop(chat_chunk("Half an ans", -9.0)),
       ScriptedReply::stream({chat_chunk(kAnswerText, -0.5, "stop"), "data: [DONE]\n\n"})});
  Client client(settings_for(server, true));
  auto answer = client.client.complete(kConversation);
  DRK_REQUIRE_MESSAGE(answer.ok(), answer.error().describe());
  DRK_CHECK(answer->text == kAnswerText);
  DRK_CHECK(answer->token_logprobs == std::vector<float>{-0.5f});
}

DRK_TEST_CASE("a malformed body is a protocol error quoting it, and a 401 quotes the server") {
  ScriptedHttpServer server({ScriptedReply::answer(200, "<html>proxy error</html>"),
                             ScriptedReply::answer(200, R"({"choices":[{"message":{}}]})"),
                             ScriptedReply::answer(401, R"({"error":{"message":"invalid api key"}})")});
  Client client(settings_for(server));
  auto html = client.client.complete(kConversation);
  DRK_REQUIRE_FALSE(html.ok());
  DRK_CHECK(html.error().code == Errc::protocol_error);
  DRK_CHECK(html.error().message.find("<html>proxy error</html>") != std::string::npos);
  auto no_content = client.client.complete(kConversation);
  DRK_REQUIRE_FALSE(no_content.ok());
  DRK_CHECK(no_content.error().message.find("choices[0].message.content") != std::string::npos);
  auto unauthorised = client.client.complete(kConversation);
  DRK_REQUIRE_FALSE(unauthorised.ok());
  DRK_CHECK(unauthorised.error().message.find("HTTP 401") != std::string::npos);
  DRK_CHECK(unauthorised.error().message.find("invalid api key") != std::string::npos);
}

DRK_TEST_CASE("an answer without a code block comes back whole; the candidate's absence is its reason") {
  ScriptedHttpServer server({ScriptedReply::answer(200, chat_answer("I cannot do this task."))});
  Client client(settings_for(server));
  auto answer = client.client.complete(kConversation);
  DRK_REQUIRE(answer.ok());
  const auto block = last_code_block(answer->text);
  DRK_REQUIRE_FALSE(block.ok());
  DRK_CHECK(block.error().message.find("no fenced code block") != std::string::npos);
}

DRK_TEST_CASE("settings: a missing endpoint, a bad address and two key sources are refused naming the key") {
  auto none = llm_settings(YAML::Load("generator: {backend: openai, model: m}"));
  DRK_REQUIRE_FALSE(none.ok());
  DRK_CHECK(none.error().message.find("experiment.generator.endpoint") != std::string::npos);
  auto bad = llm_settings(YAML::Load("generator: {backend: openai, model: m, endpoint: 'localhost:8000'}"));
  DRK_REQUIRE_FALSE(bad.ok());
  DRK_CHECK(bad.error().message.find("http://HOST:PORT/PATH") != std::string::npos);
  auto both = llm_settings(
      YAML::Load("generator: {backend: openai, model: m, endpoint: 'http://h/v1', api_key_env: K, api_key_file: f}"));
  DRK_REQUIRE_FALSE(both.ok());
  DRK_CHECK(both.error().message.find("api_key_file") != std::string::npos);
}
