// Static checks: scans a candidate's source (C++ or CUDA C++) for calls and constructs that reach
// outside the candidate ABI (kernels/abi/drk_kernel.h), and names each finding with a stable
// reason code, the line and the line's text. The Verifier turns failures into failed checks and
// warnings into verdict warnings (docs/verification.md lists every rule).
//
// Reason codes (severity):
//   static.process           process creation or control: fork, exec*, system, popen, posix_spawn,
//                            clone, ptrace, prctl, setrlimit (failure)
//   static.thread            threads: std::thread, std::jthread, std::async, pthread_create,
//                            #pragma omp (CPU: warning: candidates may use up to ctx->max_threads
//                            threads joined before they return; the sandbox's thread count after
//                            every batch catches a thread left running. CUDA: failure: the work
//                            belongs on ctx->stream, and a host thread could queue it after the
//                            call, where the CUDA sandbox counts no threads)
//   static.timer             clocks and timers: clock_gettime, gettimeofday, rdtsc, std::chrono,
//                            clock(), time(), CUDA events that time or wait on the host
//                            (cudaEventCreate, cudaEventCreateWithFlags without
//                            cudaEventDisableTiming, cudaEventElapsedTime, cudaEventSynchronize,
//                            cudaEventQuery, ...) (failure). cudaEventRecord and cudaEventDestroy
//                            are allowed: with cudaStreamWaitEvent they join streams
//   static.dynamic_loading   dlopen, dlsym, dlmopen, dlvsym (failure)
//   static.signal            signal, sigaction, sigprocmask, setitimer, alarm, kill, raise (failure)
//   static.file              fopen, open, openat, creat, freopen, file streams (failure)
//   static.network           socket, connect, accept, listen, getaddrinfo, ... (failure)
//   static.environment       getenv, setenv, environ, getrandom, std::random_device, and the paths
//                            /proc, /dev/urandom, /dev/random in string literals (failure)
//   static.syscall           syscall() (failure)
//   static.inline_asm        asm / __asm__ (failure). In CUDA sources, asm whose template is PTX of
//                            data movement, arithmetic, tensor-core MMA (mma, wgmma, ldmatrix),
//                            asynchronous copies and barriers is allowed; an opcode outside that
//                            list (host x86 asm among them) or a clock or performance-counter
//                            register (%clock, %clock64, %globaltimer, %pm0-7) is the failure
//   static.stream            CUDA stream attributes, graphs and host callbacks:
//                            cudaStreamSetAttribute, cudaGraphLaunch, cudaLaunchHostFunc,
//                            cudaStreamAddCallback (failure: work belongs on ctx->stream)
//   static.side_stream       cudaStreamCreate*, cudaStreamPerThread (warning: streams of its own are
//                            allowed when joined to ctx->stream before the call returns; the CUPTI
//                            span check, work_after_return, catches work left running)
//   static.stream_unjoined   a side stream above in a source that joins nothing: no
//                            cudaStreamWaitEvent, cudaStreamSynchronize or cudaDeviceSynchronize
//                            call (failure)
//   static.device_setting    cudaSetDevice*, cudaDeviceSetLimit, cudaDeviceSetCacheConfig,
//                            cudaCtxResetPersistingL2Cache, cudaDeviceReset (failure)
//   static.library_handle    cuBLAS / cuBLASLt / cuDNN handles and modes (failure: the library
//                            is reached through ctx->lib only)
//   static.channel           raw descriptor and memory-mapping calls (write, read, dup2, close, fcntl,
//                            ioctl, mmap, mprotect, pipe, splice, ...) and ctx->harness (failure:
//                            the sandbox's reply pipe and its state are the result channel; a
//                            candidate's only results are its outputs and its status)
//   static.global_constructor __attribute__((constructor|destructor)), [[gnu::constructor]]
//                            (failure: code that runs outside drk_kernel)
//
// Comments and the contents of string and character literals are blanked before matching, so a
// comment that mentions fork() or a message that prints "dlopen" triggers nothing; only the path
// rules of static.environment look inside string literals. Member calls (x.open(), p->signal())
// do not match. The scan is one layer of defence, not a proof: a macro or a function pointer built
// at run time evades it, which the sandbox's limits and the evaluation's evidence cover.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace drk::verifier {

enum class Severity { failure, warning };

struct StaticFinding {
  std::string code;     // e.g. "static.process"
  Severity severity = Severity::failure;
  int line = 0;         // 1-based
  std::string name;     // what matched, e.g. "fork"
  std::string snippet;  // the source line, trimmed, at most 120 characters
};

// The source with comments and the contents of string/character literals replaced by spaces;
// newlines and length are kept, so offsets and line numbers stay those of the original.
std::string blank_comments_and_literals(std::string_view source);

// The language a source is scanned as: CUDA C++ turns static.thread into a failure.
enum class Dialect { cpp, cuda };

// Every finding, in source order (one per match).
std::vector<StaticFinding> scan_source(std::string_view source, Dialect dialect = Dialect::cpp);

// "line 12: `pid_t child = fork();` (fork)", for verdict evidence.
std::string describe(const StaticFinding& finding);

}  // namespace drk::verifier
