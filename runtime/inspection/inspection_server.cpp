#include "runtime/inspection/inspection_server.h"

#include <capnp/message.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <kj/exception.h>
#include <zmq_addon.hpp>

#include "runtime/transport/envelope_frame.h"
#include "runtime/topology/topology.h"
#include "runtime/transport/transport.h"

namespace drk::runtime {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::milliseconds kStopCheck{100};  // how soon the server notices stop
constexpr std::size_t kMaxRequestBytes = 64u << 10;

}  // namespace

std::string inspect_endpoint_file(const std::string& run_dir) { return run_dir + "/inspect.endpoint"; }

std::string local_inspect_endpoint(const std::string& socket_dir) { return "ipc://" + socket_dir + "/@inspect"; }

Result<std::unique_ptr<InspectionServer>> InspectionServer::start(zmq::context_t& context,
                                                                   const std::string& endpoint,
                                                                   const std::string& run_dir,
                                                                   const InspectionBoard& board) {
  zmq::socket_t socket(context, zmq::socket_type::router);
  socket.set(zmq::sockopt::linger, 0);
  try {
    socket.bind(endpoint);
  } catch (const zmq::error_t& error) {
    return make_error(Errc::io_error, "the inspection endpoint cannot bind at " + endpoint + ": " + error.what());
  }
  // Written whole under another name, then renamed: a reader never sees half an endpoint.
  const std::string file = inspect_endpoint_file(run_dir);
  const std::string partial = file + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << endpoint << "\n";
    if (!out) return make_error(Errc::io_error, "cannot write '" + partial + "': check that the run directory is writable");
  }
  std::error_code error;
  fs::rename(partial, file, error);
  if (error) return make_error(Errc::io_error, "cannot write '" + file + "': " + error.message());
  return std::unique_ptr<InspectionServer>(new InspectionServer(std::move(socket), file, board));
}

InspectionServer::InspectionServer(zmq::socket_t socket, std::string endpoint_file, const InspectionBoard& board)
    : socket_(std::move(socket)), endpoint_file_(std::move(endpoint_file)), board_(board) {
  thread_ = std::thread([this] { run(); });
}

InspectionServer::~InspectionServer() {
  stopping_ = true;
  thread_.join();
  socket_.close();
  std::error_code ignored;
  fs::remove(endpoint_file_, ignored);
}

void InspectionServer::run() {
  sigset_t blocked;  // the head's main thread waits for these
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
  while (!stopping_) {
    poll_sockets(&item, 1, kStopCheck);
    if (item.revents & ZMQ_POLLIN) answer();
  }
}

void InspectionServer::answer() {
  std::vector<zmq::message_t> frames;
  if (!zmq::recv_multipart(socket_, std::back_inserter(frames), zmq::recv_flags::dontwait)) return;
  // From a REQ socket: identity, empty delimiter, request.
  if (frames.size() != 3 || frames[1].size() != 0) return;
  auto request = decode_envelope_frame(std::move(frames[2]), kMaxRequestBytes);
  if (!request) return;
  try {
    if (!request->root<msg::Envelope>().getBody().isInspectRequest()) return;
  } catch (const kj::Exception&) {
    return;
  }
  const SystemView view = board_.view();
  std::array<zmq::message_t, 3> reply{std::move(frames[0]), zmq::message_t(),
                                      envelope_frame([&](msg::Envelope::Builder envelope) {
                                        envelope.setSender(std::string(kHeadActor));
                                        write_system_report(view, envelope.getBody().initSystemReport());
                                      })};
  (void)zmq::send_multipart(socket_, reply, zmq::send_flags::dontwait);
}

Result<std::string> resolve_inspect_address(const std::string& address) {
  if (address.find("://") != std::string::npos) return address;
  const std::string file = inspect_endpoint_file(address);
  std::ifstream in(file);
  std::string endpoint;
  if (!in || !std::getline(in, endpoint) || endpoint.empty()) {
    if (!fs::is_directory(address)) {
      return make_error(Errc::not_found, "'" + address +
                                             "' is neither a run directory nor an endpoint (tcp://HOST:PORT, "
                                             "ipc://PATH)");
    }
    return make_error(Errc::not_found, "no run is live in '" + address + "': it has no inspect.endpoint (`drk run` " +
                                           "writes it while the run is alive)");
  }
  return endpoint;
}

InspectionClient::InspectionClient(std::string endpoint, std::optional<CurveClientKeys> curve)
    : endpoint_(std::move(endpoint)), curve_(std::move(curve)) {}

Result<SystemView> InspectionClient::fetch(std::chrono::milliseconds timeout) {
  zmq::socket_t socket(context_, zmq::socket_type::req);
  socket.set(zmq::sockopt::linger, 0);
  if (curve_) make_curve_client(socket, curve_->own, curve_->server_public_key);
  try {
    socket.connect(endpoint_);
  } catch (const zmq::error_t& error) {
    return make_error(Errc::invalid_argument, "cannot connect to '" + endpoint_ + "': " + error.what());
  }
  auto request = envelope_frame([](msg::Envelope::Builder envelope) {
    envelope.setSender("inspect");
    envelope.setRecipient(std::string(kHeadActor));
    envelope.getBody().initInspectRequest();
  });
  const auto no_answer = [&] {
    return make_error(Errc::peer_unavailable, "no answer from " + endpoint_ + " within " +
                                                  std::to_string(timeout.count()) +
                                                  " ms: the run has ended, or its head is stuck" +
                                                  (curve_ ? ", or it does not allow this key" : ""));
  };
  if (!socket.send(request, zmq::send_flags::dontwait)) return no_answer();
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  if (poll_sockets(&item, 1, timeout) == 0) return no_answer();
  zmq::message_t frame;
  if (!socket.recv(frame, zmq::recv_flags::dontwait)) return no_answer();
  auto decoded = decode_envelope_frame(std::move(frame), DecodeLimits{}.max_frame_bytes);
  if (!decoded) return decoded.error();
  try {
    const auto body = decoded->root<msg::Envelope>().getBody();
    if (!body.isSystemReport()) {
      return make_error(Errc::protocol_error, endpoint_ + " answered with a " +
                                                  std::string(body_kind(decoded->root<msg::Envelope>())) +
                                                  ", not a systemReport: is it a drk inspection endpoint?");
    }
    return read_system_report(body.getSystemReport());
  } catch (const kj::Exception& fault) {
    return make_error(Errc::protocol_error, endpoint_ + " answered with a malformed report: " +
                                                fault.getDescription().cStr());
  }
}

}  // namespace drk::runtime
