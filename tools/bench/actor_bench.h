// drkernel's side of the benchmark: two actors hosted by runtime::ActorHost, talking through the
// runtime's Transport, with the same payloads as the raw ZeroMQ baseline.
//
// Every message is an Envelope whose PolicyWeights body carries the payload as Data, built,
// encoded, decoded and dispatched to a handler as any actor's message is. Throughput: a source
// actor sends for BenchBudget::throughput and a sink actor counts. Latency: a ping actor sends,
// a pong actor answers with a copy of the payload, and each round trip is timed from the ping's
// handler. inproc places both actors in one runtime process; ipc gives each its own Transport
// (its own ZeroMQ context and process name), so the runtime routes them over its ipc sockets,
// as between two processes. tcp and tcp_curve put the second actor on a second node, "b", of a
// multi-node topology (network.listen on 127.0.0.1), with one Transport per node whose
// NetworkMap places both nodes on 127.0.0.1 at free ports: the runtime routes them over its tcp
// network mailboxes, and with tcp_curve each node has a fresh CURVE key pair and allows only
// the other's public key (the runtime's ZAP authenticator checks every connection).
//
// Errors: timeout when the actors do not finish within the budget plus 10 s; unsupported when
// libzmq has no CURVE; the runtime's own errors (a mailbox that cannot bind, a send that stays
// busy) as they come.
// Thread-safety: each call owns its transports, hosts and temporary run directory.
#pragma once

#include <cstddef>

#include "base/result.h"
#include "messages/envelope.capnp.h"
#include "tools/bench/measurement.h"

namespace drk::bench {

// `traced`: the hosts record every handler call as a span into a trace file of the benchmark's
// run directory (runtime/trace/, as `drk run` does by default), to measure what tracing costs.
Result<Throughput> actor_throughput(BenchTransport transport, std::size_t payload_bytes,
                                    const BenchBudget& budget, bool traced = false);
Result<Latency> actor_latency(BenchTransport transport, std::size_t payload_bytes, const BenchBudget& budget,
                              bool traced = false);

}  // namespace drk::bench
