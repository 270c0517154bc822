#include "runtime/http/http_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/http/bearer_auth.h"
#include "runtime/http/event_stream.h"

namespace drk::runtime::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

HttpRequest request_of(const bhttp::request<bhttp::string_body>& message) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  const std::string target(message.target());
  const size_t query = target.find('?');
  request.path = target.substr(0, query);
  if (query != std::string::npos) request.query = target.substr(query + 1);
  for (const auto& field : message) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    request.headers[name] = std::string(field.value());
  }
  request.body = message.body();
  return request;
}

// The event streams of the server's streaming answers: each holds its session while it waits for
// events, so that the server, as it stops, releases them before its sockets' io_context goes.
class OpenStreams {
 public:
  void add(const std::shared_ptr<EventStream>& stream) {
    std::lock_guard lock(mutex_);
    std::erase_if(streams_, [](const auto& weak) { return weak.expired(); });
    streams_.push_back(stream);
  }
  void release_all() {
    std::lock_guard lock(mutex_);
    for (auto& weak : streams_)
      if (auto stream = weak.lock()) stream->cancel_wait();
    streams_.clear();
  }

 private:
  std::mutex mutex_;
  std::vector<std::weak_ptr<EventStream>> streams_;
};

// One connection: requests read and answered in turn (keep-alive), or one streaming answer.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const Router& router, const HttpServerOptions& options, OpenStreams& open_streams)
      : stream_(std::move(socket)), router_(router), options_(options), open_streams_(open_streams) {}

  void read_request() {
    parser_.emplace();
    parser_->body_limit(options_.limits.max_body_bytes);
    parser_->header_limit(static_cast<uint32_t>(options_.limits.max_header_bytes));
    stream_.expires_after(first_request_ ? options_.limits.read_timeout : options_.limits.idle_timeout);
    first_request_ = false;
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code error, size_t) { self->on_read(error); });
  }

 private:
  void on_read(beast::error_code error) {
    if (error == bhttp::error::body_limit)
      return answer_and_close(HttpResponse::error(
          413, "the request's body is beyond this server's limit of " + std::to_string(options_.limits.max_body_bytes) +
                   " bytes: send less (a smaller batch)"));
    if (error == bhttp::error::header_limit)
      return answer_and_close(HttpResponse::error(431, "the request's header is beyond this server's limit of " +
                                                           std::to_string(options_.limits.max_header_bytes) + " bytes"));
    if (error) return close();  // end of stream, timeout, reset: nobody to answer
    const auto& message = parser_->get();
    keep_alive_ = message.keep_alive();
    const HttpRequest request = request_of(message);
    if (options_.bearer_token && !bearer_authorized(request.header("authorization"), *options_.bearer_token) &&
        !query_token_authorized(request.query, *options_.bearer_token)) {
      auto refused = HttpResponse::error(401, "this server needs `Authorization: Bearer TOKEN` (or `?token=TOKEN`)");
      refused.headers.emplace_back("WWW-Authenticate", "Bearer");
      return answer(std::move(refused));
    }
    answer(router_.dispatch(request));
  }

  void answer_and_close(HttpResponse response) {
    keep_alive_ = false;
    answer(std::move(response));
  }

  void answer(HttpResponse response) {
    if (response.events) return start_stream(std::move(response));
    auto message = std::make_shared<bhttp::response<bhttp::string_body>>(static_cast<bhttp::status>(response.status), 11);
    message->set(bhttp::field::server, "drk");
    message->set(bhttp::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) message->set(name, value);
    message->body() = std::move(response.body);
    message->keep_alive(keep_alive_);
    message->prepare_payload();
    stream_.expires_after(options_.limits.write_timeout);
    bhttp::async_write(stream_, *message,
                       [self = shared_from_this(), message](beast::error_code error, size_t) {
                         if (error || !self->keep_alive_) return self->close();
                         self->read_request();
                       });
  }

  void start_stream(HttpResponse response) {
    events_ = std::move(response.events);
    open_streams_.add(events_);
    std::string header = "HTTP/1.1 " + std::to_string(response.status) +
                         " OK\r\nServer: drk\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n";
    for (const auto& [name, value] : response.headers) header += name + ": " + value + "\r\n";
    header += "Connection: close\r\n\r\n";
    write_stream(std::move(header));
  }

  void write_stream(std::string text) {
    auto bytes = std::make_shared<std::string>(std::move(text));
    stream_.expires_after(options_.limits.write_timeout);
    asio::async_write(stream_, asio::buffer(*bytes), [self = shared_from_this(), bytes](beast::error_code error, size_t) {
      if (error) return self->close();
      self->pump_stream();
    });
  }

  // Writes what the stream queued, or waits for it; closes once the stream is closed and drained.
  void pump_stream() {
    stream_.expires_never();
    std::string text = events_->take();
    if (!text.empty()) return write_stream(std::move(text));
    if (events_->closed()) return close();
    // The stream holds the session while it waits (the server's stop breaks that: OpenStreams).
    events_->wait([self = shared_from_this()] { asio::post(self->stream_.get_executor(), [self] { self->pump_stream(); }); });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  const Router& router_;
  const HttpServerOptions& options_;
  OpenStreams& open_streams_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::shared_ptr<EventStream> events_;
  bool keep_alive_ = false;
  bool first_request_ = true;
};

}  // namespace

struct HttpServer::State {
  HttpServerOptions options;
  Router router;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::vector<std::thread> threads;
  OpenStreams open_streams;

  void accept() {
    // Each connection on a strand of its own: its handlers never run at once.
    acceptor.async_accept(asio::make_strand(io), [this](beast::error_code error, tcp::socket socket) {
      if (error == asio::error::operation_aborted) return;
      if (!error) std::make_shared<Session>(std::move(socket), router, options, open_streams)->read_request();
      accept();
    });
  }
};

Result<std::unique_ptr<HttpServer>> HttpServer::start(const HttpServerOptions& options, Router router) {
  auto state = std::make_unique<State>();
  state->options = options;
  state->router = std::move(router);
  const std::string where = options.address + " port " + std::to_string(options.port);
  beast::error_code error;
  const auto address = asio::ip::make_address(options.address == "localhost" ? "127.0.0.1" : options.address, error);
  if (error) return make_error(Errc::invalid_argument, "'" + options.address + "' is not an IP address to listen on");
  const tcp::endpoint endpoint(address, options.port);
  state->acceptor.open(endpoint.protocol(), error);
  if (!error) state->acceptor.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) state->acceptor.bind(endpoint, error);
  if (!error) state->acceptor.listen(asio::socket_base::max_listen_connections, error);
  if (error) return make_error(Errc::io_error, "cannot listen on " + where + ": " + error.message());
  state->accept();
  for (size_t i = 0; i < std::max<size_t>(1, options.threads); ++i)
    state->threads.emplace_back([io = &state->io] { io->run(); });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

HttpServer::HttpServer(std::unique_ptr<State> state) : state_(std::move(state)) {}

HttpServer::~HttpServer() {
  state_->io.stop();
  for (auto& thread : state_->threads) thread.join();
  state_->open_streams.release_all();
}

uint16_t HttpServer::port() const { return state_->acceptor.local_endpoint().port(); }

}  // namespace drk::runtime::http
