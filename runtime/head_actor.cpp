#include "runtime/head_actor.h"

#include <cmath>
#include <cstdio>

namespace drk::runtime {

std::string format_progress(msg::StepReport::Reader report, uint32_t total_steps) {
  // Steps are numbered from 0 in messages and the archive; people count from 1.
  std::string step = "step " + std::to_string(report.getStep() + 1);
  if (total_steps != 0) step += "/" + std::to_string(total_steps);
  char text[256];
  std::snprintf(
      text, sizeof text, "%s  policy v%u  mean reward %.3f  correct %.0f%%  best speedup %.2fx  (%.1f s)",
      step.c_str(), report.getPolicyVersion(), report.getMeanReward(),
      std::round(report.getCorrectFraction() * 100.0), report.getBestSpeedup(), report.getSeconds());
  std::string line = text;
  // What the Learner did beyond a plain update, only when it did.
  if (report.getStage().size() != 0) line += std::string("  stage ") + report.getStage().cStr();
  if (report.getScreened() != 0) {
    line += "  measured " + std::to_string(report.getMeasured()) + " screened " +
            std::to_string(report.getScreened());
  }
  if (report.getPrsRejected() + report.getMrsRejected() != 0) {
    line += "  rejected prs " + std::to_string(report.getPrsRejected()) + " mrs " +
            std::to_string(report.getMrsRejected());
  }
  if (report.getStaleRejected() != 0) line += "  stale " + std::to_string(report.getStaleRejected());
  if (report.getRolledBack()) line += "  ROLLBACK to v" + std::to_string(report.getRolledBackTo());
  if (report.getDiagnostic()) line += "  DIAGNOSTIC";
  return line;
}

HeadActor::HeadActor(std::ostream& out, uint32_t total_steps, std::function<void()> on_finished,
                     std::function<void(msg::HostStats::Reader)> on_host_stats,
                     std::function<void(const std::string&)> on_progress)
    : out_(out),
      total_steps_(total_steps),
      on_finished_(std::move(on_finished)),
      on_host_stats_(std::move(on_host_stats)),
      on_progress_(std::move(on_progress)) {}

void HeadActor::on_message(ActorContext&, msg::Envelope::Reader envelope) {
  if (envelope.getBody().isHostStats()) {
    if (on_host_stats_) on_host_stats_(envelope.getBody().getHostStats());
    return;
  }
  if (!envelope.getBody().isStepReport()) return;
  const auto report = envelope.getBody().getStepReport();
  // After a restart the Learner sends its reports again: print each step once.
  if (steps_printed_ > report.getStep()) return;
  steps_printed_ = report.getStep() + 1;
  const std::string line = format_progress(report, total_steps_);
  out_ << line << std::endl;
  if (on_progress_) on_progress_(line);
  if (report.getFinished() && !finished_) {
    finished_ = true;
    if (on_finished_) on_finished_();
  }
}

}  // namespace drk::runtime
