#include "actors/evaluator/math_modes.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

#include <cfenv>
#include <functional>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define DRK_HAVE_MXCSR 1
#endif

namespace drk::evaluator {
namespace {

constexpr uint32_t kFlushToZero = 0x8000;
constexpr uint32_t kDenormalsAreZero = 0x0040;
constexpr uint32_t kRoundingControl = 0x6000;

std::string rounding_name(int rounding) {
  switch (rounding) {
    case FE_TONEAREST: return "to nearest";
    case FE_DOWNWARD: return "downward";
    case FE_UPWARD: return "upward";
    case FE_TOWARDZERO: return "toward zero";
    default: return "mode " + std::to_string(rounding);
  }
}

// LibTorch 2.9 and later refuse (c10::Error) to read a legacy TF32 flag that disagrees with the
// newer per-backend precision setting: a candidate set one of them, which is TF32 switched on.
bool tf32_cublas(const at::Context& context) {
  try {
    return context.allowTF32CuBLAS();
  } catch (const c10::Error&) {
    return true;
  }
}

bool tf32_cudnn(const at::Context& context) {
  try {
    return context.allowTF32CuDNN();
  } catch (const c10::Error&) {
    return true;
  }
}

LibraryModes read_library_modes() {
  const at::Context& context = at::globalContext();
  LibraryModes modes;
  modes.intra_op_threads = at::get_num_threads();
  modes.cudnn_enabled = context.userEnabledCuDNN();
  modes.cudnn_benchmark = context.benchmarkCuDNN();
  modes.cudnn_deterministic = context.deterministicCuDNN();
  modes.deterministic_algorithms = context.deterministicAlgorithms();
  modes.deterministic_warn_only = context.deterministicAlgorithmsWarnOnly();
  modes.tf32_cublas = tf32_cublas(context);
  modes.tf32_cudnn = tf32_cudnn(context);
#if TORCH_VERSION_MAJOR >= 2
  modes.sdp_flash = context.userEnabledFlashSDP();
  modes.sdp_memory_efficient = context.userEnabledMemEfficientSDP();
  modes.sdp_math = context.userEnabledMathSDP();
#endif
  return modes;
}

// Only what changed is written back: at::set_num_threads starts a new pool when called.
void restore_library_modes(const LibraryModes& modes) {
  const LibraryModes now = read_library_modes();
  if (now == modes) return;
  at::Context& context = at::globalContext();
  if (now.intra_op_threads != modes.intra_op_threads) at::set_num_threads(modes.intra_op_threads);
  context.setUserEnabledCuDNN(modes.cudnn_enabled);
  context.setBenchmarkCuDNN(modes.cudnn_benchmark);
  context.setDeterministicCuDNN(modes.cudnn_deterministic);
  context.setDeterministicAlgorithms(modes.deterministic_algorithms, modes.deterministic_warn_only);
  context.setAllowTF32CuBLAS(modes.tf32_cublas);
  context.setAllowTF32CuDNN(modes.tf32_cudnn);
#if TORCH_VERSION_MAJOR >= 2
  context.setSDPUseFlash(modes.sdp_flash);
  context.setSDPUseMemEfficient(modes.sdp_memory_efficient);
  context.setSDPUseMath(modes.sdp_math);
#endif
}

void describe_library_change(const LibraryModes& before, const LibraryModes& after,
                             const std::function<void(const std::string&)>& add) {
  if (before.intra_op_threads != after.intra_op_threads)
    add("LibTorch intra-op threads " + std::to_string(after.intra_op_threads) + " (at::set_num_threads)");
  auto flag = [&](bool was, bool is, const char* what, const char* on, const char* off, const char* setter) {
    if (was != is) add(std::string("LibTorch ") + what + " " + (is ? on : off) + " (at::Context::" + setter + ")");
  };
  flag(before.cudnn_enabled, after.cudnn_enabled, "cuDNN", "enabled", "disabled", "setUserEnabledCuDNN");
  flag(before.cudnn_benchmark, after.cudnn_benchmark, "cuDNN benchmark mode", "on", "off", "setBenchmarkCuDNN");
  flag(before.cudnn_deterministic, after.cudnn_deterministic, "deterministic cuDNN", "on", "off",
       "setDeterministicCuDNN");
  flag(before.deterministic_algorithms, after.deterministic_algorithms, "deterministic algorithms", "on", "off",
       "setDeterministicAlgorithms");
  flag(before.deterministic_warn_only, after.deterministic_warn_only, "deterministic warn-only", "on", "off",
       "setDeterministicAlgorithms");
  flag(before.tf32_cublas, after.tf32_cublas, "TF32 for float32 matmuls", "on", "off", "setAllowTF32CuBLAS");
  flag(before.tf32_cudnn, after.tf32_cudnn, "TF32 for float32 convolutions", "on", "off", "setAllowTF32CuDNN");
  flag(before.sdp_flash, after.sdp_flash, "flash attention", "enabled", "disabled", "setSDPUseFlash");
  flag(before.sdp_memory_efficient, after.sdp_memory_efficient, "memory-efficient attention", "enabled", "disabled",
       "setSDPUseMemEfficient");
  flag(before.sdp_math, after.sdp_math, "math attention", "enabled", "disabled", "setSDPUseMath");
}

}  // namespace

MathModes read_math_modes() {
  MathModes modes;
  modes.rounding = std::fegetround();
#ifdef DRK_HAVE_MXCSR
  modes.mxcsr = _mm_getcsr() & (kFlushToZero | kDenormalsAreZero | kRoundingControl);
#endif
  modes.library = read_library_modes();
  return modes;
}

void restore_math_modes(const MathModes& modes) {
  std::fesetround(modes.rounding);
#ifdef DRK_HAVE_MXCSR
  const uint32_t kept = _mm_getcsr() & ~(kFlushToZero | kDenormalsAreZero | kRoundingControl);
  _mm_setcsr(kept | modes.mxcsr);
#endif
  restore_library_modes(modes.library);
}

std::string describe_math_mode_change(const MathModes& before, const MathModes& after) {
  std::string text;
  auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
  if (before.rounding != after.rounding) add("rounding " + rounding_name(after.rounding) + " (fesetround)");
  auto bit = [&](uint32_t mask, const char* name) {
    if ((before.mxcsr & mask) != (after.mxcsr & mask))
      add(std::string("MXCSR ") + name + ((after.mxcsr & mask) ? " set" : " cleared"));
  };
  bit(kFlushToZero, "flush-to-zero");
  bit(kDenormalsAreZero, "denormals-are-zero");
  bit(kRoundingControl, "rounding control");
  describe_library_change(before.library, after.library, add);
  return text;
}

void MathModeWatch::begin_request() {
  change_.clear();
  expected_ = read_math_modes();
}

void MathModeWatch::expect_current() { expected_ = read_math_modes(); }

void MathModeWatch::check() {
  const MathModes now = read_math_modes();
  if (now == expected_) return;
  if (change_.empty()) change_ = describe_math_mode_change(expected_, now);
  restore_math_modes(expected_);
}

}  // namespace drk::evaluator
