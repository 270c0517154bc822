// SandboxAnswer: what the engine keeps of one sandbox reply (messages/sandbox.capnp), with this
// process's clock and the sandbox's CPU time around the round trip, and the CUDA sandbox's timed
// calls, peaks, energy and hardware metrics read into plain values.
//
// Thread-safety: plain values. Errors: none; read_answer() reads a reply that the frame reader
// already checked (sandbox_channel.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/evaluator/sandbox_energy.h"
#include "actors/evaluator/sandbox_metrics.h"
#include "messages/sandbox.capnp.h"

namespace drk::evaluator {

// One kernel CUPTI saw during a profiled call.
struct KernelRun {
  std::string name;
  uint64_t start_ns = 0, end_ns = 0;  // end_ns >= start_ns
  uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  uint32_t registers = 0, static_shared = 0, dynamic_shared = 0;
};

// One call timed with CUDA events in the sandbox.
struct TimedCall {
  bool candidate = true;
  double event_us = 0;
  std::vector<KernelRun> kernels;  // profiled calls only
  bool launch_hidden = false;      // held by the launch hold: the events exclude launch latency
  bool profiled = false;           // traced by CUPTI (its instrumentation included in event_us)
  double event_floor_us = 0;       // taken off event_us: the event pair's own cost when held
  uint64_t end_marker_ns = 0;      // profiled calls: when the call's stream passed its end (0: unmarked)
};

// The device's peaks, measured by a sandbox (the roofline's).
struct DevicePeaks {
  std::string name;
  uint64_t l2_bytes = 0;
  double copy_bytes_per_s = 0, fma_flops_per_s = 0;
};

struct SandboxAnswer {
  msg::SandboxStatus status = msg::SandboxStatus::OK;
  std::string message;
  int32_t candidate_status = 0;
  uint32_t calls_completed = 0;
  uint64_t library_calls = 0;
  uint64_t sandbox_ns = 0;
  double wall_ns = 0;  // this process's clock around the round trip
  double cpu_ns = 0;   // the sandbox's CPU time (all its threads) over the round trip
  // This process's clock from before the first reading of cpu_ns to after the second: the time
  // cpu_ns covers, which runs past the reply while the Evaluator waits for the sandbox to sleep.
  // N threads' cpu_ns cannot exceed N x cpu_span_ns; the round trip's wall_ns lacks that tail.
  double cpu_span_ns = 0;
  // Both readings of cpu_ns found every thread of the sandbox asleep, so it is exact: a reading
  // taken while a thread runs lacks up to a scheduler tick (4 ms) of it, four timed batches.
  bool cpu_exact = false;
  std::optional<uint64_t> output_checksum;  // run requests that asked: the outputs as the call returned
  std::vector<TimedCall> timed_calls;  // CUDA time requests
  std::string launch_hold_note;        // CUDA time requests: why a call was not held
  std::optional<DevicePeaks> peaks;    // CUDA peaks requests
  std::optional<SandboxEnergy> energy; // CUDA energy requests
  std::optional<SandboxMetrics> metrics;  // CUDA metrics requests
};

std::vector<TimedCall> read_timed_calls(capnp::List<msg::TimedCall>::Reader list);

// The reply's own fields; the clocks (wall_ns, cpu_ns, cpu_span_ns, cpu_exact) are the caller's to set.
SandboxAnswer read_answer(msg::SandboxReply::Reader reply);

}  // namespace drk::evaluator
