#include "actors/generator/finished_trajectories.h"

#include "runtime/payload.h"

namespace drk::generator {

msg::Trajectory::Builder FinishedTrajectories::begin(const std::string& id, uint32_t step, capnp::Text::Reader task,
                                                     uint32_t sample_index, uint32_t policy_version) {
  Kept& kept = kept_[id];
  kept.step = step;
  kept.trajectory = std::make_unique<capnp::MallocMessageBuilder>();
  auto trajectory = kept.trajectory->initRoot<msg::Trajectory>();
  trajectory.setId(id);
  trajectory.setStep(step);
  trajectory.setTask(task);
  trajectory.setSampleIndex(sample_index);
  trajectory.setPolicyVersion(policy_version);
  return trajectory;
}

void FinishedTrajectories::finish(runtime::ActorContext& context, const std::string& id) {
  if (const auto found = kept_.find(id); found != kept_.end()) send(context, found->second);
}

bool FinishedTrajectories::send_again(runtime::ActorContext& context, const std::string& id) {
  const auto found = kept_.find(id);
  if (found == kept_.end()) return false;
  send(context, found->second);
  return true;
}

void FinishedTrajectories::forget_old_steps(uint32_t step) {
  for (auto it = kept_.begin(); it != kept_.end();) {
    it = it->second.step + 2 <= step ? kept_.erase(it) : std::next(it);
  }
}

void FinishedTrajectories::send(runtime::ActorContext& context, const Kept& kept) {
  (void)context.send(first_member(context, "learner"), [&](msg::Envelope::Builder envelope) {
    runtime::set_payload<msg::Trajectory>(envelope, kept.trajectory->getRoot<msg::Trajectory>().asReader());
  });
}

std::string first_member(runtime::ActorContext& context, const std::string& role) {
  const auto members = context.members(role);
  return members.empty() ? role : members.front();
}

}  // namespace drk::generator
