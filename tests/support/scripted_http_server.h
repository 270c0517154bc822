// ScriptedHttpServer: an HTTP/1.1 server on loopback for tests, one thread, one connection at a
// time, answering the requests in order with the replies of its script: an answer (any status,
// headers, body), a stream (a chunked body in pieces, e.g. server-sent events), a hold (no answer:
// it waits until the client gives up and closes), a drop (some bytes, then the connection closes),
// or raw bytes (not HTTP). A request beyond the script is answered 500 "script exhausted", or
// by the responder when one is given (a function of the request: a model that reads its prompt).
// Each request is recorded (target, body, headers) before it is answered.
// Stopped and joined by the destructor; a client that holds no connection lets it end at once.
// Thread-safety: requests() may be read from the test's thread.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace drk::testing {

struct ScriptedReply {
  enum class Kind { answer, stream, hold, drop, raw };
  Kind kind = Kind::answer;
  unsigned status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;                 // answer; drop: the bytes sent after a header that promises more
  std::vector<std::string> pieces;  // stream: one chunk each

  static ScriptedReply answer(unsigned status, std::string body,
                              std::vector<std::pair<std::string, std::string>> headers = {}) {
    ScriptedReply reply;
    reply.status = status;
    reply.body = std::move(body);
    reply.headers = std::move(headers);
    return reply;
  }
  static ScriptedReply stream(std::vector<std::string> pieces) {
    ScriptedReply reply;
    reply.kind = Kind::stream;
    reply.content_type = "text/event-stream";
    reply.pieces = std::move(pieces);
    return reply;
  }
  static ScriptedReply hold() {
    ScriptedReply reply;
    reply.kind = Kind::hold;
    return reply;
  }
  static ScriptedReply drop(std::string partial_body) {
    ScriptedReply reply;
    reply.kind = Kind::drop;
    reply.body = std::move(partial_body);
    return reply;
  }
  static ScriptedReply raw(std::string bytes) {
    ScriptedReply reply;
    reply.kind = Kind::raw;
    reply.body = std::move(bytes);
    return reply;
  }
};

struct RecordedRequest {
  std::string target;
  std::string body;
  std::map<std::string, std::string> headers;
};

class ScriptedHttpServer {
 public:
  using Responder = std::function<ScriptedReply(const RecordedRequest&)>;

  explicit ScriptedHttpServer(std::vector<ScriptedReply> script, Responder responder = {})
      : script_(std::move(script)),
        responder_(std::move(responder)),
        acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}),
        thread_([this] { serve(); }) {}

  ~ScriptedHttpServer() {
    stopping_ = true;
    // Wakes the accept the thread waits in.
    boost::system::error_code ignored;
    boost::asio::io_context waker;
    boost::asio::ip::tcp::socket socket(waker);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), port()}, ignored);
    thread_.join();
  }

  unsigned short port() const { return port_; }
  std::string url(const std::string& path = "/v1") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::vector<RecordedRequest> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void serve() {
    size_t next = 0;
    while (!stopping_) {
      boost::asio::ip::tcp::socket socket(io_);
      boost::system::error_code error;
      acceptor_.accept(socket, error);
      if (error || stopping_) return;
      boost::beast::flat_buffer buffer;
      boost::beast::http::request<boost::beast::http::string_body> request;
      boost::beast::http::read(socket, buffer, request, error);
      if (error) continue;
      RecordedRequest recorded{std::string(request.target()), request.body(), {}};
      for (const auto& field : request) recorded.headers[std::string(field.name_string())] = std::string(field.value());
      {
        std::lock_guard lock(mutex_);
        requests_.push_back(recorded);
      }
      const ScriptedReply reply = next < script_.size() ? script_[next++]
                                  : responder_        ? responder_(recorded)
                                                      : ScriptedReply::answer(500, "{\"error\":\"script exhausted\"}");
      reply_with(socket, reply);
    }
  }

  static void reply_with(boost::asio::ip::tcp::socket& socket, const ScriptedReply& reply) {
    boost::system::error_code error;
    const auto send = [&](const std::string& bytes) { boost::asio::write(socket, boost::asio::buffer(bytes), error); };
    const auto header = [&](const std::string& length_field) {
      std::string text = "HTTP/1.1 " + std::to_string(reply.status) + " Scripted\r\nContent-Type: " +
                         reply.content_type + "\r\nConnection: close\r\n" + length_field + "\r\n";
      for (const auto& [name, value] : reply.headers) text += name + ": " + value + "\r\n";
      return text + "\r\n";
    };
    switch (reply.kind) {
      case ScriptedReply::Kind::answer:
        send(header("Content-Length: " + std::to_string(reply.body.size())) + reply.body);
        break;
      case ScriptedReply::Kind::stream:
        send(header("Transfer-Encoding: chunked"));
        for (const auto& piece : reply.pieces) {
          char size[32];
          std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
          send(size + piece + "\r\n");
        }
        send("0\r\n\r\n");
        break;
      case ScriptedReply::Kind::hold: {
        // Waits for the client to close (it gives up at its deadline).
        char sink[256];
        while (!error) socket.read_some(boost::asio::buffer(sink), error);
        break;
      }
      case ScriptedReply::Kind::drop:
        send(header("Content-Length: " + std::to_string(reply.body.size() * 2 + 100)) + reply.body);
        break;
      case ScriptedReply::Kind::raw:
        send(reply.body);
        break;
    }
    socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, error);
  }

  std::vector<ScriptedReply> script_;
  Responder responder_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  unsigned short port_ = acceptor_.local_endpoint().port();
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::vector<RecordedRequest> requests_;
  std::thread thread_;
};

}  // namespace drk::testing
