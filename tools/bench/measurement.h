// What the runtime benchmark measures, and how long each measurement may take.
//
// A throughput measurement sends messages of one payload size one way for a while and counts
// what arrived; a latency measurement bounces one message back and forth (ping-pong) and keeps
// every round trip. Both stop at BenchBudget's time, so the whole run has a bounded duration.
// Plain values; no shared state.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace drk::bench {

// The ZeroMQ transports measured, for raw sockets and for drkernel's actors alike. tcp binds
// 127.0.0.1; tcp_curve adds CURVE encryption and authentication.
enum class BenchTransport { inproc, ipc, tcp, tcp_curve };

inline constexpr BenchTransport kBenchTransports[] = {BenchTransport::inproc, BenchTransport::ipc,
                                                      BenchTransport::tcp, BenchTransport::tcp_curve};

// "inproc", "ipc", "tcp", "tcp+curve".
inline std::string_view transport_name(BenchTransport transport) {
  switch (transport) {
    case BenchTransport::inproc:
      return "inproc";
    case BenchTransport::ipc:
      return "ipc";
    case BenchTransport::tcp:
      return "tcp";
    case BenchTransport::tcp_curve:
      return "tcp+curve";
  }
  return "?";
}

struct BenchBudget {
  std::chrono::milliseconds throughput{1000};  // per throughput measurement
  std::chrono::milliseconds latency{1000};     // per latency measurement
  std::size_t max_round_trips = 200000;        // a latency measurement stops at whichever comes first
  int restart_samples = 7;
  int node_failure_samples = 3;  // about 2 s each
};

struct Throughput {
  uint64_t messages = 0;  // received between the first and the last (the first starts the clock)
  double seconds = 0;
  double per_second() const { return seconds > 0 ? static_cast<double>(messages) / seconds : 0; }
};

struct Latency {
  std::vector<double> round_trips_us;

  // The q-quantile (0..1) by nearest rank; 0 without samples.
  double quantile_us(double q) const {
    if (round_trips_us.empty()) return 0;
    std::vector<double> sorted = round_trips_us;
    std::sort(sorted.begin(), sorted.end());
    const auto rank = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
    return sorted[std::min(rank, sorted.size() - 1)];
  }
};

inline double microseconds_between(std::chrono::steady_clock::time_point from,
                                   std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

}  // namespace drk::bench
