// Static checks: scans a candidate's source (C++ or CUDA C++) for calls and constructs that reach
// outside the candidate ABI (kernels/abi/drk_kernel.h), and names each finding with a stable
// reason code, the line and the line's text. The Verifier turns failures into failed checks and
// warnings into verdict warnings (docs/verification.md lists every rule).
//
// Reason codes (severity):
//   static.process           process creation or control: fork, exec*, system, popen, posix_spawn,
//                            clone, ptrace, prctl, setrlimit (failure)
//   static.thread            threads: std::thread, std::jthread, std::async, pthread_create,
//                            #pragma omp (warning: CPU candidates may use up to ctx->max_threads
//                            threads joined before they return; the sandbox's thread count after
//                            every batch catches a thread left running)
//   static.timer             clocks and timers: clock_gettime, gettimeofday, rdtsc, std::chrono,
//                            clock(), time(), cudaEvent* (failure)
//   static.dynamic_loading   dlopen, dlsym, dlmopen, dlvsym (failure)
//   static.signal            signal, sigaction, sigprocmask, setitimer, alarm, kill, raise (failure)
//   static.file              fopen, open, openat, creat, freopen, file streams (failure)
//   static.network           socket, connect, accept, listen, getaddrinfo, ... (failure)
//   static.environment       getenv, setenv, environ, getrandom, std::random_device, and the paths
//                            /proc, /dev/urandom, /dev/random in string literals (failure)
//   static.syscall           syscall() (failure)
//   static.inline_asm        asm / __asm__ (failure)
//   static.stream            CUDA stream creation or attributes: cudaStreamCreate*,
//                            cudaStreamSetAttribute (failure: work belongs on ctx->stream)
//   static.device_setting    cudaSetDevice*, cudaDeviceSetLimit, cudaDeviceSetCacheConfig,
//                            cudaCtxResetPersistingL2Cache, cudaDeviceReset (failure)
//   static.library_handle    cuBLAS / cuBLASLt / cuDNN handles and modes (failure: the library
//                            is reached through ctx->lib only)
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

// Every finding, in source order (one per match).
std::vector<StaticFinding> scan_source(std::string_view source);

// "line 12: `pid_t child = fork();` (fork)", for verdict evidence.
std::string describe(const StaticFinding& finding);

}  // namespace drk::verifier
