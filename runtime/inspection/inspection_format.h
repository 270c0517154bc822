// How `drk inspect` and `drk top` show a SystemView: as JSON (--json, for programs) or as a
// table for people (docs/inspection.md describes both).
//
// A handler that has been running for `hung_after_seconds` or more is hung: the JSON says
// "hung": true and the table's state reads "HUNG 12.3 s in evalRequest"; a shorter one that has
// run for at least kBusyShownAfterSeconds reads "busy 1.2 s in evalRequest".
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "runtime/inspection/inspection_view.h"

namespace drk::runtime {

// The default of supervision.hung_handler_s (topology.h), which the head reports hung handlers at.
inline constexpr double kDefaultHungAfterSeconds = 30.0;
inline constexpr double kBusyShownAfterSeconds = 0.1;

bool is_hung(const ActorView& actor, double hung_after_seconds);
// "running", "dead", "busy 1.2 s in heartbeat", "HUNG 12.3 s in evalRequest", ...
std::string actor_state(const ActorView& actor, double hung_after_seconds);

// One JSON object (docs/inspection.md: the shape), ending with a newline.
std::string format_json(const SystemView& system, double hung_after_seconds);
// Processes, then actors, then the latest dead letters of actors that have any.
std::string format_table(const SystemView& system, double hung_after_seconds);

}  // namespace drk::runtime
