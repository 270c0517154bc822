// NetworkMap: where every node of a multi-node run is reached, and the ports of its mailboxes.
//
// A node (the head, or one that joined with `drk node --join`) has an advertised host, the host
// its sockets bind to, a port base and, when links are encrypted, its CURVE public key. The
// actors with a mailbox on a node (Topology::mailboxes_on, a fixed order) listen on consecutive
// tcp ports from the port base: tcp://HOST:(port_base + position). The head's node endpoint
// (network.listen, port P: joins, heartbeats and inspection) is followed by its mailboxes from
// P + 1.
//
// The head writes the map to RUN_DIR/network.yaml before any actor starts (every node has
// joined by then); a node writes the copy it was sent to its own run directory. Actor hosts
// read it from there.
//
// Thread-safety: a value type. Errors: io_error / parse_error naming the file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/file_system.h"
#include "base/result.h"
#include "runtime/topology/topology.h"

namespace drk::runtime {

struct NodeAddress {
  std::string host;       // what other nodes connect to
  std::string bind_host;  // what this node's sockets bind to ("0.0.0.0" or host)
  uint16_t port_base = 0;
  std::string public_key;  // Z85 CURVE key; empty when links are not encrypted

  bool operator==(const NodeAddress&) const = default;
};

struct NetworkMap {
  std::map<std::string, NodeAddress, std::less<>> nodes;

  bool empty() const { return nodes.empty(); }
  const NodeAddress* find(std::string_view node) const;
  // tcp://HOST:PORT of an actor's mailbox as others reach it (bind: false) or as its own node
  // binds it (bind: true). not_found for an actor without a node in the map.
  Result<std::string> mailbox_endpoint(const Topology& topology, std::string_view actor, bool bind) const;
};

// Host and port of tcp://HOST:PORT; invalid_argument otherwise.
struct HostPort {
  std::string host;
  uint16_t port = 0;
};
Result<HostPort> parse_tcp_endpoint(std::string_view endpoint);

// The head's own entry, from network.listen and network.advertise: it binds where it listens
// and advertises network.advertise, or the listen host unless that is a wildcard (then the
// machine's host name).
NodeAddress head_address(const NetworkSettings& network, std::string public_key);

// The YAML form (as in network.yaml and NodeWelcome.networkYaml); `source` names it in errors.
std::string network_map_text(const NetworkMap& map);
Result<NetworkMap> parse_network_map(const std::string& text, const std::string& source);

// Replaced atomically (write_file_atomically): a failed write leaves the previous map whole.
Status write_network_map(const NetworkMap& map, const std::string& path, FileSystem& files = real_file_system());
Result<NetworkMap> read_network_map(const std::string& path, FileSystem& files = real_file_system());

}  // namespace drk::runtime
