#include "tools/bench/raw_zmq_bench.h"

#include <zmq.h>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>
#include <zmq.hpp>

namespace drk::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kHighWaterMark = 1000;
constexpr int kReceiveTimeoutMs = 10000;
constexpr int kWarmUpRoundTrips = 20;

std::atomic<int> link_counter{0};

struct CurveKeys {
  char server_public[41];
  char server_secret[41];
  char client_public[41];
  char client_secret[41];
};

// One direction: frames pushed into `push` come out of `pull`.
struct Link {
  zmq::socket_t pull;
  zmq::socket_t push;
};

Result<Link> make_link(BenchTransport transport, zmq::context_t& pull_context, zmq::context_t& push_context,
                       const std::string& ipc_dir) {
  Link link{zmq::socket_t(pull_context, zmq::socket_type::pull),
            zmq::socket_t(push_context, zmq::socket_type::push)};
  for (zmq::socket_t* socket : {&link.pull, &link.push}) socket->set(zmq::sockopt::linger, 0);
  link.pull.set(zmq::sockopt::rcvhwm, kHighWaterMark);
  link.pull.set(zmq::sockopt::rcvtimeo, kReceiveTimeoutMs);
  link.push.set(zmq::sockopt::sndhwm, kHighWaterMark);
  link.push.set(zmq::sockopt::sndtimeo, kReceiveTimeoutMs);
  if (transport == BenchTransport::tcp_curve) {
    CurveKeys keys;
    if (zmq_curve_keypair(keys.server_public, keys.server_secret) != 0 ||
        zmq_curve_keypair(keys.client_public, keys.client_secret) != 0) {
      return make_error(Errc::unsupported,
                        "this libzmq cannot make CURVE keys: it was built without libsodium");
    }
    link.pull.set(zmq::sockopt::curve_server, true);
    link.pull.set(zmq::sockopt::curve_secretkey, keys.server_secret);
    link.push.set(zmq::sockopt::curve_serverkey, keys.server_public);
    link.push.set(zmq::sockopt::curve_publickey, keys.client_public);
    link.push.set(zmq::sockopt::curve_secretkey, keys.client_secret);
  }
  const int number = link_counter++;
  switch (transport) {
    case BenchTransport::inproc:
      link.pull.bind("inproc://raw-" + std::to_string(number));
      break;
    case BenchTransport::ipc:
      link.pull.bind("ipc://" + ipc_dir + "/raw-" + std::to_string(number));
      break;
    case BenchTransport::tcp:
    case BenchTransport::tcp_curve:
      link.pull.bind("tcp://127.0.0.1:*");
      break;
  }
  link.push.connect(link.pull.get(zmq::sockopt::last_endpoint));
  return link;
}

// The contexts of one measurement: a shared one for inproc, one per end otherwise.
struct Contexts {
  explicit Contexts(BenchTransport transport) {
    if (transport != BenchTransport::inproc) far.emplace();
  }
  zmq::context_t near;
  std::optional<zmq::context_t> far;
  zmq::context_t& far_end() { return far ? *far : near; }
};

Error timed_out(BenchTransport transport) {
  return make_error(Errc::timeout, "raw ZeroMQ over " + std::string(transport_name(transport)) +
                                       ": a frame did not arrive within 10 s");
}

}  // namespace

bool curve_available() { return zmq_has("curve") != 0; }

Result<Throughput> raw_throughput(BenchTransport transport, std::size_t payload_bytes,
                                  const BenchBudget& budget, const std::string& ipc_dir) {
  Contexts contexts(transport);
  auto link = make_link(transport, contexts.far_end(), contexts.near, ipc_dir);
  if (!link) return link.error();

  Throughput result;
  bool received_all = true;
  std::thread receiver([&] {
    zmq::message_t frame;
    if (!link->pull.recv(frame)) {
      received_all = false;
      return;
    }
    const auto first = Clock::now();
    auto last = first;
    while (true) {
      if (!link->pull.recv(frame)) {
        received_all = false;
        return;
      }
      if (frame.size() == 0) break;  // the end marker
      ++result.messages;
      last = Clock::now();
    }
    result.seconds = std::chrono::duration<double>(last - first).count();
  });

  const std::vector<char> payload(payload_bytes, 'x');
  const auto until = Clock::now() + budget.throughput;
  while (Clock::now() < until) {
    for (int batch = 0; batch < 64; ++batch)
      link->push.send(zmq::message_t(payload.data(), payload.size()), zmq::send_flags::none);
  }
  link->push.send(zmq::message_t(), zmq::send_flags::none);
  receiver.join();
  if (!received_all) return timed_out(transport);
  return result;
}

Result<Latency> raw_latency(BenchTransport transport, std::size_t payload_bytes, const BenchBudget& budget,
                            const std::string& ipc_dir) {
  Contexts contexts(transport);
  auto there = make_link(transport, contexts.far_end(), contexts.near, ipc_dir);
  if (!there) return there.error();
  auto back = make_link(transport, contexts.near, contexts.far_end(), ipc_dir);
  if (!back) return back.error();

  std::thread pong([&] {
    zmq::message_t frame;
    while (there->pull.recv(frame) && frame.size() != 0) back->push.send(frame, zmq::send_flags::none);
  });

  Latency result;
  bool answered = true;
  const std::vector<char> payload(payload_bytes, 'x');
  zmq::message_t reply;
  const auto until = Clock::now() + budget.latency;
  for (std::size_t trip = 0; trip < budget.max_round_trips + kWarmUpRoundTrips; ++trip) {
    const auto sent = Clock::now();
    if (sent >= until && trip > kWarmUpRoundTrips) break;
    there->push.send(zmq::message_t(payload.data(), payload.size()), zmq::send_flags::none);
    if (!back->pull.recv(reply)) {
      answered = false;
      break;
    }
    if (trip >= kWarmUpRoundTrips) result.round_trips_us.push_back(microseconds_between(sent, Clock::now()));
  }
  there->push.send(zmq::message_t(), zmq::send_flags::none);
  pong.join();
  if (!answered) return timed_out(transport);
  return result;
}

}  // namespace drk::bench
