# The protocol between an Evaluator and its sandbox processes. It is language-neutral on purpose:
# a Python sandbox worker (KernelBench-format problems, Triton candidates) will speak it too.
# Evolution rules: as in drk.capnp (new fields with new ordinals only).
#
# Transport: a pipe pair. Every message is a 4-byte little-endian length (in bytes, a multiple
# of 8, at most 1 MiB) followed by that many bytes: a Cap'n Proto message in flat (unpacked)
# form, segment table first. The Evaluator sends a SandboxRequest and waits for exactly one
# SandboxReply with the same id; the sandbox never speaks first.
#
# Buffers: tensors never travel in messages. They live in one shared memory region (a memfd the
# Evaluator creates and the sandbox inherits as file descriptor 5; request and reply pipes are
# descriptors 3 and 4). A request carries the region's current size; the sandbox maps it again
# when the size changed. A TensorView names a tensor by byte offset into the region.
@0xcad552739e058fee;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drk::msg");

struct TensorView {
  offset @0 :UInt64;            # byte offset into the shared region (a multiple of 64)
  shape @1 :List(Int64);        # contiguous, row-major
  dtype @2 :Int32;              # enum drk_dtype of kernels/abi/drk_kernel.h
}

# The tensors of one call of the candidate.
struct BufferSet {
  inputs @0 :List(TensorView);
  outputs @1 :List(TensorView);
}

# Load a compiled candidate (replacing the one loaded before).
struct LoadRequest {
  library @0 :Text;             # absolute path of the shared object; drk-sandbox --python: of the
                                # candidate's Python file
  maxThreads @1 :Int32;         # drk_context.max_threads, and the library table's threads
  python @2 :PythonLoad;        # drk-sandbox --python: how to construct the candidate's ModelNew
}

# A KernelBench-format candidate (actors/evaluator/python/python_candidate.h): ModelNew is
# constructed as the problem's Model was, and called with the problem's tensors in place and its
# plain values at their positions.
struct PythonLoad {
  displayName @0 :Text;         # how messages name the file ("model_new.py")
  initInputs @1 :Text;          # get_init_inputs() of the problem, a JSON list
  initSeed @2 :UInt64;          # torch.manual_seed before ModelNew(*initInputs)
  constants @3 :Text;           # forward's non-tensor arguments: a JSON list of [position, value]
  parameters @4 :Text;          # Model's parameters as python_runtime.h's parameter_summary(): the
                                # load fails, saying how, when ModelNew's differ
  extensions @5 :List(PythonExtension);  # what the file's load_inline calls return, built by the
                                # compile step (python/prebuilt_extensions.h); none: every call fails
  referenceSource @6 :Text;     # the problem file, whose Model the sandbox builds before the candidate
                                # runs, as the timing reference beside it (never judged)
}

# A load_inline extension built outside the sandbox: the call with this `name` gets this module.
struct PythonExtension {
  name @0 :Text;
  path @1 :Text;                # the module (a copy the sandbox may read)
}

# Call the loaded candidate `calls` times in a row; call i uses sets[i mod len(sets)].
# calls = 0 is an empty round trip (the Evaluator measures its own overhead with it).
struct RunRequest {
  sets @0 :List(BufferSet);
  calls @1 :UInt32;
  swapSeed @2 :UInt64;          # non-zero: two elements of every input swap places before each call (input_swaps.h)
  outputChecksum @3 :Bool;      # CPU: reply with the checksum of the last call's outputs as it returned
  timed @4 :Bool;               # the calls are timed: a Python candidate's answer is kept, not copied
                                # into the outputs (KernelBench times the forward call alone)
  reference @5 :Bool;           # Python: the calls are the problem's Model, built beside the candidate
                                # (PythonLoad.referenceSource) as its timing reference; outputs unwritten
}

# CUDA sandboxes (drk-sandbox-cuda) only; the CPU sandbox answers badRequest. On CUDA a run
# request copies the tensors of the sets it names from the region to device memory before the
# calls and back (outputs and inputs) after them, unless the request lends the Evaluator's own
# device memory (SandboxRequest.deviceRegion); a time request uses device memory as it is.
enum TimedSide { candidate @0; reference @1; }

# The task's reference (kernels/catalog), evaluated with LibTorch on the device: timed only,
# never trusted for correctness (the Evaluator computes that one itself).
struct ReferenceSpec {
  expression @0 :Text;
  inputNames @1 :List(Text);    # in the candidate's input order
  inputDtypes @2 :List(Int32);  # enum drk_dtype of each input: an FP8 input's scale follows it
}

# One timed call per entry of `sides`, in that order; the k-th call of a side uses
# sets[k mod len(sets)]. Before each call: the candidate's outputs are poisoned (keepOutputs),
# the persisting-L2 limit and the stream's access
# policy are reset, `flushL2` writes twice the L2 size, and the device is synchronised; the
# call is timed with CUDA events on its stream and the device synchronised again. With
# `holdLaunches`, the stream is held by a kernel of the harness while the call queues its work
# between the events and released after it returned (cuda/launch_hold.h), so the events time
# the device's work without the host's launch latency; those calls' event times are net of the
# event pair's own device cost, measured first in the request as empty held windows.
# The calls of `sides` run with CUPTI's kernel trace off: its concurrent-kernel mode instruments
# every kernel and slowed a many-block kernel by 8 % on the H200. The calls of `profiled` follow
# them, the same way but traced: they alone carry kernel records. The first launches after the
# trace is switched on are slower on the host (0.2 ms on the H200): with launch latency included
# the first profiled call of each side is no sample (the Evaluator starts with one of each).
struct TimeRequest {
  sets @0 :List(BufferSet);
  sides @1 :List(TimedSide);
  reference @2 :ReferenceSpec;
  flushL2 @3 :Bool = true;
  swapSeed @4 :UInt64;          # non-zero: as RunRequest.swapSeed, before each candidate call
  holdLaunches @5 :Bool;
  profiled @6 :List(TimedSide);
  # Before each candidate call its outputs are poisoned (NaN), so that no call starts from the
  # answer the set's last call left there; keepOutputs leaves them as they are (the Evaluator's
  # measure of work skipped when the answer is there: Evidence.answerReuseRatio).
  keepOutputs @7 :Bool;
}

struct KernelActivity {         # one CUPTI kernel record
  name @0 :Text;
  startNs @1 :UInt64;
  endNs @2 :UInt64;
  grid @3 :List(UInt32);
  block @4 :List(UInt32);
  registersPerThread @5 :UInt32;
  staticSharedBytes @6 :UInt32;
  dynamicSharedBytes @7 :UInt32;
  streamId @8 :UInt32;
}

struct TimedCall {
  side @0 :TimedSide;
  set @1 :UInt32;
  eventUs @2 :Float64;          # CUDA events around the call on its stream
  kernels @3 :List(KernelActivity);  # profiled calls: every kernel that ran during the call
  launchHidden @4 :Bool;        # held until the call returned: the events exclude launch latency
  profiled @5 :Bool;            # one of the request's `profiled` calls: traced, with its kernels
  eventFloorUs @6 :Float64;     # held calls: the empty held window's time, taken off eventUs
  endMarkerNs @7 :UInt64;       # profiled calls: when the call's stream passed the call's end (CUPTI's
                                # start of the harness's marker kernel queued after the end event); 0: unmarked
}

# Energy per call: each side called back to back (no L2 flush, sets rotating) for at least
# `minMs` while NVML's total-energy counter (mJ, which the driver updates only every few tens of
# ms) is read between groups of calls; the batch starts and ends at an update of the counter.
struct EnergyRequest {
  sets @0 :List(BufferSet);
  reference @1 :ReferenceSpec;
  minMs @2 :UInt32 = 200;       # per side
}

struct EnergySide {
  millijoulesPerCall @0 :Float64;
  calls @1 :UInt64;
  batchMs @2 :Float64;          # between the two counter updates
  averageWatts @3 :Float64;
  counterUpdates @4 :UInt32;    # changes of the counter seen during the batch
}

struct EnergyReading {
  available @0 :Bool;           # false: `reason` says why (no NVML, no matching device, ...)
  reason @1 :Text;              # also set when available: a batch too short to resolve the counter
  candidate @2 :EnergySide;
  reference @3 :EnergySide;
  resolved @4 :Bool;            # both batches saw at least kMinCounterUpdates counter updates
}

# One call of the candidate on sets[0], profiled with CUPTI's Range Profiler: one range per
# kernel, kernel replay (each kernel is replayed as many passes as the metrics need).
struct MetricsRequest {
  sets @0 :List(BufferSet);
}

struct KernelHardwareMetrics {
  name @0 :Text;                # the kernel's (mangled) name
  dramThroughputPct @1 :Float64;     # dram__throughput.avg.pct_of_peak_sustained_elapsed
  smThroughputPct @2 :Float64;       # sm__throughput.avg.pct_of_peak_sustained_elapsed
  l2HitRatePct @3 :Float64;          # lts__t_sector_hit_rate.pct
  achievedOccupancyPct @4 :Float64;  # sm__warps_active.avg.pct_of_peak_sustained_active
}

struct MetricsReading {
  available @0 :Bool;           # false: `reason` says why (no permission to the counters, ...)
  reason @1 :Text;
  kernels @2 :List(KernelHardwareMetrics);  # in launch order
}

struct DevicePeaks {
  name @0 :Text;
  l2CacheBytes @1 :UInt64;
  copyBytesPerS @2 :Float64;    # a device-memory copy kernel: bytes read + written per second
  fmaFlopsPerS @3 :Float64;     # an FP32 FMA kernel
}

struct SandboxRequest {
  id @0 :UInt64;
  regionBytes @1 :UInt64;       # size of the shared region now
  union {
    load @2 :LoadRequest;
    run @3 :RunRequest;
    time @4 :TimeRequest;       # CUDA only
    peaks @5 :Void;             # CUDA only: measure the device's peaks
    energy @6 :EnergyRequest;   # CUDA only: energy per call from NVML
    metrics @7 :MetricsRequest; # CUDA only: hardware metrics of one candidate call (CUPTI)
  }
  # CUDA only: the Evaluator's own device memory (a CUDA IPC memory handle, cudaIpcMemHandle_t's
  # 64 bytes) holding the tensors, `deviceRegionBytes` long. TensorView offsets then point into
  # it, nothing is copied to or from the shared region, and the Evaluator draws, poisons and
  # checks on the device. Empty: the sandbox's own mirror of the shared region, as above. The
  # sandbox opens a handle once and keeps it while requests repeat it.
  deviceRegion @8 :Data;
  deviceRegionBytes @9 :UInt64;
}

enum SandboxStatus {
  ok @0;
  loadFailed @1;                # dlopen failed, drk_kernel is missing, or the object was refused
                                # before dlopen (harnessSymbol); message says which
  returnedError @2;             # a call returned non-zero; candidateStatus holds it
  badRequest @3;                # the request does not fit the region or no candidate is loaded
  cudaError @4;                 # a CUDA error (illegal address, device-side assert, ...): the
                                # sandbox's context is dead and it exits after this reply
  memoryLimit @5;               # the candidate held more device memory than its limit
                                # (drk-sandbox-cuda --gpu-memory-limit-mb); the sandbox exits
                                # after this reply, which releases what the candidate kept
}

struct SandboxReply {
  id @0 :UInt64;
  status @1 :SandboxStatus;
  message @2 :Text;
  candidateStatus @3 :Int32;    # the last call's return value
  callsCompleted @4 :UInt32;    # calls that returned DRK_OK
  libraryCalls @5 :UInt64;      # library-table calls made during this request
  sandboxNs @6 :UInt64;         # the sandbox's own clock over the calls (evidence, never the timing)
  timedCalls @7 :List(TimedCall);  # answer to a time request
  peaks @8 :DevicePeaks;        # answer to a peaks request
  threadsLeftRunning @9 :UInt32;  # run requests: threads alive after the calls beyond those alive before
  deviceMemoryBytes @10 :UInt64;  # CUDA: the most device memory the loaded candidate held after a
                                  # call so far (its allocations and its workspace), as measured
                                  # with cudaMemGetInfo around each call; 0 when not measured
  energy @11 :EnergyReading;    # answer to an energy request
  metrics @12 :MetricsReading;  # answer to a metrics request
  mathModeChanged @13 :Text;    # the candidate's code left the thread's floating-point modes
                                # changed (put back since); "" when not (math_modes.h)
  harnessSymbol @14 :Text;      # load requests: the candidate was refused before dlopen because it
                                # would bind to this process outside the C/C++ and CUDA runtimes
                                # (status loadFailed): what it reaches ("imports
                                # at::set_num_threads(int) from libtorch_cpu.so.1.13"); "" when not
                                # (harness_imports.h)
  launchHoldNote @15 :Text;     # time requests with holdLaunches: why a call was not held
                                # (the hold cannot be built, or gave up); "" when all were
  outputChecksum @16 :UInt64;   # run requests with outputChecksum: output_checksum.h of the last
                                # call's outputs, taken as it returned
  failedCheck @17 :Text;        # run requests of drk-sandbox --python (status returnedError): the
                                # check the candidate's call failed ("output_aliases_input",
                                # "output_overlaps", "output_type", "harness_access",
                                # "harness_patched"), message says
                                # why; "" when the call failed otherwise (it raised, a wrong shape)
}

# The zygote (drk-sandbox --zygote, actors/evaluator/sandbox_zygote.h): a warm sandbox process
# that never loads a candidate. It forks one fresh sandbox per candidate, so that no candidate's
# code runs in a process that later runs or times another candidate. Transport: a SOCK_SEQPACKET
# socket pair (the zygote's descriptor 3), one flat message per datagram (at most 64 KiB), file
# descriptors as SCM_RIGHTS. The Evaluator sends ZygoteSpawn; the zygote answers each with
# `spawned` or `failed`, and reports every sandbox's end with `exited`.

# What confines a sandbox besides the syscall filter (docs/verification.md, "Sandbox limits").
struct SandboxLimits {
  cpuSeconds @0 :UInt64;          # RLIMIT_CPU
  memoryBytes @1 :UInt64;         # beyond what the zygote had mapped: RLIMIT_AS (when addressSpace) and
                                  # RLIMIT_DATA; 0: no limit
  addressSpace @2 :Bool;          # limit the address space too (not on CUDA, which reserves far more than it uses)
  maxOpenFiles @3 :UInt64;        # RLIMIT_NOFILE
  maxTasks @4 :UInt64;            # RLIMIT_NPROC of the sandbox's own user (threads count); 0: not set
  ownUser @5 :Bool;               # run as a user of its own, uid kSandboxUidBase + its pid (when the zygote is root)
  cpus @6 :List(UInt32);          # the CPUs it runs on (its threads inherit them; it cannot widen them); empty: any
}

# Descriptors: the request pipe's read end, the reply pipe's write end, the shared region.
struct ZygoteSpawn {
  id @0 :UInt64;
  workDirectory @1 :Text;         # the sandbox's working directory (empty, writable by it alone)
  maxThreads @2 :Int32;
  gpuMemoryLimitBytes @3 :UInt64;
  limits @4 :SandboxLimits;
}

struct ZygoteEvent {
  union {
    spawned @0 :ZygoteSpawned;    # descriptor: a pidfd of the new sandbox
    failed @1 :ZygoteFailed;
    exited @2 :ZygoteExited;
  }
}

struct ZygoteSpawned {
  id @0 :UInt64;
  pid @1 :Int32;
  uid @2 :UInt32;                 # the user it runs as
}

struct ZygoteFailed {
  id @0 :UInt64;
  message @1 :Text;
}

struct ZygoteExited {
  pid @0 :Int32;
  signal @1 :Int32;               # the signal that ended it, 0 if none
  exitCode @2 :Int32;
  leftovers @3 :UInt32;           # rounds of processes of its user still alive after it ended, killed by the zygote
  id @4 :UInt64;                  # the spawn request that made it
}
