// The candidate of drk-sandbox --python: a KernelBench-format file whose `ModelNew` is constructed
// in this sandbox exactly as KernelBench does (torch seeded with the run's init seed, then
// ModelNew(*init_inputs), without autograd) and called through an entry point with drk_kernel's
// signature (python_candidate_kernel()), so that the sandbox's run, time and profile requests work
// on it unchanged.
//
// A call wraps the input descriptors as tensors in place (the shared region, or device memory),
// inserts the problem's non-tensor arguments at their positions, calls the model, and checks what
// it returned: one plain dense torch.Tensor (python_tensors.h), of the output's shape, dtype and
// device, sharing no memory with an input (an input, or a view of one, returned as the answer).
// It then copies that answer into the output descriptor, except while timing
// (set_keep_python_outputs(true)): KernelBench times the forward call, whose answer is a tensor the
// model allocates, not a copy into the harness's buffer. The answer is kept until the next call,
// so that freeing it is not in the timed call either.
//
// The problem's Model is built beside the candidate as the timing reference
// (python_reference_kernel()), so that both sides are timed in one process, on one CPU or stream:
// the timing reference may run beside the candidate, correctness is judged in the Evaluator. On
// CUDA every call runs with torch's current stream set to the call's drk_context.stream (the
// harness's timed stream).
//
// Thread-safety: the sandbox's main thread, which holds the interpreter's lock. Errors: load
// returns the reason (the file raises, has no ModelNew, its constructor raises, its parameters are
// not Model's: KernelBench's weights are the same only when both build the same layers in the same
// order after the same seed); a call that fails
// returns DRK_E_INTERNAL and python_candidate_error() says why. A call refused for what the
// candidate did also names the check it failed (python_candidate_failed_check()): its answer is an
// input or a view of one (output_aliases_input), has elements that share memory
// (output_overlaps), is not exactly a dense torch.Tensor (output_type), its forward reached
// the harness's frames or objects (harness_access, harness_access_watch.h), or, after a call that
// is not timed, one of the harness's functions is no longer the one it was before the file ran
// (harness_patched, harness_functions.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/evaluator/python/prebuilt_extensions.h"
#include "base/result.h"
#include "drk_kernel.h"

namespace drk::evaluator {

struct PythonCandidateSpec {
  std::string path;              // the candidate's file
  std::string display_name;      // how messages name it ("model_new.py")
  std::string init_inputs_json;  // get_init_inputs() of the problem, a JSON list
  uint64_t init_seed = 0;        // torch.manual_seed before ModelNew(...)
  // The problem's non-tensor arguments of forward: a JSON list of [position, value].
  std::string constants_json = "[]";
  bool on_cuda = false;          // the model is moved to the CUDA device, as the inputs are there
  // Model's parameters (parameter_summary() of python_runtime.h); ModelNew's must be the same in
  // number, order, shapes and values, or the load fails saying which differs. "": not checked.
  std::string reference_parameters_json;
  // The problem file, whose Model is built (the same way, before any of the candidate's code
  // runs) as the timing reference beside the candidate. "": none.
  std::string reference_source;
  // What the file's load_inline calls return (prebuilt_extensions.h), installed before it runs.
  std::vector<PrebuiltModule> extensions;
  // The Triton warm-up's sandbox: Python may start processes (process_refusal.h refuses otherwise).
  bool processes_allowed = false;
};

Status load_python_candidate(const PythonCandidateSpec& spec);
drk_kernel_fn python_candidate_kernel();
// The problem's Model with drk_kernel's signature (it keeps its answer and writes no output);
// nullptr when none was loaded.
drk_kernel_fn python_reference_kernel();
const std::string& python_candidate_error();
const std::string& python_candidate_failed_check();  // "" when the last failed call failed no check
void set_keep_python_outputs(bool keep);
// CUDA sandboxes, before the syscall filter: torch's CUDA state (context, allocator) started, so
// that a candidate's first CUDA call opens nothing, and torch.utils.cpp_extension imported (which
// starts CUDA, so no zygote may). unsupported with Python's message.
Status start_python_cuda();

}  // namespace drk::evaluator
