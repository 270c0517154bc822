#include "actors/evaluator/cuda/cuda_sandbox_device.h"

#include <algorithm>

#include "actors/evaluator/input_swaps.h"

namespace drk::evaluator {

void CudaSandboxDevice::time(msg::TimeRequest::Reader request, CandidateCalls& calls, msg::SandboxReply::Builder reply) {
  auto sides = request.getSides();
  auto profiled = request.getProfiled();
  const unsigned timed_count = sides.size(), call_count = sides.size() + profiled.size();
  size_t set_count = calls.inputs.size();
  auto reference = reference_side(request.getReference(), calls, reply);
  if (!reference) return;
  CudaEvent start, end;
  auto timed = reply.initTimedCalls(call_count);
  // Each profiled call's window on CUPTI's clock; the records are collected once, after the last call.
  std::vector<std::pair<uint64_t, uint64_t>> windows(call_count);
  // Whatever ends the request, the trace is off again after it.
  struct PauseTrace {
    CudaSandboxDevice* device = nullptr;
    ~PauseTrace() {
      if (device && !device->trace_->pause()) device->broken_ = true;
    }
  } trace_on;
  bool hold = request.getHoldLaunches() && launch_hold(reply);
  // Profiled calls are held and marked at their end whatever the timed calls ask: a kernel left on
  // a stream the call never joined then starts with the call's work, not at its launch, and ends
  // after the marker however short it is (launch_hold.h).
  const bool hold_profiled = profiled.size() > 0 && build_launch_hold();
  double floor_us = 0;
  if (hold) {
    if (auto floor = held_event_floor_us(start, end); floor) floor_us = *floor;
    else {
      reply.setLaunchHoldNote(floor.error().message);
      hold = false;
    }
  }
  for (unsigned i = 0; i < call_count; ++i) {
    const bool traced = i >= timed_count;
    const msg::TimedSide side = traced ? profiled[i - timed_count] : sides[i];
    if (traced && i == timed_count) {
      if (auto resumed = trace_->resume(); !resumed) return trace_failed(reply, resumed.error());
      trace_on.device = this;
    }
    bool candidate = side == msg::TimedSide::CANDIDATE;
    size_t set = calls_by_side_[candidate ? 0 : 1]++ % set_count;
    cudaStream_t stream = candidate ? stream_ : reference->stream;
    // The set's last call left its answer in these outputs: every call starts from a NaN poison
    // instead, written before the flush, outside the events.
    if (candidate && !request.getKeepOutputs())
      for (const drk_tensor& output : calls.outputs[set]) cudaMemsetAsync(output.data, 0xFF, tensor_bytes(output), stream);
    reset_l2_state();
    if (request.getFlushL2()) cudaMemsetAsync(flush_, static_cast<int>(flushes_++ & 0xFF), flush_bytes_, stream);
    if (auto status = cudaDeviceSynchronize(); status != cudaSuccess) {
      device_error(reply, latch("before a timed call", status));
      return;
    }
    if (candidate && request.getSwapSeed() != 0)
      if (auto swapped = swap_device_inputs(calls.inputs[set], request.getSwapSeed(), i); !swapped) {
        device_error(reply, swapped.error());
        return;
      }
    // Outside the timed window: the candidate's memory is counted between synchronisations.
    std::optional<size_t> free_before = candidate ? free_device_bytes() : std::nullopt;
    bool held = false;
    if (hold || (traced && hold_profiled)) {
      if (auto begun = hold_->begin(stream); begun) held = true;
      else if (hold) {
        reply.setLaunchHoldNote(begun.error().message);
        hold = false;
      }
    }
    // The hold runs already, so the window never holds its start: CUPTI does not count it.
    struct Release {
      cuda::LaunchHold* hold;
      ~Release() {
        if (hold) hold->release();
      }
    } release_on_exit{held ? &*hold_ : nullptr};
    windows[i].first = cuda::KernelTrace::timestamp_ns();
    int candidate_status = DRK_OK;
    cudaEventRecord(start.event, stream);
    if (candidate) {
      candidate_status = call_candidate(calls, set);
    } else {
      if (auto ran = reference->call(set); !ran) {
        reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
        reply.setMessage("the reference failed on the device: " + ran.error().message);
        return;
      }
    }
    cudaEventRecord(end.event, stream);
    // A marker that cannot launch leaves the call unmarked: judged by the span check alone.
    if (traced && hold_) static_cast<void>(hold_->mark_end(stream));
    if (held) hold_->release();
    if (auto synchronized = synchronize(); !synchronized) {
      device_error(reply, synchronized.error());
      return;
    }
    windows[i].second = cuda::KernelTrace::timestamp_ns();
    const bool launch_hidden = held && !hold_->timed_out();
    if (hold && held && !launch_hidden)
      reply.setLaunchHoldNote("the launch hold gave up before the call was queued: the " +
                              std::string(candidate ? "candidate" : "reference") +
                              " waited on the device inside its call");
    // The reference runs in this process next: a mode the candidate changed must not slow it.
    if (candidate && calls.math_modes) calls.math_modes->check();
    if (candidate) account_memory(free_before, "a timed call");
    if (answered_memory_limit(reply)) return;
    if (candidate_status != DRK_OK) return returned_error(reply, candidate_status, "in a timed call");
    float elapsed_ms = 0.0f;
    cudaEventElapsedTime(&elapsed_ms, start.event, end.event);
    const double floor_taken_us = launch_hidden ? floor_us : 0.0;
    auto call = timed[i];
    call.setSide(side);
    call.setSet(static_cast<uint32_t>(set));
    call.setEventUs(std::max(static_cast<double>(elapsed_ms) * 1000.0 - floor_taken_us, 0.0));
    call.setEventFloorUs(floor_taken_us);
    call.setLaunchHidden(launch_hidden);
    call.setProfiled(traced);
  }
  if (call_count == timed_count) {
    reply.setCallsCompleted(call_count);
    return;
  }
  auto records = trace_->collect();
  trace_on.device = nullptr;
  if (auto paused = trace_->pause(); !paused) return trace_failed(reply, paused.error());
  std::vector<std::vector<const cuda::KernelRecord*>> by_call(call_count);
  for (const auto& record : records)
    for (unsigned i = timed_count; i < call_count; ++i)
      if (record.start_ns >= windows[i].first && record.end_ns <= windows[i].second) {
        if (record.name == cuda::LaunchHold::kEndMarkerKernel) timed[i].setEndMarkerNs(record.start_ns);
        else by_call[i].push_back(&record);
        break;
      }
  for (unsigned i = timed_count; i < call_count; ++i) {
    auto kernels = timed[i].initKernels(static_cast<unsigned>(by_call[i].size()));
    for (unsigned k = 0; k < by_call[i].size(); ++k) {
      const auto& r = *by_call[i][k];
      auto out = kernels[k];
      out.setName(r.name);
      out.setStartNs(r.start_ns);
      out.setEndNs(r.end_ns);
      auto grid = out.initGrid(3);
      auto block = out.initBlock(3);
      for (unsigned d = 0; d < 3; ++d) {
        grid.set(d, static_cast<uint32_t>(r.grid[d]));
        block.set(d, static_cast<uint32_t>(r.block[d]));
      }
      out.setRegistersPerThread(r.registers_per_thread);
      out.setStaticSharedBytes(static_cast<uint32_t>(r.static_shared_bytes));
      out.setDynamicSharedBytes(static_cast<uint32_t>(r.dynamic_shared_bytes));
      out.setStreamId(r.stream_id);
    }
  }
  reply.setCallsCompleted(call_count);
}

Result<double> CudaSandboxDevice::held_event_floor_us(CudaEvent& start, CudaEvent& end) {
  constexpr int kWindows = 5;
  std::vector<double> windows_us;
  for (int w = 0; w < kWindows; ++w) {
    if (auto begun = hold_->begin(stream_); !begun) return begun.error();
    cudaEventRecord(start.event, stream_);
    cudaEventRecord(end.event, stream_);
    hold_->release();
    if (auto status = cudaStreamSynchronize(stream_); status != cudaSuccess)
      return make_error(Errc::io_error, "measuring the events' own cost: " + cuda_error_text(status));
    if (hold_->timed_out()) return make_error(Errc::timeout, "the launch hold gave up around an empty window");
    float elapsed_ms = 0.0f;
    cudaEventElapsedTime(&elapsed_ms, start.event, end.event);
    windows_us.push_back(static_cast<double>(elapsed_ms) * 1000.0);
  }
  std::nth_element(windows_us.begin(), windows_us.begin() + kWindows / 2, windows_us.end());
  return windows_us[kWindows / 2];
}

bool CudaSandboxDevice::build_launch_hold() {
  if (!hold_ && hold_error_.empty()) {
    auto created = cuda::LaunchHold::create();
    if (created) hold_.emplace(std::move(*created));
    else hold_error_ = created.error().message;
  }
  return hold_.has_value();
}

bool CudaSandboxDevice::launch_hold(msg::SandboxReply::Builder reply) {
  const bool built = build_launch_hold();
  if (!built) reply.setLaunchHoldNote("the sandbox cannot hold launches: " + hold_error_);
  return built;
}

void CudaSandboxDevice::reset_l2_state() {
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  cudaCtxResetPersistingL2Cache();
  cudaStreamAttrValue window{};
  window.accessPolicyWindow.num_bytes = 0;
  cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &window);
  cudaGetLastError();  // a device without persisting L2 refuses these: nothing to reset then
}

Status CudaSandboxDevice::swap_device_inputs(const std::vector<drk_tensor>& inputs, uint64_t seed, uint64_t call) {
  for (uint32_t t = 0; t < inputs.size(); ++t) {
    const size_t bytes = dtype_bytes(inputs[t].dtype);
    const SwapPositions at = swap_positions(seed, call, t, tensor_elements(inputs[t]));
    if (bytes == 0 || at.first == at.second) continue;
    auto* base = static_cast<unsigned char*>(inputs[t].data);
    unsigned char first[8], second[8];
    for (auto [to, from] : {std::pair{first, base + at.first * bytes}, std::pair{second, base + at.second * bytes}})
      if (auto status = cudaMemcpy(to, from, bytes, cudaMemcpyDeviceToHost); status != cudaSuccess)
        return latch("swapping input elements between timed calls", status);
    for (auto [to, from] : {std::pair{base + at.first * bytes, second}, std::pair{base + at.second * bytes, first}})
      if (auto status = cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice); status != cudaSuccess)
        return latch("swapping input elements between timed calls", status);
  }
  return {};
}

}  // namespace drk::evaluator
