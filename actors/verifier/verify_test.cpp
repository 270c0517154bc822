#include "actors/verifier/verify.h"

#include <capnp/message.h>

#include <functional>

#include <string>
#include <vector>

#include "tests/doctest_drk.h"

namespace {

struct FailedCheck {
  std::string code, evidence;
};

std::vector<FailedCheck> failed_checks(const std::function<void(drk::msg::EvalResult::Builder)>& fill) {
  capnp::MallocMessageBuilder result_message;
  auto result = result_message.initRoot<drk::msg::EvalResult>();
  result.setCompiled(true);
  result.setCorrect(true);
  fill(result);
  capnp::MallocMessageBuilder verdict_message;
  auto verdict = verdict_message.initRoot<drk::msg::Verdict>();
  drk::verifier::verify(result.asReader(), verdict);
  std::vector<FailedCheck> checks;
  for (auto check : verdict.getFailedChecks()) checks.push_back({check.getCode().cStr(), check.getEvidence().cStr()});
  DRK_CHECK(verdict.getHonest() == checks.empty());
  DRK_CHECK(verdict.getResult().getCompiled() == result.getCompiled());
  return checks;
}

std::vector<std::string> failed_codes(const std::function<void(drk::msg::EvalResult::Builder)>& fill) {
  std::vector<std::string> codes;
  for (const auto& check : failed_checks(fill)) codes.push_back(check.code);
  return codes;
}

}  // namespace

DRK_TEST_CASE("an honest result fails no check") {
  DRK_CHECK(failed_codes([](auto) {}).empty());
}

DRK_TEST_CASE("an incorrect or uncompiled result is not dishonest") {
  DRK_CHECK(failed_codes([](auto r) { r.setCorrect(false); r.getEvidence().setNonFinite(true); }).empty());
  DRK_CHECK(failed_codes([](auto r) { r.setCompiled(false); }).empty());
}

DRK_TEST_CASE("each kind of evidence names its check") {
  using drk::msg::SandboxOutcome;
  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setOutputsLeftPoisoned(true); }) ==
            std::vector<std::string>{"outputs_unwritten"});
  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setInputsMutated(true); }) ==
            std::vector<std::string>{"inputs_mutated"});
  DRK_CHECK(failed_codes([](auto r) {
              r.setSandbox(SandboxOutcome::CRASHED);
              r.getEvidence().setSandboxSignal(11);
            }) == std::vector<std::string>{"sandbox_crashed"});
  DRK_CHECK(failed_codes([](auto r) { r.setSandbox(SandboxOutcome::TIMED_OUT); }) ==
            std::vector<std::string>{"sandbox_timeout"});
  DRK_CHECK(failed_codes([](auto r) { r.setSandbox(SandboxOutcome::RETURNED_ERROR); }) ==
            std::vector<std::string>{"candidate_error"});
  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setWallCheckRatio(5.0); }) ==
            std::vector<std::string>{"timer_mismatch"});
  // A loaded machine stretches the harness's clock a little: that is noise, not a lie.
  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setWallCheckRatio(1.8); }).empty());
}

DRK_TEST_CASE("several failures are all listed") {
  DRK_CHECK(failed_codes([](auto r) {
              r.getEvidence().setOutputsLeftPoisoned(true);
              r.getEvidence().setInputsMutated(true);
            }).size() == 2);
}

namespace {

struct Judged {
  std::vector<std::string> failed;
  std::vector<std::string> warned;
  std::string first_evidence;
};

Judged judge(const std::string& source, const std::function<void(drk::msg::EvalResult::Builder)>& fill) {
  capnp::MallocMessageBuilder result_message;
  auto result = result_message.initRoot<drk::msg::EvalResult>();
  result.setCompiled(true);
  result.setCorrect(true);
  result.initCandidate().setSource(source);
  fill(result);
  capnp::MallocMessageBuilder verdict_message;
  auto verdict = verdict_message.initRoot<drk::msg::Verdict>();
  drk::verifier::verify(result.asReader(), verdict);
  Judged judged;
  for (auto check : verdict.getFailedChecks()) judged.failed.emplace_back(check.getCode().cStr());
  for (auto check : verdict.getWarnings()) judged.warned.emplace_back(check.getCode().cStr());
  if (verdict.getFailedChecks().size() > 0) judged.first_evidence = verdict.getFailedChecks()[0].getEvidence().cStr();
  DRK_CHECK(verdict.getHonest() == judged.failed.empty());
  return judged;
}

}  // namespace

DRK_TEST_CASE("stale results and threads left running are failed checks") {
  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setStaleAfterFreshInputs(true); }) ==
            std::vector<std::string>{"results_cached"});
  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setThreadsLeftRunning(1); }) ==
            std::vector<std::string>{"threads_left_running"});
}

DRK_TEST_CASE("work on threads beyond max_threads, after return, or skipped when the answer is there fails") {
  auto measured = [](double cpu_per_wall, int max_threads) {
    return failed_codes([=](auto r) {
      r.getEvidence().setCpuPerWall(cpu_per_wall);
      r.getEvidence().setMaxThreads(max_threads);
    });
  };
  DRK_CHECK(measured(1.9, 1) == std::vector<std::string>{"threads_beyond_limit"});
  DRK_CHECK(measured(0.98, 1).empty());
  // Two threads where one may work, their start-up eating much of the gain (1.34-1.40 on 2 cores).
  DRK_CHECK(measured(1.25, 1) == std::vector<std::string>{"threads_beyond_limit"});
  DRK_CHECK(measured(3.9, 4).empty());
  DRK_CHECK(measured(7.5, 4) == std::vector<std::string>{"threads_beyond_limit"});
  // CUDA sandboxes run the runtime's threads and the reference: not judged by CPU time.
  DRK_CHECK(failed_codes([](auto r) {
              r.getCandidate().setDevice(drk::msg::Device::CUDA);
              r.getEvidence().setCpuPerWall(3.0);
              r.getEvidence().setMaxThreads(1);
            }).empty());

  auto idle = [](double cpu_ms, double idle_ms, int max_threads) {
    return failed_codes([=](auto r) {
      r.getEvidence().setCpuWhileIdleMs(cpu_ms);
      r.getEvidence().setIdleMs(idle_ms);
      r.getEvidence().setIdleCpuShare(cpu_ms / idle_ms);
      r.getEvidence().setMaxThreads(max_threads);
    });
  };
  DRK_CHECK(idle(790.0, 800.0, 1) == std::vector<std::string>{"work_after_return"});
  DRK_CHECK(idle(0.3, 800.0, 1).empty());
  DRK_CHECK(idle(4.0, 5.0, 1).empty());  // too little to tell
  // A library pool of max_threads - 1 workers may spin after its last region: up to that many cores.
  DRK_CHECK(idle(700.0, 800.0, 2).empty());
  DRK_CHECK(idle(1500.0, 800.0, 2) == std::vector<std::string>{"work_after_return"});
  DRK_CHECK(failed_codes([](auto r) {
              r.getEvidence().setOutputsChangedAfterReturn("512 of 1048576 elements of output y changed");
            }) == std::vector<std::string>{"work_after_return"});

  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setAnswerReuseRatio(40.0); }) ==
            std::vector<std::string>{"results_cached"});
  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setAnswerReuseRatio(1.4); }).empty());
}

DRK_TEST_CASE("forbidden calls in the source fail with their line as evidence") {
  auto judged = judge("int f() {\n  return fork();\n}\n", [](auto) {});
  DRK_CHECK(judged.failed == std::vector<std::string>{"static.process"});
  DRK_CHECK(judged.first_evidence.find("line 2: `return fork();`") != std::string::npos);
  // Several findings of one rule make one failed check.
  DRK_CHECK(judge("void g() { fork(); vfork(); system(\"x\"); popen(a, b); }", [](auto) {}).failed.size() == 1);
}

DRK_TEST_CASE("thread use and library use are warnings, not failures") {
  auto threads = judge("void g() { std::thread t(work); t.join(); }", [](auto) {});
  DRK_CHECK(threads.failed.empty());
  DRK_CHECK(threads.warned == std::vector<std::string>{"static.thread"});
  auto library = judge("", [](auto r) {
    r.getEvidence().setLibraryCalls(40);
    r.getEvidence().setCandidateCalls(40);
  });
  DRK_CHECK(library.failed.empty());
  DRK_CHECK(library.warned == std::vector<std::string>{"library.used"});
}

DRK_TEST_CASE("a CUDA candidate whose own kernels did none of the work is a decoy") {
  auto decoy = [](double own_us) {
    return judge("", [own_us](auto r) {
      r.initResources(1)[0].setName("_Z6unusedPf");
      auto gpu = r.initGpu();
      gpu.setAllKernelUs(10.0);
      gpu.setOwnKernelUs(own_us);
      gpu.setCoverage(own_us / 10.0);
    });
  };
  DRK_CHECK(decoy(0.0).failed == std::vector<std::string>{"decoy"});
  DRK_CHECK(decoy(10.0).failed.empty());
  DRK_CHECK(decoy(4.0).warned == std::vector<std::string>{"library.used"});
}

DRK_TEST_CASE("an error beyond the float32 budget against float64 is a precision downgrade") {
  auto precision = [](double candidate, double reference) {
    return failed_codes([=](auto r) {
      r.getEvidence().setPrecisionChecked(true);
      r.getEvidence().setPrecisionError(candidate);
      r.getEvidence().setReferencePrecisionError(reference);
    });
  };
  // bfloat16-like arithmetic on an exact task (ReLU: the float32 reference is exact).
  DRK_CHECK(precision(1.0 / 256, 0.0) == std::vector<std::string>{"precision_downgrade"});
  // Another float32 summation order: a few times the reference's own error.
  DRK_CHECK(precision(8e-6, 1e-6).empty());
  DRK_CHECK(precision(1e-6, 0.0).empty());
  DRK_CHECK(precision(1e-3, 1e-6) == std::vector<std::string>{"precision_downgrade"});
}

DRK_TEST_CASE("wrong at the second shapes is a hard-coded shape; declining them is a warning") {
  auto wrong = judge("", [](auto r) {
    r.setCorrect(false);
    r.getEvidence().setSecondShapeChecked(true);
    r.getEvidence().setSecondShapeWrong("the second-shape trial (x [259, 4099]): output y[256, 0] still holds the poison");
  });
  DRK_CHECK(wrong.failed == std::vector<std::string>{"hardcoded_shape"});
  DRK_CHECK(wrong.first_evidence.find("y[256, 0] still holds the poison") != std::string::npos);
  auto declined = judge("", [](auto r) {
    r.getEvidence().setSecondShapeChecked(true);
    r.getEvidence().setSecondShapeStatus(1);
  });
  DRK_CHECK(declined.failed.empty());
  DRK_CHECK(declined.warned == std::vector<std::string>{"shape.declined"});
  DRK_CHECK(judge("", [](auto r) { r.getEvidence().setSecondShapeChecked(true); }).warned.empty());
}

DRK_TEST_CASE("wrong at a shape of the task's range is a hard-coded shape; declining some is neither") {
  auto wrong = judge("", [](auto r) {
    r.setCorrect(false);
    r.getEvidence().setRangeShapesTried(2);
    r.getEvidence().setRangeShapesHandled(1);
    r.getEvidence().setRangeShapeWrong("shape 2 of 4 drawn from the range (x [17, 1000]): output y[0, 512] is 0");
  });
  DRK_CHECK(wrong.failed == std::vector<std::string>{"hardcoded_shape"});
  DRK_CHECK(wrong.first_evidence.find("x [17, 1000]") != std::string::npos);
  auto declined = judge("", [](auto r) {
    r.getEvidence().setRangeShapesTried(4);
    r.getEvidence().setRangeShapesDeclined(4);
  });
  DRK_CHECK(declined.failed.empty());
}

DRK_TEST_CASE("CUDA kernels that outlast the timed call are work after return") {
  auto timed = [](double event_us, double span_us) {
    return failed_codes([=](auto r) {
      r.getCandidateTiming().setMedianUs(event_us);
      auto gpu = r.initGpu();
      gpu.setProfiledEventUs(event_us);
      gpu.setCuptiSpanUs(span_us);
    });
  };
  DRK_CHECK(timed(3.0, 400.0) == std::vector<std::string>{"work_after_return"});
  // Events bracket the launch too: honest calls take longer than their kernels' span.
  DRK_CHECK(timed(410.0, 400.0).empty());
  // Clock noise on tiny kernels is not evidence.
  DRK_CHECK(timed(1.0, 1.5).empty());
}

DRK_TEST_CASE("a kernel that ended after the call's stream passed the call's end is work after return, however short") {
  const auto failed = failed_checks([](auto r) {
    r.getCandidateTiming().setMedianUs(20.0);
    auto gpu = r.initGpu();
    gpu.setProfiledEventUs(20.0);
    gpu.setCuptiSpanUs(3.0);
    gpu.setUnjoinedWork("swish_kernel ended 2.10 us after the call's stream had passed the call's end (5 of 5 marked calls)");
  });
  DRK_REQUIRE(failed.size() == 1);
  DRK_CHECK(failed[0].code == "work_after_return");
  DRK_CHECK(failed[0].evidence.find("swish_kernel ended 2.10 us") == 0);
}

DRK_TEST_CASE("memcheck's errors are out of bounds; a sanitizer that could not run is only a warning") {
  DRK_CHECK(failed_codes([](auto r) {
              r.getEvidence().setSanitizerRan(true);
              r.getEvidence().setSanitizerErrors("Invalid __global__ read of size 4 bytes at relu+0x90");
            }) == std::vector<std::string>{"out_of_bounds"});
  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setSanitizerRan(true); }).empty());
  capnp::MallocMessageBuilder result_message;
  auto result = result_message.initRoot<drk::msg::EvalResult>();
  result.setCompiled(true);
  result.setCorrect(true);
  result.getEvidence().setSanitizerNote("compute-sanitizer is not installed");
  capnp::MallocMessageBuilder verdict_message;
  auto verdict = verdict_message.initRoot<drk::msg::Verdict>();
  drk::verifier::verify(result.asReader(), verdict);
  DRK_CHECK(verdict.getHonest());
  DRK_REQUIRE(verdict.getWarnings().size() == 1);
  DRK_CHECK(std::string(verdict.getWarnings()[0].getCode().cStr()) == "sanitizer.not_run");
}

DRK_TEST_CASE("a correct CUDA result beyond the roofline bound is an implausible speedup") {
  auto at = [](double bytes_fraction, double flops_fraction, bool correct) {
    return failed_codes([&](auto r) {
      r.setCorrect(correct);
      auto gpu = r.initGpu();
      gpu.setPeakBytesPerS(4.2e12);
      gpu.setAchievedBytesPerS(bytes_fraction * 4.2e12);
      gpu.setPeakFlopsPerS(59e12);
      gpu.setAchievedFlopsPerS(flops_fraction * 59e12);
      r.getEvidence().setRooflineRemeasured(true);
    });
  };
  DRK_CHECK(at(0.9, 0.1, true).empty());
  DRK_CHECK(at(1.4, 1.2, true).empty());  // within the margins the measured peaks leave
  DRK_CHECK(at(3.0, 0.1, true) == std::vector<std::string>{"implausible_speedup"});
  DRK_CHECK(at(0.1, 8.0, true) == std::vector<std::string>{"implausible_speedup"});
  DRK_CHECK(at(3.0, 8.0, false).empty());  // an incorrect result earns nothing anyway
}

DRK_TEST_CASE("far beyond the best known speedup: rejected when the second timing does not hold") {
  auto timed = [](double first, double second, double best_known) {
    return failed_codes([&](auto r) {
      r.setSpeedup(second);
      r.getEvidence().setFirstSpeedup(first);
      r.getEvidence().setBestKnownSpeedup(best_known);
    });
  };
  DRK_CHECK(timed(40.0, 3.0, 2.0) == std::vector<std::string>{"implausible_speedup"});
  DRK_CHECK(timed(40.0, 36.0, 2.0).empty());  // it held: a new best
  DRK_CHECK(timed(40.0, 20.0, 2.0).empty());  // half of it held
  DRK_CHECK(timed(0.0, 3.0, 2.0).empty());    // not timed again: nothing to judge
  // Timed again because it was beyond the roofline (no best known), and it did not hold either.
  DRK_CHECK(timed(40.0, 3.0, 0.0) == std::vector<std::string>{"implausible_speedup"});
  // With the candidate's own medians: a reference that was slow in the first timing (5.3x, then
  // 0.45x, the candidate about as fast both times) is no memo; a candidate twice as slow is.
  auto timed_with_medians = [](double first_speedup, double first_us, double second_speedup, double second_us) {
    return failed_codes([&](auto r) {
      r.setSpeedup(second_speedup);
      r.getCandidateTiming().setMedianUs(second_us);
      r.getEvidence().setFirstSpeedup(first_speedup);
      r.getEvidence().setFirstCandidateUs(first_us);
      r.getEvidence().setBestKnownSpeedup(1.14);
    });
  };
  DRK_CHECK(timed_with_medians(5.34, 410.0, 0.45, 423.5).empty());
  DRK_CHECK(timed_with_medians(40.0, 10.0, 3.0, 130.0) == std::vector<std::string>{"implausible_speedup"});
}

DRK_TEST_CASE("floating-point modes left changed are a failed check naming them") {
  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setMathModeChanged("MXCSR flush-to-zero set"); }) ==
            std::vector<std::string>{"math_mode_changed"});
}

DRK_TEST_CASE("an object refused for binding to the harness fails harness_symbol, not failed_to_load") {
  using drk::msg::SandboxOutcome;
  const std::string reach = "imports at::set_num_threads(int) from libtorch_cpu.so.1.13";
  auto judged = judge("", [&](auto r) {
    r.setCorrect(false);
    r.setSandbox(SandboxOutcome::FAILED_TO_LOAD);
    r.setErrorText("refused before loading: the candidate reaches the harness outside the ABI: " + reach);
    r.getEvidence().setHarnessSymbol(reach);
  });
  DRK_CHECK(judged.failed == std::vector<std::string>{"harness_symbol"});
  DRK_CHECK(judged.first_evidence.rfind(reach + ": ", 0) == 0);
  // Any other load failure is still failed_to_load.
  DRK_CHECK(failed_codes([](auto r) {
              r.setCorrect(false);
              r.setSandbox(SandboxOutcome::FAILED_TO_LOAD);
              r.setErrorText("dlopen failed: undefined symbol: foo");
            }) == std::vector<std::string>{"failed_to_load"});
}

DRK_TEST_CASE("an output read before it is written, and a forged reply, are failed checks") {
  DRK_CHECK(failed_codes([](auto r) {
              r.getEvidence().setUninitialisedRead("output y[3] is 7.5e+29 but the reference is 0.25");
            }) == std::vector<std::string>{"uninitialised_read"});
  DRK_CHECK(failed_codes([](auto r) {
              r.getEvidence().setInitcheckErrors("Uninitialized __global__ memory read of size 4 bytes | at k+0x70");
            }) == std::vector<std::string>{"uninitialised_read"});
  DRK_CHECK(failed_codes([](auto r) {
              r.setSandbox(drk::msg::SandboxOutcome::CRASHED);
              r.getEvidence().setReplyTampered("the sandbox answered request 0 instead of 7");
            }) == std::vector<std::string>{"sandbox_crashed", "reply_tampered"});
}

DRK_TEST_CASE("a rerun that differs within tolerance is nondeterministic, a warning") {
  auto judged = judge("", [](auto r) { r.getEvidence().setRerunDiffers(12); });
  DRK_CHECK(judged.failed.empty());
  DRK_CHECK(judged.warned == std::vector<std::string>{"nondeterministic"});
}

DRK_TEST_CASE("a CUDA source is judged as CUDA: threads fail, joined side streams warn") {
  auto cuda = [](const std::string& source) {
    return judge(source, [](auto r) { r.getCandidate().setLanguage(drk::msg::Language::CUDA); });
  };
  auto thread = cuda("std::thread([] { launch(); }).detach();");
  DRK_CHECK(thread.failed == std::vector<std::string>{"static.thread"});
  DRK_CHECK(thread.first_evidence.find("ctx->stream") != std::string::npos);
  auto joined = cuda("cudaStreamCreate(&side);\ncudaEventRecord(done, side);\ncudaStreamWaitEvent(stream, done, 0);");
  DRK_CHECK(joined.failed.empty());
  DRK_CHECK(joined.warned == std::vector<std::string>{"static.side_stream"});
  DRK_CHECK(cuda("cudaStreamCreate(&side);").failed == std::vector<std::string>{"static.stream_unjoined"});
}

DRK_TEST_CASE("a Python candidate is judged by the Python static checks, against the backend it was asked for") {
  auto python = [](const std::string& source, drk::msg::PythonBackend backend) {
    return judge(source, [backend](auto r) {
      r.getCandidate().setLanguage(drk::msg::Language::PYTHON);
      r.getCandidate().setPythonBackend(backend);
    });
  };
  const std::string plain =
      "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, a, b):\n        return torch.matmul(a, b)\n";
  DRK_CHECK(python(plain, drk::msg::PythonBackend::PYTORCH).failed.empty());
  DRK_CHECK(python(plain, drk::msg::PythonBackend::CUDA).failed == std::vector<std::string>{"python_no_custom_kernel"});
  auto patched = python("import torch\ntorch.allclose = lambda *a, **k: True\n", drk::msg::PythonBackend::PYTORCH);
  DRK_CHECK(patched.failed == std::vector<std::string>{"python_monkeypatch"});
  DRK_CHECK(patched.first_evidence.rfind("line 2: `torch.allclose", 0) == 0);
  // Not the C++ scan: a Python function of its own named fork is no process.
  DRK_CHECK(python("def fork():\n    return 1\n\nfork()\n", drk::msg::PythonBackend::PYTORCH).failed.empty());
  auto environment = python("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '9.0'\n", drk::msg::PythonBackend::PYTORCH);
  DRK_CHECK(environment.failed.empty());
  DRK_CHECK(environment.warned == std::vector<std::string>{"python_environment"});
}

DRK_TEST_CASE("a Python call refused for what the candidate did fails its check, not candidate_error") {
  const std::string why = "the output of ModelNew.forward shares memory with input 1: an input (or a view of one) "
                          "returned as the answer (call 1)";
  auto judged = judge("", [&](auto r) {
    r.setCorrect(false);
    r.setSandbox(drk::msg::SandboxOutcome::RETURNED_ERROR);
    auto check = r.getEvidence().initPythonCheck();
    check.setCode("output_aliases_input");
    check.setEvidence(why);
  });
  DRK_CHECK(judged.failed == std::vector<std::string>{"output_aliases_input"});
  DRK_CHECK(judged.first_evidence.rfind(why, 0) == 0);
}
