// HeadActor: the built-in actor of `drk run` (named "head"), which shows the run's progress.
//
// Every payload goes to the application's progress observer (progress_observer.h): each line it
// makes of one is printed to `out` and given to on_progress, and the first that says finished
// calls on_finished (once) so the head stops the run. A HostStats (an actor host's inspection
// report) goes to on_host_stats when one is given. Other messages are ignored.
// Thread-safety: an Actor (its host's thread); the observer and the callbacks are called on
// that thread.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "runtime/actor.h"
#include "runtime/progress_observer.h"

namespace drk::runtime {

class HeadActor final : public Actor {
 public:
  // `progress` may be null (no progress is shown). `on_progress` gets every progress line
  // printed (for inspection).
  HeadActor(std::ostream& out, std::unique_ptr<ProgressObserver> progress, std::function<void()> on_finished,
            std::function<void(msg::HostStats::Reader)> on_host_stats = {},
            std::function<void(const std::string&)> on_progress = {});
  void on_message(ActorContext& context, msg::Envelope::Reader envelope) override;

 private:
  std::ostream& out_;
  std::unique_ptr<ProgressObserver> progress_;
  std::function<void()> on_finished_;
  std::function<void(msg::HostStats::Reader)> on_host_stats_;
  std::function<void(const std::string&)> on_progress_;
  bool finished_ = false;
};

}  // namespace drk::runtime
