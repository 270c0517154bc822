// drk-sandbox and drk-sandbox-cuda: the process in which a candidate runs. With --zygote it is
// the Evaluator's zygote (zygote_loop.h), which forks one sandbox per candidate; without, a
// sandbox launched on its own (SandboxProcess::start: under compute-sanitizer, or with guard
// pages). A sandbox speaks messages/sandbox.capnp on descriptors 3 (requests) and 4 (replies);
// tensors live in the shared region on descriptor 5. Before it serves, it starts its runtimes
// (LibTorch's threads, the CUDA device) and installs its syscall filter (sandbox_confinement.h).
// It loads the candidate with dlopen() and calls its drk_kernel as told; before dlopen() it
// refuses an object that would bind to anything of this process but the C/C++ and CUDA runtimes
// (harness_imports.h). Anything the candidate does wrong (a crash, a hang, a CUDA error) ends or
// stalls this process only; the Evaluator replaces it.
// The two executables differ only in their SandboxDevice (sandbox_device.h): none for the CPU,
// CUDA (device memory, streams, events, CUPTI, the LibTorch CUDA reference) for the GPU.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <capnp/serialize.h>

#include "actors/evaluator/bump_workspace.h"
#include "actors/evaluator/guarded_tensors.h"
#include "actors/evaluator/harness_imports.h"
#include "actors/evaluator/input_swaps.h"
#include "actors/evaluator/math_modes.h"
#include "actors/evaluator/output_checksum.h"
#include "actors/evaluator/python/python_candidate.h"
#include "actors/evaluator/python/python_runtime.h"
#include "actors/evaluator/sandbox_channel.h"
#include "actors/evaluator/sandbox_confinement.h"
#include "actors/evaluator/sandbox_device.h"
#include "actors/evaluator/sandbox_library.h"
#include "actors/evaluator/zygote_loop.h"
#include "drk_kernel.h"
#include "messages/sandbox.capnp.h"

namespace drk::evaluator {
namespace {

constexpr int kRequestFd = 3;
constexpr int kReplyFd = 4;
constexpr int kRegionFd = 5;
constexpr size_t kMaxWorkspaceBytes = size_t{8} << 30;

// Workspace blocks in host memory.
struct HostMemory {
  static void* allocate(size_t bytes) { return std::aligned_alloc(kWorkspaceAlignment, bytes); }
  static void release(void* p) { std::free(p); }
};

struct Harness {
  uint8_t* region = nullptr;
  size_t region_bytes = 0;
  drk_kernel_fn kernel = nullptr;
  int max_threads = 1;
  BumpWorkspace<HostMemory> workspace;
  std::unique_ptr<SandboxDevice> device;  // null: candidates run on the host
  std::string unavailable;                // why this sandbox runs nothing (no device, no filter); "" when it runs
  // Threads of this process just before the candidate was loaded: any beyond them are its own.
  uint32_t threads_at_load = 0;
  // The most threads beyond threads_at_load that a batch has reported alive: those are known, and
  // only threads beyond them are waited for (threads_left_running).
  uint32_t threads_reported = 0;
  bool loaded = false;  // a candidate's object was opened (whether or not it then loaded)
  // --separate-allocations: the sandbox of the out-of-bounds check: under compute-sanitizer on
  // CUDA, with every tensor between guard pages on the CPU (guarded_tensors.h).
  bool separate_allocations = false;
  MathModeWatch math_modes;
  // --python: candidates are KernelBench-format Python files (python_candidate.h), not objects.
  bool python = false;
  // --allow-compilers: the Triton warm-up, whose candidate's Triton starts compilers.
  bool allow_compilers = false;
};

Harness harness;

void* workspace_for(const drk_context*, size_t bytes) { return harness.workspace.allocate(bytes); }

void begin_call() {
  if (harness.device) harness.device->begin_call();
  else harness.workspace.begin_call(kMaxWorkspaceBytes);
}

void end_call() {
  if (harness.device) harness.device->end_call();
  else harness.workspace.end_call();
}

bool map_region(size_t bytes, std::string& error) {
  if (bytes == harness.region_bytes) return true;
  if (harness.region) munmap(harness.region, harness.region_bytes);
  harness.region = nullptr;
  harness.region_bytes = 0;
  if (bytes == 0) return true;
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, kRegionFd, 0);
  if (mapped == MAP_FAILED) {
    error = std::string("cannot map the shared region: ") + std::strerror(errno);
    return false;
  }
  harness.region = static_cast<uint8_t*>(mapped);
  harness.region_bytes = bytes;
  if (harness.device) {
    if (auto mirrored = harness.device->mirror_region(harness.region, bytes); !mirrored) {
      error = mirrored.error().message;
      return false;
    }
  }
  return true;
}

bool make_tensor(msg::TensorView::Reader view, drk_tensor& out, std::string& error) {
  auto shape = view.getShape();
  // Any drk_dtype (the tasks use float32, and int64 class indices for cross-entropy); rank 0 is a
  // scalar.
  if (shape.size() > DRK_MAX_DIMS || dtype_bytes(view.getDtype()) == 0) {
    error = "a tensor view has an unsupported rank or dtype";
    return false;
  }
  std::memset(&out, 0, sizeof out);
  out.dtype = view.getDtype();
  out.ndim = static_cast<int32_t>(shape.size());
  uint64_t elements = 1;
  for (unsigned i = 0; i < shape.size(); ++i) {
    if (shape[i] <= 0 || shape[i] > (int64_t{1} << 40)) {
      error = "a tensor view has a bad dim";
      return false;
    }
    out.shape[i] = shape[i];
    elements *= static_cast<uint64_t>(shape[i]);
  }
  int64_t stride = 1;
  for (int i = out.ndim - 1; i >= 0; --i) {
    out.strides[i] = stride;
    stride *= out.shape[i];
  }
  uint64_t bytes = elements * dtype_bytes(out.dtype);
  const uint64_t attached = harness.device ? harness.device->attached_bytes() : 0;
  const uint64_t extent = attached ? attached : harness.region_bytes;
  if (view.getOffset() % 64 != 0 || view.getOffset() > extent || bytes > extent - view.getOffset()) {
    error = attached ? "a tensor view lies outside the Evaluator's device memory"
                     : "a tensor view lies outside the shared region";
    return false;
  }
  out.data = harness.device ? harness.device->tensor_data(view.getOffset(), bytes) : harness.region + view.getOffset();
  if (!out.data) {
    error = "no device memory for a tensor of " + std::to_string(bytes) + " bytes";
    return false;
  }
  return true;
}

// The threads of this process now (entries of /proc/self/task); 0 when it cannot be read.
uint32_t thread_count() {
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return 0;
  uint32_t count = 0;
  while (dirent* entry = readdir(tasks))
    if (entry->d_name[0] != '.') ++count;
  closedir(tasks);
  return count;
}

void load_python(msg::LoadRequest::Reader load, msg::SandboxReply::Builder reply) {
  PythonCandidateSpec spec;
  spec.path = load.getLibrary();
  const auto python = load.getPython();
  spec.display_name = python.getDisplayName();
  spec.init_inputs_json = python.getInitInputs();
  spec.init_seed = python.getInitSeed();
  spec.constants_json = python.getConstants();
  spec.reference_parameters_json = python.getParameters();
  for (auto extension : python.getExtensions()) spec.extensions.push_back({extension.getName(), extension.getPath()});
  spec.on_cuda = harness.device != nullptr;
  spec.reference_source = python.getReferenceSource();
  spec.processes_allowed = harness.allow_compilers;
  harness.threads_at_load = thread_count();
  harness.loaded = true;
  if (auto loaded = load_python_candidate(spec); !loaded) {
    reply.setStatus(msg::SandboxStatus::LOAD_FAILED);
    reply.setMessage(loaded.error().message);
    return;
  }
  harness.kernel = python_candidate_kernel();
  if (harness.device) harness.device->begin_candidate();
}

void handle_load(msg::LoadRequest::Reader load, msg::SandboxReply::Builder reply) {
  if (harness.loaded) {
    // One candidate per process: a second load would run its code beside what the first left.
    reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
    reply.setMessage("this sandbox has loaded a candidate already: each candidate gets a sandbox of its own");
    return;
  }
  harness.max_threads = load.getMaxThreads() > 0 ? load.getMaxThreads() : 1;
  set_library_threads(harness.max_threads);
  harness.math_modes.expect_current();
  if (harness.python) return load_python(load, reply);
  // Before dlopen, so that nothing of a refused candidate runs (its static constructors neither):
  // what it would bind to in this process besides the C/C++ and CUDA runtimes (harness_imports.h).
  auto reach = check_harness_imports(load.getLibrary().cStr());
  if (!reach || !reach->empty()) {
    reply.setStatus(msg::SandboxStatus::LOAD_FAILED);
    reply.setMessage("refused before loading: " +
                     (reach ? "the candidate reaches the harness outside the ABI: " + *reach : reach.error().message));
    if (reach) reply.setHarnessSymbol(*reach);
    return;
  }
  // The census before any of the candidate's code runs: threads its static constructors start are
  // its own, counted after every batch.
  harness.threads_at_load = thread_count();
  harness.loaded = true;
  void* handle = dlopen(load.getLibrary().cStr(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    reply.setStatus(msg::SandboxStatus::LOAD_FAILED);
    reply.setMessage(std::string("dlopen failed: ") + dlerror());
    return;
  }
  auto kernel = reinterpret_cast<drk_kernel_fn>(dlsym(handle, DRK_KERNEL_SYMBOL));
  if (!kernel) {
    reply.setStatus(msg::SandboxStatus::LOAD_FAILED);
    reply.setMessage("the candidate does not export drk_kernel (declare it with DRK_EXPORT, extern \"C\")");
    return;
  }
  harness.kernel = kernel;
  if (harness.device) harness.device->begin_candidate();
}

// The descriptors of every buffer set, and the region ranges they cover; false with a
// badRequest reply when a view does not fit.
bool make_sets(capnp::List<msg::BufferSet>::Reader sets, CandidateCalls& calls, std::vector<RegionRange>& ranges,
               msg::SandboxReply::Builder reply) {
  calls.inputs.assign(sets.size(), {});
  calls.outputs.assign(sets.size(), {});
  std::string error;
  for (unsigned s = 0; s < sets.size(); ++s) {
    for (auto view : sets[s].getInputs()) {
      calls.inputs[s].emplace_back();
      if (!make_tensor(view, calls.inputs[s].back(), error)) break;
      ranges.push_back({view.getOffset(), tensor_bytes(calls.inputs[s].back())});
    }
    for (auto view : sets[s].getOutputs()) {
      calls.outputs[s].emplace_back();
      if (!make_tensor(view, calls.outputs[s].back(), error)) break;
      ranges.push_back({view.getOffset(), tensor_bytes(calls.outputs[s].back())});
    }
    if (!error.empty()) {
      reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
      reply.setMessage(error);
      return false;
    }
  }
  return true;
}

drk_context make_context() {
  drk_context context{};
  context.abi_version = DRK_ABI_VERSION;
  context.device = DRK_CPU;
  context.max_threads = harness.max_threads;
  context.workspace = &workspace_for;
  context.lib = sandbox_library();
  context.harness = &harness;
  if (harness.device) harness.device->prepare_context(context);
  return context;
}

void device_failed(const Error& error, msg::SandboxReply::Builder reply) {
  reply.setStatus(harness.device && harness.device->broken() ? msg::SandboxStatus::CUDA_ERROR
                                                             : msg::SandboxStatus::BAD_REQUEST);
  reply.setMessage(error.message);
}

// Threads beyond `before` still alive after a batch: the ABI says threads a candidate starts are
// joined before it returns. A joined thread can linger in /proc for a moment after its join, so
// a surplus is re-counted every 50 us for up to 20 ms before it is reported: fine steps, since the
// wait is inside the Evaluator's round trip (a joined thread is gone within microseconds, and a
// coarse step once added up to a millisecond to some batches of honest threaded candidates).
// Threads an earlier batch already reported (a pool the candidate keeps, torch's or OpenMP's in a
// Python candidate) are not waited for again: the evidence keeps the most, and waiting out the
// grace after every batch added 20 ms to each, timings and empty round trips alike.
uint32_t threads_left_running(uint32_t before) {
  if (before == 0) return 0;
  const uint32_t known = before + harness.threads_reported;
  uint32_t after = thread_count();
  for (int retry = 0; retry < 400 && after > known; ++retry) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    after = thread_count();
  }
  const uint32_t surplus = after > before ? after - before : 0;
  harness.threads_reported = std::max(harness.threads_reported, surplus);
  return surplus;
}

void handle_run(msg::RunRequest::Reader run, msg::SandboxReply::Builder reply) {
  uint32_t calls = run.getCalls();
  auto sets = run.getSets();
  if (calls > 0 && (!harness.kernel || sets.size() == 0)) {
    reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
    reply.setMessage(harness.kernel ? "a run needs at least one buffer set" : "no candidate is loaded");
    return;
  }
  // A Python problem's Model beside the candidate, timed on the CPU as the candidate is.
  const drk_kernel_fn kernel = run.getReference() ? python_reference_kernel() : harness.kernel;
  if (calls > 0 && run.getReference() && !kernel) {
    reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
    reply.setMessage("no timing reference was loaded beside the candidate (a Python problem's Model)");
    return;
  }
  CandidateCalls candidate;
  std::vector<RegionRange> ranges;
  if (!make_sets(sets, candidate, ranges, reply)) return;
  if (harness.python) set_keep_python_outputs(run.getTimed());
  auto& inputs = candidate.inputs;
  auto& outputs = candidate.outputs;
  drk_context context = make_context();
  bool on_device = harness.device && calls > 0;
  // The sanitizer's sandbox leaves the outputs' device memory unwritten, as torch.empty does:
  // initcheck then sees a candidate that reads an output before writing it (nothing checks the
  // outputs there).
  std::vector<RegionRange> to_device = ranges;
  if (harness.separate_allocations) {
    to_device.clear();
    for (unsigned s = 0; s < sets.size(); ++s)
      for (unsigned t = 0; t < inputs[s].size(); ++t)
        to_device.push_back({sets[s].getInputs()[t].getOffset(), tensor_bytes(inputs[s][t])});
  }
  if (on_device)
    if (auto copied = harness.device->copy_to_device(to_device); !copied) return device_failed(copied.error(), reply);
  // The CPU's out-of-bounds check: every tensor between guard pages for this run.
  std::unique_ptr<GuardedTensors> guarded;
  if (!harness.device && harness.separate_allocations && calls > 0) {
    std::vector<GuardedTensors::Entry> entries;
    for (unsigned s = 0; s < sets.size(); ++s) {
      const std::string of_set = sets.size() > 1 ? " of set " + std::to_string(s) : "";
      for (unsigned t = 0; t < inputs[s].size(); ++t)
        entries.push_back({&inputs[s][t], "input " + std::to_string(t) + of_set});
      for (unsigned t = 0; t < outputs[s].size(); ++t)
        entries.push_back({&outputs[s][t], "output " + std::to_string(t) + of_set});
    }
    auto made = GuardedTensors::create(entries);
    if (!made) {
      reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
      reply.setMessage(made.error().message);
      return;
    }
    guarded = std::move(*made);
  }
  // Descriptors are copied per call so that a candidate that edits them cannot steer later calls.
  std::vector<drk_tensor> call_inputs, call_outputs;
  uint64_t library_before = library_calls();
  // CPU only: the CUDA runtime and CUPTI start helper threads of their own when they please.
  uint32_t threads_before = harness.device ? 0 : harness.threads_at_load;
  uint32_t completed = 0;
  int status = DRK_OK;
  auto started = std::chrono::steady_clock::now();
  const uint64_t swap_seed = harness.device ? 0 : run.getSwapSeed();  // CUDA: time requests swap
  for (uint32_t i = 0; i < calls; ++i) {
    size_t s = i % sets.size();
    if (swap_seed != 0)
      for (uint32_t t = 0; t < inputs[s].size(); ++t)
        swap_host_elements(inputs[s][t], swap_positions(swap_seed, i, t, tensor_elements(inputs[s][t])));
    call_inputs = inputs[s];
    call_outputs = outputs[s];
    begin_call();
    status = kernel(&context, call_inputs.data(), static_cast<int32_t>(call_inputs.size()),
                            call_outputs.data(), static_cast<int32_t>(call_outputs.size()));
    end_call();
    if (status != DRK_OK) break;
    ++completed;
    if (harness.device && harness.device->over_memory_limit()) break;
  }
  if (on_device) {
    if (auto synchronized = harness.device->synchronize(); !synchronized)
      return device_failed(synchronized.error(), reply);
  }
  auto elapsed = std::chrono::steady_clock::now() - started;
  // As the last call returned, before the thread count below waits out its grace period.
  if (run.getOutputChecksum() && !harness.device && completed > 0) {
    uint64_t checksum = checksum_bytes(nullptr, 0);
    for (const drk_tensor& output : outputs[(completed - 1) % sets.size()])
      checksum = checksum_bytes(output.data, tensor_bytes(output), checksum);
    reply.setOutputChecksum(checksum);
  }
  if (on_device)
    if (auto copied = harness.device->copy_to_host(ranges); !copied) return device_failed(copied.error(), reply);
  reply.setSandboxNs(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()));
  reply.setCallsCompleted(completed);
  reply.setCandidateStatus(status);
  reply.setLibraryCalls(library_calls() - library_before);
  reply.setThreadsLeftRunning(threads_left_running(threads_before));
  if (harness.device && harness.device->over_memory_limit()) {
    reply.setStatus(msg::SandboxStatus::MEMORY_LIMIT);
    reply.setMessage(harness.device->memory_limit_message());
  } else if (status != DRK_OK) {
    reply.setStatus(msg::SandboxStatus::RETURNED_ERROR);
    reply.setMessage(harness.python ? python_candidate_error() + " (call " + std::to_string(completed + 1) + ")"
                                    : "drk_kernel returned " + std::to_string(status) + " on call " +
                                          std::to_string(completed + 1));
    if (harness.python) reply.setFailedCheck(python_candidate_failed_check());
  }
}

// The candidate's calls over `sets` for a device request of `kind` ("time", "energy", "metrics");
// false with a badRequest reply when it cannot run here.
bool device_calls(capnp::List<msg::BufferSet>::Reader sets, const std::string& kind, CandidateCalls& calls,
                  msg::SandboxReply::Builder reply) {
  reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
  if (!harness.device) {
    reply.setMessage("this sandbox runs candidates on the CPU: " + kind + " requests are for drk-sandbox-cuda");
    return false;
  }
  if (!harness.kernel) {
    reply.setMessage("no candidate is loaded");
    return false;
  }
  if (sets.size() == 0) {
    reply.setMessage("the " + kind + " request has no buffer set");
    return false;
  }
  reply.setStatus(msg::SandboxStatus::OK);
  std::vector<RegionRange> ranges;
  if (!make_sets(sets, calls, ranges, reply)) return false;
  calls.kernel = harness.kernel;
  calls.context = make_context();
  calls.math_modes = &harness.math_modes;
  calls.reference_kernel = harness.python ? python_reference_kernel() : nullptr;
  // A Python candidate's answer is kept, not copied into the outputs, as in a timed run: KernelBench
  // times the forward call alone, and a copy inside the events slowed the candidate's side only.
  if (harness.python) set_keep_python_outputs(true);
  return true;
}

void handle_time(msg::TimeRequest::Reader time, msg::SandboxReply::Builder reply) {
  CandidateCalls candidate;
  if (device_calls(time.getSets(), "time", candidate, reply)) harness.device->time(time, candidate, reply);
}

// The same checks as a time request; the device measures energy per call of both sides.
void handle_energy(msg::EnergyRequest::Reader energy, msg::SandboxReply::Builder reply) {
  CandidateCalls candidate;
  if (device_calls(energy.getSets(), "energy", candidate, reply))
    harness.device->measure_energy(energy, candidate, reply);
}

// One candidate call profiled for hardware metrics (CUDA only).
void handle_metrics(msg::MetricsRequest::Reader metrics, msg::SandboxReply::Builder reply) {
  CandidateCalls candidate;
  if (device_calls(metrics.getSets(), "metrics", candidate, reply)) harness.device->measure_metrics(candidate, reply);
}

void handle_peaks(msg::SandboxReply::Builder reply) {
  if (!harness.device) {
    reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
    reply.setMessage("this sandbox runs candidates on the CPU: it has no device peaks to measure");
    return;
  }
  harness.device->measure_peaks(reply);
}

// The device memory a request lends (SandboxRequest.deviceRegion), or back to the mirror when it
// lends none; false with `error` when it cannot be used here.
bool attach_device_region(msg::SandboxRequest::Reader request, std::string& error) {
  const auto handle = request.getDeviceRegion();
  if (!harness.device) {
    if (handle.size() == 0) return true;
    error = "this sandbox runs candidates on the CPU: device memory is for drk-sandbox-cuda";
    return false;
  }
  if (auto attached = harness.device->attach_region(handle.begin(), handle.size(), request.getDeviceRegionBytes());
      !attached) {
    error = attached.error().message;
    return false;
  }
  return true;
}

int serve() {
  for (;;) {
    auto frame = read_frame(kRequestFd, -1);
    if (!frame) return frame.error().code == Errc::peer_unavailable ? 0 : 3;
    capnp::FlatArrayMessageReader reader(*frame, frame_reader_options());
    auto request = reader.getRoot<msg::SandboxRequest>();
    capnp::MallocMessageBuilder message;
    auto reply = message.initRoot<msg::SandboxReply>();
    reply.setId(request.getId());
    reply.setStatus(msg::SandboxStatus::OK);
    std::string error;
    harness.math_modes.begin_request();
    if (!harness.unavailable.empty()) {
      reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
      reply.setMessage(harness.unavailable);
    } else if (!map_region(request.getRegionBytes(), error) || !attach_device_region(request, error)) {
      reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
      reply.setMessage(error);
    } else if (harness.separate_allocations && !request.isLoad() && !request.isRun()) {
      // The out-of-bounds check's sandbox (CUPTI is compute-sanitizer's there): nothing is timed or measured.
      reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
      reply.setMessage("this sandbox is the out-of-bounds check's: it loads and runs, never times or measures");
    } else if (request.isLoad()) {
      handle_load(request.getLoad(), reply);
    } else if (request.isRun()) {
      handle_run(request.getRun(), reply);
    } else if (request.isTime()) {
      handle_time(request.getTime(), reply);
    } else if (request.isEnergy()) {
      handle_energy(request.getEnergy(), reply);
    } else if (request.isMetrics()) {
      handle_metrics(request.getMetrics(), reply);
    } else if (request.isPeaks()) {
      handle_peaks(reply);
    } else {
      reply.setStatus(msg::SandboxStatus::BAD_REQUEST);
      reply.setMessage("a request of a kind this sandbox does not know (a newer Evaluator?)");
    }
    if (harness.device) reply.setDeviceMemoryBytes(harness.device->candidate_memory_bytes());
    harness.math_modes.check();
    if (!harness.math_modes.change().empty()) reply.setMathModeChanged(harness.math_modes.change());
    if (!write_frame(kReplyFd, message)) return 4;
    // A device error leaves the CUDA context dead for good, and memory a candidate kept over its
    // limit is released only with the process: end here, the Evaluator replaces us.
    if (harness.device && (harness.device->broken() || harness.device->over_memory_limit())) return 5;
  }
}

struct SandboxStart {
  int max_threads = 1;
  SandboxDeviceOptions device;
  bool allow_processes = false;  // under a launcher, which starts processes of its own
  bool allow_compilers = false;  // the Triton warm-up: compilers run and write files
  bool python = false;
  std::vector<std::string> python_path;  // --python-path, ':'-separated
};

// What every Python candidate's code may import without opening a file once the filter is in.
// torch.utils.cpp_extension (whose load_inline prebuilt_extensions.h replaces) asks
// torch.cuda.is_available() as it is imported, which starts CUDA: a CUDA sandbox's child imports it
// before its filter (start_python_cuda()), never the zygote.
std::vector<std::string> python_preloads() {
  std::vector<std::string> modules = {"torch", "torch.nn", "torch.nn.functional", "torch.utils.dlpack", "json", "math"};
  if (!sandbox_runs_on_device()) modules.push_back("torch.utils.cpp_extension");
  return modules;
}

// The interpreter, warm (torch imported); the GIL stays with this single-threaded process.
bool start_sandbox_python(const SandboxStart& start) {
  if (!start.python) return true;
  if (auto started = start_python(start.python_path, python_preloads(), true); !started) {
    harness.unavailable = started.error().message;
    return false;
  }
  return true;
}

// Starts the runtimes a candidate uses (LibTorch's threads, the device), then forbids what a
// candidate must not do, then serves; leaves the process when the request pipe closes.
[[noreturn]] void serve_candidates(const SandboxStart& start) {
  harness.python = start.python;
  harness.allow_compilers = start.allow_compilers;
  start_sandbox_python(start);
  set_library_threads(start.max_threads);
  harness.separate_allocations = start.device.separate_allocations;
  // Without its device, the sandbox answers every request with the reason.
  harness.device = make_sandbox_device(start.device, harness.unavailable);
  if (harness.python && harness.device && harness.unavailable.empty())
    if (auto started = start_python_cuda(); !started) harness.unavailable = started.error().message;
  SyscallFilterOptions filter;
  filter.self = getpid();
  filter.allow_processes = start.allow_processes || start.allow_compilers;
  filter.allow_file_writes = start.allow_compilers;
  // NVML and CUPTI's profiler open the driver's device files when first asked (energy, metrics),
  // and the profiler maps shared anonymous memory.
  filter.allow_read_write_opens = harness.device != nullptr;
  filter.allow_shared_anonymous_memory = harness.device != nullptr;
  if (auto filtered = install_syscall_filter(filter); !filtered)
    harness.unavailable = filtered.error().message;
  const int code = serve();
  // The candidate's static destructors and exit handlers (Python's included) are its code, which
  // has no business after the last request: one that blocks (a condition variable a detached
  // worker waits on) held the sandbox of the out-of-bounds check to its 30 s deadline. A device
  // sandbox ends its context first: compute-sanitizer's report is complete when it is gone.
  std::fflush(nullptr);
  if (harness.device) harness.device->end();
  _exit(code);
}

}  // namespace
}  // namespace drk::evaluator

int main(int argc, char** argv) {
  drk::evaluator::SandboxStart start;
  bool zygote = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--zygote") == 0) zygote = true;
    if (std::strcmp(argv[i], "--allow-processes") == 0) start.allow_processes = true;
    if (std::strcmp(argv[i], "--allow-compilers") == 0) start.allow_compilers = true;
    if (std::strcmp(argv[i], "--separate-allocations") == 0) start.device.separate_allocations = true;
    if (std::strcmp(argv[i], "--python") == 0) start.python = true;
    if (i + 1 == argc) break;  // the options below take a value
    if (std::strcmp(argv[i], "--python-path") == 0) {
      std::stringstream paths(argv[i + 1]);
      for (std::string path; std::getline(paths, path, ':');)
        if (!path.empty()) start.python_path.push_back(path);
    }
    if (std::strcmp(argv[i], "--max-threads") == 0) start.max_threads = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--gpu-memory-limit-bytes") == 0)
      start.device.memory_limit_bytes = std::strtoull(argv[i + 1], nullptr, 10);
  }
  if (!zygote) drk::evaluator::serve_candidates(start);
  // The zygote starts nothing (no thread, no CUDA context survives a fork): each child does. An
  // interpreter starts no thread: the zygote imports torch once for all its children.
  drk::evaluator::ForkHooks hooks;
  // A failure to start stays in the harness: every child answers with it.
  if (drk::evaluator::start_sandbox_python(start) && start.python) {
    hooks = {drk::evaluator::python_before_fork, drk::evaluator::python_after_fork_in_parent,
             drk::evaluator::python_after_fork_in_child};
  }
  return drk::evaluator::run_zygote(
      3,
      [&start](const drk::evaluator::ZygoteChild& child) -> int {
        drk::evaluator::SandboxStart forked = start;
        forked.max_threads = child.max_threads;
        forked.device.memory_limit_bytes = child.gpu_memory_limit_bytes;
        drk::evaluator::serve_candidates(forked);
      },
      hooks);
}
