// CURVE keys in files and the ZAP authenticator, over real tcp sockets on 127.0.0.1. A key pair
// whose write fails (a full disk, EIO on write or on fsync, a torn write, a failed rename or link:
// tests/support/fault_injecting_file_system.h) is an error naming the file; the secret key written
// before stays whole and private, and a new identity leaves no file behind.
#include "runtime/nodes/curve_keys.h"
#include "runtime/nodes/zap_authenticator.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "runtime/transport/transport.h"
#include "tests/doctest_drk.h"
#include "tests/support/fault_injecting_file_system.h"
#include "tests/support/run_dir.h"

namespace drk::runtime {
namespace {

using namespace std::chrono_literals;
using testing::FaultInjectingFileSystem;
using testing::FileFault;
using testing::RunDir;

CurveKeyPair new_pair() {
  auto pair = generate_curve_key_pair();
  DRK_REQUIRE(pair.ok());
  return *pair;
}

unsigned file_mode(const std::string& path) {
  struct stat status {};
  DRK_REQUIRE(::stat(path.c_str(), &status) == 0);
  return status.st_mode & 07777;
}

// Polls `condition` until it holds or `limit` passes; the answer is whether it held.
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit = 5000ms) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

std::optional<zmq::message_t> receive_within(zmq::socket_t& socket, std::chrono::milliseconds limit) {
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  if (poll_sockets(&item, 1, limit) == 0) return std::nullopt;
  zmq::message_t message;
  DRK_REQUIRE(socket.recv(message, zmq::recv_flags::dontwait).has_value());
  return message;
}

// Reports the handshake failures of one socket (zmq_socket_monitor).
class HandshakeMonitor {
 public:
  HandshakeMonitor(zmq::context_t& context, zmq::socket_t& watched, const std::string& name)
      : events_(context, zmq::socket_type::pair) {
    const std::string endpoint = "inproc://monitor-" + name;
    DRK_REQUIRE(zmq_socket_monitor(watched.handle(), endpoint.c_str(),
                                   ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                       ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) == 0);
    events_.set(zmq::sockopt::linger, 0);
    events_.connect(endpoint);
  }

  // The next event within `limit`, or 0.
  uint16_t next_event(std::chrono::milliseconds limit) {
    auto head = receive_within(events_, limit);
    if (!head) return 0;
    zmq::message_t address;
    DRK_REQUIRE(events_.recv(address).has_value());
    uint16_t event = 0;
    std::memcpy(&event, head->data(), sizeof event);
    return event;
  }

 private:
  zmq::socket_t events_;
};

// A CURVE PULL server on tcp://127.0.0.1:<ephemeral> guarded by a ZapAuthenticator that
// allows `node-a`.
struct CurveServer {
  zmq::context_t context;
  CurveKeyPair server_keys = new_pair();
  CurveKeyPair node_a = new_pair();
  std::unique_ptr<ZapAuthenticator> authenticator =
      std::make_unique<ZapAuthenticator>(context, std::map<std::string, std::string>{{"node-a", node_a.public_key}});
  zmq::socket_t server{context, zmq::socket_type::pull};
  std::string endpoint;

  CurveServer() {
    server.set(zmq::sockopt::linger, 0);
    make_curve_server(server, server_keys);
    server.bind("tcp://127.0.0.1:*");
    endpoint = server.get(zmq::sockopt::last_endpoint);
  }

  // A PUSH client with `keys` (nullptr: no security at all) that has queued "hello".
  // reconnect_ms -1: one handshake only.
  zmq::socket_t client_sending_hello(const CurveKeyPair* keys, int reconnect_ms = 100) {
    zmq::socket_t client(context, zmq::socket_type::push);
    client.set(zmq::sockopt::linger, 0);
    client.set(zmq::sockopt::reconnect_ivl, reconnect_ms);
    if (keys) make_curve_client(client, *keys, server_keys.public_key);
    client.connect(endpoint);
    DRK_REQUIRE(client.send(zmq::str_buffer("hello"), zmq::send_flags::dontwait).has_value());
    return client;
  }
};

DRK_TEST_CASE("a key pair written to a key directory reads back the same, the secret file private") {
  RunDir dir;
  const std::string keys = dir.file("keys");
  const CurveKeyPair head = new_pair();
  const CurveKeyPair node = new_pair();
  DRK_REQUIRE(write_key_pair(keys, "head", head).ok());
  DRK_REQUIRE(write_key_pair(keys, "node-a", node).ok());
  DRK_CHECK(file_mode(keys + "/head.key") == 0600);
  DRK_CHECK(file_mode(keys + "/head.pub") == 0644);
  DRK_CHECK(file_mode(keys) == 0700);
  DRK_CHECK(dir.read("keys/head.pub").find(head.secret_key) == std::string::npos);

  auto read = read_key_pair(keys, "head");
  DRK_REQUIRE(read.ok());
  DRK_CHECK(read->public_key == head.public_key);
  DRK_CHECK(read->secret_key == head.secret_key);
  auto public_key = read_public_key(keys, "node-a");
  DRK_REQUIRE(public_key.ok());
  DRK_CHECK(*public_key == node.public_key);

  auto identity = load_curve_identity(keys, "node-a");
  DRK_REQUIRE(identity.ok());
  DRK_CHECK(identity->own.secret_key == node.secret_key);
  DRK_CHECK(identity->allowed == std::map<std::string, std::string>{{"head", head.public_key}, {"node-a", node.public_key}});
}

int entries_of(const std::string& dir) {
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++entries;
  return entries;
}

void check_names_a_key_file(const Status& written, const std::string& keys) {
  DRK_REQUIRE_FALSE(written.ok());
  DRK_CHECK(written.error().code == Errc::io_error);
  const std::string message = written.error().message;
  DRK_CAPTURE(message);
  DRK_CHECK(message.find("'" + keys + "/") != std::string::npos);
}

DRK_TEST_CASE("a key pair whose write fails names the file and keeps the pair written before") {
  const CurveKeyPair first = new_pair();
  const CurveKeyPair second = new_pair();
  for (FileFault fault : testing::kEveryFileFault) {
    // The fault from the pair's first file on, or from its second (the first one gets through).
    for (int nth : {1, 2}) {
      const std::string fault_name = testing::fault_name(fault) + std::string(" from call ") + std::to_string(nth);
      DRK_CAPTURE(fault_name);
      RunDir dir;
      const std::string keys = dir.file("keys");
      FaultInjectingFileSystem files;
      DRK_REQUIRE(write_key_pair(keys, "head", first, false, files).ok());

      files.inject(fault, nth);
      check_names_a_key_file(write_key_pair(keys, "head", second, /*overwrite=*/true, files), keys);
      files.inject(fault, nth);
      check_names_a_key_file(write_key_pair(keys, "node-a", second, false, files), keys);
      files.clear();

      auto kept = read_key_pair(keys, "head");
      DRK_REQUIRE(kept.ok());
      DRK_CHECK(kept->secret_key == first.secret_key);
      DRK_CHECK(file_mode(keys + "/head.key") == 0600);
      DRK_CHECK(entries_of(keys) == 2);  // head.key and head.pub: no temporary, nothing of node-a
      // Only a rename that fails after the .pub went in can leave the new .pub: loading names it.
      auto identity = load_curve_identity(keys, "head");
      if (fault == FileFault::rename_error && nth == 2) {
        DRK_REQUIRE_FALSE(identity.ok());
        DRK_CHECK(identity.error().message.find(keys + "/head.pub") != std::string::npos);
      } else {
        DRK_REQUIRE(identity.ok());
        DRK_CHECK(identity->allowed == std::map<std::string, std::string>{{"head", first.public_key}});
      }
    }
  }
}

DRK_TEST_CASE("a key pair written through the seam is private, and refuses an identity that exists") {
  RunDir dir;
  const std::string keys = dir.file("nested/keys");
  FaultInjectingFileSystem files;
  const CurveKeyPair pair = new_pair();
  DRK_REQUIRE(write_key_pair(keys, "head", pair, false, files).ok());
  DRK_CHECK(file_mode(keys) == 0700);
  DRK_CHECK(file_mode(keys + "/head.key") == 0600);
  DRK_CHECK(file_mode(keys + "/head.pub") == 0644);
  auto refused = write_key_pair(keys, "head", new_pair(), false, files);
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_CHECK(refused.error().code == Errc::invalid_argument);
  DRK_CHECK(read_key_pair(keys, "head")->secret_key == pair.secret_key);
}

DRK_TEST_CASE("an existing identity is replaced only when asked") {
  RunDir dir;
  const CurveKeyPair first = new_pair();
  const CurveKeyPair second = new_pair();
  DRK_REQUIRE(write_key_pair(dir.path(), "head", first).ok());
  auto refused = write_key_pair(dir.path(), "head", second);
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_CHECK(refused.error().message.find("--force") != std::string::npos);
  DRK_CHECK(read_key_pair(dir.path(), "head")->secret_key == first.secret_key);

  // A .pub copied from another machine is not overwritten by a new pair of the same name.
  dir.write("node-b.pub", "public-key = \"" + first.public_key + "\"\n");
  DRK_CHECK_FALSE(write_key_pair(dir.path(), "node-b", second).ok());
  DRK_CHECK(*read_public_key(dir.path(), "node-b") == first.public_key);

  DRK_REQUIRE(write_key_pair(dir.path(), "head", second, /*overwrite=*/true).ok());
  DRK_CHECK(read_key_pair(dir.path(), "head")->secret_key == second.secret_key);
  DRK_CHECK(*read_public_key(dir.path(), "head") == second.public_key);
  DRK_CHECK(file_mode(dir.file("head.key")) == 0600);
}

DRK_TEST_CASE("a .key file that group or others may read is refused, naming chmod") {
  RunDir dir;
  DRK_REQUIRE(write_key_pair(dir.path(), "head", new_pair()).ok());
  DRK_REQUIRE(::chmod(dir.file("head.key").c_str(), 0644) == 0);
  auto pair = read_key_pair(dir.path(), "head");
  DRK_REQUIRE_FALSE(pair.ok());
  DRK_CHECK(pair.error().code == Errc::invalid_argument);
  DRK_CHECK(pair.error().message.find("0644") != std::string::npos);
  DRK_CHECK(pair.error().message.find("chmod 600 " + dir.file("head.key")) != std::string::npos);
  DRK_CHECK_FALSE(load_curve_identity(dir.path(), "head").ok());
}

DRK_TEST_CASE("a missing or malformed key file is named with the fix") {
  RunDir dir;
  auto missing = read_key_pair(dir.path(), "node-a");
  DRK_REQUIRE_FALSE(missing.ok());
  DRK_CHECK(missing.error().code == Errc::not_found);
  DRK_CHECK(missing.error().message.find(dir.file("node-a.key")) != std::string::npos);
  DRK_CHECK(missing.error().message.find("drk keys generate " + dir.path().string() + " node-a") != std::string::npos);

  auto no_dir = read_allowed_keys(dir.file("absent"));
  DRK_REQUIRE_FALSE(no_dir.ok());
  DRK_CHECK(no_dir.error().code == Errc::not_found);

  const CurveKeyPair pair = new_pair();
  dir.write("node-b.pub", "# a comment\n\npublic-key = \"short\"\n");
  auto malformed = read_allowed_keys(dir.path());
  DRK_REQUIRE_FALSE(malformed.ok());
  DRK_CHECK(malformed.error().code == Errc::parse_error);
  DRK_CHECK(malformed.error().message.find(dir.file("node-b.pub") + ":3:") != std::string::npos);

  dir.write("node-b.pub", "public-key = \"" + pair.public_key + "\"\nsecret-key = \"" + pair.secret_key + "\"\n");
  auto leaked = read_public_key(dir.path(), "node-b");
  DRK_REQUIRE_FALSE(leaked.ok());
  DRK_CHECK(leaked.error().message.find("secret key") != std::string::npos);

  // A .key whose public key is not the one of its secret key.
  dir.write("node-c.key", "public-key = \"" + new_pair().public_key + "\"\nsecret-key = \"" + pair.secret_key + "\"\n");
  DRK_REQUIRE(::chmod(dir.file("node-c.key").c_str(), 0600) == 0);
  auto mismatched = read_key_pair(dir.path(), "node-c");
  DRK_REQUIRE_FALSE(mismatched.ok());
  DRK_CHECK(mismatched.error().message.find(dir.file("node-c.key") + ":1:") != std::string::npos);
}

DRK_TEST_CASE("loopback endpoints are told from the ones that leave the machine") {
  for (const char* local : {"tcp://127.0.0.1:5555", "tcp://127.1.2.3:*", "tcp://localhost:80", "tcp://[::1]:9000",
                            "tcp://10.0.0.2;127.0.0.1:5555", "inproc://learner", "ipc:///tmp/drk-1/evaluator.0"})
    DRK_CHECK_MESSAGE(is_loopback_endpoint(local), local);
  for (const char* remote : {"tcp://10.0.0.2:5555", "tcp://*:5555", "tcp://0.0.0.0:5555", "tcp://127.0.0.1.evil.com:80",
                             "tcp://1270.0.0.1:1", "tcp://127.0.0.1;10.0.0.2:5555", "tcp://localhost", "udp://127.0.0.1:1",
                             "tcp://[::2]:1"})
    DRK_CHECK_MESSAGE(!is_loopback_endpoint(remote), remote);
}

DRK_TEST_CASE("a CURVE server receives from an allowed client, which it knows by name") {
  CurveServer f;
  auto client = f.client_sending_hello(&f.node_a);
  auto message = receive_within(f.server, 5000ms);
  DRK_REQUIRE(message.has_value());
  DRK_CHECK(message->to_string() == "hello");
  DRK_CHECK(std::string(message->gets("User-Id")) == "node-a");
  DRK_CHECK(f.authenticator->refused() == 0);
}

DRK_TEST_CASE("a client with an unknown key is refused, counted and remembered") {
  CurveServer f;
  const CurveKeyPair stranger = new_pair();
  auto client = f.client_sending_hello(&stranger, /*reconnect_ms=*/-1);
  DRK_REQUIRE(eventually([&] { return f.authenticator->refused() >= 1; }));
  DRK_CHECK_FALSE(receive_within(f.server, 500ms).has_value());
  DRK_CHECK(f.authenticator->refused() == 1);
  const auto refusals = f.authenticator->recent_refusals();
  DRK_REQUIRE(refusals.size() == 1);
  DRK_CHECK(refusals[0].public_key == stranger.public_key);
  DRK_CHECK(refusals[0].mechanism == "CURVE");
  DRK_CHECK(refusals[0].peer_address == "127.0.0.1");
  DRK_CHECK(refusals[0].unix_ms > 0);
}

DRK_TEST_CASE("the last 16 refusals are kept") {
  CurveServer f;
  std::vector<CurveKeyPair> strangers;
  std::vector<zmq::socket_t> clients;
  for (int i = 0; i < 17; ++i) {
    strangers.push_back(new_pair());
    clients.push_back(f.client_sending_hello(&strangers.back(), -1));
    // One at a time, so that the order of the refusals is the order of the clients.
    DRK_REQUIRE(eventually([&] { return f.authenticator->refused() == static_cast<uint64_t>(i + 1); }));
  }
  const auto refusals = f.authenticator->recent_refusals();
  DRK_REQUIRE(refusals.size() == ZapAuthenticator::kRecentRefusals);
  DRK_CHECK(refusals.front().public_key == strangers[1].public_key);
  DRK_CHECK(refusals.back().public_key == strangers[16].public_key);
}

DRK_TEST_CASE("a client without CURVE is refused by the handshake") {
  CurveServer f;
  HandshakeMonitor monitor(f.context, f.server, "null-client");
  auto client = f.client_sending_hello(nullptr, -1);
  DRK_CHECK(monitor.next_event(5000ms) == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
  DRK_CHECK_FALSE(receive_within(f.server, 500ms).has_value());
}

DRK_TEST_CASE("a key allowed at runtime gets in on its next connection") {
  CurveServer f;
  const CurveKeyPair node_b = new_pair();
  {
    auto refused_client = f.client_sending_hello(&node_b);
    DRK_REQUIRE(eventually([&] { return f.authenticator->refused() == 1; }));
  }
  f.authenticator->allow("node-b", node_b.public_key);
  auto client = f.client_sending_hello(&node_b);
  auto message = receive_within(f.server, 5000ms);
  DRK_REQUIRE(message.has_value());
  DRK_CHECK(std::string(message->gets("User-Id")) == "node-b");
  DRK_CHECK(f.authenticator->refused() == 1);
}

DRK_TEST_CASE("without its authenticator a CURVE server admits nobody, and a new one can take over") {
  CurveServer f;
  f.authenticator.reset();  // the context lives on
  {
    auto client = f.client_sending_hello(&f.node_a);
    DRK_CHECK_FALSE(receive_within(f.server, 500ms).has_value());
  }
  f.authenticator = std::make_unique<ZapAuthenticator>(
      f.context, std::map<std::string, std::string>{{"node-a", f.node_a.public_key}});
  auto client = f.client_sending_hello(&f.node_a);
  auto message = receive_within(f.server, 5000ms);
  DRK_REQUIRE(message.has_value());
  DRK_CHECK(std::string(message->gets("User-Id")) == "node-a");
}

DRK_TEST_CASE("ipc and inproc sockets without security pass, with or without a ZAP domain") {
  RunDir dir;
  zmq::context_t context;
  ZapAuthenticator authenticator(context, {});
  for (const std::string transport : {"ipc://" + dir.file("mailbox"), std::string("inproc://mailbox")}) {
    for (const bool with_domain : {false, true}) {
      DRK_INFO(transport << (with_domain ? " with" : " without") << " ZAP domain");
      zmq::socket_t receiver(context, zmq::socket_type::pull);
      receiver.set(zmq::sockopt::linger, 0);
      // A ZAP domain makes libzmq ask the handler about NULL peers of stream transports.
      if (with_domain) receiver.set(zmq::sockopt::zap_domain, kCurveZapDomain);
      const std::string endpoint = transport + (with_domain ? "-with-domain" : "-without-domain");
      receiver.bind(endpoint);
      zmq::socket_t sender(context, zmq::socket_type::push);
      sender.set(zmq::sockopt::linger, 0);
      sender.connect(endpoint);
      DRK_REQUIRE(sender.send(zmq::str_buffer("local"), zmq::send_flags::dontwait).has_value());
      DRK_CHECK(receive_within(receiver, 5000ms).has_value());
    }
  }
  DRK_CHECK(authenticator.refused() == 0);
}

DRK_TEST_CASE("authenticators can follow each other in one context") {
  zmq::context_t context;
  for (int i = 0; i < 50; ++i) ZapAuthenticator authenticator(context, {});
}

DRK_TEST_CASE("a second authenticator in one context is a fault") {
  zmq::context_t context;
  ZapAuthenticator first(context, {});
  bool refused = false;
  try {
    ZapAuthenticator second(context, {});
  } catch (const zmq::error_t& error) {
    refused = error.num() == EADDRINUSE;
  }
  DRK_CHECK(refused);
}

}  // namespace
}  // namespace drk::runtime
