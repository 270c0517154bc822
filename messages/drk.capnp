# The messages of drkernel's application, kernel generation and training: what its actors say to
# each other. Each travels as the payload of a runtime Envelope (messages/envelope.capnp): its
# type id is the Cap'n Proto id of its struct, and the receiving program must have registered
# the type (runtime/transport/payload_types.h; training/domain_messages.h registers these), or
# the envelope is refused unread.
#
# Evolution rules (so that old and new builds keep talking):
#   - add fields and union members only with new, higher ordinals (@N); never renumber,
#     retype, rename the meaning of, or reuse an ordinal;
#   - a reader must accept a message whose new fields it does not know (Cap'n Proto does);
#   - a field that is no longer used stays in the schema, marked "obsolete" in its comment;
#   - defaults are part of the contract: choose them so that "absent" means "old sender";
#   - a struct's id (its name's place in this file) is its wire identity: renaming or moving a
#     struct gives it a new id, which old readers refuse, so give a moved struct its old id
#     explicitly (`struct X @0x... {`).
# Bytes from another process are untrusted: they are read with runtime/transport/codec.h, which
# applies traversal and nesting limits, a size cap and the schema check of the payload's type.
@0xcdf59aaaa855f21b;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drk::msg");

enum Device { cpu @0; cuda @1; }
# float8e4m3fn and float8e5m2 (8-bit floats, OCP FP8: 4 exponent bits and 3 mantissa bits without
# infinities, or 5 and 2) are the inputs of an FP8 variant, each followed by its float32 scale
# (docs/tasks.md, "FP8 variants").
enum DType { float32 @0; float16 @1; bfloat16 @2; float64 @3; int32 @4; int64 @5; float8e4m3fn @6; float8e5m2 @7; }
enum Language { cpp @0; cuda @1; python @2; }  # python: a KernelBench-format ModelNew file
# What a Python candidate was asked to write, which its static checks judge it against
# (judging/python_static_check.h): plain PyTorch (the default: an old sender's), CUDA or C++
# through load_inline, Triton.
enum PythonBackend { pytorch @0; cuda @1; triton @2; cpp @3; }

struct TensorSpec {
  name @0 :Text;
  shape @1 :List(Int64);
  dtype @2 :DType;
}

# A task as data: what the candidate receives and must produce (the reference stays with the
# Evaluator's task catalog; a task travels by name plus this description).
struct Task {
  name @0 :Text;
  family @1 :Text;              # elementwise | rowwise | gemm
  device @2 :Device;
  inputs @3 :List(TensorSpec);
  outputs @4 :List(TensorSpec);
  reference @5 :Text;           # the reference expression, for people and LLM prompts
  params @6 :List(Param);       # family parameters the embedded generator renders from
  flops @7 :Float64;
  minBytes @8 :Float64;
  shapeRange @9 :Text;          # the shapes evaluations draw beyond these, described ("" if none;
                                # docs/tasks.md, "Shape ranges")
}

struct Param { key @0 :Text; value @1 :Text; }

# One decision of the embedded policy: a knob of the scheduling space and the option taken.
struct Decision {
  knob @0 :Text;
  option @1 :UInt16;            # index into the knob's options (the last index is "keep")
  value @2 :Text;               # the option rendered, for people
  logprob @3 :Float32;          # log-probability of this option under the behaviour policy
}

struct Schedule {
  family @0 :Text;
  decisions @1 :List(Decision);
}

# Learner -> Generator: run one trajectory (several turns) of a task under a policy version.
struct RolloutRequest {
  step @0 :UInt32;
  policyVersion @1 :UInt32;
  trajectoryId @2 :Text;        # "s3/relu/2": step, task, sample index
  sampleIndex @3 :UInt32;
  turns @4 :UInt32;
  task @5 :Task;
}

# Generator -> Oracle: a candidate kernel to screen and evaluate.
struct Candidate {
  id @0 :Text;                  # "<trajectoryId>/t<turn>": unique, used for idempotence
  trajectoryId @1 :Text;
  turn @2 :UInt32;
  task @3 :Text;
  device @4 :Device;
  language @5 :Language;
  source @6 :Text;
  schedule @7 :Schedule;
  policyVersion @8 :UInt32;
  generator @9 :Text;           # where the Feedback goes
  step @10 :UInt32;
  compiled @11 :CompiledArtifact;  # optional: compiled ahead by the Generator (docs/gpu.md)
  pythonBackend @12 :PythonBackend;  # language python: what it was asked to write
}

# A candidate compiled where it was generated (experiment.compile_ahead), with the Evaluator's
# compiler, flags and cache key. The Evaluator uses `object` only when `key` is the key it
# computes for the candidate's source and `objectSha256` is the object's hash; otherwise it
# compiles the source as usual. In EvalResult.candidate the object is left out and `use` and
# `note` say what became of it.
struct CompiledArtifact {
  key @0 :Text;                 # the compile cache key: SHA-256 of source, command, compiler identity, ABI header
  command @1 :Text;             # compiler and flags, for people (the key covers them)
  object @2 :Data;              # the shared object; empty when withheld
  objectSha256 @3 :Text;        # of `object`: a corrupt or truncated object is refused
  compilerOutput @4 :Text;      # what the compiler printed (nvcc's resource report)
  compileMs @5 :Float64;        # the compile's wall time where it was built
  builtBy @6 :Text;             # the actor that compiled it
  use @7 :ArtifactUse;
  note @8 :Text;                # why it was withheld or ignored
  # Python candidates: the modules of their load_inline calls, built with them (docs/kernelbench.md).
  modules @9 :List(ShippedModule);
}

# A load_inline extension compiled ahead with its Python candidate. The Evaluator files it into
# its extension cache at `path` once `path` has the cache's shape and `sha256` checks; it is used
# only where the Evaluator's own key for a load_inline call names that path (same sources, flags,
# compilers and torch), else the Evaluator builds the call's module as usual.
struct ShippedModule {
  path @0 :Text;                # under the extension cache: ext/<key>/<name><EXT_SUFFIX>
  bytes @1 :Data;
  sha256 @2 :Text;
}

enum ArtifactUse {
  shipped @0;                   # as the Generator sends it
  used @1;                      # the Evaluator put it into its compile cache and did not compile
  ignored @2;                   # refused (see note): the Evaluator compiled the source
  withheld @3;                  # the Generator compiled it but did not ship it (too large, see note)
}

# Oracle -> Evaluator.
struct EvalRequest {
  candidate @0 :Candidate;
  attempt @1 :UInt32;           # 1 for the first dispatch; higher after an Evaluator died
  bestKnownSpeedup @2 :Float64; # the task's best verified speedup in this run so far (0: none); a
                                # result far beyond it is timed again (docs/verification.md)
}

struct TimingStats {
  medianUs @0 :Float64;
  p10Us @1 :Float64;
  p90Us @2 :Float64;
  cv @3 :Float64;               # coefficient of variation of the samples
  samples @4 :UInt32;
  callsPerSample @5 :UInt32;
}

# The candidate at one of the shapes its task declares it is timed at (shape_range.DEVICE.timed,
# docs/tasks.md "Shape ranges"), beside the task's own.
struct ShapeTiming {
  shapes @0 :Text;              # every input's shape, e.g. "x [64, 4096]"
  declined @1 :Bool;            # the candidate returned a non-zero status there: not timed
  candidateTiming @2 :TimingStats;
  referenceTiming @3 :TimingStats;
  speedup @4 :Float64;          # reference median / candidate median; 0 when declined
}

enum SandboxOutcome {
  ok @0;
  crashed @1;                   # killed by a signal or exited
  timedOut @2;                  # missed its deadline and was killed
  failedToLoad @3;              # the shared object did not load or lacks the entry point
  returnedError @4;             # the candidate returned a non-zero status
}

# What the Evaluator saw, as evidence for the Verifier. The Evaluator never judges.
struct Evidence {
  outputsLeftPoisoned @0 :Bool; # some output element still held the poison after a call
  inputsMutated @1 :Bool;       # an input differed from its pristine copy after a call
  nonFinite @2 :Bool;           # NaN or Inf in an output
  sandboxSignal @3 :Int32;      # the signal that killed the sandbox, 0 if none
  sandboxExitCode @4 :Int32;
  candidateStatus @5 :Int32;    # what the candidate's entry point returned
  wallCheckRatio @6 :Float64;   # parent-measured batch wall time / sandbox-reported, 0 if n/a
  cudaError @7 :Text;           # the CUDA error a call raised (illegal address, device-side assert), "" if none
  libraryCalls @8 :UInt64;      # library-table (ctx->lib) calls over all of the candidate's calls
  candidateCalls @9 :UInt64;    # drk_kernel calls that returned DRK_OK over the whole evaluation
  staleAfterFreshInputs @10 :Bool;  # correct in the trials, wrong in a batch after timing (fresh inputs, or a
                                    # few elements swapped) with the previous answers left in the outputs
  threadsLeftRunning @11 :UInt32;   # most threads still alive after a batch beyond those alive before it
  precisionChecked @12 :Bool;       # the first trial was also compared with a float64 reference
  precisionError @13 :Float64;      # max |candidate - float64 reference| / max |float64 reference|
  referencePrecisionError @14 :Float64;  # the same for the float32 reference (what float32 arithmetic gives)
  gpuMemoryBytes @15 :UInt64;       # CUDA: the most device memory the candidate held after a call (docs/gpu.md)
  gpuMemoryLimitExceeded @16 :Bool; # CUDA: gpuMemoryBytes went over eval.gpu_memory_limit_mb; outcome crashed
  secondShapeChecked @17 :Bool;     # one more trial ran at the task's second shapes (docs/tasks.md)
  secondShapeStatus @18 :Int32;     # what drk_kernel returned there; non-zero: it declined those shapes
  secondShapeWrong @19 :Text;       # the first mismatch at the second shapes ("" if none): hard-coded shapes
  sanitizerRan @20 :Bool;           # the out-of-bounds check's call ran: CUDA under compute-sanitizer memcheck,
                                    # CPU with every tensor between guard pages (docs/verification.md)
  sanitizerErrors @21 :Text;        # its first error lines ("" if none): out-of-bounds or misaligned accesses
  sanitizerNote @22 :Text;          # why it did not run or finish ("" if it did)
  rooflineRemeasured @23 :Bool;     # CUDA: beyond the device's measured peak, so the timing ran a second time
  mathModeChanged @24 :Text;        # the candidate left the floating-point modes changed: which ("" if not)
  uninitialisedRead @25 :Text;      # the first trial rerun on its inputs with the outputs pre-filled with a finite
                                    # poison instead of NaN missed the reference: its first mismatch ("" if none)
  rerunDiffers @26 :UInt64;         # elements that differed bit for bit between the first trial and that rerun,
                                    # both within tolerance: nondeterminism (a warning, e.g. float atomics)
  replyTampered @27 :Text;          # the sandbox's reply pipe carried a frame that is not its answer to the
                                    # request (malformed, or another request's id): why ("" if none)
  initcheckErrors @28 :Text;        # CUDA: compute-sanitizer initcheck's first error, a read of device memory
                                    # never written ("" if none; docs/verification.md)
  firstSpeedup @29 :Float64;        # the first timing's speedup when the timing ran a second time (0 if not)
  bestKnownSpeedup @30 :Float64;    # the task's best known speedup that the first timing was far beyond
                                    # (0 if it was not), so the timing ran a second time
  harnessSymbol @31 :Text;          # the sandbox refused the candidate's object before loading it: what it
                                    # would bind to outside the C/C++ and CUDA runtimes ("imports
                                    # at::set_num_threads(int) from libtorch_cpu.so.1.13"; "" if nothing)
  # Work after return and beyond the thread limit (docs/verification.md):
  outputsChangedAfterReturn @32 :Text;  # an output differed a few ms after the reply from what it held at the
                                        # reply: work still running after drk_kernel returned ("" if not)
  cpuPerWall @33 :Float64;          # CPU: the sandbox's CPU time (all its threads) / the wall time between the
                                    # two readings of it (the round trip and the wait after it for the sandbox to
                                    # sleep), per timed batch, the median over them; beyond maxThreads, work ran
                                    # on threads it may not use
  cpuWhileIdleMs @34 :Float64;      # CPU time the sandbox used between its replies and the next requests
  idleMs @35 :Float64;              # the wall time of those intervals
  maxThreads @36 :Int32;            # drk_context.max_threads of the evaluation
  answerReuseRatio @37 :Float64;    # CPU: a batch's time when each call's output holds another input's answer
                                    # over its time when it holds its own; far above 1: work skipped when the
                                    # output already holds the answer (0: not measured)
  idleCpuShare @38 :Float64;        # CPU: the median over the idle intervals of 2 ms or more of the sandbox's CPU
                                    # time / the interval (cores busy while no call ran)
  firstCandidateUs @39 :Float64;    # the candidate's median of the first timing when the timing ran a second time
                                    # (0 if it did not): its own time, which a slow reference does not move
  pythonCheck @40 :FailedCheck;     # drk-sandbox --python refused what the candidate did, as a check:
                                    # its code (output_aliases_input, output_overlaps, output_type,
                                    # harness_access, harness_patched) and why; unset when nothing
                                    # was refused so
  # The task's shape range (docs/tasks.md, "Shape ranges"), after every trial passed at its shapes:
  rangeShapesTried @41 :UInt32;     # shapes drawn from the range (secretly, per evaluation) and tried
  rangeShapesHandled @42 :UInt32;   # of them, answered correctly
  rangeShapesDeclined @43 :UInt32;  # of them, declined with a non-zero status (DRK_E_UNSUPPORTED_SHAPE)
  rangeShapeWrong @44 :Text;        # the first wrong answer at a drawn or timed shape it accepted
                                    # ("" if none): the result is not correct
}

# nvcc's resource report (--resource-usage) for one kernel compiled from the candidate's source.
struct KernelResources {
  name @0 :Text;                # mangled entry name, as CUPTI reports it
  registers @1 :UInt32;         # per thread
  spillStoreBytes @2 :UInt32;
  spillLoadBytes @3 :UInt32;
  stackFrameBytes @4 :UInt32;
  sharedBytes @5 :UInt32;       # static shared memory per block
  constantBytes @6 :UInt32;     # cmem[0]
}

# The kernels CUPTI saw in the timed calls of one side, per (name, grid, block).
struct GpuKernel {
  name @0 :Text;                # as CUPTI reports it (mangled for C++ kernels)
  own @1 :Bool;                 # compiled from the candidate's source (not cuBLAS, at::native, ...)
  launches @2 :UInt32;          # over all timed calls of that side
  medianUs @3 :Float64;         # GPU time of one launch
  totalUs @4 :Float64;
  grid @5 :List(UInt32);        # x, y, z
  block @6 :List(UInt32);
  registersPerThread @7 :UInt32;
  staticSharedBytes @8 :UInt32;
  dynamicSharedBytes @9 :UInt32;
}

# What the CUDA evaluation measured beyond the timings (docs/gpu.md, "The CUDA evaluation path").
struct GpuProfile {
  device @0 :Text;              # e.g. "NVIDIA H200"
  kernels @1 :List(GpuKernel);  # the candidate's profiled calls
  referenceKernels @2 :List(GpuKernel);
  coverage @3 :Float64;         # GPU time of own kernels / GPU time of all kernels in the candidate's calls
  ownKernelUs @4 :Float64;      # median per call
  allKernelUs @5 :Float64;      # median per call
  cuptiSpanUs @6 :Float64;      # median per call: first kernel start to last kernel end (CUPTI)
  eventCuptiDisagreement @7 :Float64;  # |profiledEventUs - cuptiSpanUs| / profiledEventUs (same calls)
  disagreementThreshold @8 :Float64;
  timingDisagrees @9 :Bool;     # eventCuptiDisagreement > disagreementThreshold
  achievedBytesPerS @10 :Float64;  # estimate_min_bytes / candidate median
  achievedFlopsPerS @11 :Float64;  # estimate_flops / candidate median
  peakBytesPerS @12 :Float64;   # measured in the sandbox: a device-memory copy kernel
  peakFlopsPerS @13 :Float64;   # measured in the sandbox: an FP32 FMA kernel
  l2FlushBytes @14 :UInt64;     # written before every timed call (2x the L2 cache)
  shapes @15 :Device;           # whose shapes were evaluated (cuda: KernelBench's; cpu: scaled)
  energy @16 :GpuEnergy;        # energy per call from NVML (eval.energy_min_ms > 0)
  hardwareMetrics @17 :GpuHardwareMetrics;  # on request (eval.hardware_metrics, drk eval --metrics)
  launchLatencyHidden @18 :Bool;  # both sides timed behind the launch hold (eval.launch_latency: hidden)
  launchLatencyNote @19 :Text;  # when not hidden: why ("eval.launch_latency is included", or the
                                # call that could not be held: the evaluation was timed again)
  profiledCalls @20 :UInt32;    # candidate calls traced by CUPTI: kernels, coverage, span and the
                                # agreement come from them; the timed calls run untraced
  profiledEventUs @21 :Float64; # median event time of those calls (CUPTI's instrumentation included)
  eventFloorUs @22 :Float64;    # launch latency hidden: the event pair's own cost, taken off each call
  unjoinedWork @23 :Text;       # the candidate's kernels that ended after its call's stream had passed
                                # the call's end (profiled calls, held, marked): empty when none did
}

# Hardware-counter metrics of the kernels of one candidate call, from CUPTI's Range Profiler with
# kernel replay (docs/gpu.md); never a failure: unavailable says why.
struct GpuHardwareMetrics {
  available @0 :Bool;
  reason @1 :Text;
  kernels @2 :List(GpuKernelMetrics);
}

struct GpuKernelMetrics {
  name @0 :Text;
  own @1 :Bool;                      # compiled from the candidate's source
  dramThroughputPct @2 :Float64;     # % of peak sustained DRAM throughput over the kernel
  smThroughputPct @3 :Float64;       # % of peak sustained SM throughput
  l2HitRatePct @4 :Float64;          # L2 sector hit rate
  achievedOccupancyPct @5 :Float64;  # active warps / maximum warps per SM
}

# Energy per call, candidate and reference, from NVML's total-energy counter over a batch of
# back-to-back calls per side (docs/gpu.md). Never a failure: unavailable says why.
struct GpuEnergy {
  available @0 :Bool;           # false: no NVML, no matching device, not requested, ...
  reason @1 :Text;              # why not available; or, when available, why not resolved
  resolved @2 :Bool;            # both batches long enough for NVML's slowly updated counter
  candidateMillijoulesPerCall @3 :Float64;
  referenceMillijoulesPerCall @4 :Float64;
  candidateCalls @5 :UInt64;
  referenceCalls @6 :UInt64;
  candidateBatchMs @7 :Float64;
  referenceBatchMs @8 :Float64;
  candidateWatts @9 :Float64;   # average board power over the candidate's batch
  referenceWatts @10 :Float64;
  counterUpdates @11 :UInt32;   # the fewer of the two batches' counter updates
}

# Evaluator -> Verifier.
struct EvalResult {
  candidate @0 :Candidate;
  evaluator @1 :Text;
  compiled @2 :Bool;
  compileLog @3 :Text;          # the compiler's message when it failed
  compileCached @4 :Bool;
  compileMs @5 :Float64;
  sandbox @6 :SandboxOutcome;
  correct @7 :Bool;
  trials @8 :UInt32;
  trialsPassed @9 :UInt32;
  maxAbsError @10 :Float64;
  maxRelError @11 :Float64;
  errorText @12 :Text;          # first mismatch, or what went wrong, for people and the policy
  candidateTiming @13 :TimingStats;
  referenceTiming @14 :TimingStats;
  speedup @15 :Float64;         # reference median / candidate median; 0 when not correct
  evidence @16 :Evidence;
  evalMs @17 :Float64;          # wall time of the whole evaluation
  resources @18 :List(KernelResources);  # CUDA candidates: nvcc's report per kernel
  gpu @19 :GpuProfile;          # CUDA evaluations only
  # Where the time of evalMs went (drk bench eval shows them):
  compileWaitMs @20 :Float64;   # waiting for the compile (less than compileMs when compiled ahead)
  loadMs @21 :Float64;          # loading the object into the sandbox (starting one if needed)
  correctnessMs @22 :Float64;   # the trials: drawing inputs, the calls, the reference, comparing
  timingMs @23 :Float64;        # timing candidate and reference, and the last check
  # What the reference ran on (kernels/catalog/reference_build.h): "LibTorch 1.13.0, OpenBLAS
  # 0.3.21 (OpenMP) in ..., 1 thread"; on CUDA the device's LibTorch and cuBLAS.
  referenceBuild @24 :Text;
  referenceBlasUnoptimised @25 :Bool;  # the CPU reference ran on netlib's reference BLAS (eval.allow_reference_blas)
  # What the kernel was judged on: the archive tags it with these, and `drk archive best` and the
  # report group by them (a float16 kernel is no rival of a float32 one, an sm_90 one of an sm_80 one).
  device @26 :Device;
  architecture @27 :Text;       # "sm_90" on CUDA; the CPU's machine ("x86_64", "aarch64")
  dtype @28 :DType;             # the task's floating dtype (float32 when it has no floating tensors;
                                # an FP8 variant's is its inputs' FP8 format)
  # The shapes the task declares it is timed at beyond its own (docs/tasks.md, "Shape ranges"), in
  # their order; empty when it declares none or the candidate was not correct at its own.
  timedShapes @29 :List(ShapeTiming);
  # The geometric mean of the speedups at the task's shape and at each timed shape the candidate
  # handled (what the Oracle rewards when timedShapes is not empty); 0 when not correct.
  shapesSpeedup @30 :Float64;
  # Non-zero when the comparisons used a wider atol than the task's: the float32 reference itself
  # missed the float64 answer by more than the task's tolerance (PyTorch's TF32 convolutions do),
  # so atol became twice the reference's own largest error (docs/verification.md, "An imprecise
  # reference").
  widenedAtol @31 :Float64;
}

struct FailedCheck {
  code @0 :Text;                # e.g. "outputs_unwritten", "inputs_mutated", "sandbox_crashed"
  evidence @1 :Text;
}

# Verifier -> Oracle.
struct Verdict {
  result @0 :EvalResult;
  honest @1 :Bool;              # no check failed
  failedChecks @2 :List(FailedCheck);
  warnings @3 :List(FailedCheck);  # reported, not failed: thread use, library-table use (docs/verification.md)
}

# Oracle -> Generator: the reward and everything the next turn learns from.
struct Feedback {
  candidateId @0 :Text;
  reward @1 :Float64;
  verdict @2 :Verdict;
  summary @3 :Text;             # one paragraph for the policy or an LLM
  screened @4 :Bool;            # not evaluated: reward is the cost model's prediction (docs/cost-model.md); verdict holds no measurement
}

# Oracle -> Archivist: the full record of one scored candidate.
struct Scored {
  verdict @0 :Verdict;
  reward @1 :Float64;
  summary @2 :Text;             # the Feedback summary its Generator was given
  screened @3 :Bool;            # as Feedback.screened: the reward is predicted, not measured
}

# One message of a conversation with a language model, as OpenAI's chat API has it.
struct ChatMessage {
  role @0 :Text;                # system | user | assistant
  content @1 :Text;
}

struct Turn {
  candidateId @0 :Text;
  family @1 :Text;
  observation @2 :List(Float32); # the policy's input at this turn
  actions @3 :List(UInt16);      # one option per knob
  actionLogprobs @4 :List(Float32);
  reward @5 :Float64;
  correct @6 :Bool;
  honest @7 :Bool;
  speedup @8 :Float64;
  coverage @9 :Float64;          # share of GPU time in the candidate's own kernels (1 on CPU)
  # Set by the Learner once the step is trained, on the copy it sends to the Archivist
  # (docs/archive.md); a Generator leaves them at their defaults.
  advantage @10 :Float64;
  return @11 :Float64;
  trained @12 :Bool;             # the turn's decisions entered the policy loss
  rejectedBy @13 :Text;          # why not: no_advantage | malformed | stale | prs | mrs_band | mrs_veto | rollback;
                                 # "" when trained
  learnerLogprobs @14 :List(Float32);  # per decision under the Learner's policy before the update
  keptDecisions @15 :List(Bool); # per decision: the policy chose "keep" (the previous turn's option)
  screened @16 :Bool;            # not measured: reward and correct are the Oracle's cost-model prediction
  # A language model's turn (generator.backend: openai); empty for the embedded policy. The turn's
  # prompt is the previous turn's prompt followed by promptAdded (turn 1: the system message and
  # the task), so that a trajectory carries each message once (docs/archive.md).
  promptAdded @17 :List(ChatMessage);  # messages added to the conversation since the previous turn's request
  answer @18 :Text;              # the model's whole answer ("" when the server gave none)
  model @19 :Text;               # the served model asked (generator.model); "" for the embedded policy
}

# Generator -> Learner: a finished trajectory.
struct Trajectory {
  id @0 :Text;
  step @1 :UInt32;
  task @2 :Text;
  sampleIndex @3 :UInt32;
  policyVersion @4 :UInt32;
  turns @5 :List(Turn);
}

enum AdvantageEstimator { trloo @0; grpo @1; }

# Learner -> Oracle: compute advantages for the trajectories of one step.
struct AdvantageRequest {
  step @0 :UInt32;
  estimator @1 :AdvantageEstimator;
  trajectories @2 :List(Trajectory);
}

struct TurnAdvantage {
  trajectoryId @0 :Text;
  turn @1 :UInt32;
  return @2 :Float64;
  advantage @3 :Float64;
}

# Oracle -> Learner.
struct Advantages {
  step @0 :UInt32;
  items @1 :List(TurnAdvantage);
}

# Learner -> Generators and Archivist: a new policy version.
struct PolicyWeights {
  version @0 :UInt32;
  step @1 :UInt32;
  parameters @2 :Data;          # LibTorch-serialised state of the policy network
}

# Learner -> head and Archivist: what one training step did.
struct StepReport {
  step @0 :UInt32;
  policyVersion @1 :UInt32;
  meanReward @2 :Float64;
  bestSpeedup @3 :Float64;
  correctFraction @4 :Float64;
  trajectories @5 :UInt32;
  loss @6 :Float64;
  seconds @7 :Float64;
  finished @8 :Bool;            # the last step of the experiment
  clipFraction @9 :Float64;
  approxKl @10 :Float64;
  rolledBack @11 :Bool;         # this step returned the policy to an earlier version (docs/topology.md)
  rolledBackTo @12 :UInt32;     # that version, when rolledBack
  diagnostic @13 :Bool;         # the Learner is in diagnostic mode after a rollback
  prsRejected @14 :UInt32;      # turns kept out of the update by PRS (coverage)
  mrsRejected @15 :UInt32;      # turns kept out by MRS (ratio band or token veto)
  mrsVetoed @16 :UInt32;        # of those, by the token veto
  ppoEpochs @17 :UInt32;        # epochs run: fewer than asked when the KL bound stopped them
  stage @18 :Text;              # the training stage of this step; "" without training_stages
  measured @19 :UInt32;         # turns the Evaluators measured; correctFraction is over these
  screened @20 :UInt32;         # turns answered by the Oracle's cost model instead (docs/cost-model.md)
  staleRejected @21 :UInt32;    # turns kept out because their policy was more than
                                # experiment.max_staleness versions behind
}

# Evaluator -> Oracle: ready for work (on start, after each result, after an Oracle restart).
struct EvaluatorReady {
  incarnation @0 :UInt64;       # changes when the Evaluator process restarts
  slots @1 :UInt32;
}
