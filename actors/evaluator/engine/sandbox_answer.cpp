#include "actors/evaluator/engine/sandbox_answer.h"

#include <algorithm>

namespace drk::evaluator {

std::vector<TimedCall> read_timed_calls(capnp::List<msg::TimedCall>::Reader list) {
  std::vector<TimedCall> calls;
  for (auto call : list) {
    TimedCall timed{call.getSide() == msg::TimedSide::CANDIDATE, call.getEventUs(), {}, call.getLaunchHidden(),
                    call.getProfiled(), call.getEventFloorUs(), call.getEndMarkerNs()};
    for (auto k : call.getKernels()) {
      KernelRun run;
      run.name = k.getName();
      run.start_ns = k.getStartNs();
      run.end_ns = std::max(k.getEndNs(), k.getStartNs());
      for (unsigned d = 0; d < 3 && d < k.getGrid().size(); ++d) run.grid[d] = k.getGrid()[d];
      for (unsigned d = 0; d < 3 && d < k.getBlock().size(); ++d) run.block[d] = k.getBlock()[d];
      run.registers = k.getRegistersPerThread();
      run.static_shared = k.getStaticSharedBytes();
      run.dynamic_shared = k.getDynamicSharedBytes();
      timed.kernels.push_back(std::move(run));
    }
    calls.push_back(std::move(timed));
  }
  return calls;
}

SandboxAnswer read_answer(msg::SandboxReply::Reader reply) {
  SandboxAnswer answer;
  answer.status = reply.getStatus();
  answer.message = reply.getMessage();
  answer.candidate_status = reply.getCandidateStatus();
  answer.calls_completed = reply.getCallsCompleted();
  answer.library_calls = reply.getLibraryCalls();
  answer.sandbox_ns = reply.getSandboxNs();
  if (reply.getOutputChecksum() != 0) answer.output_checksum = reply.getOutputChecksum();
  if (reply.hasEnergy()) answer.energy = SandboxEnergy::read(reply.getEnergy());
  if (reply.hasMetrics()) answer.metrics = SandboxMetrics::read(reply.getMetrics());
  if (reply.hasTimedCalls()) answer.timed_calls = read_timed_calls(reply.getTimedCalls());
  answer.launch_hold_note = reply.getLaunchHoldNote();
  if (reply.hasPeaks()) {
    auto p = reply.getPeaks();
    answer.peaks = DevicePeaks{p.getName(), p.getL2CacheBytes(), p.getCopyBytesPerS(), p.getFmaFlopsPerS()};
  }
  return answer;
}

}  // namespace drk::evaluator
