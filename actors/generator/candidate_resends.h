// CandidateResends: when a Generator sends a candidate again. A candidate without Feedback is
// sent again after experiment.eval_timeout_s (a timer per send; only the rollout's latest counts,
// so the rollout keeps the token start() gave) and whenever another actor restarts
// (another_actor_restarted()). Both Generators (embedded policy, language model) use it.
// Thread-safety: the actor's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "messages/envelope.capnp.h"
#include "runtime/actor.h"

namespace drk::generator {

class CandidateResends {
 public:
  explicit CandidateResends(std::chrono::milliseconds after) : after_(after) {}

  // Starts the timer of trajectory `trajectory_id`'s candidate; returns its token.
  uint64_t start(runtime::ActorContext& context, const std::string& trajectory_id);
  // The trajectory whose timer `token` is, once; nullopt for a token of another timer.
  std::optional<std::string> due(uint64_t token);
  // The rollout (of `rollouts`, a map by trajectory id whose values keep their `timer_token`) whose
  // candidate timer `token` is and still counts; nullptr for another timer or a superseded one.
  template <typename Rollouts>
  typename Rollouts::mapped_type* due_rollout(uint64_t token, Rollouts& rollouts) {
    const auto trajectory_id = due(token);
    if (!trajectory_id) return nullptr;
    auto rollout = rollouts.find(*trajectory_id);
    if (rollout == rollouts.end() || rollout->second.timer_token != token) return nullptr;
    return &rollout->second;
  }

 private:
  std::chrono::milliseconds after_;
  std::map<uint64_t, std::string> timers_;  // timer token -> trajectory id
  uint64_t next_token_ = 1;
};

// experiment.eval_timeout_s (default 60).
std::chrono::milliseconds eval_timeout(const YAML::Node& experiment);

// Whether `envelope` says that an actor other than this one restarted.
bool another_actor_restarted(runtime::ActorContext& context, msg::Envelope::Reader envelope);

}  // namespace drk::generator
