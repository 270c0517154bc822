// The shapes a result was tried at beyond its task's own, and how many of them it handled: those
// drawn from the task's range (Evidence.rangeShapesTried, rangeShapesHandled) and its timed ones
// (EvalResult.timedShapes, a declined one not handled; docs/tasks.md, "Shape ranges"). The
// Oracle's reward weighs the share handled and the archive keeps both counts.
//
// Thread-safety: a pure function over a message. Errors: none.
#pragma once

#include <cstdint>

#include "messages/drk.capnp.h"

namespace drk::judging {

struct ShapesTried {
  uint32_t tried = 0;
  uint32_t handled = 0;
};

ShapesTried shapes_tried(msg::EvalResult::Reader result);

}  // namespace drk::judging
