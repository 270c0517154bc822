// HeadActor: the built-in actor of `drk run` (named "head"), which shows the run's progress.
//
// For every StepReport it prints one line to `out`:
//   "step 3/8  policy v3  mean reward 0.812  correct 75%  best speedup 1.43x  (12.1 s)"
// followed, only when they apply, by "  stage NAME", "  rejected prs N mrs M",
// "  ROLLBACK to vN" and "  DIAGNOSTIC" (docs/topology.md, "Rollback and diagnostic mode")
// (each step once: a restarted Learner sends its reports again) and when a report says
// finished, it calls on_finished (once) so the head stops the run.
// A HostStats (an actor host's inspection report) goes to on_host_stats when one is given.
// Other messages are ignored. Thread-safety: an Actor (its host's thread); on_finished is
// called on that thread, and so is on_host_stats.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "runtime/actor.h"

namespace drk::runtime {

// `total_steps` 0: unknown ("step 3").
std::string format_progress(msg::StepReport::Reader report, uint32_t total_steps);

class HeadActor final : public Actor {
 public:
  // `on_progress` gets every progress line printed (for inspection).
  HeadActor(std::ostream& out, uint32_t total_steps, std::function<void()> on_finished,
            std::function<void(msg::HostStats::Reader)> on_host_stats = {},
            std::function<void(const std::string&)> on_progress = {});
  void on_message(ActorContext& context, msg::Envelope::Reader envelope) override;

 private:
  std::ostream& out_;
  uint32_t total_steps_;
  std::function<void()> on_finished_;
  std::function<void(msg::HostStats::Reader)> on_host_stats_;
  std::function<void(const std::string&)> on_progress_;
  bool finished_ = false;
  uint32_t steps_printed_ = 0;  // steps 0 .. steps_printed_-1 have been printed
};

}  // namespace drk::runtime
