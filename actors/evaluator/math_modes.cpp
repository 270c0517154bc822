#include "actors/evaluator/math_modes.h"

#include <cfenv>

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

}  // namespace

MathModes read_math_modes() {
  MathModes modes;
  modes.rounding = std::fegetround();
#ifdef DRK_HAVE_MXCSR
  modes.mxcsr = _mm_getcsr() & (kFlushToZero | kDenormalsAreZero | kRoundingControl);
#endif
  return modes;
}

void restore_math_modes(const MathModes& modes) {
  std::fesetround(modes.rounding);
#ifdef DRK_HAVE_MXCSR
  const uint32_t kept = _mm_getcsr() & ~(kFlushToZero | kDenormalsAreZero | kRoundingControl);
  _mm_setcsr(kept | modes.mxcsr);
#endif
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
  return text;
}

}  // namespace drk::evaluator
