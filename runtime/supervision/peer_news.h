// PeerNews: what the supervisors and the head tell every actor about others (Control messages):
// that an actor was restarted (re-send what it held) or that its node was lost (move its work).
//
// Thread-safety: uses `control`, an Outbox, so call it on the thread that owns that Outbox.
// Errors: a recipient that cannot be told (full mailbox, unreachable node) is logged, not fatal:
// it learns the state from later messages or its own timeouts.
#pragma once

#include <string>
#include <vector>

#include "runtime/transport/outbox.h"
#include "runtime/topology/topology.h"

namespace drk::runtime {

enum class PeerNews { restarted, lost };

// Tells every actor of the topology (skipping those on `skip_node`, when given) about each of
// `actors`.
void tell_every_actor(Outbox& control, const Topology& topology, const std::vector<std::string>& actors,
                      PeerNews news, const std::string& skip_node = {});

}  // namespace drk::runtime
