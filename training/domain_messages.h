// The training's messages (messages/drk.capnp) as payload types of the runtime
// (runtime/transport/payload_types.h): every program that hosts the training's actors, or talks
// to them, registers them before its actor hosts start, so that envelopes carrying them are
// checked against their schema and named in inspection, dead letters and logs.
//
// Thread-safety: as register_payload_types (any thread; registering twice is harmless).
#pragma once

namespace drk::training {

void register_domain_messages();

}  // namespace drk::training
