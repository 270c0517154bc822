// IdleCpu: the CPU time a candidate's sandbox spends while no request is in flight (between a
// reply and the next request, and after the last reply), the evidence of work left running
// (cpuWhileIdleMs, idleMs, idleCpuShare).
//
// idleCpuShare is the median over the intervals of at least kMinIntervalNs of their CPU time over
// their wall time: the kernel reads another process's CPU clock lazily, so an interval whose start
// found a thread running (beyond the wait before the reading) can be charged a scheduler tick of
// the batch before, which a short interval would turn into a large share.
//
// Thread-safety: not thread-safe; one per engine. Errors: none.
#pragma once

#include <vector>

#include "messages/drk.capnp.h"

namespace drk::evaluator {

class IdleCpu {
 public:
  static constexpr double kMinIntervalNs = 2e6;

  void reset();
  void add(double cpu_ns, double wall_ns);
  // cpuWhileIdleMs, idleMs and, when an interval was long enough, idleCpuShare.
  void record(msg::Evidence::Builder evidence) const;

 private:
  double cpu_ns_ = 0, wall_ns_ = 0;
  std::vector<double> shares_;
};

}  // namespace drk::evaluator
