// The process-wide modes a candidate could change to run faster, to round differently than
// float32 arithmetic does, or to slow the reference down:
// - the calling thread's floating-point environment: the rounding mode (<fenv.h>) and, on x86,
//   MXCSR's flush-to-zero and denormals-are-zero bits and its own rounding field;
// - LibTorch's global settings in the sandbox, whose library calls (ctx->lib) and, on CUDA, whose
//   reference run in the same process: the intra-op thread count (more threads for the
//   candidate's library calls than ctx->max_threads), cuDNN on/benchmark/deterministic and
//   deterministic algorithms (a slower reference convolution), TF32 for float32 matmuls and
//   convolutions (arithmetic narrower than float32, the reference's too: no device is needed to
//   switch it on, so the CPU sandbox sees it as well), and, with LibTorch 2, the
//   scaled-dot-product-attention backends (a reference that falls back to the math path).
// The sandbox reads them around every request that runs candidate code (loading included:
// static initialisers) and, on CUDA, after every timed candidate call, before the reference runs
// again; it puts the harness's back when they changed, and the change is evidence
// (math_mode_changed). A candidate that changes and restores them within one call is not seen.
//
// Thread-safety: the floating-point modes are per thread and these read and write the calling
// thread's; LibTorch's settings are process-wide: call from the sandbox's serving thread only.
#pragma once

#include <cstdint>
#include <string>

namespace drk::evaluator {

struct LibraryModes {
  int intra_op_threads = 0;  // at::get_num_threads()
  bool cudnn_enabled = true;
  bool cudnn_benchmark = false;
  bool cudnn_deterministic = false;
  bool deterministic_algorithms = false;
  bool deterministic_warn_only = false;
  bool sdp_flash = true;  // LibTorch 2 only; true elsewhere
  bool sdp_memory_efficient = true;
  bool sdp_math = true;
  bool tf32_cublas = false;  // float32 matmuls on TF32 (allow_tf32, set_float32_matmul_precision)
  bool tf32_cudnn = true;    // float32 convolutions on TF32 (torch.backends.cudnn.allow_tf32)

  bool operator==(const LibraryModes&) const = default;
};

struct MathModes {
  int rounding = 0;    // fegetround()
  uint32_t mxcsr = 0;  // x86: MXCSR's FTZ, DAZ and rounding-control bits; 0 elsewhere
  LibraryModes library;

  bool operator==(const MathModes&) const = default;
};

MathModes read_math_modes();
void restore_math_modes(const MathModes& modes);

// The harness's modes for one request and the first change candidate code made to them.
class MathModeWatch {
 public:
  // Before a request: the modes now are the harness's, and no change has been seen.
  void begin_request();
  // After the harness changed a mode of its own (a load's thread count): the modes now are its.
  void expect_current();
  // After candidate code ran: a change from the harness's modes is named (the request's first
  // change is kept) and undone.
  void check();
  // The change seen since the request began; "" when none.
  const std::string& change() const { return change_; }

 private:
  MathModes expected_;
  std::string change_;
};

// "MXCSR flush-to-zero set, denormals-are-zero set, rounding toward zero, LibTorch cuDNN
// disabled (at::Context::setUserEnabledCuDNN)", naming each change from `before` to `after`.
std::string describe_math_mode_change(const MathModes& before, const MathModes& after);

}  // namespace drk::evaluator
