// ArchivistActor: writes every Scored candidate, PolicyWeights, StepReport and trained
// Trajectory (the Learner's training samples) it receives into
// the experiment's archive (RUN_DIR/archive.sqlite, archive.h), and passes each StepReport on to
// the head once it is recorded (so the run ends only when its last step is on record). The
// archive is the only state and it is on disk; messages in flight when it dies are sent again
// by their senders (the Learner's reports, the Oracle's recent records).
#pragma once

#include <memory>

#include "runtime/actor.h"

namespace drk::archivist {

std::unique_ptr<runtime::Actor> make_archivist_actor(const runtime::ActorSpec& spec);

}  // namespace drk::archivist
