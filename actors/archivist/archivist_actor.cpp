#include "actors/archivist/archivist_actor.h"

#include <stdexcept>

#include "actors/archivist/archive.h"
#include "runtime/log.h"
#include "runtime/topology/topology.h"

namespace drk::archivist {
namespace {

class ArchivistActor final : public runtime::Actor {
 public:
  explicit ArchivistActor(const runtime::ActorSpec& spec)
      : archive_(open_or_throw(Archive::default_path(spec.run_dir))) {}

  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    const auto body = envelope.getBody();
    Status status;
    switch (body.which()) {
      case msg::Envelope::Body::SCORED:
        status = archive_.record_scored(body.getScored());
        break;
      case msg::Envelope::Body::TRAJECTORY:
        status = archive_.record_trajectory(body.getTrajectory());
        break;
      case msg::Envelope::Body::POLICY_WEIGHTS:
        status = archive_.record_policy(body.getPolicyWeights());
        break;
      case msg::Envelope::Body::STEP_REPORT:
        status = archive_.record_step(body.getStepReport());
        // The head shows a step (and ends the run after the last) only once it is on record.
        forward_to_head(context, body.getStepReport());
        break;
      default:
        return;
    }
    // A full disk or a locked file must not kill the actor: the record is lost, loudly.
    if (!status) log::error() << context.self() << ": " << status.error().describe();
  }

 private:
  static void forward_to_head(runtime::ActorContext& context, msg::StepReport::Reader report) {
    const auto sent = context.send(runtime::kHeadActor, [&](msg::Envelope::Builder out) {
      out.getBody().setStepReport(report);
    });
    if (!sent) log::warn() << context.self() << ": step report not shown: " << sent.error().describe();
  }

  static Archive open_or_throw(const std::string& path) {
    auto archive = Archive::open(path);
    // Without its archive the Archivist cannot do its one job: a fault for the supervisor.
    if (!archive) throw std::runtime_error(archive.error().describe());
    return std::move(archive.value());
  }

  Archive archive_;
};

}  // namespace

std::unique_ptr<runtime::Actor> make_archivist_actor(const runtime::ActorSpec& spec) {
  return std::make_unique<ArchivistActor>(spec);
}

}  // namespace drk::archivist
