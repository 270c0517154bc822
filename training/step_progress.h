// The training's progress as the head shows it (runtime/progress_observer.h): one line per
// StepReport,
//   "step 3/8  policy v3  mean reward 0.812  correct 75%  best speedup 1.43x  (12.1 s)"
// followed, only when they apply, by "  stage NAME", "  measured M screened S",
// "  rejected prs N mrs M", "  stale N", "  ROLLBACK to vN" and "  DIAGNOSTIC"
// (docs/topology.md, "Rollback and diagnostic mode"); each step once (a restarted Learner or
// Archivist sends its reports again); the report that says finished ends the run.
//
// Thread-safety: a StepProgress belongs to the head actor's thread; format_progress is pure.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "messages/drk.capnp.h"
#include "messages/envelope.capnp.h"
#include "runtime/progress_observer.h"

namespace drk::training {

// `total_steps` 0: unknown ("step 3").
std::string format_progress(msg::StepReport::Reader report, uint32_t total_steps);

class StepProgress final : public runtime::ProgressObserver {
 public:
  explicit StepProgress(uint32_t total_steps) : total_steps_(total_steps) {}
  std::optional<Progress> observe(msg::Envelope::Reader envelope) override;

 private:
  uint32_t total_steps_;
  uint32_t steps_shown_ = 0;  // steps 0 .. steps_shown_-1 have been shown
};

// The factory to register (runtime::register_progress_observer): experiment.steps steps.
std::unique_ptr<runtime::ProgressObserver> make_step_progress(const runtime::Topology& topology);

}  // namespace drk::training
