#include "actors/archivist/archivist_actor.h"

#include "messages/drk.capnp.h"
#include "runtime/payload.h"
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
    Status status;
    if (const auto scored = runtime::payload_of<msg::Scored>(envelope)) {
      status = archive_.record_scored(*scored);
    } else if (const auto trajectory = runtime::payload_of<msg::Trajectory>(envelope)) {
      status = archive_.record_trajectory(*trajectory);
    } else if (const auto weights = runtime::payload_of<msg::PolicyWeights>(envelope)) {
      status = archive_.record_policy(*weights);
    } else if (const auto report = runtime::payload_of<msg::StepReport>(envelope)) {
      status = archive_.record_step(*report);
      // The head shows a step (and ends the run after the last) only once it is on record.
      forward_to_head(context, *report);
    } else {
      return;
    }
    // A full disk or a locked file must not kill the actor: the record is lost, loudly.
    if (!status) log::error() << context.self() << ": " << status.error().describe();
  }

 private:
  static void forward_to_head(runtime::ActorContext& context, msg::StepReport::Reader report) {
    const auto sent = context.send(runtime::kHeadActor, [&](msg::Envelope::Builder out) {
      runtime::set_payload<msg::StepReport>(out, report);
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
