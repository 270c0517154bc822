// The payload types of this program: the application's messages (messages/envelope.capnp's
// `payload`) that it may receive, by Cap'n Proto type id. The runtime knows an application's
// messages only through them: envelopes from another process whose payload is of a type not
// registered here are refused unread (envelope_check()), and inspection, dead letters and logs
// name a payload by its registered name.
//
// A type's name is its struct's name with the first letter lowered ("stepReport" for
// StepReport), as the runtime names its own messages ("control", "hostStats").
//
// Thread-safety: register_payload_types() from any thread, at any time (an application
// registers its types before its actor hosts start, so that the first envelope finds them);
// the lookups are lock-free and may run on any thread while types are registered. What they
// return lives as long as the program.
// Errors: none; registering a type again is harmless.
#pragma once

#include <capnp/schema.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/transport/codec.h"

namespace drk::runtime {

struct PayloadType {
  uint64_t id;                // the struct's Cap'n Proto type id
  capnp::StructSchema schema;
  std::string name;           // "stepReport"
};

void register_payload_types(const std::vector<capnp::StructSchema>& types);

template <typename... Types>
void register_payload_types() {
  register_payload_types({capnp::Schema::from<Types>()...});
}

// The registered type with this id; nullptr when none is. It runs for every envelope an actor
// handles (to name it in its statistics): the type a thread found last is found again without
// a search.
const PayloadType* find_payload_type(uint64_t id);

// What every reader of an envelope from another process checks it against
// (decode_checked(bytes, owner, limits, envelope_check())): the Envelope's schema, with its
// payload followed as the registered type its type id names, and refused when it names none.
const SchemaCheck& envelope_check();

}  // namespace drk::runtime
