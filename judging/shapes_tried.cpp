#include "judging/shapes_tried.h"

namespace drk::judging {

ShapesTried shapes_tried(msg::EvalResult::Reader result) {
  const auto evidence = result.getEvidence();
  ShapesTried shapes{evidence.getRangeShapesTried(), evidence.getRangeShapesHandled()};
  for (auto timed : result.getTimedShapes()) {
    ++shapes.tried;
    if (!timed.getDeclined()) ++shapes.handled;
  }
  return shapes;
}

}  // namespace drk::judging
