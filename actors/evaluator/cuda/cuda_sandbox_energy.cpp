#include "actors/evaluator/cuda/cuda_sandbox_device.h"

#include <algorithm>
#include <chrono>

namespace drk::evaluator {
namespace {

// Energy: a batch is resolved when NVML's counter changed at least this often during it.
constexpr uint32_t kMinCounterUpdates = 3;
constexpr auto kCounterWait = std::chrono::milliseconds(500);  // for the first update
constexpr auto kEnergyGroup = std::chrono::milliseconds(2);     // calls per group (device time)
constexpr auto kEnergyOvertime = std::chrono::milliseconds(1000);

using Clock = std::chrono::steady_clock;

}  // namespace

// Keeps the device busy with groups of calls of about kEnergyGroup (an event after each, at most
// kGroupsInFlight queued) while the host reads NVML's counter between launches, so that reading
// NVML (which can take milliseconds) never leaves the device idle. The batch runs from one
// update of the counter to the first update after min_ms; at each update the calls counted are
// those whose group's event had completed, so both ends lag the same way and the count is off by
// less than one group.
Result<std::optional<CudaSandboxDevice::SideEnergy>> CudaSandboxDevice::energy_of(const std::function<bool()>& call,
                                                                                 uint32_t min_ms,
                                                                                 msg::SandboxReply::Builder reply) {
  constexpr size_t kGroupsInFlight = 3;
  auto failed = [&](const char* when, cudaError_t status) {
    device_error(reply, latch(when, status));
    return std::optional<SideEnergy>();
  };
  if (auto status = cudaDeviceSynchronize(); status != cudaSuccess) return failed("before an energy batch", status);
  // One call alone sizes the groups.
  auto timed = Clock::now();
  if (!call()) return std::optional<SideEnergy>();
  if (auto status = cudaDeviceSynchronize(); status != cudaSuccess) return failed("in an energy batch", status);
  double call_ms = std::max(std::chrono::duration<double, std::milli>(Clock::now() - timed).count(), 1e-3);
  // Reading NVML takes milliseconds (seen on the H200): a group must outlast a read, or the
  // device idles while the host reads and the idle power is charged to the calls.
  double read_ms = 0;
  for (int i = 0; i < 3; ++i) {
    auto read_started = Clock::now();
    if (auto reading = nvml_->total_millijoules(); !reading) return reading.error();
    read_ms = std::max(read_ms, std::chrono::duration<double, std::milli>(Clock::now() - read_started).count());
  }
  double group_ms = std::max(static_cast<double>(kEnergyGroup.count()), 2.0 * read_ms);
  uint64_t group = std::clamp<uint64_t>(static_cast<uint64_t>(group_ms / call_ms), 1, uint64_t{1} << 16);

  std::vector<CudaEvent> events(kGroupsInFlight + 1);
  struct InFlight {
    size_t event;
    uint64_t calls;
  };
  std::vector<InFlight> in_flight;
  size_t next_event = 0;
  uint64_t completed = 0;
  auto retire = [&](bool wait_for_oldest) -> cudaError_t {
    while (!in_flight.empty()) {
      cudaEvent_t oldest = events[in_flight.front().event].event;
      cudaError_t status = wait_for_oldest ? cudaEventSynchronize(oldest) : cudaEventQuery(oldest);
      if (status == cudaErrorNotReady) return cudaSuccess;
      if (status != cudaSuccess) return status;
      completed += in_flight.front().calls;
      in_flight.erase(in_flight.begin());
      wait_for_oldest = false;
    }
    return cudaSuccess;
  };

  auto first = nvml_->total_millijoules();
  if (!first) return first.error();
  uint64_t last_mj = *first, start_mj = 0, start_calls = 0, end_calls = 0;
  std::optional<Clock::time_point> started;
  Clock::time_point ended;
  auto launched = Clock::now();
  SideEnergy side;
  for (;;) {
    for (uint64_t i = 0; i < group; ++i)
      if (!call()) return std::optional<SideEnergy>();
    size_t event = next_event++ % events.size();
    if (auto status = cudaEventRecord(events[event].event, nullptr); status != cudaSuccess)
      return failed("recording an energy batch's event", status);
    in_flight.push_back({event, group});
    if (auto status = retire(in_flight.size() >= kGroupsInFlight); status != cudaSuccess)
      return failed("in an energy batch", status);
    auto now_mj = nvml_->total_millijoules();
    if (!now_mj) return now_mj.error();
    auto now = Clock::now();
    if (*now_mj != last_mj) {
      last_mj = *now_mj;
      if (!started) {
        started = now;
        start_mj = last_mj;
        start_calls = completed;
      } else {
        ++side.updates;
        end_calls = completed;
        ended = now;
        if (now - *started >= std::chrono::milliseconds(min_ms)) break;
      }
    }
    if (!started && now - launched > kCounterWait)
      return make_error(Errc::unsupported, "NVML's energy counter did not change within " +
                                               std::to_string(kCounterWait.count()) + " ms");
    if (started && now - *started >= std::chrono::milliseconds(min_ms) + kEnergyOvertime) break;
  }
  if (auto status = cudaDeviceSynchronize(); status != cudaSuccess) return failed("after an energy batch", status);
  if (side.updates == 0) return make_error(Errc::unsupported, "NVML's energy counter stopped changing");
  side.calls = end_calls - start_calls;
  side.batch_ms = std::chrono::duration<double, std::milli>(ended - *started).count();
  double millijoules = static_cast<double>(last_mj - start_mj);
  side.millijoules_per_call = side.calls > 0 ? millijoules / static_cast<double>(side.calls) : 0.0;
  side.watts = side.batch_ms > 0 ? millijoules / side.batch_ms : 0.0;  // mJ per ms
  return std::optional<SideEnergy>(side);
}

void CudaSandboxDevice::measure_energy(msg::EnergyRequest::Reader request, CandidateCalls& calls,
                                       msg::SandboxReply::Builder reply) {
  auto out = reply.initEnergy();
  if (!nvml_ && nvml_unavailable_.empty()) {
    if (pci_bus_id_.empty()) {
      nvml_unavailable_ = "cudaDeviceGetPCIBusId failed, so the device cannot be found in NVML";
    } else if (auto opened = cuda::NvmlEnergy::open(pci_bus_id_); opened) {
      nvml_ = std::move(*opened);
    } else {
      nvml_unavailable_ = opened.error().message;
    }
  }
  if (!nvml_) {
    out.setAvailable(false);
    out.setReason(nvml_unavailable_);
    return;
  }
  auto reference = reference_side(request.getReference(), calls, reply);
  if (!reference) return;
  size_t set_count = calls.inputs.size();
  uint64_t candidate_calls = 0, reference_calls = 0;
  auto candidate_call = [&]() {
    const int status = call_candidate(calls, candidate_calls++ % set_count);
    if (status == DRK_OK) return true;
    returned_error(reply, status, "in an energy batch");
    return false;
  };
  auto reference_call = [&]() {
    auto ran = reference->call(reference_calls++ % set_count);
    if (ran) return true;
    reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
    reply.setMessage("the reference failed on the device: " + ran.error().message);
    return false;
  };
  uint32_t min_ms = std::max<uint32_t>(request.getMinMs(), 1);
  std::optional<size_t> free_before = free_device_bytes();
  auto candidate = energy_of(candidate_call, min_ms, reply);
  if (candidate && *candidate) account_memory(free_before, "an energy batch");
  if (answered_memory_limit(reply)) return;
  if (candidate && !*candidate) return;  // the reply says what ended the batch
  if (calls.math_modes) calls.math_modes->check();
  auto reference_energy = candidate ? energy_of(reference_call, min_ms, reply) : candidate;
  if (reference_energy && !*reference_energy) return;
  if (!candidate || !reference_energy) {
    out.setAvailable(false);
    out.setReason((candidate ? reference_energy : candidate).error().message);
    return;
  }
  auto fill = [](msg::EnergySide::Builder side, const SideEnergy& measured) {
    side.setMillijoulesPerCall(measured.millijoules_per_call);
    side.setCalls(measured.calls);
    side.setBatchMs(measured.batch_ms);
    side.setAverageWatts(measured.watts);
    side.setCounterUpdates(measured.updates);
  };
  fill(out.initCandidate(), **candidate);
  fill(out.initReference(), **reference_energy);
  out.setAvailable(true);
  uint32_t updates = std::min((*candidate)->updates, (*reference_energy)->updates);
  out.setResolved(updates >= kMinCounterUpdates);
  if (updates < kMinCounterUpdates)
    out.setReason("a batch saw only " + std::to_string(updates) + " updates of NVML's energy counter in " +
                  std::to_string(min_ms) + " ms (it needs " + std::to_string(kMinCounterUpdates) +
                  "): raise eval.energy_min_ms for a value to rely on");
}

}  // namespace drk::evaluator
