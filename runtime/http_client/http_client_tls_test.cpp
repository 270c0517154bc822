// The HTTP client's TLS through a real handshake: the test makes a self-signed certificate with
// OpenSSL, serves HTTPS with it on loopback (Boost.Asio's ssl stream), and the client trusts it
// through ca_file, refuses it against the system's store, and refuses it for another host name.
#include <utility>  // before Boost 1.74's asio, which uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "runtime/http_client/http_client.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"
#include "tests/support/self_signed_certificate.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using drk::Errc;
using drk::http_client::HttpClient;
using drk::http_client::HttpRequest;
using drk::http_client::parse_http_url;
using drk::http_client::PostOptions;
using drk::http_client::RetryPolicy;
using drk::testing::CertificateFiles;
using namespace std::chrono_literals;

// An HTTPS server on 127.0.0.1 with `certificate`: each connection is handshaken, one request read
// and answered 200 {"ok":true}. The port is bound before the constructor returns, so a client may
// connect at once; the destructor closes the acceptor and joins the server's thread.
class TlsLoopbackServer {
 public:
  explicit TlsLoopbackServer(const CertificateFiles& certificate)
      : tls_(asio::ssl::context::tls_server), acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    tls_.use_certificate_chain_file(certificate.certificate);
    tls_.use_private_key_file(certificate.key, asio::ssl::context::pem);
    accept_next();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TlsLoopbackServer() {
    asio::post(io_, [this] { acceptor_.close(); });
    thread_.join();
  }
  TlsLoopbackServer(const TlsLoopbackServer&) = delete;
  TlsLoopbackServer& operator=(const TlsLoopbackServer&) = delete;

  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  // Requests that came through the handshake and were read whole (each is answered).
  int requests_read() const { return requests_read_; }

 private:
  void accept_next() {
    acceptor_.async_accept([this](boost::system::error_code error, tcp::socket socket) {
      if (error) return;  // closed by the destructor
      serve(std::move(socket));
      accept_next();
    });
  }

  // One connection, synchronously: the client either completes it or closes it.
  void serve(tcp::socket socket) {
    beast::ssl_stream<tcp::socket> stream(std::move(socket), tls_);
    boost::system::error_code error;
    stream.handshake(asio::ssl::stream_base::server, error);
    if (error) return;  // the client refused the certificate
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    http::read(stream, buffer, request, error);
    if (error) return;
    // Counted before the answer goes out: the client may read it and return before this thread
    // runs again (a count after the write raced the test's check).
    ++requests_read_;
    http::response<http::string_body> response{http::status::ok, 11};
    response.set(http::field::content_type, "application/json");
    response.body() = R"({"ok":true})";
    response.keep_alive(false);
    response.prepare_payload();
    http::write(stream, response, error);
  }

  asio::io_context io_;
  asio::ssl::context tls_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<int> requests_read_{0};
};

struct TlsExchange {
  drk::Result<drk::http_client::HttpResponse> response;
  std::vector<std::chrono::milliseconds> waits;  // between attempts: none when a failure is final
};

// One POST to https://HOST:PORT/v1/chat/completions trusting `ca_file` ("": the system's store),
// with 3 attempts allowed, their waits recorded and not slept.
TlsExchange post_over_tls(const std::string& host, uint16_t port, const std::string& ca_file) {
  auto url = parse_http_url("https://" + host + ":" + std::to_string(port) + "/v1");
  DRK_REQUIRE(url.ok());
  TlsExchange exchange{drk::make_error(Errc::internal, "not posted"), {}};
  HttpClient client(*url, RetryPolicy{3, 100ms, 1000ms}, ca_file,
                    [&](std::chrono::milliseconds delay) { exchange.waits.push_back(delay); });
  exchange.response = client.post(HttpRequest{"/v1/chat/completions", R"({"model":"m"})", "application/json", {}},
                                  PostOptions{std::chrono::steady_clock::now() + 30s, {}});
  return exchange;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

DRK_TEST_CASE("https with ca_file set to the server's self-signed certificate: the handshake and the request succeed") {
  drk::testing::RunDir dir;
  const auto certificate = drk::testing::write_self_signed_certificate(dir.path(), "loopback", "IP:127.0.0.1");
  TlsLoopbackServer server(certificate);
  auto exchange = post_over_tls("127.0.0.1", server.port(), certificate.certificate);
  DRK_REQUIRE_MESSAGE(exchange.response.ok(), exchange.response.error().message);
  DRK_CHECK(exchange.response->status == 200);
  DRK_CHECK(exchange.response->body == R"({"ok":true})");
  DRK_CHECK(server.requests_read() == 1);
}

DRK_TEST_CASE("without ca_file the system's store refuses a self-signed certificate, once, naming the fix") {
  drk::testing::RunDir dir;
  const auto certificate = drk::testing::write_self_signed_certificate(dir.path(), "loopback", "IP:127.0.0.1");
  TlsLoopbackServer server(certificate);
  auto exchange = post_over_tls("127.0.0.1", server.port(), "");
  DRK_REQUIRE_FALSE(exchange.response.ok());
  const std::string& message = exchange.response.error().message;
  DRK_CHECK(exchange.response.error().code == Errc::invalid_argument);
  DRK_CHECK_MESSAGE(contains(message, "certificate is refused: self-signed certificate"), message);
  DRK_CHECK_MESSAGE(contains(message, "the system's certificate store"), message);
  DRK_CHECK_MESSAGE(contains(message, "set ca_file"), message);
  DRK_CHECK(exchange.waits.empty());  // the same certificate would be refused again: no retry
  DRK_CHECK(server.requests_read() == 0);
}

DRK_TEST_CASE("a trusted certificate issued for another host name is refused, naming the host") {
  drk::testing::RunDir dir;
  const auto certificate = drk::testing::write_self_signed_certificate(dir.path(), "other", "DNS:other.example");
  TlsLoopbackServer server(certificate);
  auto exchange = post_over_tls("127.0.0.1", server.port(), certificate.certificate);
  DRK_REQUIRE_FALSE(exchange.response.ok());
  const std::string& message = exchange.response.error().message;
  DRK_CHECK(exchange.response.error().code == Errc::invalid_argument);
  DRK_CHECK_MESSAGE(contains(message, "IP address mismatch"), message);
  DRK_CHECK_MESSAGE(contains(message, "not issued for '127.0.0.1'"), message);
  DRK_CHECK(exchange.waits.empty());
  DRK_CHECK(server.requests_read() == 0);
}
