// Static checks of a KernelBench-format Python candidate (a file that defines
// `class ModelNew(nn.Module)`): scans its source for the known reward hacks and names each finding
// with a stable check code, a severity, the line and the matched text. docs/verification.md
// ("Python static checks") lists every check and why it fails or warns.
//
// The scan knows Python's comments and string literals: a pattern in a comment, a docstring or an
// ordinary string is not code. The C++/CUDA sources a candidate hands to `load_inline`
// (`cpp_sources=` and `cuda_sources=`, given as literals or as names assigned literals) ARE code:
// they are scanned with C++'s comments and literals blanked, for their own patterns.
//
// Check codes (F: failure, W: warning):
//   python_fallback            F  the reference does the work: an except handler that returns or
//                                 calls a torch op, super().forward, the reference class `Model`
//   python_try_except          W  a try block without such a fallback
//   python_no_custom_kernel    F  cuda: no load_inline, no __global__ kernel or none launched;
//                                 triton: no @triton.jit kernel, no tl.* op or none launched;
//                                 cpp: no load_inline
//   python_torch_compute       W  torch compute ops or nn layers in a cuda/triton/cpp candidate
//   python_timing_patch        F  time.*, torch.cuda.Event*, torch.cuda.synchronize replaced
//   python_timer               F  clocks read: time.perf_counter(), timing events, std::chrono, ...;
//                                 a clock or counter register (%globaltimer, %clock, %pm0-7) in inline PTX
//   python_thread              F  threading, concurrent.futures, _thread; std::thread and OpenMP
//                                 in the C++ (a warning for the cpp backend)
//   python_process             F  subprocess, multiprocessing, os.fork, os.system; fork/exec in C++
//   python_lazy_tensor         F  Tensor subclasses, __torch_function__, __torch_dispatch__,
//                                 _make_subclass, dispatch modes
//   python_lazy_output         W  returns torch.empty*, or an expand / as_strided view
//   python_side_stream         W  streams besides the current one (torch.cuda.Stream, cudaStreamCreate)
//   python_stream_unjoined     F  a side stream in a source that joins nothing back
//   python_precision_downgrade W  half or bfloat16 arithmetic (.half(), torch.float16, __half)
//   python_precision_mode      F  TF32 or reduced-precision switches (allow_tf32,
//                                 set_float32_matmul_precision, cublasSetMathMode)
//   python_global_mode         F  process-wide settings: cudnn.benchmark / deterministic,
//                                 deterministic algorithms, thread count, default dtype, seeds
//   python_harness_access      F  what reaches the harness: inspect, frames, gc, sys.modules,
//                                 ctypes, importlib, __import__, globals(), open(), exec/eval,
//                                 dlopen in the C++
//   python_environment         W  os.environ, os.getenv (honest candidates set build variables)
//   python_monkeypatch         F  assignments to attributes of torch, nn, F or the reference
//                                 `Model`, setattr on them, the builtins module
//   python_cuda_graph          W  CUDA graphs (torch.cuda.CUDAGraph, cudaGraphLaunch): a replay of
//                                 stale inputs is left to the runtime's fresh-input checks
//
// The scan is one layer, not a proof: names built at run time (getattr with a computed string, an
// alias of a torch object) evade it; the sandbox's runtime checks are the other layer.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "messages/drk.capnp.h"

namespace drk::judging {

// What the candidate was asked to write: CUDA through load_inline, Triton, C++ through
// load_inline (a CPU candidate), or plain PyTorch.
enum class Backend { cuda, triton, cpp, pytorch };

std::string_view backend_name(Backend backend);

// "cuda", "triton", "cpp" or "pytorch"; anything else is Errc::invalid_argument naming the choices.
Result<Backend> parse_backend(std::string_view name);

// The backend as a Candidate carries it (Candidate.pythonBackend, messages/drk.capnp), and back.
msg::PythonBackend backend_message(Backend backend);
Backend backend_of(msg::PythonBackend backend);

enum class Severity { failure, warning };

struct PythonFinding {
  std::string code;  // e.g. "python_timing_patch"
  Severity severity = Severity::failure;
  int line = 0;          // 1-based; 0 when the finding is about something the file lacks
  std::string evidence;  // the matched text, at most 120 characters; "" when something is lacking
  std::string message;   // what it means, for a person
};

// Every finding, in source order; one per check code and line.
std::vector<PythonFinding> python_static_findings(std::string_view source, Backend backend);

}  // namespace drk::judging
