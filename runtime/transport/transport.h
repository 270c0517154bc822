// Transport: how actors reach each other over ZeroMQ.
//
// Every actor owns two PULL sockets for its mailbox on this node: one bound at inproc://NAME,
// which only this process can reach (what arrives there was encoded by this process's own
// Outboxes, so the host reads it without the checks that untrusted bytes need: codec.h,
// decode_own), and one bound at ipc://SOCKET_DIR/NAME for the other processes of the node; in a
// multi-node run a third PULL socket, its network mailbox, listens on tcp (network_map.h gives
// the port), CURVE-encrypted when the run has keys. A sender keeps
// one PUSH socket per destination (outbox.h), connected to the inproc endpoint when the
// recipient lives in the same process, to the ipc endpoint when it lives on the same node, and
// to its tcp endpoint otherwise, so the messages of one sender to one recipient take one path
// and arrive in the order sent. Both ends
// have a high-water mark of the recipient's mailbox capacity: a full mailbox makes send() wait
// up to SendOptions::wait_for_room and then fail with Errc::busy.
//
// SOCKET_DIR is a short directory derived from the run directory (/tmp/drk-<hash>), because ipc
// paths are limited to about 107 bytes. A Transport creates it, removes the socket files of the
// mailboxes it bound when it is destroyed, and the directory too once it is empty.
//
// Thread-safety: a Transport (one per process: it owns the ZeroMQ context) may be shared by
// threads; mailboxes and Outboxes are used by one thread each, as ZeroMQ sockets must be.
// Every socket must be closed (its owner destroyed) before the Transport is.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "runtime/actor.h"
#include "runtime/transport/codec.h"
#include "runtime/nodes/curve_keys.h"
#include "runtime/nodes/network_map.h"
#include "base/result.h"
#include "runtime/topology/topology.h"
#include "runtime/nodes/zap_authenticator.h"

namespace drk::runtime {

// Milliseconds since the Unix epoch.
int64_t system_unix_ms();

// The directory of a run's ipc sockets: /tmp/drk-<16 hex digits of a hash of run_dir>.
std::string socket_dir_for(const std::string& absolute_run_dir);

// The name of a message's body ("control", "hostStats", ...; a payload's registered name,
// payload_types.h, or "payload" for a type this program does not register), for logs; it lives
// as long as the program and is NUL-terminated (data() is a C string).
std::string_view body_kind(msg::Envelope::Reader envelope);

// zmq_poll that resumes after signals. Returns the number of ready items.
int poll_sockets(zmq::pollitem_t* items, std::size_t count, std::chrono::milliseconds timeout);

// How the processes of a multi-node run reach each other (an empty map: one machine).
struct TransportNetwork {
  std::string local_node = std::string(kHeadNode);
  NetworkMap map;
  // Set: tcp links are CURVE-encrypted; peers whose keys are not allowed are refused.
  std::optional<CurveIdentity> curve;
};

// Where a sender connects to reach one actor; server_public_key is set for a CURVE link.
struct Route {
  std::string endpoint;
  std::string server_public_key;
};

class Transport {
 public:
  // `topology` must outlive the Transport; `local_process` is the process this one is.
  Transport(const Topology& topology, std::string local_process, const std::string& absolute_run_dir,
            TransportNetwork network = {});
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  const Topology& topology() const { return topology_; }
  const std::string& local_process() const { return local_process_; }
  const std::string& socket_dir() const { return socket_dir_; }
  zmq::context_t& context() { return context_; }

  const TransportNetwork& network() const { return network_; }

  // inproc://NAME for an actor of this process, ipc://SOCKET_DIR/NAME for one on this node, its
  // tcp endpoint otherwise. not_found for a name the topology does not have; peer_unavailable
  // for an actor on a node that is not in the map.
  Result<Route> route_to(std::string_view actor) const;
  std::size_t capacity_of(std::string_view actor) const;
  // A PUSH socket (options set, not connected) for `route`: CURVE client when the route says.
  zmq::socket_t sender_socket(const Route& route);

  // The PULL sockets of a local actor: `in_process` bound at its inproc endpoint, `node` at its
  // ipc endpoint. Nothing but this process's Outboxes may connect to `in_process`.
  struct LocalMailboxes {
    zmq::socket_t in_process;
    zmq::socket_t node;
  };
  Result<LocalMailboxes> bind_mailbox(const std::string& actor);
  // Its network mailbox in a multi-node run (nullopt on one machine). io_error when the port is
  // taken.
  Result<std::optional<zmq::socket_t>> bind_network_mailbox(const std::string& actor);
  // Peers refused by CURVE authentication so far (0 without CURVE).
  uint64_t refused_peers() const;

 private:
  const Topology& topology_;
  std::string local_process_;
  std::string socket_dir_;
  std::vector<std::string> bound_ipc_paths_;
  TransportNetwork network_;
  zmq::context_t context_;
  std::unique_ptr<ZapAuthenticator> authenticator_;  // before context_ closes
};

}  // namespace drk::runtime
