// ProgressObserver: what the head (head_actor.h) makes of the application's messages: the
// progress lines it prints and the end of the run. The runtime knows no application's messages;
// the application registers a factory of its observer (drkernel's: training/step_progress.h)
// before `drk run` starts, and the head hands it every payload it receives.
//
// Thread-safety: register from one thread before run_head(); an observer is called on the head
// actor's thread only. Without a registered factory the head prints no progress and the run
// ends only when it is stopped.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "messages/envelope.capnp.h"
#include "runtime/topology/topology.h"

namespace drk::runtime {

class ProgressObserver {
 public:
  struct Progress {
    std::string line;       // printed as it is, and shown by inspection
    bool finished = false;  // the run's work is done: the head stops the run
  };

  virtual ~ProgressObserver() = default;
  // The progress an envelope shows: empty for one that shows none (not a progress message, or
  // one already shown: a restarted sender may send its reports again).
  virtual std::optional<Progress> observe(msg::Envelope::Reader envelope) = 0;
};

using ProgressObserverFactory = std::function<std::unique_ptr<ProgressObserver>(const Topology& topology)>;

void register_progress_observer(ProgressObserverFactory factory);
// The registered factory's observer for `topology`; nullptr when none is registered.
std::unique_ptr<ProgressObserver> make_progress_observer(const Topology& topology);

}  // namespace drk::runtime
