#include "actors/evaluator/math_modes.h"

#include <cfenv>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "tests/doctest_drk.h"

using namespace drk::evaluator;

DRK_TEST_CASE("a changed rounding mode is seen, named and put back") {
  const MathModes before = read_math_modes();
  std::fesetround(FE_TOWARDZERO);
  const MathModes after = read_math_modes();
  DRK_CHECK_FALSE(after == before);
  DRK_CHECK(describe_math_mode_change(before, after).find("rounding toward zero") != std::string::npos);
  restore_math_modes(before);
  DRK_CHECK(read_math_modes() == before);
  DRK_CHECK(std::fegetround() == FE_TONEAREST);
}

#if defined(__x86_64__)
DRK_TEST_CASE("flush-to-zero and denormals-are-zero are seen and cleared") {
  const MathModes before = read_math_modes();
  _mm_setcsr(_mm_getcsr() | 0x8040);
  const MathModes after = read_math_modes();
  const std::string change = describe_math_mode_change(before, after);
  DRK_CHECK(change.find("flush-to-zero set") != std::string::npos);
  DRK_CHECK(change.find("denormals-are-zero set") != std::string::npos);
  restore_math_modes(before);
  DRK_CHECK((_mm_getcsr() & 0x8040) == 0);
  volatile float tiny = 1e-40f;  // a denormal survives again
  DRK_CHECK(tiny * 1.0f != 0.0f);
}
#endif

DRK_TEST_CASE("unchanged modes describe no change") {
  const MathModes modes = read_math_modes();
  DRK_CHECK(describe_math_mode_change(modes, modes).empty());
}
