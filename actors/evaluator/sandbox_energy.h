// SandboxEnergy: a CUDA sandbox's energy answer (messages/sandbox.capnp EnergyReading) as the
// Evaluator keeps it between the reply and the result, and how it becomes the result's
// GpuProfile.energy (messages/drk.capnp GpuEnergy). Energy is never a failure: an unavailable
// reading carries its reason (no NVML, no matching device, not requested).
//
// Thread-safety: plain values. No errors.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "messages/drk.capnp.h"
#include "messages/sandbox.capnp.h"

namespace drk::evaluator {

struct SandboxEnergy {
  struct Side {
    double millijoules_per_call = 0, batch_ms = 0, watts = 0;
    uint64_t calls = 0;
    uint32_t counter_updates = 0;
  };
  bool available = false;
  bool resolved = false;
  std::string reason;
  Side candidate, reference;

  static SandboxEnergy read(msg::EnergyReading::Reader reading) {
    auto side = [](msg::EnergySide::Reader in) {
      return Side{in.getMillijoulesPerCall(), in.getBatchMs(), in.getAverageWatts(), in.getCalls(),
                  in.getCounterUpdates()};
    };
    return SandboxEnergy{reading.getAvailable(), reading.getResolved(), reading.getReason(),
                         side(reading.getCandidate()), side(reading.getReference())};
  }

  static SandboxEnergy unavailable(std::string why) {
    SandboxEnergy energy;
    energy.reason = std::move(why);
    return energy;
  }

  void fill(msg::GpuEnergy::Builder out) const {
    out.setAvailable(available);
    out.setReason(reason);
    out.setResolved(available && resolved);
    if (!available) return;
    out.setCandidateMillijoulesPerCall(candidate.millijoules_per_call);
    out.setReferenceMillijoulesPerCall(reference.millijoules_per_call);
    out.setCandidateCalls(candidate.calls);
    out.setReferenceCalls(reference.calls);
    out.setCandidateBatchMs(candidate.batch_ms);
    out.setReferenceBatchMs(reference.batch_ms);
    out.setCandidateWatts(candidate.watts);
    out.setReferenceWatts(reference.watts);
    out.setCounterUpdates(std::min(candidate.counter_updates, reference.counter_updates));
  }
};

}  // namespace drk::evaluator
