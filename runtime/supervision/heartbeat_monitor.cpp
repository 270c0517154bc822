#include "runtime/supervision/heartbeat_monitor.h"

#include <algorithm>

#include "runtime/log.h"

namespace drk::runtime {
namespace {

std::chrono::milliseconds milliseconds_of(double seconds) {
  return std::chrono::milliseconds{static_cast<int64_t>(seconds * 1000.0)};
}

}  // namespace

HealthSettings HealthSettings::of(const SupervisionPolicy& policy) {
  HealthSettings settings;
  settings.heartbeat = std::chrono::milliseconds{policy.heartbeat_ms};
  settings.missed_heartbeats = policy.missed_heartbeats;
  settings.hung_handler = milliseconds_of(policy.hung_handler_s);
  settings.kill_hung = policy.kill_hung;
  settings.start_timeout = milliseconds_of(policy.start_timeout_s);
  return settings;
}

std::chrono::milliseconds HealthSettings::check_period() const {
  return std::clamp(heartbeat / 2, std::chrono::milliseconds{10}, std::chrono::milliseconds{1000});
}

std::string format_health_seconds(std::chrono::milliseconds duration) {
  // Cut, not rounded: a duration is never shown as longer than it was.
  const long long tenths = std::max<long long>(0, duration.count() / 100);
  if (tenths < 100) return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " s";
  return std::to_string(tenths / 10) + " s";
}

std::vector<HealthAction> HeartbeatMonitor::check(const std::vector<ProcessHealth>& processes) {
  std::vector<HealthAction> actions;
  decltype(reported_) still_hung;
  for (const ProcessHealth& process : processes) {
    if (process.supervised && !process.reported &&
        process.silent_for > std::max(settings_.start_timeout, settings_.silence_limit())) {
      actions.push_back({HealthAction::Kind::kill, process.name, process.incarnation,
                         "no first heartbeat within " + format_health_seconds(process.silent_for) +
                             " of its start (supervision.start_timeout_s)"});
      continue;
    }
    if (process.supervised && process.reported && process.silent_for > settings_.silence_limit()) {
      // Its handler figures are as old as its last report: only the silence is news.
      actions.push_back({HealthAction::Kind::kill, process.name, process.incarnation,
                         "missed " + std::to_string(settings_.missed_heartbeats) + " heartbeats (no report for " +
                             format_health_seconds(process.silent_for) + ")"});
      continue;
    }
    bool killing = false;
    for (const RunningHandler& handler : process.handlers) {
      if (handler.running_for < settings_.hung_handler) continue;
      auto key = std::make_tuple(process.name, process.incarnation, handler.actor, handler.call, handler.kind);
      const bool new_hang = !reported_.count(key);
      still_hung.insert(std::move(key));
      if (!new_hang) continue;
      const std::string ran = format_health_seconds(handler.running_for);
      actions.push_back({HealthAction::Kind::report, process.name, process.incarnation,
                         "actor " + handler.actor + ": handler for " + handler.kind + " has run for " + ran +
                             " (hung?)"});
      if (settings_.kill_hung && process.supervised && !killing) {
        killing = true;
        actions.push_back({HealthAction::Kind::kill, process.name, process.incarnation,
                           "hung handler: " + handler.kind + " ran for " + ran});
      }
    }
  }
  reported_ = std::move(still_hung);
  return actions;
}

HealthChecks::HealthChecks(boost::asio::io_context& io, Supervisor& supervisor, const InspectionBoard& board,
                           const Topology& topology, std::function<Clock::time_point()> clock)
    : supervisor_(supervisor),
      board_(board),
      clock_(std::move(clock)),
      monitor_(HealthSettings::of(topology.supervision)),
      timer_(io) {}

void HealthChecks::start() {
  check_now();
  schedule();
}

void HealthChecks::schedule() {
  timer_.expires_after(monitor_.settings().check_period());
  timer_.async_wait([this](const boost::system::error_code& error) {
    if (error) return;
    check_now();
    schedule();
  });
}

void HealthChecks::check_now() {
  for (const HealthAction& action : monitor_.check(sample())) {
    if (action.kind == HealthAction::Kind::report) {
      log::warn() << action.text;
    } else {
      supervisor_.kill(action.process, action.incarnation, action.text);
    }
  }
}

std::vector<ProcessHealth> HealthChecks::sample() const {
  const SystemView view = board_.view();
  const auto now = clock_();

  // The handlers an up-to-date report of `process` (as the board has it) shows running.
  auto add_handlers = [&](ProcessHealth& health, const ProcessView& process) {
    const auto report_age = milliseconds_of(process.report_age_seconds);
    for (const ActorView& actor : view.actors) {
      if (actor.process != process.name || actor.current_handler.empty() || actor.status == ActorStatus::dead)
        continue;
      health.handlers.push_back({actor.name, actor.current_handler,
                                 milliseconds_of(actor.current_handler_seconds) + report_age,
                                 actor.messages_handled + actor.timers_fired});
    }
  };

  std::vector<ProcessHealth> processes;
  for (const ProcessRecord& record : supervisor_.processes()) {
    if (record.phase != ProcessRecord::Phase::running) continue;
    ProcessHealth health;
    health.name = record.name;
    health.incarnation = record.incarnation;
    health.silent_for = std::chrono::duration_cast<std::chrono::milliseconds>(now - record.started_at);
    const auto reported = std::find_if(view.processes.begin(), view.processes.end(), [&](const ProcessView& p) {
      return p.name == record.name && p.incarnation == record.incarnation && p.report_age_seconds >= 0;
    });
    if (reported != view.processes.end()) {
      health.reported = true;
      health.silent_for = std::min(health.silent_for, milliseconds_of(reported->report_age_seconds));
      add_handlers(health, *reported);
    }
    processes.push_back(std::move(health));
  }
  for (const ProcessView& process : view.processes) {
    if (process.name != kHeadProcess || process.report_age_seconds < 0) continue;
    ProcessHealth head;
    head.name = process.name;
    head.incarnation = process.incarnation;
    head.supervised = false;
    add_handlers(head, process);
    processes.push_back(std::move(head));
  }
  return processes;
}

}  // namespace drk::runtime
