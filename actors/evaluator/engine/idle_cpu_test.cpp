#include "actors/evaluator/engine/idle_cpu.h"

#include <capnp/message.h>

#include "tests/doctest_drk.h"

using namespace drk::evaluator;

DRK_TEST_CASE("idle CPU time sums every interval; its share is the median of the long ones") {
  IdleCpu idle;
  idle.add(1e6, 4e6);    // a quarter
  idle.add(3e6, 4e6);    // three quarters
  idle.add(1e6, 2e6);    // a half
  idle.add(0.9e6, 1e6);  // too short for the share: a tick of the batch before could be in it
  capnp::MallocMessageBuilder message;
  auto evidence = message.initRoot<drk::msg::Evidence>();
  idle.record(evidence);
  DRK_CHECK(evidence.getCpuWhileIdleMs() == doctest::Approx(5.9));
  DRK_CHECK(evidence.getIdleMs() == doctest::Approx(11));
  DRK_CHECK(evidence.getIdleCpuShare() == doctest::Approx(0.5));
}

DRK_TEST_CASE("a new candidate's idle count starts from nothing, with no share from short intervals") {
  IdleCpu idle;
  idle.add(4e6, 4e6);
  idle.reset();
  idle.add(1e5, 1e6);
  capnp::MallocMessageBuilder message;
  auto evidence = message.initRoot<drk::msg::Evidence>();
  evidence.setIdleCpuShare(-1);
  idle.record(evidence);
  DRK_CHECK(evidence.getCpuWhileIdleMs() == doctest::Approx(0.1));
  DRK_CHECK(evidence.getIdleMs() == doctest::Approx(1));
  DRK_CHECK(evidence.getIdleCpuShare() == -1);
}
