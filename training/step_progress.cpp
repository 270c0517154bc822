#include "training/step_progress.h"

#include <cmath>
#include <cstdio>

#include "runtime/payload.h"

namespace drk::training {

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

std::optional<runtime::ProgressObserver::Progress> StepProgress::observe(msg::Envelope::Reader envelope) {
  const auto report = runtime::payload_of<msg::StepReport>(envelope);
  if (!report || steps_shown_ > report->getStep()) return std::nullopt;
  steps_shown_ = report->getStep() + 1;
  return Progress{format_progress(*report, total_steps_), report->getFinished()};
}

std::unique_ptr<runtime::ProgressObserver> make_step_progress(const runtime::Topology& topology) {
  return std::make_unique<StepProgress>(topology.experiment_steps());
}

}  // namespace drk::training
