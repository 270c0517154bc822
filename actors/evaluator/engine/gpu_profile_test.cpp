#include "actors/evaluator/engine/gpu_profile.h"

#include <capnp/message.h>

#include "tests/doctest_drk.h"

using namespace drk;
using namespace drk::evaluator;

namespace {

KernelRun kernel(const std::string& name, uint64_t start_ns, uint64_t end_ns, uint32_t grid_x = 1) {
  KernelRun run;
  run.name = name;
  run.start_ns = start_ns;
  run.end_ns = end_ns;
  run.grid[0] = grid_x;
  run.block[0] = 128;
  return run;
}

TimedCall call(bool candidate, double event_us, std::vector<KernelRun> kernels) {
  TimedCall timed;
  timed.candidate = candidate;
  timed.event_us = event_us;
  timed.profiled = true;
  timed.kernels = std::move(kernels);
  return timed;
}

}  // namespace

DRK_TEST_CASE("kernels group per name and launch shape, in the order first seen, one side at a time") {
  const std::vector<TimedCall> calls = {
      call(true, 10, {kernel("own", 0, 4000), kernel("gemm", 4000, 8000, 2)}),
      call(false, 20, {kernel("ref", 0, 9000)}),
      call(true, 10, {kernel("own", 0, 6000), kernel("gemm", 6000, 9000, 4)}),
  };
  const auto groups = group_kernels(calls, true);
  DRK_REQUIRE(groups.size() == 3);
  DRK_CHECK(groups[0].first.name == "own");
  DRK_CHECK(groups[0].durations_us == std::vector<double>{4.0, 6.0});
  DRK_CHECK(groups[1].first.grid[0] == 2);
  DRK_CHECK(groups[2].first.grid[0] == 4);
  DRK_CHECK(group_kernels(calls, false).size() == 1);
}

DRK_TEST_CASE("coverage is the candidate's own kernels' share of its kernel time; events and CUPTI compared") {
  kernels::Task task;
  task.output_dtype = kernels::DType::float16;
  EvaluationRun run;
  run.task = &task;
  run.shapes = kernels::DeviceKind::cuda;
  run.own_kernels = {"own"};
  // Own kernels 3 + 3 us of 4 + 4 us of kernel time; CUPTI spans 4 us, the events say 5 us.
  const std::vector<TimedCall> calls = {
      call(true, 5, {kernel("own", 1000, 4000), kernel("cublas", 4000, 5000)}),
      call(true, 5, {kernel("own", 1000, 4000), kernel("cublas", 4000, 5000)}),
      call(false, 9, {kernel("ref", 0, 9000)}),
  };
  const DevicePeaks peaks{"H200", 50u << 20, 4e12, 60e12};
  capnp::MallocMessageBuilder message;
  auto profile = message.initRoot<msg::GpuProfile>();
  fill_gpu_profile(profile, calls, ProfiledTiming{0.5, true, ""}, run, peaks, 0.02);
  DRK_CHECK(profile.getCoverage() == doctest::Approx(0.75));
  DRK_CHECK(profile.getOwnKernelUs() == doctest::Approx(3));
  DRK_CHECK(profile.getAllKernelUs() == doctest::Approx(4));
  DRK_CHECK(profile.getCuptiSpanUs() == doctest::Approx(4));
  DRK_CHECK(profile.getProfiledCalls() == 2);
  DRK_CHECK(profile.getEventCuptiDisagreement() == doctest::Approx(0.2));
  DRK_CHECK(profile.getTimingDisagrees());
  DRK_CHECK(profile.getEventFloorUs() == doctest::Approx(0.5));
  DRK_CHECK(profile.getLaunchLatencyHidden());
  DRK_REQUIRE(profile.getKernels().size() == 2);
  DRK_CHECK(profile.getKernels()[0].getOwn());
  DRK_CHECK_FALSE(profile.getKernels()[1].getOwn());
  DRK_CHECK(profile.getKernels()[0].getLaunches() == 2);
  DRK_CHECK(profile.getReferenceKernels().size() == 1);
  DRK_CHECK(std::string(profile.getDevice().cStr()) == "H200");
  // A float16 task's FLOP ceiling is the tensor cores', not FP32 FMA's.
  DRK_CHECK(profile.getPeakFlopsPerS() == doctest::Approx(60e12 * kHalfTensorCoresOverFma));
  DRK_CHECK(profile.getL2FlushBytes() == 2 * (50u << 20));
  // So is a bfloat16 task's (the same dense peak from Ampere on); a float32 task's is FMA's; an
  // FP8 variant's (float8 inputs, bfloat16 output) is the FP8 tensor cores', twice the 16-bit ones'.
  for (const auto& [dtype, ceiling] : {std::pair{kernels::DType::bfloat16, 60e12 * kHalfTensorCoresOverFma},
                                       std::pair{kernels::DType::float32, 60e12},
                                       std::pair{kernels::DType::float8_e4m3fn, 60e12 * kFloat8TensorCoresOverFma}}) {
    task.output_dtype = kernels::is_float8(dtype) ? kernels::DType::bfloat16 : dtype;
    task.inputs = {kernels::InputSpec{"x", kernels::is_float8(dtype) ? dtype : task.output_dtype, {}}};
    capnp::MallocMessageBuilder other;
    auto other_profile = other.initRoot<msg::GpuProfile>();
    fill_gpu_profile(other_profile, calls, ProfiledTiming{0.5, true, ""}, run, peaks, 0.02);
    DRK_CHECK(other_profile.getPeakFlopsPerS() == doctest::Approx(ceiling));
  }
}

DRK_TEST_CASE("without peaks the profile leaves them unknown; a result without a profile gets no roofline") {
  kernels::Task task;
  EvaluationRun run;
  run.task = &task;
  capnp::MallocMessageBuilder message;
  auto result = message.initRoot<msg::EvalResult>();
  run.out = result;
  fill_roofline(run, 10.0);
  DRK_CHECK_FALSE(result.hasGpu());
  fill_gpu_profile(result.initGpu(), {}, ProfiledTiming{}, run, std::nullopt, 0.02);
  DRK_CHECK(result.getGpu().getPeakBytesPerS() == 0.0);
  DRK_CHECK(result.getGpu().getCoverage() == 0.0);
  DRK_CHECK(std::string(result.getGpu().getDevice().cStr()).empty());
}

DRK_TEST_CASE("a kernel that ends after its call's end marker started is unjoined work, named with how late") {
  auto marked = [](uint64_t marker_ns, std::vector<KernelRun> kernels) {
    TimedCall timed = call(true, 5, std::move(kernels));
    timed.end_marker_ns = marker_ns;
    return timed;
  };
  // Joined: the stream waited for the side stream's kernel, which ended before the marker.
  DRK_CHECK(unjoined_work({marked(5000, {kernel("swish", 1000, 4900)})}).empty());
  // Within the margin of the clock's rounding.
  DRK_CHECK(unjoined_work({marked(5000, {kernel("swish", 1000, 5000 + kUnjoinedMarginNs)})}).empty());
  // Unmarked calls and the reference's calls are not judged.
  DRK_CHECK(unjoined_work({marked(0, {kernel("swish", 1000, 9000)})}).empty());
  TimedCall reference = marked(5000, {kernel("ref", 1000, 9000)});
  reference.candidate = false;
  DRK_CHECK(unjoined_work({reference}).empty());
  // Not joined: ended 3 us after the marker started in one call, 2.5 us in the other.
  const std::string late = unjoined_work({marked(5000, {kernel("swish", 5100, 8000)}),
                                          marked(5000, {kernel("swish", 5100, 7500)}),
                                          marked(5000, {kernel("own", 1000, 4000)})});
  DRK_CHECK(late == "swish ended 3.00 us after the call's stream had passed the call's end (2 of 3 marked calls)");

  kernels::Task task;
  EvaluationRun run;
  run.task = &task;
  capnp::MallocMessageBuilder message;
  auto profile = message.initRoot<msg::GpuProfile>();
  fill_gpu_profile(profile, {marked(5000, {kernel("swish", 5100, 8000)})}, ProfiledTiming{}, run, std::nullopt, 0.02);
  DRK_CHECK(std::string(profile.getUnjoinedWork().cStr()).find("swish ended 3.00 us") == 0);
}
