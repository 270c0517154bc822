// The baseline: raw ZeroMQ PUSH/PULL through cppzmq, without envelopes, codec or actors.
//
// Throughput: one PUSH sends payload-sized frames for BenchBudget::throughput; a PULL on
// another thread counts them. Latency: two PUSH/PULL links, one each way; the pong thread sends
// every frame it receives back unchanged, and each round trip is timed. Over ipc and tcp the two
// ends use two ZeroMQ contexts, as two processes would; inproc needs one. tcp binds 127.0.0.1
// on a free port; tcp_curve adds CURVE encryption and authentication (fresh keys per link, no
// ZAP handler). ipc endpoints live in `ipc_dir`.
//
// High-water marks are 1000 at both ends, the runtime's default mailbox capacity. Errors:
// unsupported when this libzmq has no CURVE; timeout when a frame does not arrive (or cannot be
// sent) in 10 s.
// Thread-safety: each call owns its sockets and threads; calls may not overlap.
#pragma once

#include <cstddef>
#include <string>

#include "base/result.h"
#include "tools/bench/measurement.h"

namespace drk::bench {

bool curve_available();

Result<Throughput> raw_throughput(BenchTransport transport, std::size_t payload_bytes,
                                  const BenchBudget& budget, const std::string& ipc_dir);
Result<Latency> raw_latency(BenchTransport transport, std::size_t payload_bytes, const BenchBudget& budget,
                            const std::string& ipc_dir);

}  // namespace drk::bench
