#include "actors/evaluator/evaluation.h"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <capnp/message.h>
#include <capnp/serialize.h>

#include "actors/evaluator/compute_sanitizer.h"
#include "actors/evaluator/evaluation_cpus.h"
#include "actors/evaluator/guarded_tensors.h"
#include "actors/evaluator/input_nudge.h"
#include "actors/evaluator/output_checksum.h"
#include "actors/evaluator/output_comparison.h"
#include "actors/evaluator/ptxas_report.h"
#include "drk_kernel.h"
#include "actors/evaluator/sandbox_channel.h"
#include "actors/evaluator/sandbox_energy.h"
#include "actors/evaluator/sandbox_metrics.h"
#include "actors/evaluator/shared_region.h"
#include "judging/best_known_bound.h"
#include "judging/roofline_bound.h"
#include "kernels/catalog/reference.h"
#include "kernels/catalog/reference_build.h"
#include "kernels/compile/compiled_artifact.h"
#include "kernels/compile/compiler.h"
#include "runtime/log.h"
#include "messages/sandbox.capnp.h"

#ifdef DRK_HAVE_CUDA
#include "actors/evaluator/cuda/device_region.h"
#endif

namespace drk::evaluator {
namespace {

using Clock = std::chrono::steady_clock;
using compile::CompilePool;
using kernels::DeviceKind;

constexpr uint64_t kSanitizerSeedSalt = 0x5a417a45u;  // the sanitized call's inputs: a draw of their own
constexpr size_t kAlignment = 4096;
// A float16 task's FLOP ceiling over the measured FP32 FMA peak: half-precision tensor cores are
// its own precision, not a downgrade, and their dense peak is about 16 times FP32 FMA's (A100 16,
// H100/H200 15), so the roofline's FLOP bound (judging/roofline_bound.h) stays a bound.
constexpr double kHalfTensorCoresOverFma = 16.0;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9E3779B97F4A7C15ull * (b + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t secret_seed() {
  uint64_t seed = 0;
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  urandom.read(reinterpret_cast<char*>(&seed), sizeof seed);
  if (!urandom) seed = std::random_device{}() ^ (uint64_t{std::random_device{}()} << 32);
  return seed;
}

struct TensorSlot {
  size_t offset = 0;
  kernels::Shape shape;
  size_t elements = 1;
  kernels::DType dtype = kernels::DType::float32;
  size_t bytes() const { return elements * kernels::dtype_size(dtype); }
};

struct BufferSetLayout {
  std::vector<TensorSlot> inputs;
  std::vector<TensorSlot> outputs;
};

struct Layout {
  std::vector<BufferSetLayout> sets;
  size_t bytes = 0;
};

Layout make_layout(const kernels::Task& task, DeviceKind device, uint32_t sets) {
  Layout layout;
  const auto& shapes = task.shapes(device);
  auto place = [&](const std::string& name, kernels::DType dtype) {
    TensorSlot slot;
    slot.shape = shapes.at(name);
    slot.dtype = dtype;
    for (int64_t d : slot.shape) slot.elements *= static_cast<size_t>(d);
    slot.offset = layout.bytes;
    layout.bytes += (slot.bytes() + kAlignment - 1) / kAlignment * kAlignment;
    return slot;
  };
  for (uint32_t s = 0; s < sets; ++s) {
    BufferSetLayout set;
    for (const auto& input : task.inputs) set.inputs.push_back(place(input.name, input.dtype));
    for (const auto& output : task.outputs) set.outputs.push_back(place(output, task.output_dtype));
    layout.sets.push_back(std::move(set));
  }
  return layout;
}

struct TimingSummary {
  double median = 0, p10 = 0, p90 = 0, cv = 0;
  uint32_t samples = 0;
  uint32_t calls = 0;
};

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  double position = q * static_cast<double>(sorted.size() - 1);
  size_t low = static_cast<size_t>(position);
  size_t high = std::min(low + 1, sorted.size() - 1);
  double fraction = position - static_cast<double>(low);
  return sorted[low] * (1 - fraction) + sorted[high] * fraction;
}

TimingSummary summarize(std::vector<double> samples, uint32_t calls) {
  TimingSummary s;
  s.samples = static_cast<uint32_t>(samples.size());
  s.calls = calls;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.median = percentile(samples, 0.5);
  s.p10 = percentile(samples, 0.1);
  s.p90 = percentile(samples, 0.9);
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= static_cast<double>(samples.size());
  double variance = 0;
  for (double x : samples) variance += (x - mean) * (x - mean);
  variance /= static_cast<double>(std::max<size_t>(samples.size() - 1, 1));
  s.cv = mean > 0 ? std::sqrt(variance) / mean : 0.0;
  return s;
}

// Standard error of the median relative to the median (normal approximation: 1.2533 sigma/sqrt n).
double relative_error_of_median(const std::vector<double>& samples) {
  if (samples.size() < 2) return 1.0;
  TimingSummary s = summarize(samples, 1);
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= static_cast<double>(samples.size());
  double stddev = s.cv * mean;
  return s.median > 0 ? 1.2533 * stddev / std::sqrt(static_cast<double>(samples.size())) / s.median : 1.0;
}

void fill_timing(const TimingSummary& s, msg::TimingStats::Builder out) {
  out.setMedianUs(s.median);
  out.setP10Us(s.p10);
  out.setP90Us(s.p90);
  out.setCv(s.cv);
  out.setSamples(s.samples);
  out.setCallsPerSample(s.calls);
}

struct KernelRun {
  std::string name;
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  uint32_t registers = 0, static_shared = 0, dynamic_shared = 0;
};

struct TimedCall {
  bool candidate = true;
  double event_us = 0;
  std::vector<KernelRun> kernels;  // profiled calls only
  bool launch_hidden = false;      // held by the launch hold: the events exclude launch latency
  bool profiled = false;           // traced by CUPTI (its instrumentation included in event_us)
  double event_floor_us = 0;       // taken off event_us: the event pair's own cost when held
};

struct DevicePeaks {
  std::string name;
  uint64_t l2_bytes = 0;
  double copy_bytes_per_s = 0, fma_flops_per_s = 0;
};

std::vector<TimedCall> read_timed_calls(capnp::List<msg::TimedCall>::Reader list) {
  std::vector<TimedCall> calls;
  for (auto call : list) {
    TimedCall timed{call.getSide() == msg::TimedSide::CANDIDATE, call.getEventUs(), {}, call.getLaunchHidden(),
                    call.getProfiled(), call.getEventFloorUs()};
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

// The kernels of one side's timed calls, grouped per (name, grid, block) in first-seen order.
struct KernelGroup {
  KernelRun first;
  std::vector<double> durations_us;
};

std::vector<KernelGroup> group_kernels(const std::vector<TimedCall>& calls, bool candidate) {
  std::vector<KernelGroup> groups;
  std::map<std::string, size_t> index;
  for (const auto& call : calls) {
    if (call.candidate != candidate) continue;
    for (const auto& k : call.kernels) {
      std::string key = k.name;
      for (int d = 0; d < 3; ++d) key += "/" + std::to_string(k.grid[d]) + "," + std::to_string(k.block[d]);
      auto [at, added] = index.emplace(key, groups.size());
      if (added) groups.push_back(KernelGroup{k, {}});
      groups[at->second].durations_us.push_back(static_cast<double>(k.end_ns - k.start_ns) / 1000.0);
    }
  }
  return groups;
}

void fill_kernels(const std::vector<KernelGroup>& groups, const std::set<std::string>& own,
                  capnp::List<msg::GpuKernel>::Builder list) {
  for (unsigned g = 0; g < groups.size(); ++g) {
    const KernelRun& k = groups[g].first;
    auto out = list[g];
    out.setName(k.name);
    out.setOwn(own.count(k.name) > 0);
    out.setLaunches(static_cast<uint32_t>(groups[g].durations_us.size()));
    double total = 0;
    for (double d : groups[g].durations_us) total += d;
    out.setTotalUs(total);
    std::vector<double> sorted = groups[g].durations_us;
    std::sort(sorted.begin(), sorted.end());
    out.setMedianUs(sorted[sorted.size() / 2]);
    auto grid = out.initGrid(3);
    auto block = out.initBlock(3);
    for (unsigned d = 0; d < 3; ++d) {
      grid.set(d, k.grid[d]);
      block.set(d, k.block[d]);
    }
    out.setRegistersPerThread(k.registers);
    out.setStaticSharedBytes(k.static_shared);
    out.setDynamicSharedBytes(k.dynamic_shared);
  }
}

// How long after a reply an output is compared again with what it held at the reply.
constexpr auto kAfterReturnWait = std::chrono::milliseconds(3);
// The length of the batches that compare a candidate with its outputs holding their own answers
// and holding others' (answerReuseRatio).
constexpr double kAnswerReuseBatchMs = 3.0;
// Idle intervals shorter than this are left out of the idle CPU share: the kernel reads another
// process's CPU clock lazily, so an interval whose start found a thread running (beyond
// kCpuReadWait) can be charged a scheduler tick of the batch before.
constexpr double kIdleIntervalForShareNs = 2e6;
// How long the Evaluator waits, after a reply, for the sandbox's threads to sleep before it reads
// their CPU time (exact only then).
constexpr auto kCpuReadWait = std::chrono::microseconds(1000);
// A first pair's ratio under this is an honest candidate's: no second pair.
constexpr double kAnswerReuseConfirmAbove = 2.0;
// CUDA: candidate calls timed with their outputs left holding their answers, for the same measure.
constexpr uint32_t kCudaAnswerReuseCalls = 5;

struct SandboxAnswer {
  msg::SandboxStatus status = msg::SandboxStatus::OK;
  std::string message;
  int32_t candidate_status = 0;
  uint32_t calls_completed = 0;
  uint64_t library_calls = 0;
  uint64_t sandbox_ns = 0;
  double wall_ns = 0;  // this process's clock around the round trip
  double cpu_ns = 0;   // the sandbox's CPU time (all its threads) over the round trip
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

}  // namespace

struct EvaluationEngine::Impl {
  kernels::TaskCatalog catalog;
  EngineOptions options;
  std::map<std::string, kernels::Reference> references;
  std::unique_ptr<CompilePool> compile_pool;
  // What became of the objects shipped with candidates compiled ahead, by candidate id, until
  // their evaluate() takes it.
  std::map<std::string, Status> adopted;
  std::optional<SharedRegion> region;
  // Forks a fresh sandbox per candidate (sandbox_zygote.h). `sandbox` runs the candidate being
  // evaluated and ends with its evaluation; `spares` are started ahead and have run nothing.
  std::shared_ptr<SandboxZygote> zygote;
  std::unique_ptr<SandboxProcess> sandbox;
  std::deque<std::unique_ptr<SandboxProcess>> spares;
  pid_t last_candidate_pid = 0;
  kernels::ReferenceBuild reference_build;  // what the reference runs on (EvalResult.referenceBuild)
  // The candidate's sandbox between requests: its CPU time and this clock at its last reply, and
  // what it used while no request was in flight (evidence cpuWhileIdleMs and idleMs).
  std::optional<uint64_t> cpu_at_reply;
  Clock::time_point reply_time;
  double idle_cpu_ns = 0, idle_wall_ns = 0;
  std::vector<double> idle_cpu_shares;  // per interval of at least kIdleIntervalForShare
  void add_idle(double cpu_ns, double wall_ns) {
    idle_cpu_ns += cpu_ns;
    idle_wall_ns += wall_ns;
    if (wall_ns >= kIdleIntervalForShareNs) idle_cpu_shares.push_back(cpu_ns / wall_ns);
  }
  uint64_t secret = 0;
  uint64_t evaluations = 0;
  uint64_t next_request_id = 1;
  std::mt19937_64 order_rng;
  std::optional<DevicePeaks> peaks;  // CUDA: measured once, by the first sandbox that is asked
  // CUDA, device-resident: LibTorch's CUDA start in this process (context, allocator, cuBLAS),
  // begun at create() so that it runs while the first candidate compiles; waited for after it.
  std::future<void> device_warm_up;
#ifdef DRK_HAVE_CUDA
  // CUDA, device-resident checks: the tensors of every run, lent to the sandbox; a region that a
  // larger one replaced is kept until the sandbox has answered a request naming the new one.
  std::optional<cuda::DeviceRegion> device_region, retired_device_region;
#endif

  // What one evaluation is working on.
  struct Run {
    const kernels::Task* task = nullptr;
    const kernels::Reference* reference = nullptr;
    Layout layout;
    kernels::Tolerance tolerance;
    uint64_t seed = 0;
    // Tensors live in the Evaluator's device memory (device-resident checks), or in the shared
    // region.
    bool on_device = false;
    std::vector<uint64_t> draw_seeds;               // per buffer set: its inputs' current draw
    std::map<uint32_t, uint64_t> nudges;            // buffer set -> the nudge since its draw
    std::vector<std::vector<at::Tensor>> pristine;  // per buffer set, in the shared region's runs
    msg::EvalResult::Builder out{nullptr};
    bool sandbox_failed = false;
    std::set<std::string> own_kernels;  // CUDA: entry names compiled from the candidate's source
    // Non-zero while a re-timing swaps input elements before every call (input_swaps.h); each
    // request gets its own seed from it.
    uint64_t swap_seed = 0;
    uint64_t swap_requests = 0;
    uint64_t next_swap_seed() { return swap_seed == 0 ? 0 : mix(swap_seed, ++swap_requests); }
    // CPU timing: calls made so far in the timed order, where call g takes set g mod K's inputs and
    // set g mod (K + 1)'s outputs, which the call before it in that output last wrote for other
    // inputs: no timed call starts from an output that already holds its answer.
    uint64_t rotation_calls = 0;
    // Per timed candidate batch: the sandbox's CPU time over the round trip's wall time
    // (cpuPerWall: their median, so that a batch whose clock was read while a thread still ran
    // past kCpuReadWait, and so charged part of a scheduler tick of another, does not decide).
    std::vector<double> batch_cpu_per_wall;
  };

  kernels::DeviceKind shape_kind() const { return options.shapes.value_or(options.device); }

  // A sandbox that has run no candidate: a spare, or one forked now.
  Result<std::unique_ptr<SandboxProcess>> fresh_sandbox() {
    while (!spares.empty()) {
      auto spare = std::move(spares.front());
      spares.pop_front();
      if (spare->alive()) return spare;
    }
    return spawn_sandbox();
  }

  // A sandbox forked from the zygote now (the zygote started first when it is not running).
  Result<std::unique_ptr<SandboxProcess>> spawn_sandbox() {
    if (!zygote || !zygote->alive()) {
      auto started = SandboxZygote::start(options.sandbox.executable);
      if (!started) return started.error();
      zygote = std::move(*started);
    }
    return SandboxProcess::spawn(zygote, options.sandbox, region->fd());
  }

  // Spares up to the count asked for (eval.sandbox_spares), started when a candidate ends, and on
  // CUDA also when one begins: there a start (a context, LibTorch CUDA and cuBLAS: 0.3-0.45 s on
  // the H200) would otherwise add to the next candidate's latency whole, so it overlaps the
  // evaluation that took the spare before it, timing included, in another process and context
  // (the timings' stability with it: docs/benchmarks.md). Not with a GPU memory limit, which a
  // sandbox reads from the device's free memory, where a spare's new context would count against
  // the candidate. A CPU sandbox starts in 2-11 ms, and a start beside a timed batch would take a
  // core from it.
  void start_spares() {
    std::erase_if(spares, [](const auto& spare) { return !spare->alive(); });
    while (spares.size() < options.sandbox_spares) {
      auto spawned = spawn_sandbox();
      if (!spawned) return;  // the next candidate meets the reason
      spares.push_back(std::move(*spawned));
    }
  }

  // Within one evaluation: the candidate's sandbox, or a fresh one when it died (a device error
  // ends a CUDA sandbox) and the evaluation goes on.
  Status ensure_sandbox() {
    if (sandbox && sandbox->alive()) return {};
    sandbox.reset();
    auto fresh = fresh_sandbox();
    if (!fresh) return fresh.error();
    sandbox = std::move(*fresh);
    return {};
  }

  // A candidate's evaluation begins: the sandbox of the one before is gone, this one gets a
  // sandbox no candidate has run in.
  Status begin_candidate() {
    sandbox.reset();
    auto fresh = fresh_sandbox();
    if (!fresh) return fresh.error();
    sandbox = std::move(*fresh);
    if (options.device == DeviceKind::cuda && options.sandbox.gpu_memory_limit_bytes == 0) start_spares();
    last_candidate_pid = sandbox->pid();
    cpu_at_reply.reset();
    idle_cpu_ns = idle_wall_ns = 0;
    idle_cpu_shares.clear();
    return {};
  }

  // CUDA: the device's peaks (the roofline's), measured once per engine by a sandbox before a
  // candidate is loaded into it, so that no candidate's code runs in the process that measures
  // them. A sandbox that cannot measure them (no device) leaves them unknown: its load says why.
  void measure_peaks_before_load() {
    if (options.device != DeviceKind::cuda || peaks) return;
    capnp::MallocMessageBuilder scratch;
    Run probe;
    probe.out = scratch.initRoot<msg::EvalResult>();
    auto answer = call(probe, options.load_timeout, [](msg::SandboxRequest::Builder request) { request.setPeaks(); });
    if (answer && answer->status == msg::SandboxStatus::OK) peaks = answer->peaks;
  }

  // ...and ends: its sandbox, with everything it started, is killed; spares that died are replaced.
  void end_candidate() {
    sandbox.reset();
    start_spares();
  }

  // A request with a fresh id, the region's size and, for a device-resident run, the device
  // memory it lends, as `fill` completes it; returns the id.
  uint64_t build_request(capnp::MallocMessageBuilder& message, const Run& run,
                         const std::function<void(msg::SandboxRequest::Builder)>& fill) {
    auto request = message.initRoot<msg::SandboxRequest>();
    const uint64_t id = next_request_id++;
    request.setId(id);
    request.setRegionBytes(region->size());
#ifdef DRK_HAVE_CUDA
    if (run.on_device) {
      const auto& handle = device_region->ipc_handle();
      request.setDeviceRegion(kj::arrayPtr(handle.data(), handle.size()));
      request.setDeviceRegionBytes(device_region->size());
    }
#endif
    fill(request);
    return id;
  }

  bool device_resident() const { return options.device == DeviceKind::cuda && options.device_resident; }

  // Room for `bytes` of the run's tensors where they live.
  Status reserve(const Run& run, size_t bytes) {
    if (!run.on_device) return region->reserve(bytes);
#ifdef DRK_HAVE_CUDA
    if (device_region && device_region->size() >= bytes) return {};
    // Rounded up to 256 MiB, so that growing one task at a time does not re-allocate every time.
    constexpr size_t kGrain = size_t{256} << 20;
    auto grown = cuda::DeviceRegion::create((bytes + kGrain - 1) / kGrain * kGrain);
    if (!grown) return grown.error();
    if (device_region) retired_device_region = std::move(device_region);
    device_region = std::move(*grown);
    return {};
#else
    return make_error(Errc::unsupported, "device-resident checks need a build with the CUDA toolkit");
#endif
  }

  // The work this process queued on the device (draws, poison) done before the sandbox runs.
  Status synchronize_device(const Run& run) {
#ifdef DRK_HAVE_CUDA
    if (run.on_device) return cuda::synchronize_device();
#endif
    (void)run;
    return {};
  }

  // Sends a request filled by `fill`; on a dead or hung sandbox records the outcome in `run`.
  Result<SandboxAnswer> call(Run& run, std::chrono::milliseconds timeout,
                             const std::function<void(msg::SandboxRequest::Builder)>& fill) {
    if (auto s = ensure_sandbox(); !s) return s.error();
    if (auto s = synchronize_device(run); !s) return s.error();
    capnp::MallocMessageBuilder message;
    const uint64_t id = build_request(message, run, fill);
    const bool asleep_before = sandbox->asleep();
    const std::optional<uint64_t> cpu_before = sandbox->cpu_time_ns();
    auto started = Clock::now();
    if (cpu_at_reply && cpu_before) {
      add_idle(static_cast<double>(*cpu_before - *cpu_at_reply),
               std::chrono::duration<double, std::nano>(started - reply_time).count());
    }
    cpu_at_reply.reset();
    auto words = sandbox->call(message, timeout);
    double wall_ns = std::chrono::duration<double, std::nano>(Clock::now() - started).count();
    // Read once the sandbox sleeps again (its reply's tail done), so that the reading is exact and
    // the one before the next request too, which then finds it still asleep.
    std::optional<uint64_t> cpu_after;
    bool asleep_after = false;
    if (sandbox && sandbox->alive()) {
      asleep_after = sandbox->wait_until_asleep(kCpuReadWait);
      cpu_after = sandbox->cpu_time_ns();
    }
    reply_time = Clock::now();
    if (cpu_after) cpu_at_reply = cpu_after;
#ifdef DRK_HAVE_CUDA
    // The sandbox has now let go of a replaced device region (it switched, or it is gone).
    retired_device_region.reset();
#endif
    if (!words) {
      // A malformed frame on the reply pipe: not the sandbox's writing.
      if (words.error().code == Errc::protocol_error) run.out.getEvidence().setReplyTampered(words.error().message);
      record_sandbox_failure(run, words.error());
      return words.error();
    }
    capnp::FlatArrayMessageReader reader(*words, frame_reader_options());
    auto reply = reader.getRoot<msg::SandboxReply>();
    if (reply.getId() != id) {
      Error error = make_error(Errc::protocol_error, "the sandbox answered request " + std::to_string(reply.getId()) +
                                                         " instead of " + std::to_string(id));
      run.out.getEvidence().setReplyTampered(error.message);
      sandbox.reset();
      record_sandbox_failure(run, error);
      return error;
    }
    SandboxAnswer answer;
    answer.status = reply.getStatus();
    answer.message = reply.getMessage();
    answer.candidate_status = reply.getCandidateStatus();
    answer.calls_completed = reply.getCallsCompleted();
    answer.library_calls = reply.getLibraryCalls();
    answer.sandbox_ns = reply.getSandboxNs();
    answer.wall_ns = wall_ns;
    if (cpu_before && cpu_after) {
      answer.cpu_ns = static_cast<double>(*cpu_after - *cpu_before);
      answer.cpu_exact = asleep_before && asleep_after;
    }
    if (reply.getOutputChecksum() != 0) answer.output_checksum = reply.getOutputChecksum();
    // Evidence for the Verifier: library-table use, and threads a call left running.
    auto evidence = run.out.getEvidence();
    evidence.setLibraryCalls(evidence.getLibraryCalls() + answer.library_calls);
    evidence.setCandidateCalls(evidence.getCandidateCalls() + answer.calls_completed);
    evidence.setThreadsLeftRunning(std::max(evidence.getThreadsLeftRunning(), reply.getThreadsLeftRunning()));
    if (reply.getMathModeChanged().size() != 0 && evidence.getMathModeChanged().size() == 0)
      evidence.setMathModeChanged(reply.getMathModeChanged());
    if (reply.getHarnessSymbol().size() != 0) evidence.setHarnessSymbol(reply.getHarnessSymbol());
    if (answer.status == msg::SandboxStatus::CUDA_ERROR) {
      // The sandbox's CUDA context is dead and it exits: evidence, then a fresh sandbox next time.
      run.out.getEvidence().setCudaError(answer.message);
      sandbox.reset();
    }
    evidence.setGpuMemoryBytes(std::max(evidence.getGpuMemoryBytes(), reply.getDeviceMemoryBytes()));
    if (answer.status == msg::SandboxStatus::MEMORY_LIMIT) {
      // The sandbox exits after this reply (releasing what the candidate kept): a fresh one next time.
      evidence.setGpuMemoryLimitExceeded(true);
      sandbox.reset();
    }
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

  void record_sandbox_failure(Run& run, const Error& error) {
    run.sandbox_failed = true;
    auto evidence = run.out.getEvidence();
    SandboxExit exit = sandbox ? sandbox->exit() : SandboxExit{};
    if (error.code == Errc::timeout) {
      run.out.setSandbox(msg::SandboxOutcome::TIMED_OUT);
      evidence.setSandboxSignal(SIGKILL);
    } else {
      run.out.setSandbox(msg::SandboxOutcome::CRASHED);
      evidence.setSandboxSignal(exit.signal);
      evidence.setSandboxExitCode(exit.exit_code);
    }
    run.out.setErrorText(error.message);
    run.out.setCorrect(false);
    sandbox.reset();
  }

  // One checked call of the candidate on buffer set 0; with `checksum`, the sandbox takes its
  // outputs' checksum as the call returns (SandboxAnswer::output_checksum).
  Result<SandboxAnswer> call_once(Run& run, bool checksum = false) {
    return call(run, options.call_timeout, [&](msg::SandboxRequest::Builder request) {
      auto run_request = request.initRun();
      run_request.setCalls(1);
      run_request.setOutputChecksum(checksum);
      fill_sets(run_request, run, {0});
    });
  }

  // Appends the run request's buffer sets.
  void fill_sets(msg::RunRequest::Builder run_request, const Run& run, const std::vector<uint32_t>& sets) {
    fill_buffer_sets(run_request.initSets(static_cast<unsigned>(sets.size())), run, sets);
  }

  void fill_buffer_sets(capnp::List<msg::BufferSet>::Builder list, const Run& run, const std::vector<uint32_t>& sets) {
    for (unsigned i = 0; i < sets.size(); ++i)
      fill_buffer_set(list[i], run.layout.sets[sets[i]].inputs, run.layout.sets[sets[i]].outputs);
  }

  static void fill_buffer_set(msg::BufferSet::Builder set, const std::vector<TensorSlot>& inputs,
                              const std::vector<TensorSlot>& outputs) {
    auto fill_views = [](capnp::List<msg::TensorView>::Builder views, const std::vector<TensorSlot>& slots) {
      for (unsigned t = 0; t < slots.size(); ++t) {
        views[t].setOffset(slots[t].offset);
        views[t].setDtype(static_cast<int32_t>(slots[t].dtype));  // DType mirrors drk_dtype
        auto shape = views[t].initShape(static_cast<unsigned>(slots[t].shape.size()));
        for (unsigned d = 0; d < slots[t].shape.size(); ++d) shape.set(d, slots[t].shape[d]);
      }
    };
    fill_views(set.initInputs(static_cast<unsigned>(inputs.size())), inputs);
    fill_views(set.initOutputs(static_cast<unsigned>(outputs.size())), outputs);
  }

  // A tensor over `slot`, where the run's tensors live.
  at::Tensor view(const Run& run, const TensorSlot& slot) {
    auto options = at::TensorOptions().dtype(kernels::scalar_type_of(slot.dtype));
#ifdef DRK_HAVE_CUDA
    if (run.on_device) return at::from_blob(device_region->data() + slot.offset, slot.shape, options.device(at::kCUDA));
#endif
    return at::from_blob(region->data() + slot.offset, slot.shape, options);
  }

  // Draws the inputs of `set` from `draw_seed` into their place. On the device they are drawn
  // there and drawn again when pristine copies are needed (draws are deterministic), so that
  // published shapes cost no host memory and no copies; in the shared region the pristine copies
  // are kept.
  void write_inputs(Run& run, uint32_t set, uint64_t draw_seed) {
    const kernels::Task& task = *run.task;
    run.draw_seeds[set] = draw_seed;
    run.nudges.erase(set);
    const auto& slots = run.layout.sets[set].inputs;
    if (run.on_device) {
      std::vector<at::Tensor> places;
      for (const auto& slot : slots) places.push_back(view(run, slot));
      kernels::draw_inputs_into(task, shape_kind(), draw_seed, places);
      return;
    }
    std::vector<at::Tensor> inputs = kernels::draw_inputs(task, shape_kind(), draw_seed);
    for (size_t i = 0; i < slots.size(); ++i)
      std::memcpy(region->data() + slots[i].offset, inputs[i].data_ptr(), slots[i].bytes());
    run.pristine[set] = std::move(inputs);
  }

  // Swaps a few secret pairs of elements of the inputs of `set` in place (input_nudge.h), and
  // of their pristine copies, or on the device records the nudge for pristine() to repeat.
  void nudge(Run& run, uint32_t set, uint64_t nudge_seed) {
    std::vector<at::Tensor> places;
    for (const auto& slot : run.layout.sets[set].inputs) places.push_back(view(run, slot));
    nudge_inputs(places, nudge_seed);
    if (!run.on_device) nudge_inputs(run.pristine[set], nudge_seed);
    run.nudges[set] = nudge_seed;
  }

  // The inputs of `set` as drawn (and nudged), whatever the candidate did to them.
  std::vector<at::Tensor> pristine(const Run& run, uint32_t set) {
    if (!run.on_device) return run.pristine[set];
    std::vector<at::Tensor> inputs;
    for (const auto& slot : run.layout.sets[set].inputs)
      inputs.push_back(
          at::empty(slot.shape, at::TensorOptions().dtype(kernels::scalar_type_of(slot.dtype)).device(at::kCUDA)));
    kernels::draw_inputs_into(*run.task, shape_kind(), run.draw_seeds[set], inputs);
    if (const auto nudged = run.nudges.find(set); nudged != run.nudges.end()) nudge_inputs(inputs, nudged->second);
    return inputs;
  }

  void poison_outputs(Run& run, uint32_t set) {
    for (const auto& slot : run.layout.sets[set].outputs) poison(view(run, slot));
  }

  bool inputs_mutated(Run& run, uint32_t set, const std::vector<at::Tensor>& inputs) {
    const auto& slots = run.layout.sets[set].inputs;
    for (size_t i = 0; i < slots.size(); ++i)
      if (!same_bits(view(run, slots[i]), inputs[i])) return true;
    return false;
  }

  static std::vector<at::Tensor> in_float64(const std::vector<at::Tensor>& inputs) {
    std::vector<at::Tensor> wide;
    for (const auto& input : inputs) wide.push_back(input.is_floating_point() ? input.to(at::kDouble) : input);
    return wide;
  }

  // What a candidate's output is judged against: the task's reference on `inputs`. A float16 or
  // bfloat16 output is the reference evaluated in float64 and rounded to its dtype: LibTorch's
  // half-precision products may reduce in half precision (cuBLAS), which at KernelBench's shapes
  // strays past the task's tolerance where an honest kernel that accumulates in float32 does not
  // (matmul_fp16's second shape, K = 4099, on the H200).
  Result<at::Tensor> expected_output(Run& run, const std::vector<at::Tensor>& inputs) {
    const kernels::DType dtype = run.task->output_dtype;
    if (dtype != kernels::DType::float16 && dtype != kernels::DType::bfloat16) return run.reference->run(inputs);
    auto exact = run.reference->run(in_float64(inputs));
    if (!exact) return run.reference->run(inputs);  // an expression LibTorch cannot evaluate in float64
    return exact->to(dtype == kernels::DType::float16 ? at::kHalf : at::kBFloat16);
  }

  // Checks the outputs of `set` against the reference on its pristine inputs; records evidence.
  Result<Comparison> check_set(Run& run, uint32_t set) {
    const std::vector<at::Tensor> inputs = pristine(run, set);
    auto reference = expected_output(run, inputs);
    if (!reference) return reference.error();
    const auto& slot = run.layout.sets[set].outputs[0];
    Comparison c = compare_outputs(view(run, slot), *reference, slot.shape, run.task->outputs[0], run.tolerance);
    auto evidence = run.out.getEvidence();
    if (c.left_poisoned) evidence.setOutputsLeftPoisoned(true);
    if (c.non_finite) evidence.setNonFinite(true);
    if (inputs_mutated(run, set, inputs)) {
      evidence.setInputsMutated(true);
      if (c.passed) c.first_failure = "an input differs from its pristine copy after the call (inputs are read-only)";
    }
    run.out.setMaxAbsError(std::max(run.out.getMaxAbsError(), c.max_abs));
    run.out.setMaxRelError(std::max(run.out.getMaxRelError(), c.max_rel));
    return c;
  }

  // The candidate's outputs of `set` and the float32 reference against a float64 reference on the
  // same inputs (precision evidence for the Verifier). Skipped above a size where the float64
  // copies would not fit: 2^24 input elements in the shared region, 2^28 on the device.
  Status check_precision(Run& run, uint32_t set) {
    const int64_t limit = run.on_device ? int64_t{1} << 28 : int64_t{1} << 24;
    const std::vector<at::Tensor> inputs = pristine(run, set);
    int64_t elements = 0;
    for (const auto& input : inputs) elements += input.numel();
    if (elements > limit) return {};
    auto reference = run.reference->run(inputs);
    if (!reference) return reference.error();
    auto exact = run.reference->run(in_float64(inputs));
    if (!exact) return {};  // an expression LibTorch cannot evaluate in float64: no evidence
    const PrecisionErrors errors = precision_errors(view(run, run.layout.sets[set].outputs[0]), *reference, *exact);
    auto evidence = run.out.getEvidence();
    evidence.setPrecisionChecked(true);
    evidence.setPrecisionError(errors.candidate);
    evidence.setReferencePrecisionError(errors.reference);
    return {};
  }

  // Whether most of the output elements of `set` that miss the reference hold, bit for bit, what
  // the output held before the last batch: stale answers (a cache, or skipped work) rather than
  // an inaccurate computation.
  Result<bool> mostly_stale(Run& run, uint32_t set, const at::Tensor& previous) {
    auto reference = expected_output(run, pristine(run, set));
    if (!reference) return reference.error();
    const StaleCount count =
        count_stale(view(run, run.layout.sets[set].outputs[0]), previous, *reference, run.tolerance);
    return count.missing > 0 && 2 * count.stale >= count.missing;
  }

  // Whether set 0's output still holds `returned`, what it held at the reply (`at_reply`), at
  // least kAfterReturnWait later; records evidence outputsChangedAfterReturn when not.
  void check_outputs_still(Run& run, const at::Tensor& returned, Clock::time_point at_reply) {
    const auto waited = Clock::now() - at_reply;
    if (waited < kAfterReturnWait) std::this_thread::sleep_for(kAfterReturnWait - waited);
    const at::Tensor now = view(run, run.layout.sets[0].outputs[0]);
    if (run.out.getEvidence().getOutputsChangedAfterReturn().size() != 0 || same_bits(now, returned)) return;
    const int64_t changed = count_differing_bits(now, returned);
    run.out.getEvidence().setOutputsChangedAfterReturn(
        std::to_string(changed) + " of " + std::to_string(now.numel()) + " elements of output " +
        run.task->outputs[0] + " changed between the reply and " +
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - at_reply).count()) +
        " ms later");
  }

  // Whether set 0's outputs at the reply are what the sandbox saw as the call returned.
  void check_outputs_as_returned(Run& run, uint64_t at_return) {
    uint64_t checksum = checksum_bytes(nullptr, 0);
    for (const auto& slot : run.layout.sets[0].outputs)
      checksum = checksum_bytes(region->data() + slot.offset, slot.bytes(), checksum);
    if (checksum != at_return)
      run.out.getEvidence().setOutputsChangedAfterReturn("output " + run.task->outputs[0] +
                                                         " changed between drk_kernel's return and the sandbox's reply");
  }

  // The sandbox's CPU time since its last reply, counted as idle, and the evidence of the
  // intervals: called when the evaluation's last request has been answered.
  void record_idle_cpu(Run& run) {
    if (sandbox && sandbox->alive() && cpu_at_reply)
      if (const auto now = sandbox->cpu_time_ns()) {
        add_idle(static_cast<double>(*now - *cpu_at_reply),
                 std::chrono::duration<double, std::nano>(Clock::now() - reply_time).count());
      }
    auto evidence = run.out.getEvidence();
    evidence.setCpuWhileIdleMs(idle_cpu_ns / 1e6);
    evidence.setIdleMs(idle_wall_ns / 1e6);
    if (!idle_cpu_shares.empty()) evidence.setIdleCpuShare(summarize(idle_cpu_shares, 1).median);
    evidence.setMaxThreads(options.max_threads);
  }

  Status evaluate(msg::Candidate::Reader candidate, msg::EvalResult::Builder out, double best_known_speedup);
  void record_artifact(msg::Candidate::Reader candidate, std::optional<Status> adoption, msg::EvalResult::Builder out);
  Status run_trials(Run& run);
  Status rerun_with_finite_poison(Run& run);
  Status run_second_shape_trial(Run& run);
  // swap_between_calls: the re-timing of an implausible result, with input_swaps.h's swaps.
  Status run_timing(Run& run, bool swap_between_calls);
  Status time_on_cpu(Run& run, std::vector<double>& candidate_us, std::vector<double>& reference_us,
                     uint32_t& candidate_calls, uint32_t& reference_calls);
  Status time_on_cuda(Run& run, std::vector<double>& candidate_us, std::vector<double>& reference_us);
  Result<SandboxAnswer> run_batch(Run& run, uint32_t calls);
  Result<SandboxAnswer> run_rotating_batch(Run& run, uint32_t calls);
  std::optional<Status> measure_answer_reuse(Run& run, double call_us);
  std::optional<Status> batch_failed(Run& run, const Result<SandboxAnswer>& answer, const char* phase);
  bool timing_settled(const std::vector<double>& candidate_us, const std::vector<double>& reference_us,
                      Clock::time_point started) const;
  // launch_hidden: the calls were timed with the launch hold; launch_note says why not.
  void fill_gpu_profile(Run& run, const std::vector<TimedCall>& calls, double event_floor_us, bool launch_hidden,
                        const std::string& launch_note);
  std::optional<Status> measure_energy(Run& run, uint32_t set_count);
  void fill_roofline(Run& run, double median_us);
  struct SeparateCall {
    bool ran = false;     // loaded and called once
    std::string failure;  // why not, when the sandbox said
    std::string output;   // what the sandbox (or its launcher) printed
    SandboxExit exit;
  };
  std::optional<SeparateCall> call_separately(Run& run, const std::string& library, std::vector<std::string> launcher,
                                              std::string& note);
  void run_sanitizer(Run& run, const std::string& library, bool initcheck);
  void run_guarded_call(Run& run, const std::string& library);
};

// The candidate into `out` without the object it may carry (results travel on to the Verifier,
// the Oracle and the archive), its artifact's `use` and `note` saying what became of it.
// `adoption`: what compile_ahead() made of the object, if it saw the candidate.
void EvaluationEngine::Impl::record_artifact(msg::Candidate::Reader candidate, std::optional<Status> adoption,
                                             msg::EvalResult::Builder out) {
  if (!candidate.hasCompiled()) {
    out.setCandidate(candidate);
    return;
  }
  if (!adoption) adoption = compile_pool->adopt(candidate.getSource(), candidate.getCompiled());
  capnp::MallocMessageBuilder copy;
  auto stripped = compile::without_object(candidate, copy);
  auto artifact = stripped.getCompiled();
  if (adoption->ok()) {
    artifact.setUse(msg::ArtifactUse::USED);
  } else if (artifact.getUse() != msg::ArtifactUse::WITHHELD) {
    artifact.setUse(msg::ArtifactUse::IGNORED);
    artifact.setNote(adoption->error().message);
    log::warn() << options.evaluator_name << ": the object shipped with candidate " << candidate.getId().cStr()
                << " is ignored, its source is compiled: " << adoption->error().message;
  }
  out.setCandidate(stripped.asReader());
}

Status EvaluationEngine::Impl::evaluate(msg::Candidate::Reader candidate, msg::EvalResult::Builder out,
                                       double best_known_speedup) {
  auto started = Clock::now();
  std::optional<Status> adoption;
  if (auto found = adopted.find(candidate.getId().cStr()); found != adopted.end()) {
    adoption = std::move(found->second);
    adopted.erase(found);
  }
  std::string task_name = candidate.getTask();
  auto task = catalog.find(task_name);
  if (!task) return task.error();
  DeviceKind device = candidate.getDevice() == msg::Device::CUDA ? DeviceKind::cuda : DeviceKind::cpu;
  if (device != options.device)
    return make_error(Errc::unsupported, "candidate '" + std::string(candidate.getId()) + "' is for device " +
                                             std::string(kernels::device_name(device)) + " but this evaluator runs " +
                                             std::string(kernels::device_name(options.device)));
  msg::Language language = device == DeviceKind::cuda ? msg::Language::CUDA : msg::Language::CPP;
  if (candidate.getLanguage() != language)
    return make_error(Errc::unsupported, std::string("candidate '") + candidate.getId().cStr() + "' is " +
                                             (candidate.getLanguage() == msg::Language::CUDA ? "CUDA" : "C++") +
                                             " but this evaluator compiles " +
                                             (language == msg::Language::CUDA ? "CUDA C++" : "C++") + " candidates");
  if (!(*task)->runs_on(shape_kind()))
    return make_error(Errc::unsupported, "task '" + task_name + "' has no " +
                                             std::string(kernels::device_name(shape_kind())) + " shapes: it runs on " +
                                             (*task)->devices_text() + " only (kernels/tasks/" + task_name + ".yaml)");

  record_artifact(candidate, std::move(adoption), out);
  out.setEvaluator(options.evaluator_name);
  out.setTrials(options.trials);
  out.setSandbox(msg::SandboxOutcome::OK);
  struct EvalClock {
    msg::EvalResult::Builder out;
    Clock::time_point started;
    ~EvalClock() { out.setEvalMs(ms_since(started)); }
  } eval_clock{out, started};

  auto compiled = compile_pool->compile(candidate.getSource());
  out.setCompileWaitMs(ms_since(started));
  if (device_warm_up.valid()) device_warm_up.get();  // in evalMs, not in the compile wait
  if (!compiled) {
    if (compiled.error().code != Errc::compile_error) return compiled.error();
    out.setCompiled(false);
    out.setCompileLog(compiled.error().message);
    out.setCompileMs(ms_since(started));
    out.setErrorText("the candidate does not compile");
    return {};
  }
  out.setCompiled(true);
  out.setCompileCached(compiled->cached);
  out.setCompileMs(compiled->compile_ms);
  std::vector<KernelResourceUsage> own_kernels;
  if (options.device == DeviceKind::cuda) {
    own_kernels = parse_ptxas_report(compiled->compiler_output);
    auto resources = out.initResources(static_cast<unsigned>(own_kernels.size()));
    for (unsigned k = 0; k < own_kernels.size(); ++k) {
      const auto& usage = own_kernels[k];
      auto entry = resources[k];
      entry.setName(usage.name);
      entry.setRegisters(usage.registers);
      entry.setSpillStoreBytes(usage.spill_store_bytes);
      entry.setSpillLoadBytes(usage.spill_load_bytes);
      entry.setStackFrameBytes(usage.stack_frame_bytes);
      entry.setSharedBytes(usage.shared_bytes);
      entry.setConstantBytes(usage.constant_bytes);
    }
  }

  Run run;
  run.task = *task;
  run.reference = &references.at(task_name);
  // On the CPU one set more than the timing's inputs: its outputs make the rotation
  // (run_rotating_batch), which needs two input sets at least.
  run.layout = make_layout(**task, shape_kind(),
                           options.device == DeviceKind::cuda ? std::max<uint32_t>(options.timing_sets, 1)
                                                              : std::max<uint32_t>(options.timing_sets, 2) + 1);
  run.tolerance = (*task)->output_tolerance();
  run.seed = mix(secret, evaluations++);
  run.on_device = device_resident();
  run.draw_seeds.resize(run.layout.sets.size());
  run.pristine.resize(run.layout.sets.size());
  run.out = out;
  for (const auto& usage : own_kernels) run.own_kernels.insert(usage.name);
  if (auto s = reserve(run, run.layout.bytes); !s) return s;
  kernels::set_reference_threads(options.max_threads);
  out.setReferenceBuild(reference_build.describe());
  out.setReferenceBlasUnoptimised(reference_build.unoptimised_blas && options.device == DeviceKind::cpu);

  auto phase_started = Clock::now();
  // Whatever ends the evaluation, its sandbox goes with it and the next one is started.
  struct EndCandidate {
    Impl* impl;
    ~EndCandidate() { impl->end_candidate(); }
  } end_candidate_on_exit{this};
  if (auto s = begin_candidate(); !s) return s;
  measure_peaks_before_load();
  auto staged = sandbox->stage_library(compiled->library_path);
  if (!staged) return staged.error();
  auto loaded = call(run, options.load_timeout, [&](msg::SandboxRequest::Builder request) {
    auto load = request.initLoad();
    load.setLibrary(*staged);
    load.setMaxThreads(options.max_threads);
  });
  out.setLoadMs(ms_since(phase_started));
  if (!loaded) {
    if (!run.sandbox_failed) return loaded.error();
    out.setErrorText("while loading the candidate: " + std::string(out.getErrorText().cStr()));
  } else if (loaded->status != msg::SandboxStatus::OK) {
    out.setSandbox(msg::SandboxOutcome::FAILED_TO_LOAD);
    out.setErrorText(loaded->message);
  } else {
    phase_started = Clock::now();
    if (auto s = run_trials(run); !s) return s;
    if (out.getCorrect())
      if (auto s = run_second_shape_trial(run); !s) return s;
    out.setCorrectnessMs(ms_since(phase_started));
    phase_started = Clock::now();
    if (out.getCorrect())
      if (auto s = run_timing(run, false); !s) return s;
    // Beyond the roofline, or far beyond the task's best known speedup: measured again before the
    // Verifier judges it, and checked for out-of-bounds accesses.
    const bool beyond = out.getCorrect() && judging::roofline_position(out.asReader()).beyond;
    const double first_speedup = out.getSpeedup();
    const bool beyond_best = out.getCorrect() && judging::far_beyond_best_known(first_speedup, best_known_speedup);
    if (beyond || beyond_best) {
      auto evidence = out.getEvidence();
      evidence.setRooflineRemeasured(beyond);
      if (beyond_best) evidence.setBestKnownSpeedup(best_known_speedup);
      evidence.setFirstSpeedup(first_speedup);
      evidence.setFirstCandidateUs(out.getCandidateTiming().getMedianUs());
      // Two input elements swapped before every call: no call sees inputs another one saw, so a
      // result memoised on the whole input misses, and the speedup holds only if the work is done.
      if (auto s = run_timing(run, true); !s) return s;
    }
    out.setTimingMs(ms_since(phase_started));
    if (out.getCorrect() && (options.sanitize || beyond || beyond_best)) {
      if (options.device == DeviceKind::cuda) {
        run_sanitizer(run, compiled->library_path, false);
        run_sanitizer(run, compiled->library_path, true);
      } else {
        run_guarded_call(run, compiled->library_path);
      }
    }
  }
  if (!out.getCorrect()) out.setSpeedup(0.0);
  record_idle_cpu(run);
  return {};
}

Status EvaluationEngine::Impl::run_trials(Run& run) {
  auto out = run.out;
  uint32_t passed = 0;
  for (uint32_t trial = 0; trial < options.trials; ++trial) {
    write_inputs(run, 0, mix(run.seed, trial));
    poison_outputs(run, 0);
    auto answer = call_once(run, trial == 0);
    if (!answer) {
      if (!run.sandbox_failed) return answer.error();
      out.setErrorText("trial " + std::to_string(trial + 1) + ": " + std::string(out.getErrorText().cStr()));
      break;
    }
    out.getEvidence().setCandidateStatus(answer->candidate_status);
    if (answer->status != msg::SandboxStatus::OK) {
      out.setSandbox(answer->status == msg::SandboxStatus::RETURNED_ERROR ? msg::SandboxOutcome::RETURNED_ERROR
                                                                          : msg::SandboxOutcome::CRASHED);
      out.setErrorText("trial " + std::to_string(trial + 1) + ": " + answer->message);
      break;
    }
    // The first trial's outputs as the reply found them, compared again after the check below
    // and a short wait: a write in between is work still running after drk_kernel returned.
    const auto at_reply = Clock::now();
    const at::Tensor returned = trial == 0 ? view(run, run.layout.sets[0].outputs[0]).clone() : at::Tensor();
    if (trial == 0 && answer->output_checksum) check_outputs_as_returned(run, *answer->output_checksum);
    auto comparison = check_set(run, 0);
    if (!comparison) return comparison.error();
    if (trial == 0) check_outputs_still(run, returned, at_reply);
    if (!comparison->passed) {
      std::ostringstream text;
      text << "trial " << trial + 1 << ": " << comparison->first_failure << "; max abs error "
           << out.getMaxAbsError() << ", max rel error " << out.getMaxRelError();
      out.setErrorText(text.str());
      break;
    }
    if (trial == 0) {
      if (auto s = check_precision(run, 0); !s) return s;
      if (auto s = rerun_with_finite_poison(run); !s) return s;
      if (run.sandbox_failed) break;
    }
    // Mutated inputs with matching outputs still pass the numbers; the evidence goes to the Verifier.
    if (out.getEvidence().getInputsMutated() && out.getErrorText().size() == 0)
      out.setErrorText("trial " + std::to_string(trial + 1) + ": " + comparison->first_failure);
    ++passed;
  }
  out.setTrialsPassed(passed);
  out.setCorrect(passed == options.trials);
  return {};
}

// Trial 1 once more on the same inputs, its outputs pre-filled with a finite poison instead of NaN
// (poison_finite: +-magnitude, from the evaluation's secret seed). A candidate that reads its
// outputs before writing them (a running max or min, a "computed already" test) passes with NaN,
// which fmax ignores and every comparison fails, and misses here: evidence uninitialisedRead. A
// result within tolerance that differs bit for bit from the first run is nondeterministic (float
// atomics, a changing summation order): evidence rerunDiffers, which the Verifier only warns
// about. Correctness is left as it is: the Verifier judges the evidence.
Status EvaluationEngine::Impl::rerun_with_finite_poison(Run& run) {
  const auto& slot = run.layout.sets[0].outputs[0];
  const at::Tensor first = view(run, slot).clone();
  write_inputs(run, 0, mix(run.seed, 0));
  poison_finite(view(run, slot), 1024.0f + static_cast<float>(mix(run.seed, 300) % 4096));
  auto answer = call_once(run);
  if (!answer) {
    if (!run.sandbox_failed) return answer.error();
    run.out.setErrorText("trial 1 rerun with a finite poison: " + std::string(run.out.getErrorText().cStr()));
    return {};
  }
  if (answer->status != msg::SandboxStatus::OK) return {};
  auto reference = expected_output(run, pristine(run, 0));
  if (!reference) return reference.error();
  const Comparison c = compare_outputs(view(run, slot), *reference, slot.shape, run.task->outputs[0], run.tolerance);
  auto evidence = run.out.getEvidence();
  if (!c.passed)
    evidence.setUninitialisedRead(c.first_failure);
  else
    evidence.setRerunDiffers(static_cast<uint64_t>(count_differing_bits(view(run, slot), first)));
  return {};
}

// One more trial at the task's second shapes (docs/tasks.md), after every trial passed at the
// main ones. A candidate that ignores the shapes it is given (extents or strides fixed at compile
// time) is right at the main shapes and wrong here: evidence secondShapeWrong, and the result is
// not correct. A candidate that declines the shapes with a non-zero status (DRK_E_UNSUPPORTED_SHAPE)
// is a specialised kernel, which KernelBench's fixed shapes allow: secondShapeStatus records it.
// The trial uses buffer set 0's place before timing, which draws every set afresh.
Status EvaluationEngine::Impl::run_second_shape_trial(Run& run) {
  if (run.task->second_shapes(shape_kind()).empty()) return {};
  auto out = run.out;
  const kernels::Task second_task = kernels::at_second_shapes(*run.task, shape_kind());
  Run trial;
  trial.task = &second_task;
  trial.reference = run.reference;
  trial.layout = make_layout(second_task, shape_kind(), 1);
  trial.tolerance = run.tolerance;
  trial.seed = run.seed;
  trial.on_device = run.on_device;
  trial.draw_seeds.resize(1);
  trial.pristine.resize(1);
  trial.out = out;
  trial.own_kernels = run.own_kernels;
  if (auto s = reserve(trial, std::max(run.layout.bytes, trial.layout.bytes)); !s) return s;
  std::string shapes;
  for (const auto& input : second_task.inputs)
    shapes += (shapes.empty() ? "" : ", ") + input.name + " " +
              kernels::format_shape(second_task.shapes(shape_kind()).at(input.name));
  const std::string phase = "the second-shape trial (" + shapes + ")";

  write_inputs(trial, 0, mix(run.seed, 500));
  poison_outputs(trial, 0);
  auto answer = call_once(trial);
  if (!answer) {
    if (!trial.sandbox_failed) return answer.error();
    run.sandbox_failed = true;
    out.setErrorText(phase + ": " + std::string(out.getErrorText().cStr()));
    return {};
  }
  auto evidence = out.getEvidence();
  evidence.setSecondShapeChecked(true);
  evidence.setSecondShapeStatus(answer->candidate_status);
  if (answer->status == msg::SandboxStatus::RETURNED_ERROR) return {};
  if (answer->status != msg::SandboxStatus::OK) {
    out.setSandbox(msg::SandboxOutcome::CRASHED);
    out.setErrorText(phase + ": " + answer->message);
    out.setCorrect(false);
    return {};
  }
  const std::vector<at::Tensor> inputs = pristine(trial, 0);
  auto reference = expected_output(trial, inputs);
  if (!reference) return reference.error();
  const auto& slot = trial.layout.sets[0].outputs[0];
  Comparison c = compare_outputs(view(trial, slot), *reference, slot.shape, run.task->outputs[0], run.tolerance);
  if (inputs_mutated(trial, 0, inputs)) {
    evidence.setInputsMutated(true);
    if (c.passed) c.first_failure = "an input differs from its pristine copy after the call (inputs are read-only)";
  } else if (!c.passed) {
    evidence.setSecondShapeWrong(phase + ": " + c.first_failure);
  }
  if (!c.passed || evidence.getInputsMutated()) {
    out.setErrorText(phase + ": " + c.first_failure);
    out.setCorrect(false);
  }
  return {};
}

// CPU timing: `calls` calls in the rotating order (Run::rotation_calls). The layout has K + 1
// sets: inputs of sets 0..K-1, outputs of all K + 1.
Result<SandboxAnswer> EvaluationEngine::Impl::run_rotating_batch(Run& run, uint32_t calls) {
  const uint32_t inputs = static_cast<uint32_t>(run.layout.sets.size()) - 1;
  const uint32_t period = inputs * (inputs + 1);
  const uint64_t first = run.rotation_calls;
  run.rotation_calls += calls;
  return call(run, options.call_timeout, [&](msg::SandboxRequest::Builder request) {
    auto run_request = request.initRun();
    run_request.setCalls(calls);
    run_request.setSwapSeed(run.next_swap_seed());
    auto list = run_request.initSets(period);
    for (uint32_t j = 0; j < period; ++j)
      fill_buffer_set(list[j], run.layout.sets[(first + j) % inputs].inputs,
                      run.layout.sets[(first + j) % (inputs + 1)].outputs);
  });
}

Result<SandboxAnswer> EvaluationEngine::Impl::run_batch(Run& run, uint32_t calls) {
  std::vector<uint32_t> all_sets;
  for (uint32_t s = 0; s < run.layout.sets.size(); ++s) all_sets.push_back(s);
  return call(run, options.call_timeout, [&](msg::SandboxRequest::Builder request) {
    auto run_request = request.initRun();
    run_request.setCalls(calls);
    run_request.setSwapSeed(run.next_swap_seed());
    fill_sets(run_request, run, all_sets);
  });
}

std::optional<Status> EvaluationEngine::Impl::batch_failed(Run& run, const Result<SandboxAnswer>& answer,
                                                           const char* phase) {
  auto out = run.out;
  if (!answer) {
    if (!run.sandbox_failed) return Status(answer.error());
    out.setErrorText(std::string(phase) + ": " + std::string(out.getErrorText().cStr()));
    return Status();
  }
  if (answer->status != msg::SandboxStatus::OK) {
    out.setSandbox(answer->status == msg::SandboxStatus::RETURNED_ERROR ? msg::SandboxOutcome::RETURNED_ERROR
                                                                        : msg::SandboxOutcome::CRASHED);
    out.getEvidence().setCandidateStatus(answer->candidate_status);
    out.setErrorText(std::string(phase) + ": " + answer->message);
    out.setCorrect(false);
    return Status();
  }
  return std::nullopt;
}

// The stop rule of both devices: the standard error of both medians under the target, or the
// budget spent (with a few samples), or the sample cap.
bool EvaluationEngine::Impl::timing_settled(const std::vector<double>& candidate_us,
                                            const std::vector<double>& reference_us,
                                            Clock::time_point started) const {
  size_t n = std::min(candidate_us.size(), reference_us.size());
  bool precise = n >= options.min_samples && relative_error_of_median(candidate_us) < options.target_relative_error &&
                 relative_error_of_median(reference_us) < options.target_relative_error;
  bool budget_spent = ms_since(started) >= options.timing_budget_ms && n >= 3;
  return precise || budget_spent || n >= options.max_samples;
}

Status EvaluationEngine::Impl::run_timing(Run& run, bool swap_between_calls) {
  auto out = run.out;
  uint32_t set_count = static_cast<uint32_t>(run.layout.sets.size());
  for (uint32_t s = 0; s < set_count; ++s) {
    write_inputs(run, s, mix(run.seed, 1000 + s));
    poison_outputs(run, s);
  }
  std::vector<double> candidate_us, reference_us;
  uint32_t candidate_calls = 1, reference_calls = 1;  // per sample
  run.swap_seed = swap_between_calls ? mix(run.seed, 4000) : 0;
  Status measured = options.device == DeviceKind::cuda
                        ? time_on_cuda(run, candidate_us, reference_us)
                        : time_on_cpu(run, candidate_us, reference_us, candidate_calls, reference_calls);
  // The swaps end with the timing: every input is written afresh below before anything is checked.
  run.swap_seed = 0;
  if (!measured || !out.getCorrect() || candidate_us.empty()) return measured;
  TimingSummary candidate_summary = summarize(candidate_us, candidate_calls);
  TimingSummary reference_summary = summarize(reference_us, reference_calls);
  fill_timing(candidate_summary, out.initCandidateTiming());
  fill_timing(reference_summary, out.initReferenceTiming());
  if (options.device == DeviceKind::cuda) fill_roofline(run, candidate_summary.median);

  // Fresh values at the same addresses: a result cached across timed calls shows here. The
  // outputs are not poisoned this time: they keep the answers to the previous inputs, a finite,
  // plausible second poison that catches a candidate that skips work when its output already
  // holds numbers (the trials' NaN poison caught outputs never written). Then the same inputs
  // with a few secret elements swapped, the fresh answers left in place: a shortcut keyed on a
  // sample of the inputs, which the fresh draw missed, answers from them there (input_nudge.h).
  std::vector<at::Tensor> previous_answers(set_count);
  // nullopt when every set passed; else what run_timing returns (the result marked incorrect).
  const auto batch_after_timing = [&](const char* what,
                                      const std::function<void(uint32_t)>& change_inputs) -> std::optional<Status> {
    for (uint32_t s = 0; s < set_count; ++s) {
      change_inputs(s);
      previous_answers[s] = view(run, run.layout.sets[s].outputs[0]).clone();
    }
    auto check = run_batch(run, std::max(candidate_calls, set_count));
    const std::string phase = std::string("the last timed batch (") + what + ")";
    if (auto f = batch_failed(run, check, phase.c_str())) return *f;
    for (uint32_t s = 0; s < set_count; ++s) {
      auto comparison = check_set(run, s);
      if (!comparison) return Status(comparison.error());
      if (comparison->passed) continue;
      out.setCorrect(false);
      auto stale = mostly_stale(run, s, previous_answers[s]);
      if (!stale) return Status(stale.error());
      if (*stale) out.getEvidence().setStaleAfterFreshInputs(true);
      out.setErrorText(phase + ": " + comparison->first_failure +
                       (*stale ? " (the output still holds the answer to the previous inputs)" : ""));
      return Status();
    }
    return std::nullopt;
  };
  if (auto ended = batch_after_timing("fresh inputs", [&](uint32_t s) { write_inputs(run, s, mix(run.seed, 2000 + s)); }))
    return *ended;
  if (auto ended = batch_after_timing("a few input elements swapped",
                                      [&](uint32_t s) { nudge(run, s, mix(run.seed, 3000 + s)); }))
    return *ended;
  if (candidate_summary.median > 0) out.setSpeedup(reference_summary.median / candidate_summary.median);
  return {};
}

// CPU: this process's clock around "run M calls" round trips, minus an empty round trip; the
// reference runs here with LibTorch.
Status EvaluationEngine::Impl::time_on_cpu(Run& run, std::vector<double>& candidate_us, std::vector<double>& reference_us,
                                           uint32_t& candidate_calls, uint32_t& reference_calls) {
  auto out = run.out;
  // The inputs the rotation takes (the last set's outputs only rotate): the reference's too.
  const uint32_t set_count = static_cast<uint32_t>(run.layout.sets.size()) - 1;
  auto candidate_batch = [&](uint32_t calls) { return run_rotating_batch(run, calls); };
  auto failed = [&](const Result<SandboxAnswer>& answer, const char* phase) { return batch_failed(run, answer, phase); };

  // The cost of a round trip that runs nothing, subtracted from every candidate batch: the
  // fastest of a few, because a loaded machine delays some trips by more than a whole 1 ms batch
  // (a median of them once zeroed every sample of a fast candidate).
  double round_trip_ns = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 5; ++i) {
    auto answer = candidate_batch(0);
    if (auto f = failed(answer, "timing")) return *f;
    round_trip_ns = std::min(round_trip_ns, answer->wall_ns);
  }

  // Calibration: double the batch until it lasts half the target (the first batches also warm
  // caches up), then scale it to the target.
  double target_ns = options.target_batch_ms * 1e6;
  auto calibrate = [&](const std::function<Result<double>(uint32_t)>& batch_ns) -> Result<uint32_t> {
    uint32_t calls = 1;
    for (;;) {
      auto ns = batch_ns(calls);
      if (!ns) return ns.error();
      if (*ns >= target_ns / 2 || calls >= 65536)
        return static_cast<uint32_t>(std::clamp(std::ceil(calls * target_ns / std::max(*ns, 1.0)), 1.0, 100000.0));
      calls *= 2;
    }
  };
  // Warm-up: a first call faults the output pages in and warms caches; it is not measured.
  if (auto f = failed(candidate_batch(set_count), "timing warm-up")) return *f;
  for (uint32_t s = 0; s < set_count; ++s)
    if (auto warm = run.reference->run(run.pristine[s]); !warm) return warm.error();

  std::optional<Status> calibration_failure;
  auto candidate_calls_or = calibrate([&](uint32_t calls) -> Result<double> {
    auto answer = candidate_batch(calls);
    calibration_failure = failed(answer, "timing");
    if (calibration_failure) return make_error(Errc::sandbox_crashed, "the candidate failed during calibration");
    return std::max(answer->wall_ns - round_trip_ns, 0.0);
  });
  if (!candidate_calls_or) return *calibration_failure;
  candidate_calls = *candidate_calls_or;

  auto time_reference = [&](uint32_t calls) -> Result<double> {
    auto begin = Clock::now();
    for (uint32_t i = 0; i < calls; ++i) {
      auto value = run.reference->run(run.pristine[i % set_count]);
      if (!value) return value.error();
    }
    return std::chrono::duration<double, std::nano>(Clock::now() - begin).count();
  };
  auto reference_calls_or = calibrate(time_reference);
  if (!reference_calls_or) return reference_calls_or.error();
  reference_calls = *reference_calls_or;

  // Warm-up: one batch of each.
  if (auto f = failed(candidate_batch(candidate_calls), "timing warm-up")) return *f;
  if (auto warm = time_reference(reference_calls); !warm) return warm.error();

  std::vector<double> clock_ratios;  // per batch: this process's time net of the empty trip / the sandbox's
  auto timing_started = Clock::now();
  for (;;) {
    bool reference_first_this_round = (order_rng() & 1) != 0;
    for (int side = 0; side < 2; ++side) {
      if ((side == 0) == reference_first_this_round) {
        auto ns = time_reference(reference_calls);
        if (!ns) return ns.error();
        reference_us.push_back(*ns / 1000.0 / reference_calls);
      } else {
        auto answer = candidate_batch(candidate_calls);
        if (auto f = failed(answer, "timing")) return *f;
        candidate_us.push_back(std::max(answer->wall_ns - round_trip_ns, 0.0) / 1000.0 / candidate_calls);
        // Over the whole round trip: one thread's CPU time cannot exceed it, whatever the
        // sandbox does around the calls (the timing's net wall time, or the calls' own span, is
        // short of that work: short batches of one call then read as 1.3-1.5 threads). Inexact
        // readings are left out: a tick's error is several batches long.
        if (answer->wall_ns > 0 && answer->cpu_exact) run.batch_cpu_per_wall.push_back(answer->cpu_ns / answer->wall_ns);
        if (answer->sandbox_ns > 0)
          clock_ratios.push_back(std::max(answer->wall_ns - round_trip_ns, 0.0) / static_cast<double>(answer->sandbox_ns));
      }
    }
    if (timing_settled(candidate_us, reference_us, timing_started)) break;
  }
  // A low percentile of the batches: a loaded machine delays many round trips (its wake-up
  // latency alone can triple a 1 ms batch), while a sandbox that lies about its clock, or works
  // after it answered, inflates every batch.
  if (!clock_ratios.empty()) out.getEvidence().setWallCheckRatio(summarize(clock_ratios, 1).p10);
  if (!run.batch_cpu_per_wall.empty()) out.getEvidence().setCpuPerWall(summarize(run.batch_cpu_per_wall, 1).median);
  if (auto f = measure_answer_reuse(run, summarize(candidate_us, 1).median)) return *f;
  return {};
}

// Work skipped when the output already holds the answer (a cheap check of it, then nothing to
// do), which the rotation keeps out of the timed batches: batches where each call's output was
// last written for its own inputs against rotating batches started from poison, two pairs (the
// second only when the first suspects it). The
// smallest ratio is the evidence (answerReuseRatio): an honest candidate takes about as long
// either way.
std::optional<Status> EvaluationEngine::Impl::measure_answer_reuse(Run& run, double call_us) {
  // Batches of about kAnswerReuseBatchMs, so that a skipped call's round trip is not what is
  // measured.
  const uint32_t calls =
      static_cast<uint32_t>(std::clamp(std::ceil(kAnswerReuseBatchMs * 1000.0 / std::max(call_us, 0.01)), 1.0, 100000.0));
  double smallest = std::numeric_limits<double>::infinity();
  for (int pair = 0; pair < 2; ++pair) {
    // The first plain batch leaves every output holding its own inputs' answer.
    for (int round = 0; round < 2; ++round) {
      auto own = run_batch(run, calls);
      if (auto f = batch_failed(run, own, "timing")) return f;
      if (round == 0) continue;
      for (uint32_t s = 0; s < run.layout.sets.size(); ++s) poison_outputs(run, s);
      auto other = run_rotating_batch(run, calls);
      if (auto f = batch_failed(run, other, "timing")) return f;
      // The sandbox's CPU time (all its threads), not the wall time: work skipped is CPU time not
      // spent, while a loaded machine stretches a batch's wall time (a threaded candidate's
      // second thread waiting for a core) without its CPU time: wall times read honest threaded
      // candidates as 3x faster with their answers there once in a while.
      const bool by_cpu = own->cpu_ns > 0 && other->cpu_ns > 0;
      smallest = std::min(smallest, by_cpu ? other->cpu_ns / own->cpu_ns
                                           : other->wall_ns / std::max(own->wall_ns, 1.0));
    }
    // A second pair only to confirm a suspicion: it must hold in both.
    if (smallest < kAnswerReuseConfirmAbove) break;
  }
  run.out.getEvidence().setAnswerReuseRatio(smallest);
  return std::nullopt;
}

// CUDA: calls timed one by one with CUDA events in the sandbox, candidate and reference (LibTorch
// CUDA, in the sandbox) interleaved in random order, each after an L2 flush and a device
// synchronisation, untraced; once the timing settled, a few calls a side traced by CUPTI, for
// the profile.
Status EvaluationEngine::Impl::time_on_cuda(Run& run, std::vector<double>& candidate_us,
                                            std::vector<double>& reference_us) {
  uint32_t set_count = static_cast<uint32_t>(run.layout.sets.size());
  // Copies every set to the device (a time request uses device memory as it is) and warms up.
  if (auto f = batch_failed(run, run_batch(run, set_count), "timing warm-up")) return *f;

  std::vector<TimedCall> calls;
  // Launch latency hidden (eval.launch_latency: hidden) until a call could not be held; then the
  // evaluation is timed again from the start with it included, so that no median mixes the two.
  // The warm-up is never held: first calls allocate device memory (LibTorch's caching
  // allocator, the workspace), and an allocation waits for the device, hold included.
  bool hold = options.hide_launch_latency;
  std::string launch_note = hold ? "" : "included (eval.launch_latency, drk eval --launch-latency)";
  auto shuffled_sides = [&](uint32_t per_side) {
    std::vector<bool> sides(2 * per_side);
    for (uint32_t i = 0; i < per_side; ++i) sides[i] = true;
    std::shuffle(sides.begin(), sides.end(), order_rng);
    return sides;
  };
  auto side_list = [](capnp::List<msg::TimedSide>::Builder list, const std::vector<bool>& sides) {
    for (unsigned i = 0; i < sides.size(); ++i)
      list.set(i, sides[i] ? msg::TimedSide::CANDIDATE : msg::TimedSide::REFERENCE);
  };
  auto fill_time_request = [&](msg::TimeRequest::Builder time, const std::vector<bool>& sides,
                               const std::vector<bool>& profiled, bool held) {
    std::vector<uint32_t> all_sets;
    for (uint32_t s = 0; s < set_count; ++s) all_sets.push_back(s);
    fill_buffer_sets(time.initSets(set_count), run, all_sets);
    side_list(time.initSides(static_cast<unsigned>(sides.size())), sides);
    side_list(time.initProfiled(static_cast<unsigned>(profiled.size())), profiled);
    auto reference = time.initReference();
    reference.setExpression(run.task->reference);
    auto names = reference.initInputNames(static_cast<unsigned>(run.task->inputs.size()));
    for (unsigned i = 0; i < run.task->inputs.size(); ++i) names.set(i, run.task->inputs[i].name);
    time.setFlushL2(true);
    time.setSwapSeed(run.next_swap_seed());
    time.setHoldLaunches(held);
  };
  std::vector<double> floors_us;
  // A round of `per_side` timed calls a side; or, with `profile`, the profiled calls: one call of
  // each side first, which the first launches after CUPTI is switched on slow down on the host
  // (by 0.2 ms on the H200) and which is not used, then cuda_profiled_calls a side.
  auto time_round = [&](uint32_t per_side, bool profile, bool keep,
                        std::chrono::milliseconds timeout) -> std::optional<Status> {
    const std::vector<bool> sides = shuffled_sides(per_side);
    std::vector<bool> profiled;
    if (profile) {
      profiled = {true, false};
      const std::vector<bool> used = shuffled_sides(options.cuda_profiled_calls);
      profiled.insert(profiled.end(), used.begin(), used.end());
    }
    auto answer = call(run, timeout, [&](msg::SandboxRequest::Builder request) {
      fill_time_request(request.initTime(), sides, profiled, hold && keep);
    });
    if (auto f = batch_failed(run, answer, "timing")) return f;
    if (answer->timed_calls.size() != sides.size() + profiled.size())
      return Status(make_error(Errc::protocol_error, "the sandbox answered a time request with " +
                                                         std::to_string(answer->timed_calls.size()) + " calls instead of " +
                                                         std::to_string(sides.size() + profiled.size())));
    for (size_t i = 0; i < answer->timed_calls.size(); ++i) {
      const TimedCall& timed = answer->timed_calls[i];
      if (timed.profiled != (i >= sides.size()) || (!timed.profiled && !timed.kernels.empty()))
        return Status(make_error(Errc::protocol_error, "the sandbox traced a call it was to time untraced, or the "
                                                       "other way round (call " + std::to_string(i) + ")"));
    }
    if (hold && keep && std::any_of(answer->timed_calls.begin(), answer->timed_calls.end(),
                            [](const TimedCall& timed) { return !timed.launch_hidden; })) {
      hold = false;
      launch_note = "included: " + answer->launch_hold_note;
      candidate_us.clear();
      reference_us.clear();
      calls.clear();
      floors_us.clear();
      return std::nullopt;
    }
    if (!keep) return std::nullopt;
    for (size_t i = 0; i < answer->timed_calls.size(); ++i) {
      TimedCall& timed = answer->timed_calls[i];
      if (timed.profiled) {
        if (i >= sides.size() + 2) calls.push_back(std::move(timed));
        continue;
      }
      (timed.candidate ? candidate_us : reference_us).push_back(timed.event_us);
      floors_us.push_back(timed.event_floor_us);
    }
    return std::nullopt;
  };
  // Warm-up: first calls pay for lazy initialisation (LibTorch, cuBLAS handles, module loads).
  if (auto f = time_round(2, false, false, options.load_timeout)) return *f;
  auto timing_started = Clock::now();
  for (;;) {
    const bool held = hold;
    if (auto f = time_round(options.cuda_calls_per_round, false, true, options.call_timeout)) return *f;
    if (held == hold && timing_settled(candidate_us, reference_us, timing_started)) {
      if (auto f = time_round(0, true, true, options.call_timeout)) return *f;
      if (held == hold) break;
    }
    if (held != hold) timing_started = Clock::now();  // the hold gave up: timed again, included
  }
  fill_gpu_profile(run, calls, summarize(floors_us, 1).median, hold, launch_note);
  // Work skipped when the output already holds the answer: a few candidate calls whose outputs
  // keep what the same set's last call wrote, against the timed ones, which started from poison.
  auto kept = call(run, options.call_timeout, [&](msg::SandboxRequest::Builder request) {
    auto time = request.initTime();
    fill_time_request(time, std::vector<bool>(kCudaAnswerReuseCalls, true), {}, hold);
    time.setKeepOutputs(true);
  });
  if (auto f = batch_failed(run, kept, "timing")) return *f;
  std::vector<double> kept_us;
  for (const TimedCall& timed : kept->timed_calls) kept_us.push_back(timed.event_us);
  if (!kept_us.empty() && !candidate_us.empty())
    run.out.getEvidence().setAnswerReuseRatio(summarize(candidate_us, 1).median /
                                              std::max(summarize(kept_us, 1).median, 1e-3));
  // Energy per call (NVML) and hardware metrics (CUPTI), after the timing.
  if (options.energy_min_ms == 0)
    SandboxEnergy::unavailable("not measured (eval.energy_min_ms = 0)").fill(run.out.getGpu().initEnergy());
  else if (auto f = measure_energy(run, set_count)) return *f;
  if (!options.hardware_metrics) {
    SandboxMetrics::unavailable("not measured (eval.hardware_metrics: false; drk eval --metrics)")
        .fill(run.own_kernels, run.out.getGpu().initHardwareMetrics());
    return {};
  }
  auto metrics = call(run, options.call_timeout, [&](msg::SandboxRequest::Builder request) {
    fill_buffer_sets(request.initMetrics().initSets(1), run, {0});
  });
  if (auto f = batch_failed(run, metrics, "measuring hardware metrics")) return *f;
  metrics->metrics.value_or(SandboxMetrics::unavailable("the sandbox gave no metrics"))
      .fill(run.own_kernels, run.out.getGpu().initHardwareMetrics());
  return {};
}

// Energy per call of both sides (the sandbox's energy request); nullopt when it was measured.
std::optional<Status> EvaluationEngine::Impl::measure_energy(Run& run, uint32_t set_count) {
  auto energy = call(run, options.call_timeout + std::chrono::milliseconds(4 * options.energy_min_ms + 4000),
                     [&](msg::SandboxRequest::Builder request) {
                       auto energy_request = request.initEnergy();
                       std::vector<uint32_t> all_sets;
                       for (uint32_t s = 0; s < set_count; ++s) all_sets.push_back(s);
                       fill_buffer_sets(energy_request.initSets(set_count), run, all_sets);
                       auto reference = energy_request.initReference();
                       reference.setExpression(run.task->reference);
                       auto names = reference.initInputNames(static_cast<unsigned>(run.task->inputs.size()));
                       for (unsigned i = 0; i < run.task->inputs.size(); ++i) names.set(i, run.task->inputs[i].name);
                       energy_request.setMinMs(options.energy_min_ms);
                     });
  if (auto f = batch_failed(run, energy, "measuring energy")) return f;
  energy->energy.value_or(SandboxEnergy::unavailable("the sandbox gave no energy reading"))
      .fill(run.out.getGpu().initEnergy());
  return std::nullopt;
}

// Coverage, the kernels of both sides, and the agreement of events with CUPTI.
void EvaluationEngine::Impl::fill_gpu_profile(Run& run, const std::vector<TimedCall>& calls, double event_floor_us,
                                             bool launch_hidden, const std::string& launch_note) {
  auto profile = run.out.initGpu();
  profile.setLaunchLatencyHidden(launch_hidden);
  profile.setLaunchLatencyNote(launch_note);
  if (peaks) profile.setDevice(peaks->name);
  profile.setShapes(shape_kind() == DeviceKind::cuda ? msg::Device::CUDA : msg::Device::CPU);
  auto candidate_groups = group_kernels(calls, true);
  auto reference_groups = group_kernels(calls, false);
  fill_kernels(candidate_groups, run.own_kernels, profile.initKernels(static_cast<unsigned>(candidate_groups.size())));
  fill_kernels(reference_groups, {}, profile.initReferenceKernels(static_cast<unsigned>(reference_groups.size())));
  std::vector<double> own_us, all_us, span_us, event_us;
  double own_total = 0, all_total = 0;
  for (const auto& timed : calls) {
    if (!timed.candidate) continue;
    event_us.push_back(timed.event_us);
    double own = 0, all = 0;
    uint64_t first = UINT64_MAX, last = 0;
    for (const auto& k : timed.kernels) {
      double us = static_cast<double>(k.end_ns - k.start_ns) / 1000.0;
      all += us;
      if (run.own_kernels.count(k.name)) own += us;
      first = std::min(first, k.start_ns);
      last = std::max(last, k.end_ns);
    }
    own_us.push_back(own);
    all_us.push_back(all);
    span_us.push_back(timed.kernels.empty() ? 0.0 : static_cast<double>(last - first) / 1000.0);
    own_total += own;
    all_total += all;
  }
  profile.setCoverage(all_total > 0 ? own_total / all_total : 0.0);
  profile.setOwnKernelUs(summarize(own_us, 1).median);
  profile.setAllKernelUs(summarize(all_us, 1).median);
  double span = summarize(span_us, 1).median;
  profile.setCuptiSpanUs(span);
  const double event_median_us = summarize(event_us, 1).median;
  profile.setProfiledCalls(static_cast<uint32_t>(event_us.size()));
  profile.setProfiledEventUs(event_median_us);
  profile.setEventFloorUs(event_floor_us);
  double disagreement = event_median_us > 0 ? std::fabs(event_median_us - span) / event_median_us : 0.0;
  profile.setEventCuptiDisagreement(disagreement);
  profile.setDisagreementThreshold(options.cupti_disagreement_threshold);
  profile.setTimingDisagrees(disagreement > options.cupti_disagreement_threshold);
  if (peaks) {
    profile.setPeakBytesPerS(peaks->copy_bytes_per_s);
    profile.setPeakFlopsPerS(peaks->fma_flops_per_s *
                             (run.task->output_dtype == kernels::DType::float16 ? kHalfTensorCoresOverFma : 1.0));
    profile.setL2FlushBytes(2 * peaks->l2_bytes);
  }
}

// Achieved bytes/s and FLOP/s of the candidate's median call (the task's minimum bytes and
// FLOPs at the evaluated shapes), beside the device's measured peaks.
void EvaluationEngine::Impl::fill_roofline(Run& run, double median_us) {
  if (median_us <= 0 || !run.out.hasGpu()) return;
  auto profile = run.out.getGpu();
  double seconds = median_us * 1e-6;
  profile.setAchievedBytesPerS(kernels::estimate_min_bytes(*run.task, shape_kind()) / seconds);
  profile.setAchievedFlopsPerS(kernels::estimate_flops(*run.task, shape_kind()) / seconds);
}

// One call of the candidate in a sandbox of its own (under `launcher` when it has one) whose
// tensors each have an allocation of their own, on fresh inputs, its outputs poisoned (left
// unwritten on a device): the out-of-bounds check's call. The warm sandbox is untouched.
// nullopt, with the reason in `note`, when that sandbox cannot be had.
std::optional<EvaluationEngine::Impl::SeparateCall> EvaluationEngine::Impl::call_separately(
    Run& run, const std::string& library, std::vector<std::string> launcher, std::string& note) {
  SandboxOptions separate = options.sandbox;
  separate.launcher = std::move(launcher);
  separate.separate_allocations = true;
  // Its tensors in allocations of their own, copied from the shared region: one set there.
  Run host = run;
  host.on_device = false;
  host.layout = make_layout(*run.task, shape_kind(), 1);
  host.draw_seeds.assign(1, 0);
  host.pristine.assign(1, {});
  if (auto s = region->reserve(host.layout.bytes); !s) {
    note = "no shared memory for the separate call: " + s.error().message;
    return std::nullopt;
  }
  auto process = SandboxProcess::start(separate, region->fd());
  if (!process) {
    note = "its sandbox did not start: " + process.error().message;
    return std::nullopt;
  }
  auto staged = (*process)->stage_library(library);
  if (!staged) {
    note = staged.error().message;
    return std::nullopt;
  }
  write_inputs(host, 0, mix(run.seed, kSanitizerSeedSalt));
  poison_outputs(host, 0);
  SeparateCall call;
  auto send = [&](const std::function<void(msg::SandboxRequest::Builder)>& fill) {
    capnp::MallocMessageBuilder message;
    build_request(message, host, fill);
    auto words = (*process)->call(message, options.sanitizer_timeout);
    if (!words) {
      call.failure = words.error().message;
      return false;
    }
    capnp::FlatArrayMessageReader reader(*words, frame_reader_options());
    auto reply = reader.getRoot<msg::SandboxReply>();
    if (reply.getStatus() != msg::SandboxStatus::OK && reply.getStatus() != msg::SandboxStatus::CUDA_ERROR) {
      call.failure = reply.getMessage().cStr();
      return false;
    }
    return true;
  };
  call.ran = send([&](msg::SandboxRequest::Builder request) {
    auto load = request.initLoad();
    load.setLibrary(*staged);
    load.setMaxThreads(options.max_threads);
  }) && send([&](msg::SandboxRequest::Builder request) {
    auto run_request = request.initRun();
    run_request.setCalls(1);
    fill_sets(run_request, host, {0});
  });
  call.output = (*process)->finish(std::chrono::milliseconds(30000));
  call.exit = (*process)->exit();
  return call;
}

// CUDA: one call under compute-sanitizer memcheck (initcheck: under initcheck); its error lines
// become evidence.
void EvaluationEngine::Impl::run_sanitizer(Run& run, const std::string& library, bool initcheck) {
  auto evidence = run.out.getEvidence();
  auto sanitizer = find_compute_sanitizer();
  if (!sanitizer) {
    evidence.setSanitizerNote(sanitizer.error().message);
    return;
  }
  // --padding: invalid bytes after every allocation, so that a read past one tensor cannot land in
  // the next allocation, which cudaMalloc may place right behind it.
  // initcheck: reads of device memory nothing wrote; the sandbox leaves the outputs unwritten there.
  std::vector<std::string> launcher = {*sanitizer, "--tool", initcheck ? "initcheck" : "memcheck"};
  if (!initcheck) launcher.insert(launcher.end(), {"--padding", "4096"});
  launcher.insert(launcher.end(), {"--print-limit", "8", "--error-exitcode", std::to_string(kSanitizerErrorExit)});
  std::string note;
  const auto call = call_separately(run, library, std::move(launcher), note);
  if (!call) {
    evidence.setSanitizerNote("compute-sanitizer: " + note);
    return;
  }
  const std::string why_unfinished = call->failure.empty() ? describe_exit(call->exit) : call->failure;
  if (initcheck) {
    // Only the candidate's device reads count: host API errors are the harness copying back an
    // output left unwritten, which the trials' poison judges.
    const InitcheckReport report = parse_initcheck_output(call->output);
    if (report.device_reads > 0)
      evidence.setInitcheckErrors(report.excerpt);
    else if (!call->ran || !report.finished)
      evidence.setSanitizerNote("compute-sanitizer initcheck did not finish (" + why_unfinished +
                                "): " + call->output.substr(0, 600));
    return;
  }
  const MemcheckReport report = parse_memcheck_output(call->output);
  if (report.errors > 0 || (call->exit.exit_code == kSanitizerErrorExit && !call->exit.timed_out)) {
    evidence.setSanitizerRan(true);
    evidence.setSanitizerErrors(report.excerpt.empty() ? "compute-sanitizer reported errors:\n" + call->output.substr(0, 2000)
                                                       : report.excerpt);
  } else if (call->ran && report.finished) {
    evidence.setSanitizerRan(true);
  } else {
    evidence.setSanitizerNote("compute-sanitizer did not finish (" + why_unfinished + "): " +
                              call->output.substr(0, 600));
  }
}

// CPU: one call with every tensor between guard pages (guarded_tensors.h); a fault in a guard
// becomes evidence.
void EvaluationEngine::Impl::run_guarded_call(Run& run, const std::string& library) {
  auto evidence = run.out.getEvidence();
  std::string note;
  const auto call = call_separately(run, library, {}, note);
  if (!call) {
    evidence.setSanitizerNote("guard pages: " + note);
    return;
  }
  if (const std::string fault = parse_out_of_bounds(call->output);
      !fault.empty() && call->exit.exit_code == kOutOfBoundsExit && !call->exit.timed_out) {
    evidence.setSanitizerRan(true);
    evidence.setSanitizerErrors(fault);
  } else if (call->ran && call->exit.exit_code == 0 && call->exit.signal == 0 && !call->exit.timed_out) {
    evidence.setSanitizerRan(true);
  } else {
    evidence.setSanitizerNote("the call between guard pages did not finish (" +
                              (call->failure.empty() ? describe_exit(call->exit) : call->failure) + ")");
  }
}

EvaluationEngine::EvaluationEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EvaluationEngine::~EvaluationEngine() = default;

Result<bool> parse_launch_latency(std::string_view text) {
  if (text == "hidden") return true;
  if (text == "included") return false;
  return make_error(Errc::invalid_argument, "'" + std::string(text) +
                                                "' is no launch latency setting: included (the events time the "
                                                "host's launches too, as KernelBench does) or hidden (the device's "
                                                "work only, behind the launch hold)");
}

Result<std::unique_ptr<EvaluationEngine>> EvaluationEngine::create(kernels::TaskCatalog catalog, EngineOptions options) {
#ifndef DRK_HAVE_CUDA
  if (options.device == DeviceKind::cuda)
    return make_error(Errc::unsupported,
                      "this build has no CUDA toolkit, so it evaluates CPU candidates only: rebuild where "
                      "/usr/local/cuda exists for --device cuda, or use --device cpu");
#endif
  if (options.trials == 0) return make_error(Errc::invalid_argument, "trials must be at least 1");
  if (options.max_threads < 1) return make_error(Errc::invalid_argument, "max_threads must be at least 1");
  auto impl = std::make_unique<Impl>();
  for (const auto& task : catalog.tasks()) {
    auto reference = kernels::Reference::create(task);
    if (!reference) return reference.error();
    impl->references.emplace(task.name, std::move(*reference));
  }
  compile::CompilerOptions compiler_options =
      compile::compiler_options_for(options.device == DeviceKind::cuda ? msg::Language::CUDA : msg::Language::CPP);
  compiler_options.cache_dir = options.cache_dir;
  compiler_options.timeout = options.compile_timeout;
  auto compiler =
      compile::Compiler::create(compiler_options, options.runner ? options.runner : compile::system_command_runner());
  if (!compiler) return compiler.error();
  auto pool = CompilePool::create(std::move(*compiler), options.compile_workers);
  if (!pool) return pool.error();
  impl->compile_pool = std::move(*pool);
  auto region = SharedRegion::create(1);
  if (!region) return region.error();
  impl->region.emplace(std::move(*region));
  impl->secret = options.seed ? *options.seed : secret_seed();
  impl->order_rng.seed(mix(impl->secret, 0xC0FFEE));
  options.sandbox.max_threads = options.max_threads;
  if (options.device == DeviceKind::cuda) {
    if (options.sandbox.executable == default_sandbox_executable())
      options.sandbox.executable = default_cuda_sandbox_executable();
    // CUDA reserves far more address space than it uses, and its libraries open more files.
    options.sandbox.limit_address_space = false;
    // CUPTI's profiler needs the GPU's counters, which the driver keeps for administrators by
    // default: with hardware metrics asked for, the sandboxes keep the Evaluator's user.
    if (options.hardware_metrics) options.sandbox.own_user = false;
    options.sandbox.max_open_files = std::max<uint64_t>(options.sandbox.max_open_files, 1024);
  } else if (options.sandbox.cpus.empty()) {
    options.sandbox.cpus = evaluation_cpus(options.max_threads);
  }
  options.sandbox_spares = std::max<uint32_t>(options.sandbox_spares, 1);
  impl->catalog = std::move(catalog);
  impl->options = std::move(options);
  kernels::set_reference_threads(impl->options.max_threads);
  impl->reference_build = kernels::reference_build();
  if (impl->options.device == DeviceKind::cuda) {
    impl->reference_build.blas = "cuBLAS on the GPU";
    impl->reference_build.unoptimised_blas = false;
  } else if (impl->reference_build.unoptimised_blas && !impl->options.allow_reference_blas) {
    return make_error(Errc::unsupported,
                      "the CPU reference would run on " + impl->reference_build.blas +
                          ": speedups over it are not honest. Install an optimised BLAS (apt-get install "
                          "libopenblas0-openmp, as tools/scripts/install-deps.sh does), or accept the crippled "
                          "baseline with eval.allow_reference_blas: true (drk eval --allow-reference-blas)");
  }
  if (auto fresh = impl->fresh_sandbox(); !fresh) return fresh.error();
  else impl->spares.push_back(std::move(*fresh));
  impl->start_spares();
#ifdef DRK_HAVE_CUDA
  // 0.3-0.6 s of a first evaluation on the H200, out of its way. A failure here is no result: the
  // first evaluation meets it again where it is reported.
  if (impl->device_resident())
    impl->device_warm_up = std::async(std::launch::async, [] {
      try {
        const auto a = at::ones({64, 64}, at::TensorOptions().device(at::kCUDA));
        (void)at::matmul(a, a).sum().item<float>();
      } catch (const std::exception&) {
      }
    });
#endif
  return std::unique_ptr<EvaluationEngine>(new EvaluationEngine(std::move(impl)));
}

Status EvaluationEngine::evaluate(msg::Candidate::Reader candidate, msg::EvalResult::Builder out,
                                  double best_known_speedup) {
  return impl_->evaluate(candidate, out, best_known_speedup);
}

Status EvaluationEngine::evaluate(const CandidateInput& input, msg::EvalResult::Builder out) {
  capnp::MallocMessageBuilder message;
  auto candidate = message.initRoot<msg::Candidate>();
  candidate.setId(input.id);
  candidate.setTask(input.task);
  candidate.setDevice(input.device == DeviceKind::cuda ? msg::Device::CUDA : msg::Device::CPU);
  candidate.setLanguage(input.device == DeviceKind::cuda ? msg::Language::CUDA : msg::Language::CPP);
  candidate.setSource(input.source);
  return impl_->evaluate(candidate.asReader(), out, input.best_known_speedup);
}

void EvaluationEngine::compile_ahead(msg::Candidate::Reader candidate) {
  if (candidate.hasCompiled()) {
    Status adoption = impl_->compile_pool->adopt(candidate.getSource(), candidate.getCompiled());
    impl_->adopted.insert_or_assign(candidate.getId().cStr(), std::move(adoption));
  }
  (void)impl_->compile_pool->submit(candidate.getSource());
}

compile::CompilePool& EvaluationEngine::compile_pool() { return *impl_->compile_pool; }
const kernels::TaskCatalog& EvaluationEngine::catalog() const { return impl_->catalog; }
const EngineOptions& EvaluationEngine::options() const { return impl_->options; }
pid_t EvaluationEngine::sandbox_pid() const { return impl_->last_candidate_pid; }

}  // namespace drk::evaluator
