// FinishedTrajectories: a Generator's finished trajectories, each sent to the Learner when it is
// finished and kept so that a repeated RolloutRequest gets the same Trajectory again. Kept for the
// step in progress and the one before it (a restarted Learner re-issues its current step); older
// ones are never asked for again. Both Generators (embedded policy, language model) keep theirs here.
// A lost Trajectory is asked for again: the Learner re-sends its request on a deadline.
// Thread-safety: the actor's thread.
#pragma once

#include <capnp/message.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "messages/drk.capnp.h"
#include "runtime/actor.h"

namespace drk::generator {

class FinishedTrajectories {
 public:
  // A new Trajectory for `id` with its header set, for the caller to fill before finish().
  msg::Trajectory::Builder begin(const std::string& id, uint32_t step, capnp::Text::Reader task,
                                 uint32_t sample_index, uint32_t policy_version);
  // Sends the Trajectory begun for `id` to the Learner and keeps it.
  void finish(runtime::ActorContext& context, const std::string& id);
  // Sends the kept Trajectory of `id` again; false when none is kept.
  bool send_again(runtime::ActorContext& context, const std::string& id);
  // Forgets those of steps before step - 1.
  void forget_old_steps(uint32_t step);

 private:
  struct Kept {
    uint32_t step = 0;
    std::unique_ptr<capnp::MallocMessageBuilder> trajectory;  // msg::Trajectory
  };
  void send(runtime::ActorContext& context, const Kept& kept);

  std::map<std::string, Kept> kept_;
};

// The first actor of `role` in the topology, else the role's name.
std::string first_member(runtime::ActorContext& context, const std::string& role);

}  // namespace drk::generator
