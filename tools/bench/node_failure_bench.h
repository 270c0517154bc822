// Node failure detection time: from a node's last heartbeat (it dies right after) to the head's
// runtime::NodeRegistry reporting the node lost.
//
// Each sample starts a NodeRegistry for a topology with one node, "b" (network.listen on a free
// port of 127.0.0.1, the default heartbeat period and node timeout; CURVE keys for the head and
// b, checked by a ZapAuthenticator, as in a run with network.keys), and plays node b on a
// DEALER socket as `drk node` does: a NodeJoin, the NodeWelcome, three heartbeats one period
// apart and a last one, then silence (the socket closes, as when the machine goes away). The
// time is from that last heartbeat to the registry's `lost` event; it includes the timeout
// (network.node_timeout_ms) and the registry's tick, which is what "detected" costs.
//
// Errors: unsupported when libzmq has no CURVE; timeout when the registry does not welcome the node or report it lost within 10 s;
// protocol_error when it refuses the join; the registry's own errors (a port that cannot bind).
// Thread-safety: each call owns its registry, context and socket.
#pragma once

#include <vector>

#include "base/result.h"

namespace drk::bench {

Result<std::vector<double>> node_failure_detection_ms(int samples);

}  // namespace drk::bench
