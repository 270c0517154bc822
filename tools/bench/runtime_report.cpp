#include "tools/bench/runtime_report.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <optional>
#include <thread>
#include <vector>

#include "base/json_text.h"
#include "runtime/log.h"
#include "base/json_text.h"
#include "tools/bench/actor_bench.h"
#include "tools/bench/measurement.h"
#include "tools/bench/node_failure_bench.h"
#include "tools/bench/raw_zmq_bench.h"
#include "tools/bench/restart_bench.h"
#include "tools/bench/statistics.h"
#include "tools/bench/temp_dir.h"

namespace drk::bench {
namespace {

using namespace std::chrono_literals;

constexpr double kThroughputGoal = 0.7;  // drkernel/raw messages per second, at least
constexpr double kP99Goal = 1.5;         // drkernel/raw p99 round trip, at most
constexpr double kRestartGoalMs = 200;   // median, below
constexpr double kNodeFailureGoalMs = 3000;  // median, below

struct Side {
  double messages_per_second = 0;
  double p50_us = 0;
  double p99_us = 0;
};

struct Row {
  BenchTransport transport;
  std::size_t payload_bytes;
  Side raw;
  Side drk;

  double throughput_ratio() const { return drk.messages_per_second / raw.messages_per_second; }
  double p99_ratio() const { return drk.p99_us / raw.p99_us; }
};

std::string payload_name(std::size_t bytes) {
  return bytes >= 1024 ? std::to_string(bytes / 1024) + " KiB" : std::to_string(bytes) + " B";
}

// "tcp_curve_64KiB": the prefix of a row's JSON ratio fields.
std::string row_key(const Row& row) {
  std::string transport(transport_name(row.transport));
  std::replace(transport.begin(), transport.end(), '+', '_');
  std::string payload = payload_name(row.payload_bytes);
  payload.erase(std::remove(payload.begin(), payload.end(), ' '), payload.end());
  return transport + "_" + payload;
}

std::string rate(double per_second) {
  char text[32];
  if (per_second >= 1e6) {
    std::snprintf(text, sizeof text, "%.2f M", per_second / 1e6);
  } else if (per_second >= 1e3) {
    std::snprintf(text, sizeof text, "%.1f k", per_second / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.0f", per_second);
  }
  return text;
}

std::string fixed(double value, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}


Side side(const Throughput& throughput, const Latency& latency) {
  return Side{throughput.per_second(), latency.quantile_us(0.5), latency.quantile_us(0.99)};
}

// The better of two repetitions: the higher rate, and the round trips of the lower p99.
Side best(const Side& a, const Side& b) {
  Side better = a.p99_us <= b.p99_us ? a : b;
  better.messages_per_second = std::max(a.messages_per_second, b.messages_per_second);
  return better;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return text;
}

// The columns of a row's two sides: "raw" and "drk", or "off" and "on" (tracing).
std::string table_header(const std::string& first = "raw", const std::string& second = "drk") {
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %-7s %10s %10s %6s | %17s %17s %9s", "transport", "payload",
                (first + " msg/s").c_str(), (second + " msg/s").c_str(), "ratio", (first + " p50/p99 us").c_str(),
                (second + " p50/p99 us").c_str(), "p99 ratio");
  return line;
}

std::string table_row(const Row& row) {
  char line[256];
  const std::string raw_latency = fixed(row.raw.p50_us, 1) + " / " + fixed(row.raw.p99_us, 1);
  const std::string drk_latency = fixed(row.drk.p50_us, 1) + " / " + fixed(row.drk.p99_us, 1);
  std::snprintf(line, sizeof line, "%-10s %-7s %10s %10s %6s | %17s %17s %9s",
                std::string(transport_name(row.transport)).c_str(), payload_name(row.payload_bytes).c_str(),
                rate(row.raw.messages_per_second).c_str(), rate(row.drk.messages_per_second).c_str(),
                fixed(row.throughput_ratio(), 2).c_str(), raw_latency.c_str(), drk_latency.c_str(),
                fixed(row.p99_ratio(), 2).c_str());
  return line;
}

struct Goals {
  double worst_throughput_ratio = INFINITY;
  double worst_p99_ratio = 0;
  double restart_median_ms = 0;
  double node_failure_median_ms = 0;
  bool throughput_met() const { return worst_throughput_ratio >= kThroughputGoal; }
  bool p99_met() const { return worst_p99_ratio <= kP99Goal; }
  bool restart_met() const { return restart_median_ms < kRestartGoalMs; }
  bool node_failure_met() const { return node_failure_median_ms < kNodeFailureGoalMs; }
};

Goals goals_of(const std::vector<Row>& rows, double restart_median_ms, double node_failure_median_ms) {
  Goals goals;
  goals.restart_median_ms = restart_median_ms;
  goals.node_failure_median_ms = node_failure_median_ms;
  for (const Row& row : rows) {
    goals.worst_throughput_ratio = std::min(goals.worst_throughput_ratio, row.throughput_ratio());
    goals.worst_p99_ratio = std::max(goals.worst_p99_ratio, row.p99_ratio());
  }
  return goals;
}

std::string met(bool yes) { return yes ? "met" : "NOT met"; }

std::string summary_line(const Goals& goals) {
  return "summary: worst drk/raw throughput " + fixed(goals.worst_throughput_ratio, 2) +
         " (goal >= 0.7: " + met(goals.throughput_met()) + "), worst p99 " + fixed(goals.worst_p99_ratio, 2) +
         "x raw (goal <= 1.5: " + met(goals.p99_met()) + "), restart median " +
         fixed(goals.restart_median_ms, 1) + " ms (goal < 200: " + met(goals.restart_met()) +
         "), node failure detected in " + fixed(goals.node_failure_median_ms / 1000, 2) +
         " s (goal < 3: " + met(goals.node_failure_met()) + ")";
}

std::string json_report(const std::vector<Row>& rows, const std::vector<Row>& tracing_rows,
                        const std::vector<double>& restarts_ms,
                        const std::vector<double>& cold_restarts_ms, const std::vector<double>& node_failures_ms, const Goals& goals, const RuntimeBenchOptions& options, const BenchBudget& budget,
                        int repetitions) {
  const auto side_json = [](const Side& s) -> Json {
    return {{"messages_per_second", s.messages_per_second}, {"p50_us", s.p50_us}, {"p99_us", s.p99_us}};
  };
  Json report = {{"benchmark", "runtime"},
                 {"date", utc_now()},
                 {"cores", std::thread::hardware_concurrency()},
                 {"quick", options.quick},
                 {"seconds_per_measurement", budget.throughput.count() / 1000.0},
                 {"repetitions", repetitions}};
  Json& rows_json = report["rows"] = Json::array();
  for (const Row& row : rows) {
    rows_json.push_back({{"transport", transport_name(row.transport)},
                         {"payload_bytes", row.payload_bytes},
                         {"raw", side_json(row.raw)},
                         {"drk", side_json(row.drk)},
                         {"throughput_ratio", row.throughput_ratio()},
                         {"p99_ratio", row.p99_ratio()}});
  }
  for (const Row& row : rows) {
    report[row_key(row) + "_throughput_ratio"] = row.throughput_ratio();
    report[row_key(row) + "_p99_ratio"] = row.p99_ratio();
  }
  Json& tracing_json = report["tracing"] = Json::array();
  for (const Row& row : tracing_rows) {
    tracing_json.push_back({{"transport", transport_name(row.transport)},
                            {"payload_bytes", row.payload_bytes},
                            {"off", side_json(row.raw)},
                            {"on", side_json(row.drk)},
                            {"throughput_ratio", row.throughput_ratio()},
                            {"p99_ratio", row.p99_ratio()}});
  }
  report["restart_ms"] = restarts_ms;
  report["restart_median_ms"] = goals.restart_median_ms;
  report["restart_cold_ms"] = cold_restarts_ms;
  report["restart_cold_median_ms"] = median(cold_restarts_ms);
  report["node_failure_detection_ms"] = node_failures_ms;
  report["node_failure_detection_median_ms"] = goals.node_failure_median_ms;
  report["goals"] = {{"min_throughput_ratio", kThroughputGoal},
                     {"max_p99_ratio", kP99Goal},
                     {"max_restart_median_ms", kRestartGoalMs},
                     {"max_node_failure_detection_median_ms", kNodeFailureGoalMs},
                     {"worst_throughput_ratio", goals.worst_throughput_ratio},
                     {"worst_p99_ratio", goals.worst_p99_ratio},
                     {"throughput_met", goals.throughput_met()},
                     {"p99_met", goals.p99_met()},
                     {"restart_met", goals.restart_met()},
                     {"node_failure_met", goals.node_failure_met()}};
  return json_text(report, 2) + "\n";
}

// Raw and drkernel alternate, so that a load spike on a shared machine hits both; each side
// keeps its best repetition (highest rate, lowest p99).
Result<Row> measure_row(BenchTransport transport, std::size_t payload, const BenchBudget& budget, int repetitions,
                        const std::string& ipc_dir) {
  Row row{transport, payload, {}, {}};
  const std::string what = std::string(transport_name(transport)) + " " + payload_name(payload);
  const auto failed = [&](const std::string& side, const Error& error) {
    return make_error(error.code, side + " " + what + ": " + error.message);
  };
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    auto raw_rate = raw_throughput(transport, payload, budget, ipc_dir);
    if (!raw_rate) return failed("raw ZeroMQ", raw_rate.error());
    auto raw_trips = raw_latency(transport, payload, budget, ipc_dir);
    if (!raw_trips) return failed("raw ZeroMQ", raw_trips.error());
    auto drk_rate = actor_throughput(transport, payload, budget);
    if (!drk_rate) return failed("drkernel", drk_rate.error());
    auto drk_trips = actor_latency(transport, payload, budget);
    if (!drk_trips) return failed("drkernel", drk_trips.error());
    const Side raw = side(*raw_rate, *raw_trips);
    const Side drk = side(*drk_rate, *drk_trips);
    row.raw = repetition == 0 ? raw : best(row.raw, raw);
    row.drk = repetition == 0 ? drk : best(row.drk, drk);
  }
  return row;
}

// drkernel's actors with tracing off (the row's first side) and on (its second), alternating.
Result<Row> measure_tracing_row(BenchTransport transport, std::size_t payload, const BenchBudget& budget,
                                int repetitions) {
  Row row{transport, payload, {}, {}};
  const std::string what = std::string(transport_name(transport)) + " " + payload_name(payload);
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    Side sides[2];
    for (const bool traced : {false, true}) {
      auto rate = actor_throughput(transport, payload, budget, traced);
      if (!rate) return make_error(rate.error().code, "tracing " + what + ": " + rate.error().message);
      auto trips = actor_latency(transport, payload, budget, traced);
      if (!trips) return make_error(trips.error().code, "tracing " + what + ": " + trips.error().message);
      sides[traced ? 1 : 0] = side(*rate, *trips);
    }
    row.raw = repetition == 0 ? sides[0] : best(row.raw, sides[0]);
    row.drk = repetition == 0 ? sides[1] : best(row.drk, sides[1]);
  }
  return row;
}

}  // namespace

int run_runtime_bench(const RuntimeBenchOptions& options, std::ostream& out) {
  BenchBudget budget;
  int repetitions = 3;
  if (options.quick) {
    budget.throughput = 250ms;
    budget.latency = 250ms;
    budget.restart_samples = 3;
    budget.node_failure_samples = 1;
    repetitions = 1;
  } else {
    budget.throughput = 500ms;
    budget.latency = 500ms;
  }

  if (!options.json) {
    out << "drkernel runtime vs raw ZeroMQ (" << std::thread::hardware_concurrency() << " cores, " << utc_now()
        << ", best of " << repetitions << " x " << fixed(budget.throughput.count() / 1000.0, 2)
        << " s per measurement)\n"
        << "goals: drk/raw throughput >= " << kThroughputGoal << ", drk/raw p99 <= " << kP99Goal
        << ", restart median < " << kRestartGoalMs << " ms, node failure detected in < "
        << kNodeFailureGoalMs / 1000 << " s\n"
        << table_header() << std::endl;
  }
  const TemporaryDirectory ipc_dir = temp_dir("drk-bench-raw");
  std::vector<Row> rows;
  for (BenchTransport transport : kBenchTransports) {
    if (transport == BenchTransport::tcp_curve && !curve_available()) {
      log::warn() << options.program << ": this libzmq has no CURVE (built without libsodium): tcp+curve left out";
      continue;
    }
    for (std::size_t payload : {std::size_t{64}, std::size_t{64} << 10}) {
      auto row = measure_row(transport, payload, budget, repetitions, ipc_dir.path());
      if (!row) {
        log::error() << options.program << ": " << row.error().describe();
        return 1;
      }
      rows.push_back(*row);
      if (!options.json) out << table_row(*row) << std::endl;
    }
  }

  // What recording traces costs (runtime/trace/, on by default in `drk run`): small messages,
  // where a span per handler call weighs most.
  std::vector<Row> tracing_rows;
  if (!options.json) out << "tracing: drkernel's actors with every handler call recorded (on) or not (off)\n"
                         << table_header("off", "on") << std::endl;
  for (BenchTransport transport : {BenchTransport::inproc, BenchTransport::ipc}) {
    auto row = measure_tracing_row(transport, 64, budget, repetitions);
    if (!row) {
      log::error() << options.program << ": " << row.error().describe();
      return 1;
    }
    tracing_rows.push_back(*row);
    if (!options.json) out << table_row(*row) << std::endl;
  }

  auto restarts = restart_times_ms(options.executable, budget.restart_samples, true);
  if (!restarts) {
    log::error() << options.program << ": restart after kill -9: " << restarts.error().describe();
    return 1;
  }
  auto cold_restarts = restart_times_ms(options.executable, budget.restart_samples, false);
  if (!cold_restarts) {
    log::error() << options.program << ": restart after kill -9 without a warm spare: "
                 << cold_restarts.error().describe();
    return 1;
  }
  auto node_failures = node_failure_detection_ms(budget.node_failure_samples);
  if (!node_failures) {
    log::error() << options.program << ": node failure detection: " << node_failures.error().describe();
    return 1;
  }
  const Goals goals = goals_of(rows, median(*restarts), median(*node_failures));
  if (options.json) {
    out << json_report(rows, tracing_rows, *restarts, *cold_restarts, *node_failures, goals, options, budget,
                       repetitions);
    return 0;
  }
  const auto listed = [](const std::vector<double>& values) {
    std::string text;
    for (double ms : values) text += (text.empty() ? "" : ", ") + fixed(ms, 1);
    return text;
  };
  out << "restart after kill -9 (to answering again), warm spare: median " << fixed(goals.restart_median_ms, 1)
      << " ms (" << listed(*restarts) << ")\n"
      << "restart after kill -9, cold (fork + exec + load): median " << fixed(median(*cold_restarts), 1) << " ms ("
      << listed(*cold_restarts) << ")\n"
      << "node failure detected (last heartbeat to lost): median " << fixed(goals.node_failure_median_ms, 1)
      << " ms (" << listed(*node_failures) << ")\n"
      << summary_line(goals) << std::endl;
  return 0;
}

}  // namespace drk::bench
