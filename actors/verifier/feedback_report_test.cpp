// Feedback reports: three levels for an honest result, every failed check with its evidence for a
// rejected one, and a line that parses back into its groups.
#include "judging/feedback_report.h"

#include <capnp/message.h>

#include <functional>

#include "actors/verifier/verify.h"
#include "tests/doctest_drk.h"

namespace {

std::string report_for(const std::function<void(drk::msg::EvalResult::Builder)>& fill, double reward = 0.75) {
  capnp::MallocMessageBuilder result_message;
  auto result = result_message.initRoot<drk::msg::EvalResult>();
  result.setCompiled(true);
  result.setCorrect(true);
  result.setTrials(5);
  result.setTrialsPassed(5);
  result.initCandidate().setTask("relu");
  fill(result);
  capnp::MallocMessageBuilder verdict_message;
  auto verdict = verdict_message.initRoot<drk::msg::Verdict>();
  drk::verifier::verify(result.asReader(), verdict);
  return drk::judging::feedback_report(verdict.asReader(), reward);
}

}  // namespace

DRK_TEST_CASE("an honest CPU result reports micro, function and application levels") {
  auto report = report_for([](auto r) {
    r.getCandidateTiming().setMedianUs(12.5);
    r.getReferenceTiming().setMedianUs(25.0);
    r.setSpeedup(2.0);
    r.setMaxAbsError(1e-7);
    auto decisions = r.getCandidate().initSchedule().initDecisions(2);
    decisions[0].setKnob("vector_width");
    decisions[0].setValue("8");
    decisions[1].setKnob("threads");
    decisions[1].setValue("2");
  });
  auto groups = drk::judging::parse_feedback_report(report);
  DRK_INFO(report);
  DRK_CHECK(groups["status"] == "correct");
  DRK_CHECK(groups["micro"] == "vector_width=8 threads=2");
  DRK_CHECK(groups["function"] == "time_us=12.5 speedup=2.00 coverage=1.00 roofline=n/a");
  DRK_CHECK(groups["application"] == "task=relu reference_us=25 speedup=2.00 trials=5/5 max_abs_err=1e-07 max_rel_err=0");
  DRK_CHECK(groups["reward"] == "0.750");
  DRK_CHECK(groups.count("warnings") == 0);
}

DRK_TEST_CASE("where the task has a shape range, the application level says how many drawn shapes were handled") {
  auto report = report_for([](auto r) {
    r.setSpeedup(1.5);
    r.getEvidence().setRangeShapesTried(4);
    r.getEvidence().setRangeShapesHandled(3);
    r.getEvidence().setRangeShapesDeclined(1);
  });
  auto groups = drk::judging::parse_feedback_report(report);
  DRK_INFO(report);
  DRK_CHECK(groups["application"].find(" range_shapes=3/4 declined=1") != std::string::npos);
  DRK_CHECK(drk::judging::parse_feedback_report(report_for([](auto) {}))["application"].find("range_shapes") ==
            std::string::npos);
}

DRK_TEST_CASE("an honest CUDA result reports registers, spills, occupancy and the roofline") {
  auto report = report_for([](auto r) {
    r.getCandidate().setDevice(drk::msg::Device::CUDA);
    auto resources = r.initResources(1);
    resources[0].setName("_Z4reluPKfPfl");
    resources[0].setRegisters(32);
    resources[0].setSpillStoreBytes(8);
    auto gpu = r.initGpu();
    auto kernels = gpu.initKernels(1);
    kernels[0].setName("_Z4reluPKfPfl");
    kernels[0].setOwn(true);
    kernels[0].setTotalUs(10);
    auto block = kernels[0].initBlock(3);
    block.set(0, 256);
    block.set(1, 1);
    block.set(2, 1);
    kernels[0].setRegistersPerThread(32);
    gpu.setCoverage(1.0);
    gpu.setOwnKernelUs(10);
    gpu.setAllKernelUs(10);
    gpu.setPeakBytesPerS(4e12);
    gpu.setAchievedBytesPerS(3e12);
    gpu.setPeakFlopsPerS(6e13);
    gpu.setAchievedFlopsPerS(1e12);
  });
  auto groups = drk::judging::parse_feedback_report(report);
  DRK_INFO(report);
  // 256 threads and 32 registers: 8 blocks of 8 warps fill the 64 warps of an SM.
  DRK_CHECK(groups["micro"] == "regs=32 spills=8 occupancy=1.00");
  DRK_CHECK(groups["function"].find("coverage=1.00 roofline=0.75(memory)") != std::string::npos);
}

DRK_TEST_CASE("a rejected result names each failed check with its evidence") {
  auto report = report_for([](auto r) {
    r.getEvidence().setSecondShapeWrong("the second-shape trial (x [259, 4099]); output y[256, 0] was never written");
    r.getEvidence().setInputsMutated(true);
  }, 0.0);
  auto groups = drk::judging::parse_feedback_report(report);
  DRK_INFO(report);
  DRK_CHECK(groups["status"] == "rejected");
  DRK_CHECK(groups["failed"].find("[inputs_mutated] an input differed") != std::string::npos);
  DRK_CHECK(groups["failed"].find("[hardcoded_shape] the second-shape trial (x [259, 4099]), output y[256, 0]") !=
            std::string::npos);
  DRK_CHECK(groups["reward"] == "0.000");
  DRK_CHECK(groups.count("micro") == 0);
}

DRK_TEST_CASE("a candidate refused for binding to the harness is named with what it imports") {
  auto report = report_for([](auto r) {
    r.setCorrect(false);
    r.setSandbox(drk::msg::SandboxOutcome::FAILED_TO_LOAD);
    r.getEvidence().setHarnessSymbol("imports at::set_num_threads(int) from libtorch_cpu.so.1.13");
  }, 0.0);
  auto groups = drk::judging::parse_feedback_report(report);
  DRK_INFO(report);
  DRK_CHECK(groups["status"] == "rejected");
  DRK_CHECK(groups["failed"].find("[harness_symbol] imports at::set_num_threads(int) from libtorch_cpu.so.1.13") !=
            std::string::npos);
  DRK_CHECK(groups["failed"].find("[failed_to_load]") == std::string::npos);
}

DRK_TEST_CASE("incorrect and uncompiled results say why, quoted") {
  auto incorrect = drk::judging::parse_feedback_report(report_for([](auto r) {
    r.setCorrect(false);
    r.setTrialsPassed(0);
    r.setErrorText("trial 1: output y[0, 1] is 3 but the reference is \"2\"; max abs error 1");
  }));
  DRK_CHECK(incorrect["status"] == "incorrect");
  DRK_CHECK(incorrect["application"].find("trials=0/5") != std::string::npos);
  DRK_CHECK(incorrect["application"].find("first_mismatch=\"trial 1: output y[0, 1] is 3 but the reference is '2', "
                                           "max abs error 1\"") != std::string::npos);
  auto uncompiled = drk::judging::parse_feedback_report(report_for([](auto r) {
    r.setCompiled(false);
    r.setCompileLog("k.cpp:3: error: expected ';'");
  }));
  DRK_CHECK(uncompiled["status"] == "did_not_compile");
  DRK_CHECK(uncompiled["compile_log"] == "\"k.cpp:3: error: expected ','\"");
}
