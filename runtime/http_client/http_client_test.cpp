// The HTTP client against a scripted server on loopback: real connections, real HTTP.
#include "runtime/http_client/http_client.h"

#include <chrono>
#include <mutex>
#include <random>
#include <vector>

#include "runtime/http_client/sse_decoder.h"
#include "tests/doctest_drk.h"
#include "tests/support/scripted_http_server.h"

namespace {

using drk::Errc;
using drk::http_client::HttpClient;
using drk::http_client::HttpRequest;
using drk::http_client::parse_http_url;
using drk::http_client::PostOptions;
using drk::http_client::RetryPolicy;
using drk::testing::ScriptedHttpServer;
using drk::testing::ScriptedReply;
using namespace std::chrono_literals;

// A client whose waits between attempts are recorded, not slept.
struct RecordingClient {
  explicit RecordingClient(const ScriptedHttpServer& server, uint32_t attempts = 4)
      : client(*parse_http_url(server.url()), RetryPolicy{attempts, 100ms, 1000ms}, {},
               [this](std::chrono::milliseconds delay) { waits.push_back(delay); }) {}
  HttpClient client;
  std::vector<std::chrono::milliseconds> waits;
};

PostOptions within(std::chrono::milliseconds budget) {
  return PostOptions{std::chrono::steady_clock::now() + budget, {}};
}

HttpRequest chat_request() { return HttpRequest{"/v1/chat/completions", "{\"model\":\"m\"}", "application/json", {}}; }

}  // namespace

DRK_TEST_CASE("an answer comes back with its status and body, and the request carries its headers") {
  ScriptedHttpServer server({ScriptedReply::answer(200, "{\"ok\":true}")});
  RecordingClient recording(server);
  HttpRequest request = chat_request();
  request.headers.push_back({"Authorization", "Bearer secret"});
  auto response = recording.client.post(request, within(10s));
  DRK_REQUIRE(response.ok());
  DRK_CHECK(response->status == 200);
  DRK_CHECK(response->body == "{\"ok\":true}");
  const auto requests = server.requests();
  DRK_REQUIRE(requests.size() == 1);
  DRK_CHECK(requests[0].target == "/v1/chat/completions");
  DRK_CHECK(requests[0].body == "{\"model\":\"m\"}");
  DRK_CHECK(requests[0].headers.at("Authorization") == "Bearer secret");
  DRK_CHECK(recording.waits.empty());
}

DRK_TEST_CASE("a streamed body reaches the observer in pieces and decodes into its events") {
  ScriptedHttpServer server({ScriptedReply::stream({"data: {\"a\":1}\n\n", "data: {\"a\"", ":2}\n\ndata: [DONE]\n\n"})});
  RecordingClient recording(server);
  drk::http_client::SseDecoder decoder;
  std::vector<std::string> events;
  PostOptions options = within(10s);
  options.on_body = [&](std::string_view piece, uint32_t) {
    for (auto& event : decoder.feed(piece)) events.push_back(std::move(event));
  };
  auto response = recording.client.post(chat_request(), options);
  DRK_REQUIRE(response.ok());
  DRK_CHECK(events == std::vector<std::string>{"{\"a\":1}", "{\"a\":2}", "[DONE]"});
}

DRK_TEST_CASE("a server that does not answer by the deadline ends the request with a timeout") {
  ScriptedHttpServer server({ScriptedReply::hold()});
  RecordingClient recording(server);
  auto response = recording.client.post(chat_request(), within(300ms));
  DRK_REQUIRE_FALSE(response.ok());
  DRK_CHECK(response.error().code == Errc::timeout);
  DRK_CHECK(server.requests().size() == 1);
}

DRK_TEST_CASE("a 429 is retried after its Retry-After, then the answer comes back") {
  ScriptedHttpServer server({ScriptedReply::answer(429, "{}", {{"Retry-After", "2"}}),
                             ScriptedReply::answer(200, "{\"ok\":true}")});
  RecordingClient recording(server);
  auto response = recording.client.post(chat_request(), within(60s));
  DRK_REQUIRE(response.ok());
  DRK_CHECK(response->status == 200);
  DRK_CHECK(recording.waits == std::vector<std::chrono::milliseconds>{2000ms});
  DRK_CHECK(server.requests().size() == 2);
}

DRK_TEST_CASE("a 500 is retried with a jittered backoff, then the answer comes back") {
  ScriptedHttpServer server({ScriptedReply::answer(500, "oops"), ScriptedReply::answer(503, "busy"),
                             ScriptedReply::answer(200, "{\"ok\":true}")});
  RecordingClient recording(server);
  auto response = recording.client.post(chat_request(), within(60s));
  DRK_REQUIRE(response.ok());
  DRK_CHECK(response->status == 200);
  DRK_REQUIRE(recording.waits.size() == 2);
  // base 100 ms doubled per attempt, waited as half plus up to half again
  DRK_CHECK(recording.waits[0] >= 50ms);
  DRK_CHECK(recording.waits[0] <= 100ms);
  DRK_CHECK(recording.waits[1] >= 100ms);
  DRK_CHECK(recording.waits[1] <= 200ms);
}

DRK_TEST_CASE("a connection dropped mid-answer is retried; a streamed retry restarts the pieces") {
  ScriptedHttpServer server({ScriptedReply::drop("{\"choices\":[{\"mes"), ScriptedReply::answer(200, "{\"ok\":true}")});
  RecordingClient recording(server);
  std::vector<uint32_t> attempts;
  PostOptions options = within(60s);
  options.on_body = [&](std::string_view, uint32_t attempt) { attempts.push_back(attempt); };
  auto response = recording.client.post(chat_request(), options);
  DRK_REQUIRE(response.ok());
  DRK_CHECK(response->body == "{\"ok\":true}");
  DRK_CHECK(recording.waits.size() == 1);
  DRK_REQUIRE_FALSE(attempts.empty());
  DRK_CHECK(attempts.back() == 2);
}

DRK_TEST_CASE("failures that outlast the attempts come back as the last failure") {
  ScriptedHttpServer server({ScriptedReply::drop("x"), ScriptedReply::drop("y")});
  RecordingClient recording(server, 2);
  auto response = recording.client.post(chat_request(), within(60s));
  DRK_REQUIRE_FALSE(response.ok());
  DRK_CHECK(response.error().code == Errc::peer_unavailable);
  DRK_CHECK(response.error().message.find("after 2 attempts") != std::string::npos);
}

DRK_TEST_CASE("bytes that are not HTTP are a protocol error, not retried") {
  ScriptedHttpServer server({ScriptedReply::raw("SMTP ready\r\n\r\n")});
  RecordingClient recording(server);
  auto response = recording.client.post(chat_request(), within(10s));
  DRK_REQUIRE_FALSE(response.ok());
  DRK_CHECK(response.error().code == Errc::protocol_error);
  DRK_CHECK(recording.waits.empty());
}

DRK_TEST_CASE("a 4xx other than 429 comes back at once for the caller to read") {
  ScriptedHttpServer server({ScriptedReply::answer(401, "{\"error\":\"bad key\"}")});
  RecordingClient recording(server);
  auto response = recording.client.post(chat_request(), within(10s));
  DRK_REQUIRE(response.ok());
  DRK_CHECK(response->status == 401);
  DRK_CHECK(recording.waits.empty());
}

DRK_TEST_CASE("addresses: http and https with default ports, others refused naming the fix") {
  auto plain = parse_http_url("http://localhost:8000/v1");
  DRK_REQUIRE(plain.ok());
  DRK_CHECK(plain->host == "localhost");
  DRK_CHECK(plain->port == "8000");
  DRK_CHECK(plain->path == "/v1");
  auto secure = parse_http_url("https://api.example.com");
  DRK_REQUIRE(secure.ok());
  DRK_CHECK(secure->tls);
  DRK_CHECK(secure->port == "443");
  DRK_CHECK(secure->path == "/");
  auto ftp = parse_http_url("ftp://host/v1");
  DRK_REQUIRE_FALSE(ftp.ok());
  DRK_CHECK(ftp.error().message.find("http://HOST:PORT/PATH") != std::string::npos);
  DRK_CHECK_FALSE(parse_http_url("http://host:99999/").ok());
}

DRK_TEST_CASE("Retry-After in seconds is honoured; a date falls back to the backoff") {
  DRK_CHECK(drk::http_client::parse_retry_after("7") == std::optional(7000ms));
  DRK_CHECK_FALSE(drk::http_client::parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT").has_value());
}

DRK_TEST_CASE("https to a server that does not speak TLS fails in the handshake, naming it") {
  ScriptedHttpServer server({});
  auto url = parse_http_url("https://127.0.0.1:" + std::to_string(server.port()) + "/v1");
  DRK_REQUIRE(url.ok());
  std::vector<std::chrono::milliseconds> waits;
  HttpClient client(*url, RetryPolicy{2, 100ms, 1000ms}, {}, [&](std::chrono::milliseconds delay) { waits.push_back(delay); });
  auto response = client.post(chat_request(), within(10s));
  DRK_REQUIRE_FALSE(response.ok());
  DRK_CHECK(response.error().message.find("TLS handshake") != std::string::npos);
}
