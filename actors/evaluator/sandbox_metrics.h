// SandboxMetrics: a CUDA sandbox's hardware-metrics answer (messages/sandbox.capnp
// MetricsReading) as the Evaluator keeps it between the reply and the result, and how it becomes
// the result's GpuProfile.hardwareMetrics (messages/drk.capnp), with each kernel marked own when
// its name is an entry of the candidate's compile report. Never a failure: an unavailable
// reading carries its reason.
//
// Thread-safety: plain values. No errors.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "messages/drk.capnp.h"
#include "messages/sandbox.capnp.h"

namespace drk::evaluator {

struct SandboxMetrics {
  struct Kernel {
    std::string name;
    double dram_pct = 0, sm_pct = 0, l2_hit_pct = 0, occupancy_pct = 0;
  };
  bool available = false;
  std::string reason;
  std::vector<Kernel> kernels;

  static SandboxMetrics read(msg::MetricsReading::Reader reading) {
    SandboxMetrics metrics{reading.getAvailable(), reading.getReason(), {}};
    for (auto k : reading.getKernels())
      metrics.kernels.push_back(Kernel{k.getName(), k.getDramThroughputPct(), k.getSmThroughputPct(),
                                       k.getL2HitRatePct(), k.getAchievedOccupancyPct()});
    return metrics;
  }

  static SandboxMetrics unavailable(std::string why) { return SandboxMetrics{false, std::move(why), {}}; }

  void fill(const std::set<std::string>& own, msg::GpuHardwareMetrics::Builder out) const {
    out.setAvailable(available);
    out.setReason(reason);
    auto list = out.initKernels(static_cast<unsigned>(kernels.size()));
    for (unsigned i = 0; i < kernels.size(); ++i) {
      list[i].setName(kernels[i].name);
      list[i].setOwn(own.count(kernels[i].name) > 0);
      list[i].setDramThroughputPct(kernels[i].dram_pct);
      list[i].setSmThroughputPct(kernels[i].sm_pct);
      list[i].setL2HitRatePct(kernels[i].l2_hit_pct);
      list[i].setAchievedOccupancyPct(kernels[i].occupancy_pct);
    }
  }
};

}  // namespace drk::evaluator
