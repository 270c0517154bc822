#include "actors/generator/candidate_resends.h"

#include <string_view>

namespace drk::generator {

uint64_t CandidateResends::start(runtime::ActorContext& context, const std::string& trajectory_id) {
  const uint64_t token = next_token_++;
  timers_[token] = trajectory_id;
  context.start_timer(after_, token);
  return token;
}

std::optional<std::string> CandidateResends::due(uint64_t token) {
  const auto found = timers_.find(token);
  if (found == timers_.end()) return std::nullopt;
  std::string trajectory_id = std::move(found->second);
  timers_.erase(found);
  return trajectory_id;
}

std::chrono::milliseconds eval_timeout(const YAML::Node& experiment) {
  const double seconds = experiment["eval_timeout_s"] ? experiment["eval_timeout_s"].as<double>() : 60.0;
  return std::chrono::milliseconds(static_cast<int64_t>(1000.0 * seconds));
}

bool another_actor_restarted(runtime::ActorContext& context, msg::Envelope::Reader envelope) {
  if (!envelope.getBody().isControl()) return false;
  const auto control = envelope.getBody().getControl();
  return control.isPeerRestarted() && std::string_view(control.getPeerRestarted().cStr()) != context.self();
}

}  // namespace drk::generator
