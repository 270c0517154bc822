// What a process of a multi-node run reads from its run directory to reach the other nodes:
//   RUN_DIR/network.yaml  every node's address (network_map.h)
//   RUN_DIR/node.yaml     which node this run directory belongs to, and its CURVE key directory
// The head writes both into its run directory before any actor starts; `drk node` writes its
// own into the node's run directory when it is welcomed. A run directory without them belongs
// to a one-machine run.
//
// Both files are written through the file-system seam (base/file_system.h), each whole or not at
// all (write_file_atomically), node.yaml first: a failed write leaves the network.yaml that was
// there, or none.
//
// Thread-safety: reentrant. Errors: io_error / parse_error naming the file and the fix.
#pragma once

#include <optional>
#include <string>

#include "base/file_system.h"
#include "base/result.h"
#include "runtime/nodes/curve_keys.h"
#include "runtime/nodes/network_map.h"
#include "runtime/transport/transport.h"

namespace drk::runtime {

struct NodeIdentity {
  std::string node;
  std::string keys;  // absolute key directory; empty: links are not encrypted
};

Status write_run_network(const std::string& run_dir, const NodeIdentity& identity, const NetworkMap& map,
                         FileSystem& files = real_file_system());
// An empty TransportNetwork (one machine) when the run directory has no network.yaml.
Result<TransportNetwork> load_run_network(const std::string& run_dir, FileSystem& files = real_file_system());

// The CURVE identity `name` in key directory `keys` (nullopt for an empty directory name).
Result<std::optional<CurveIdentity>> load_optional_curve(const std::string& keys, const std::string& name);

}  // namespace drk::runtime
