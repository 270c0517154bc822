#include "actors/evaluator/math_modes.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

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

DRK_TEST_CASE("LibTorch's settings that would slow the reference or widen library calls are seen and put back") {
  at::set_num_threads(1);
  const MathModes before = read_math_modes();
  at::set_num_threads(3);
  at::globalContext().setUserEnabledCuDNN(!before.library.cudnn_enabled);
  at::globalContext().setDeterministicAlgorithms(true, false);
  at::globalContext().setAllowTF32CuBLAS(!before.library.tf32_cublas);
  const MathModes after = read_math_modes();
  DRK_CHECK_FALSE(after == before);
  const std::string change = describe_math_mode_change(before, after);
  DRK_CHECK(change.find("LibTorch intra-op threads 3 (at::set_num_threads)") != std::string::npos);
  DRK_CHECK(change.find("LibTorch cuDNN disabled (at::Context::setUserEnabledCuDNN)") != std::string::npos);
  DRK_CHECK(change.find("deterministic algorithms on") != std::string::npos);
  DRK_CHECK(change.find("TF32 for float32 matmuls") != std::string::npos);
  restore_math_modes(before);
  DRK_CHECK(read_math_modes() == before);
  DRK_CHECK(at::get_num_threads() == 1);
  DRK_CHECK(at::globalContext().userEnabledCuDNN() == before.library.cudnn_enabled);
  DRK_CHECK(at::globalContext().allowTF32CuBLAS() == before.library.tf32_cublas);
}

DRK_TEST_CASE("a watch keeps a request's first change, puts the modes back, and accepts the harness's own") {
  at::set_num_threads(1);
  MathModeWatch watch;
  watch.begin_request();
  watch.check();
  DRK_CHECK(watch.change().empty());
  at::set_num_threads(2);  // the harness's own change, as a load makes
  watch.expect_current();
  watch.check();
  DRK_CHECK(watch.change().empty());
  std::fesetround(FE_UPWARD);  // a candidate's
  watch.check();
  const std::string first = watch.change();  // on x86 also "MXCSR rounding control set"
  DRK_CHECK(first.rfind("rounding upward (fesetround)", 0) == 0);
  DRK_CHECK(std::fegetround() == FE_TONEAREST);
  at::set_num_threads(5);  // a second change in the same request: the first is what is reported
  watch.check();
  DRK_CHECK(watch.change() == first);
  DRK_CHECK(at::get_num_threads() == 2);
  watch.begin_request();
  DRK_CHECK(watch.change().empty());
  at::set_num_threads(1);
}
