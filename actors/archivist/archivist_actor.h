// ArchivistActor: writes every Scored candidate, PolicyWeights and StepReport it receives into
// the experiment's archive (RUN_DIR/archive.sqlite, archive.h). The archive is the only state
// and it is on disk, so a restart loses at most the messages that were in flight.
#pragma once

#include <memory>

#include "runtime/actor.h"

namespace drk::archivist {

std::unique_ptr<runtime::Actor> make_archivist_actor(const runtime::ActorSpec& spec);

}  // namespace drk::archivist
