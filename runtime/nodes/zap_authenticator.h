// ZapAuthenticator: the ZAP handler (ZeroMQ RFC 27) of one ZeroMQ context, which decides who may
// connect to the context's CURVE server sockets (curve_keys.h, docs/security.md).
//
// It binds inproc://zeromq.zap.01 in the context and answers libzmq's requests on a thread of
// its own:
//   CURVE  200 with user-id = the identity's name when the client's public key is allowed
//          (a received message's "User-Id" property then names the sender); 400 otherwise,
//          and the refusal is counted and remembered (the last kRecentRefusals).
//   NULL   200: asked only by a socket without security that set a ZAP domain, about its ipc
//          or tcp peers (inproc links have no handshake); such a socket chose to trust them.
//   other  (PLAIN, malformed requests) 400, counted as a refusal.
// libzmq consults it during each handshake, so a refused peer is dropped before any message of
// it is delivered. libzmq 4.3 does not retry a connection refused this way: the client socket
// sees ZMQ_EVENT_HANDSHAKE_FAILED_AUTH (status 400) and its queued messages stay undelivered;
// after allow(), the peer gets in with a new connection (a new socket). A peer that does not
// speak CURVE at all never reaches the handler: the handshake fails on the mechanism
// (ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL on the server socket) and it is not counted here.
//
// Thread-safety: every public member may be called from any thread.
// Ownership: the context must outlive the authenticator. Destroying the authenticator stops and
// joins its thread and unbinds the handler; from then on the context's server sockets made by
// make_curve_server admit nobody (ZAP_ENFORCE_DOMAIN, see curve_keys.h: the handshake fails or
// stalls), so destroy it after the server sockets it guards are closed. A new authenticator
// may be constructed in the same context as soon as the old one is destroyed.
// Errors: the constructor throws zmq::error_t when the context already has a ZAP handler (one
// per context: a fault of the caller). The constructor and allow() throw std::invalid_argument
// for a key that is not 40 characters of Z85 (keys come validated from curve_keys.h).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

namespace drk::runtime {

class ZapAuthenticator {
 public:
  // A peer that was not let in.
  struct Refusal {
    std::string peer_address;  // as libzmq reports it: the peer's IP address for tcp
    std::string mechanism;     // "CURVE", "PLAIN", ...
    std::string public_key;    // Z85; empty when the mechanism is not CURVE
    int64_t unix_ms = 0;       // when, in milliseconds since the Unix epoch
  };

  static constexpr std::size_t kRecentRefusals = 16;
  static constexpr const char* kEndpoint = "inproc://zeromq.zap.01";

  // `allowed`: identity name -> Z85 public key (read_allowed_keys).
  ZapAuthenticator(zmq::context_t& context, std::map<std::string, std::string> allowed);
  ~ZapAuthenticator();
  ZapAuthenticator(const ZapAuthenticator&) = delete;
  ZapAuthenticator& operator=(const ZapAuthenticator&) = delete;

  // Admits `public_key` as `name` from the next handshake on, replacing the key `name` had.
  void allow(const std::string& name, const std::string& public_key);

  // How many handshakes were refused since construction.
  uint64_t refused() const;

  // The last kRecentRefusals refusals, oldest first.
  std::vector<Refusal> recent_refusals() const;

 private:
  void serve(zmq::socket_t handler, zmq::socket_t stop);
  // The reply frames for one request (RFC 27).
  std::vector<zmq::message_t> answer(std::vector<zmq::message_t>& request);
  void record_refusal(Refusal refusal);

  mutable std::mutex mutex_;
  std::map<std::string, std::string> allowed_;  // name -> Z85 public key
  uint64_t refused_ = 0;
  std::deque<Refusal> recent_;

  zmq::socket_t stop_sender_;
  std::thread thread_;
};

}  // namespace drk::runtime
