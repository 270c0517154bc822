// PeerNews: what the supervisors and the head tell actors about others (Control messages): that
// an actor was restarted (re-send what it held) or that its node was lost (move its work, fail
// the requests it holds).
//
// Whom: the actors of other roles. Replicas of one role (evaluator.1, evaluator.2) never send to
// one another, so they hold nothing of each other's to re-send or fail; at 1000 nodes of 8
// Evaluators, telling them too made one lost node 8 x 8,000 messages on the head's main thread.
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

// The actors to tell about `subject`: every actor of the topology of another role than its (all
// of them for an actor the topology does not list), skipping those on `skip_node` when given.
std::vector<std::string> news_recipients(const Topology& topology, const std::string& subject,
                                         const std::string& skip_node = {});

// Tells each of `actors`' news_recipients about it.
void tell_every_actor(Outbox& control, const Topology& topology, const std::vector<std::string>& actors,
                      PeerNews news, const std::string& skip_node = {});

}  // namespace drk::runtime
