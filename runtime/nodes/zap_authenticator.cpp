#include "runtime/nodes/zap_authenticator.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <iterator>
#include <stdexcept>
#include <utility>
#include <zmq_addon.hpp>

#include "runtime/nodes/curve_keys.h"
#include "runtime/supervision/process_signals.h"
#include "runtime/transport/transport.h"

namespace drk::runtime {
namespace {

// RFC 27: version, request id, domain, address, identity, mechanism, credentials...
enum RequestFrame : std::size_t { kVersion, kRequestId, kDomain, kAddress, kIdentity, kMechanism, kCredentials };
constexpr std::size_t kCurveKeyBytes = 32;

std::vector<zmq::message_t> reply(const zmq::message_t& request_id, const char* status_code,
                                  const std::string& status_text, const std::string& user_id) {
  std::vector<zmq::message_t> frames;
  frames.emplace_back(std::string_view("1.0"));
  frames.emplace_back(request_id.data(), request_id.size());
  frames.emplace_back(std::string_view(status_code));
  frames.emplace_back(status_text);
  frames.emplace_back(user_id);
  frames.emplace_back();  // metadata: none
  return frames;
}

std::string z85_of(const zmq::message_t& key) {
  char text[41] = {};
  zmq_z85_encode(text, static_cast<const uint8_t*>(key.data()), kCurveKeyBytes);
  return text;
}

}  // namespace

ZapAuthenticator::ZapAuthenticator(zmq::context_t& context, std::map<std::string, std::string> allowed)
    : stop_sender_(context, zmq::socket_type::pair) {
  for (const auto& [name, key] : allowed)
    if (!is_z85_key(key)) throw std::invalid_argument("ZapAuthenticator: the key of '" + name + "' is not 40 characters of Z85");
  allowed_ = std::move(allowed);
  // Bound here, not in the thread, so that every handshake after construction is authenticated.
  zmq::socket_t handler(context, zmq::socket_type::rep);
  handler.set(zmq::sockopt::linger, 0);
  handler.bind(kEndpoint);
  // Unique for the process: a closed socket releases its endpoint later, on libzmq's reaper thread.
  static std::atomic<uint64_t> authenticators_made{0};
  const std::string stop_endpoint = "inproc://drk-zap-stop-" + std::to_string(++authenticators_made);
  zmq::socket_t stop_receiver(context, zmq::socket_type::pair);
  stop_receiver.set(zmq::sockopt::linger, 0);
  stop_receiver.bind(stop_endpoint);
  stop_sender_.set(zmq::sockopt::linger, 0);
  stop_sender_.connect(stop_endpoint);
  // Sockets may move to another thread: starting the thread is the full barrier ZeroMQ asks for.
  thread_ = std::thread(&ZapAuthenticator::serve, this, std::move(handler), std::move(stop_receiver));
}

ZapAuthenticator::~ZapAuthenticator() {
  try {
    stop_sender_.send(zmq::message_t(), zmq::send_flags::dontwait);
  } catch (const zmq::error_t&) {
    // The context is shutting down: the thread sees ETERM and stops by itself.
  }
  thread_.join();
}

void ZapAuthenticator::allow(const std::string& name, const std::string& public_key) {
  if (!is_z85_key(public_key))
    throw std::invalid_argument("ZapAuthenticator::allow: the key of '" + name + "' is not 40 characters of Z85");
  std::lock_guard lock(mutex_);
  allowed_[name] = public_key;
}

uint64_t ZapAuthenticator::refused() const {
  std::lock_guard lock(mutex_);
  return refused_;
}

std::vector<ZapAuthenticator::Refusal> ZapAuthenticator::recent_refusals() const {
  std::lock_guard lock(mutex_);
  return {recent_.begin(), recent_.end()};
}

void ZapAuthenticator::serve(zmq::socket_t handler, zmq::socket_t stop) {
  block_process_signals_in_this_thread();
  zmq::pollitem_t items[] = {{handler.handle(), 0, ZMQ_POLLIN, 0}, {stop.handle(), 0, ZMQ_POLLIN, 0}};
  try {
    while (true) {
      poll_sockets(items, 2, std::chrono::milliseconds(-1));
      if (items[1].revents & ZMQ_POLLIN) {
        // Closing releases the endpoint later, on libzmq's reaper thread; unbinding releases it
        // now, so that a new authenticator can bind it as soon as this one is destroyed.
        handler.unbind(kEndpoint);
        return;
      }
      if (!(items[0].revents & ZMQ_POLLIN)) continue;
      std::vector<zmq::message_t> request;
      if (!zmq::recv_multipart(handler, std::back_inserter(request), zmq::recv_flags::dontwait)) continue;
      zmq::send_multipart(handler, answer(request));
    }
  } catch (const zmq::error_t& error) {
    // The context is shutting down: nothing is left to authenticate. Anything else is a fault.
    if (error.num() != ETERM) throw;
  }
}

std::vector<zmq::message_t> ZapAuthenticator::answer(std::vector<zmq::message_t>& request) {
  const zmq::message_t no_request_id;
  if (request.size() <= kMechanism || request[kVersion].to_string_view() != "1.0") {
    record_refusal({request.size() > kAddress ? request[kAddress].to_string() : std::string(), "malformed", {}, system_unix_ms()});
    return reply(request.size() > kRequestId ? request[kRequestId] : no_request_id, "500", "malformed ZAP request", {});
  }
  const zmq::message_t& request_id = request[kRequestId];
  const std::string mechanism = request[kMechanism].to_string();
  const std::string address = request[kAddress].to_string();
  if (mechanism == "NULL") return reply(request_id, "200", "OK", {});
  if (mechanism == "CURVE" && request.size() > kCredentials && request[kCredentials].size() == kCurveKeyBytes) {
    const std::string client_key = z85_of(request[kCredentials]);
    {
      std::lock_guard lock(mutex_);
      for (const auto& [name, key] : allowed_)
        if (key == client_key) return reply(request_id, "200", "OK", name);
    }
    record_refusal({address, mechanism, client_key, system_unix_ms()});
    return reply(request_id, "400", "public key not allowed", {});
  }
  record_refusal({address, mechanism, {}, system_unix_ms()});
  return reply(request_id, "400", "mechanism " + mechanism + " is not allowed", {});
}

void ZapAuthenticator::record_refusal(Refusal refusal) {
  std::lock_guard lock(mutex_);
  ++refused_;
  recent_.push_back(std::move(refusal));
  if (recent_.size() > kRecentRefusals) recent_.pop_front();
}

}  // namespace drk::runtime
