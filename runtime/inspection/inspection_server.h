// The head's inspection endpoint, and the client `drk inspect` and `drk top` use.
//
// InspectionServer binds a ZeroMQ ROUTER socket at an endpoint (the head's is
// ipc://SOCKET_DIR/@inspect; a tcp:// endpoint works the same, for runs across machines),
// writes the endpoint to RUN_DIR/inspect.endpoint, and answers each request (an Envelope with
// an InspectRequest, from a REQ socket) with an Envelope holding the board's SystemReport.
// Requests that do not decode are dropped; replies to clients that left are dropped.
// Destroying the server stops its thread, closes the socket and removes the endpoint file.
//
// InspectionClient asks one endpoint, with a fresh REQ socket per request so that a request
// that timed out leaves nothing behind. A multi-node run's head answers at its node endpoint
// (network.listen) too, with CURVE when the run has keys: the client then needs a key pair the
// head allows and the head's public key. resolve_inspect_address() turns what a person typed
// (a run directory, or an endpoint such as tcp://host:port) into an endpoint.
//
// Thread-safety: the server answers on its own thread (the board is thread-safe); a client is
// used by one thread. The server must be destroyed before the zmq context it was given.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "runtime/nodes/curve_keys.h"
#include "runtime/inspection/inspection_board.h"
#include "runtime/inspection/inspection_view.h"
#include "base/result.h"

namespace drk::runtime {

// RUN_DIR/inspect.endpoint
std::string inspect_endpoint_file(const std::string& run_dir);
// ipc://SOCKET_DIR/@inspect ('@' is not allowed in actor names, so no mailbox can clash).
std::string local_inspect_endpoint(const std::string& socket_dir);

class InspectionServer {
 public:
  // Errors: io_error when the endpoint cannot be bound or the endpoint file written.
  static Result<std::unique_ptr<InspectionServer>> start(zmq::context_t& context, const std::string& endpoint,
                                                         const std::string& run_dir,
                                                         const InspectionBoard& board);
  ~InspectionServer();
  InspectionServer(const InspectionServer&) = delete;
  InspectionServer& operator=(const InspectionServer&) = delete;

 private:
  InspectionServer(zmq::socket_t socket, std::string endpoint_file, const InspectionBoard& board);
  void run();
  void answer();

  zmq::socket_t socket_;
  std::string endpoint_file_;
  const InspectionBoard& board_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// An endpoint as is (it contains "://"), else a run directory: its inspect.endpoint.
// Errors: not_found when the directory has no inspect.endpoint (no run is live there).
Result<std::string> resolve_inspect_address(const std::string& address);

// The keys a client needs to reach a CURVE endpoint (a multi-node run's head).
struct CurveClientKeys {
  CurveKeyPair own;
  std::string server_public_key;
};

class InspectionClient {
 public:
  explicit InspectionClient(std::string endpoint, std::optional<CurveClientKeys> curve = std::nullopt);

  // Errors: peer_unavailable when no answer came within `timeout` (the run ended, or its head
  // is stuck); protocol_error for an answer that is not a SystemReport.
  Result<SystemView> fetch(std::chrono::milliseconds timeout = std::chrono::seconds(2));

  const std::string& endpoint() const { return endpoint_; }

 private:
  std::string endpoint_;
  std::optional<CurveClientKeys> curve_;
  zmq::context_t context_;
};

}  // namespace drk::runtime
