#include "runtime/http_client/http_exchange.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/version.hpp>

#include <openssl/ssl.h>

namespace drk::http_client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;

// Runs `io` until the operation `start` began completes. Every operation is asynchronous so that
// the stream's expiry (its deadline) can end it: Beast's timeouts apply to asynchronous
// operations only.
template <typename Start>
ErrorCode complete(asio::io_context& io, Start&& start) {
  ErrorCode outcome;
  start([&outcome](ErrorCode error, auto&&...) { outcome = error; });
  io.restart();
  io.run();
  return outcome;
}

Error describe_failure(const HttpUrl& url, std::string_view during, const ErrorCode& error) {
  const std::string where = url.base() + ": " + std::string(during) + ": " + error.message();
  if (error == beast::error::timeout) return make_error(Errc::timeout, where + " (the request's deadline passed)");
  if (error == http::error::end_of_stream || error == http::error::partial_message || error == asio::error::eof ||
      error == asio::error::connection_reset || error == asio::error::connection_refused ||
      error == asio::error::connection_aborted || error == asio::error::broken_pipe ||
      error == asio::error::host_unreachable || error == asio::error::network_unreachable ||
      error == asio::ssl::error::stream_truncated)
    return make_error(Errc::peer_unavailable, where + " (the connection was refused or dropped)");
  if (error.category() == http::make_error_code(http::error::bad_version).category())
    return make_error(Errc::protocol_error, where + " (the answer is not valid HTTP/1.1, or its body is over the limit)");
  return make_error(Errc::peer_unavailable, where);
}

// The server's certificate failed verification (`verified`, OpenSSL's X509_V_ERR_*): the same
// certificate fails again, so this is not worth a retry; the message names the fix.
Error refused_certificate(const HttpUrl& url, long verified, const std::string& ca_file) {
  const std::string reason = X509_verify_cert_error_string(verified);
  const std::string where = url.base() + ": the TLS handshake: the server's certificate is refused: " + reason;
  if (verified == X509_V_ERR_HOSTNAME_MISMATCH || verified == X509_V_ERR_IP_ADDRESS_MISMATCH)
    return make_error(Errc::invalid_argument, where + " (it is not issued for '" + url.host +
                                                  "': use the host name the certificate names in the endpoint)");
  const std::string trusted = ca_file.empty() ? "the system's certificate store" : "ca_file " + ca_file;
  return make_error(Errc::invalid_argument, where + " (checked against " + trusted +
                                                "; set ca_file to the certificate, or the CA, that issued it)");
}

http::request<http::string_body> build_request(const HttpUrl& url, const HttpRequest& request) {
  http::request<http::string_body> out{http::string_to_verb(request.method), request.target, 11};
  const bool default_port = url.port == (url.tls ? "443" : "80");
  out.set(http::field::host, default_port ? url.host : url.host + ":" + url.port);
  out.set(http::field::user_agent, "drkernel");
  out.set(http::field::content_type, request.content_type);
  out.set(http::field::connection, "close");
  for (const auto& [name, value] : request.headers) out.set(name, value);
  out.body() = request.body;
  out.prepare_payload();
  return out;
}

// Sends the request on a connected (and, for TLS, handshaken) stream and reads the answer.
template <typename Stream>
Result<HttpResponse> send_and_read(Stream& stream, asio::io_context& io, const HttpUrl& url,
                                   const HttpRequest& request, const ExchangeOptions& options) {
  auto outgoing = build_request(url, request);
  if (auto error = complete(io, [&](auto handler) { http::async_write(stream, outgoing, handler); }))
    return describe_failure(url, "sending the request", error);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(options.max_body_bytes);
  if (auto error = complete(io, [&](auto handler) { http::async_read_header(stream, buffer, parser, handler); }))
    return describe_failure(url, "reading the answer's header", error);
  const unsigned status = parser.get().result_int();
  const bool deliver = options.on_body && status / 100 == 2;
  size_t delivered = 0;
  while (!parser.is_done()) {
    if (auto error = complete(io, [&](auto handler) { http::async_read_some(stream, buffer, parser, handler); }))
      return describe_failure(url, "reading the answer's body", error);
    const std::string& body = parser.get().body();
    if (deliver && body.size() > delivered) {
      options.on_body(std::string_view(body).substr(delivered));
      delivered = body.size();
    }
  }
  HttpResponse response;
  response.status = status;
  if (const auto retry_after = parser.get().find(http::field::retry_after); retry_after != parser.get().end())
    response.retry_after = std::string(retry_after->value());
  response.body = parser.release().body();
  return response;
}

Result<tcp::resolver::results_type> resolve(asio::io_context& io, const HttpUrl& url) {
  tcp::resolver resolver(io);
  ErrorCode error;
  auto endpoints = resolver.resolve(url.host, url.port, error);
  if (error)
    return make_error(Errc::peer_unavailable, url.base() + ": host '" + url.host + "' does not resolve: " +
                                                  error.message() + " (check the endpoint's host name)");
  return endpoints;
}

}  // namespace

Result<HttpResponse> http_exchange(const HttpUrl& url, const HttpRequest& request, const ExchangeOptions& options) {
  asio::io_context io;
  auto endpoints = resolve(io, url);
  if (!endpoints) return endpoints.error();
  if (!url.tls) {
    beast::tcp_stream stream(io);
    stream.expires_at(options.deadline);
    if (auto error = complete(io, [&](auto handler) { stream.async_connect(*endpoints, handler); }))
      return describe_failure(url, "connecting", error);
    return send_and_read(stream, io, url, request, options);
  }
  asio::ssl::context tls(asio::ssl::context::tls_client);
  ErrorCode setup;
  if (options.ca_file.empty()) {
    tls.set_default_verify_paths(setup);
  } else {
    tls.load_verify_file(options.ca_file, setup);
  }
  if (setup)
    return make_error(Errc::io_error, url.base() + ": the certificates to trust do not load (" +
                                          (options.ca_file.empty() ? "the system's store" : options.ca_file) +
                                          "): " + setup.message());
  tls.set_verify_mode(asio::ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream(io, tls);
  // OpenSSL's own host check (an IP address as such), so that a mismatch is a verify result that
  // names it.
  if (!SSL_set1_host(stream.native_handle(), url.host.c_str()) ||
      !SSL_set_tlsext_host_name(stream.native_handle(), url.host.c_str()))
    return make_error(Errc::io_error, url.base() + ": the TLS server name cannot be set");
  beast::get_lowest_layer(stream).expires_at(options.deadline);
  if (auto error = complete(io, [&](auto handler) { beast::get_lowest_layer(stream).async_connect(*endpoints, handler); }))
    return describe_failure(url, "connecting", error);
  if (auto error = complete(io, [&](auto handler) { stream.async_handshake(asio::ssl::stream_base::client, handler); })) {
    if (const long verified = SSL_get_verify_result(stream.native_handle()); verified != X509_V_OK)
      return refused_certificate(url, verified, options.ca_file);
    return describe_failure(url, "the TLS handshake", error);
  }
  return send_and_read(stream, io, url, request, options);
}

}  // namespace drk::http_client
