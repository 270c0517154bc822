#include "actors/evaluator/cuda/cupti_kernel_trace.h"

#include <cupti.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace drk::evaluator::cuda {
namespace {

constexpr size_t kBufferBytes = 1 << 20;
constexpr size_t kBufferAlignment = 8;

std::atomic<bool> trace_active{false};
std::mutex records_mutex;
std::vector<KernelRecord> pending_records;  // guarded by records_mutex
// Buffers CUPTI gave back, for its next request: a request comes at a kernel launch (inside a
// timed call), and a fresh allocation there costs page faults, ~0.25 ms per MiB measured on
// the H200 (every event time was that much longer than the kernel).
std::vector<uint8_t*> spare_buffers;  // guarded by records_mutex

uint8_t* new_buffer() {
  auto* buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  if (buffer) std::memset(buffer, 0, kBufferBytes);  // touched now, not at the launch
  return buffer;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  {
    std::lock_guard lock(records_mutex);
    if (!spare_buffers.empty()) {
      *buffer = spare_buffers.back();
      spare_buffers.pop_back();
    } else {
      *buffer = nullptr;
    }
  }
  if (!*buffer) *buffer = new_buffer();
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  CUpti_Activity* record = nullptr;
  std::vector<KernelRecord> parsed;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        record->kind != CUPTI_ACTIVITY_KIND_KERNEL) {
      continue;
    }
    const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    KernelRecord out;
    out.name = kernel->name ? kernel->name : "";
    out.start_ns = kernel->start;
    out.end_ns = kernel->end;
    out.grid[0] = kernel->gridX, out.grid[1] = kernel->gridY, out.grid[2] = kernel->gridZ;
    out.block[0] = kernel->blockX, out.block[1] = kernel->blockY, out.block[2] = kernel->blockZ;
    out.registers_per_thread = kernel->registersPerThread;
    out.static_shared_bytes = kernel->staticSharedMemory;
    out.dynamic_shared_bytes = kernel->dynamicSharedMemory;
    out.stream_id = kernel->streamId;
    out.correlation_id = kernel->correlationId;
    parsed.push_back(std::move(out));
  }
  std::lock_guard lock(records_mutex);
  spare_buffers.push_back(buffer);
  for (auto& record_out : parsed) pending_records.push_back(std::move(record_out));
}

std::string cupti_error(CUptiResult status) {
  const char* text = nullptr;
  cuptiGetResultString(status, &text);
  return text ? text : "unknown CUPTI error";
}

}  // namespace

Result<std::unique_ptr<KernelTrace>> KernelTrace::start() {
  if (trace_active.exchange(true)) {
    return make_error(Errc::busy, "a KernelTrace is already active in this process");
  }
  if (const auto status = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
      status != CUPTI_SUCCESS) {
    trace_active = false;
    return make_error(Errc::unsupported, "CUPTI cannot trace kernels here: " + cupti_error(status));
  }
  if (const auto status = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      status != CUPTI_SUCCESS) {
    trace_active = false;
    return make_error(Errc::unsupported, "CUPTI cannot trace kernels here: " + cupti_error(status));
  }
  {
    std::lock_guard lock(records_mutex);
    for (int i = 0; i < 2 && spare_buffers.size() < 2; ++i)
      if (uint8_t* buffer = new_buffer()) spare_buffers.push_back(buffer);
  }
  return std::unique_ptr<KernelTrace>(new KernelTrace());
}

uint64_t KernelTrace::timestamp_ns() {
  uint64_t timestamp = 0;
  cuptiGetTimestamp(&timestamp);
  return timestamp;
}

KernelTrace::~KernelTrace() {
  cuptiActivityFlushAll(1);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::lock_guard lock(records_mutex);
  pending_records.clear();
  for (uint8_t* buffer : spare_buffers) std::free(buffer);
  spare_buffers.clear();
  trace_active = false;
}

Status KernelTrace::pause() {
  cuptiActivityFlushAll(1);
  if (const auto status = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); status != CUPTI_SUCCESS)
    return make_error(Errc::unsupported, "CUPTI cannot pause the kernel trace: " + cupti_error(status));
  return {};
}

Status KernelTrace::resume() {
  if (const auto status = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); status != CUPTI_SUCCESS)
    return make_error(Errc::unsupported, "CUPTI cannot resume the kernel trace: " + cupti_error(status));
  return {};
}

std::vector<KernelRecord> KernelTrace::collect() {
  cuptiActivityFlushAll(1);  // forced: also the buffers that are not full yet
  std::lock_guard lock(records_mutex);
  std::vector<KernelRecord> records;
  records.swap(pending_records);
  return records;
}

}  // namespace drk::evaluator::cuda
