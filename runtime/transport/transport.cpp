#include "runtime/transport/transport.h"

#include <sys/resource.h>

#include <capnp/message.h>
#include <capnp/schema.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "base/fnv1a.h"
#include "runtime/transport/payload_types.h"

namespace drk::runtime {

int64_t system_unix_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string socket_dir_for(const std::string& absolute_run_dir) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(fnv1a_64(absolute_run_dir)));
  return std::string("/tmp/drk-") + text;
}

std::string_view body_kind(msg::Envelope::Reader envelope) {
  // The union members' names by discriminant, read from the schema once.
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> by_discriminant;
    for (const auto field : capnp::Schema::from<msg::Envelope::Body>().getUnionFields()) {
      const auto proto = field.getProto();
      const auto name = proto.getName();  // schema data: static for the program
      if (by_discriminant.size() <= proto.getDiscriminantValue()) by_discriminant.resize(proto.getDiscriminantValue() + 1);
      by_discriminant[proto.getDiscriminantValue()] = std::string_view(name.cStr(), name.size());
    }
    return by_discriminant;
  }();
  const auto body = envelope.getBody();
  if (body.isPayload()) {
    const PayloadType* type = find_payload_type(envelope.getPayloadType());
    if (type != nullptr) return type->name;
  }
  const auto which = static_cast<std::size_t>(body.which());
  return which < names.size() ? names[which] : "unknown";
}

int poll_sockets(zmq::pollitem_t* items, std::size_t count, std::chrono::milliseconds timeout) {
  using clock = std::chrono::steady_clock;
  const bool forever = timeout.count() < 0;
  const auto until = clock::now() + timeout;
  while (true) {
    long wait = -1;
    if (!forever) {
      wait = std::max<long>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(until - clock::now()).count());
    }
    const int ready = zmq_poll(items, static_cast<int>(count), wait);
    if (ready >= 0) return ready;
    if (zmq_errno() != EINTR) throw zmq::error_t();
  }
}

Transport::Transport(const Topology& topology, std::string local_process, const std::string& absolute_run_dir,
                     TransportNetwork network)
    : topology_(topology),
      local_process_(std::move(local_process)),
      socket_dir_(socket_dir_for(absolute_run_dir)),
      network_(std::move(network)) {
  std::error_code ignored;  // a failure shows at bind, with the path in the message
  std::filesystem::create_directories(socket_dir_, ignored);
  // ZeroMQ's default of 1023 sockets a context is met by a sender with a link to each of about
  // a thousand actors (the Oracle of 128 nodes of 8 Evaluators: docs/multi-node.md, "Scale");
  // the process's descriptor limit is the real bound.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY && files.rlim_cur > 1023) {
    context_.set(zmq::ctxopt::max_sockets, static_cast<int>(std::min<rlim_t>(files.rlim_cur, 1 << 20)));
  }
  if (network_.curve) authenticator_ = std::make_unique<ZapAuthenticator>(context_, network_.curve->allowed);
}

Transport::~Transport() {
  authenticator_.reset();
  context_.close();
  std::error_code ignored;
  for (const auto& path : bound_ipc_paths_) std::filesystem::remove(path, ignored);
  std::filesystem::remove(socket_dir_, ignored);  // only when no other process still has sockets
}

Result<Route> Transport::route_to(std::string_view actor) const {
  const auto process = topology_.process_of(actor);
  if (!process) {
    return make_error(Errc::not_found, "no actor is named '" + std::string(actor) + "' in topology '" +
                                           topology_.name +
                                           "': check the recipient's name (e.g. evaluator.0)");
  }
  if (*process == local_process_) return Route{"inproc://" + std::string(actor), {}};
  if (network_.map.empty() || topology_.node_of(actor) == network_.local_node) {
    return Route{"ipc://" + socket_dir_ + "/" + std::string(actor), {}};
  }
  auto endpoint = network_.map.mailbox_endpoint(topology_, actor, false);
  if (!endpoint) return endpoint.error();
  const NodeAddress* node = network_.map.find(*topology_.node_of(actor));
  return Route{std::move(*endpoint), network_.curve ? node->public_key : std::string()};
}

zmq::socket_t Transport::sender_socket(const Route& route) {
  zmq::socket_t socket(context_, zmq::socket_type::push);
  if (!route.server_public_key.empty()) make_curve_client(socket, network_.curve->own, route.server_public_key);
  return socket;
}

uint64_t Transport::refused_peers() const { return authenticator_ ? authenticator_->refused() : 0; }

Result<std::optional<zmq::socket_t>> Transport::bind_network_mailbox(const std::string& actor) {
  if (network_.map.empty()) return std::optional<zmq::socket_t>();
  auto endpoint = network_.map.mailbox_endpoint(topology_, actor, true);
  if (!endpoint) return endpoint.error();
  zmq::socket_t socket(context_, zmq::socket_type::pull);
  socket.set(zmq::sockopt::rcvhwm, static_cast<int>(capacity_of(actor)));
  socket.set(zmq::sockopt::linger, 0);
  if (network_.curve) make_curve_server(socket, network_.curve->own);
  try {
    socket.bind(*endpoint);
  } catch (const zmq::error_t& error) {
    return make_error(Errc::io_error, "actor '" + actor + "' cannot listen at " + *endpoint + ": " + error.what() +
                                          " (is the port taken? choose another port base with "
                                          "network.listen or `drk node --port`)");
  }
  return std::optional<zmq::socket_t>(std::move(socket));
}

std::size_t Transport::capacity_of(std::string_view actor) const {
  const ActorEntry* entry = topology_.find(actor);
  return entry ? entry->mailbox_capacity : ActorEntry{}.mailbox_capacity;
}

Result<Transport::LocalMailboxes> Transport::bind_mailbox(const std::string& actor) {
  LocalMailboxes mailboxes{zmq::socket_t(context_, zmq::socket_type::pull),
                           zmq::socket_t(context_, zmq::socket_type::pull)};
  const std::string ipc_path = socket_dir_ + "/" + actor;
  const std::pair<zmq::socket_t*, std::string> bindings[] = {{&mailboxes.in_process, "inproc://" + actor},
                                                             {&mailboxes.node, "ipc://" + ipc_path}};
  for (const auto& [socket, endpoint] : bindings) {
    socket->set(zmq::sockopt::rcvhwm, static_cast<int>(capacity_of(actor)));
    socket->set(zmq::sockopt::linger, 0);
    try {
      socket->bind(endpoint);
    } catch (const zmq::error_t& error) {
      return make_error(Errc::io_error, "actor '" + actor + "' cannot bind its mailbox at " + endpoint +
                                            ": " + error.what() +
                                            " (is another run using the same run_dir?)");
    }
  }
  bound_ipc_paths_.push_back(ipc_path);
  return mailboxes;
}

}  // namespace drk::runtime
