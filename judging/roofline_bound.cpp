#include "judging/roofline_bound.h"

namespace drk::judging {

RooflinePosition roofline_position(msg::EvalResult::Reader result) {
  RooflinePosition position;
  if (!result.hasGpu()) return position;
  const auto gpu = result.getGpu();
  if (gpu.getPeakBytesPerS() > 0) position.bytes_fraction = gpu.getAchievedBytesPerS() / gpu.getPeakBytesPerS();
  if (gpu.getPeakFlopsPerS() > 0) position.flops_fraction = gpu.getAchievedFlopsPerS() / gpu.getPeakFlopsPerS();
  position.beyond = position.bytes_fraction > kRooflineBytesMargin || position.flops_fraction > kRooflineFlopsMargin;
  return position;
}

}  // namespace drk::judging
