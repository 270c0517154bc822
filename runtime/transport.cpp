#include "runtime/transport.h"

#include <capnp/dynamic.h>
#include <capnp/message.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>

namespace drk::runtime {

int64_t system_unix_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string socket_dir_for(const std::string& absolute_run_dir) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : absolute_run_dir) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return std::string("/tmp/drk-") + text;
}

std::string_view body_kind(msg::Envelope::Reader envelope) {
  capnp::DynamicStruct::Reader body = capnp::toDynamic(envelope.getBody());
  KJ_IF_MAYBE (field, body.which()) {
    const auto name = field->getProto().getName();  // schema data: static for the program
    return std::string_view(name.cStr(), name.size());
  }
  return "unknown";
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

Transport::Transport(const Topology& topology, std::string local_process, const std::string& absolute_run_dir)
    : topology_(topology),
      local_process_(std::move(local_process)),
      socket_dir_(socket_dir_for(absolute_run_dir)) {
  std::error_code ignored;  // a failure shows at bind, with the path in the message
  std::filesystem::create_directories(socket_dir_, ignored);
}

Transport::~Transport() {
  context_.close();
  std::error_code ignored;
  for (const auto& path : bound_ipc_paths_) std::filesystem::remove(path, ignored);
  std::filesystem::remove(socket_dir_, ignored);  // only when no other process still has sockets
}

Result<std::string> Transport::endpoint_of(std::string_view actor) const {
  const auto process = topology_.process_of(actor);
  if (!process) {
    return make_error(Errc::not_found, "no actor is named '" + std::string(actor) + "' in topology '" +
                                           topology_.name +
                                           "': check the recipient's name (e.g. evaluator.0)");
  }
  if (*process == local_process_) return "inproc://" + std::string(actor);
  return "ipc://" + socket_dir_ + "/" + std::string(actor);
}

std::size_t Transport::capacity_of(std::string_view actor) const {
  const ActorEntry* entry = topology_.find(actor);
  return entry ? entry->mailbox_capacity : ActorEntry{}.mailbox_capacity;
}

Result<zmq::socket_t> Transport::bind_mailbox(const std::string& actor) {
  zmq::socket_t socket(context_, zmq::socket_type::pull);
  socket.set(zmq::sockopt::rcvhwm, static_cast<int>(capacity_of(actor)));
  socket.set(zmq::sockopt::linger, 0);
  const std::string ipc_path = socket_dir_ + "/" + actor;
  for (const std::string& endpoint : {"inproc://" + actor, "ipc://" + ipc_path}) {
    try {
      socket.bind(endpoint);
    } catch (const zmq::error_t& error) {
      return make_error(Errc::io_error, "actor '" + actor + "' cannot bind its mailbox at " + endpoint +
                                            ": " + error.what() +
                                            " (is another run using the same run_dir?)");
    }
  }
  bound_ipc_paths_.push_back(ipc_path);
  return socket;
}

}  // namespace drk::runtime
