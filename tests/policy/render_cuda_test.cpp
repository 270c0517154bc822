// The CUDA scheduling space without a GPU: corner points of every family's knobs render, for
// real catalog tasks (the float16 matmul_fp16 with both math options), CUDA sources that nvcc
// builds into shared objects with the Evaluator's flags (kernels/compile/compiler.h,
// nvcc_compiler_options), two compiles at a time; options that do not apply to a task's
// precision are refused. Skips the compiles, saying why, where nvcc is missing.
// tests/policy/render_cuda_evaluation_test.cpp runs such points on a GPU against the task's
// reference.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <capnp/message.h>

#include "actors/verifier/static_checks.h"
#include "kernels/catalog/task.h"
#include "kernels/schedule/problem.h"
#include "kernels/schedule/render.h"
#include "kernels/schedule/space.h"
#include "tests/doctest_drk.h"
#include "tests/policy/cuda_corners.h"

namespace drk::schedule {
namespace {

namespace fs = std::filesystem;

std::string source_dir() {
  const char* dir = std::getenv("DRK_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

std::string nvcc_path() {
  if (const char* nvcc = std::getenv("DRK_NVCC"); nvcc != nullptr && *nvcc != '\0') return nvcc;
  std::error_code error;
  if (fs::exists("/usr/local/cuda/bin/nvcc", error)) return "/usr/local/cuda/bin/nvcc";
  return "";
}

struct TemporaryDirectory {
  fs::path path = fs::temp_directory_path() / ("drk-render-cuda-test-" + std::to_string(getpid()));
  TemporaryDirectory() { fs::create_directories(path); }
  ~TemporaryDirectory() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

struct Compiled {
  int status = 0;
  std::string output;
};

// nvcc with the flags of nvcc_compiler_options() (kernels/compile/compiler.cpp).
Compiled compile(const std::string& nvcc, const fs::path& directory, size_t index, const std::string& source) {
  const fs::path file = directory / ("candidate" + std::to_string(index) + ".cu");
  std::ofstream(file) << source;
  const std::string command = nvcc +
                              " -O3 -std=c++17 -shared -Xcompiler -fPIC -cudart shared -arch=sm_90 -lineinfo "
                              "--resource-usage -I" +
                              source_dir() + "/kernels/abi " + file.string() + " -o " +
                              (directory / ("candidate" + std::to_string(index) + ".so")).string() + " 2>&1";
  Compiled compiled;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  char buffer[4096];
  size_t read = 0;
  while ((read = fread(buffer, 1, sizeof buffer, pipe)) > 0) compiled.output.append(buffer, read);
  compiled.status = pclose(pipe);
  return compiled;
}

std::vector<Compiled> compile_all(const std::string& nvcc, const fs::path& directory,
                                  const std::vector<std::string>& sources) {
  std::vector<Compiled> results(sources.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t index = next++; index < sources.size(); index = next++) {
      results[index] = compile(nvcc, directory, index, sources[index]);
    }
  };
  std::thread second(worker);
  worker();
  second.join();
  return results;
}

// Builds every source with nvcc (two at a time) and checks each built cleanly, without warnings;
// skips the builds, saying so, where nvcc is missing.
void build_and_check(const std::vector<testing::RenderPoint>& rendered, const std::vector<std::string>& sources) {
  const std::string nvcc = nvcc_path();
  if (nvcc.empty()) {
    DRK_MESSAGE("skipped the compiles: nvcc not found (set DRK_NVCC or install the CUDA toolkit)");
    std::printf("SKIPPED (no nvcc)\n");
    return;
  }
  TemporaryDirectory directory;
  const auto results = compile_all(nvcc, directory.path, sources);
  for (size_t index = 0; index < results.size(); ++index) {
    DRK_INFO(rendered[index].problem.task << ": " << rendered[index].choice.describe() << "\n"
                                          << results[index].output);
    DRK_CHECK(results[index].status == 0);
    DRK_CHECK(results[index].output.find("warning") == std::string::npos);
    DRK_CHECK(fs::exists(directory.path / ("candidate" + std::to_string(index) + ".so")));
  }
}

// Renders every point (each must render) and runs `check(point, source)` on each, with the
// point named in any failure; returns the sources in order.
template <typename Check>
std::vector<std::string> render_checked(const std::vector<testing::RenderPoint>& points, const Check& check) {
  std::vector<std::string> sources;
  for (const auto& point : points) {
    DRK_INFO(point.problem.task << ": " << point.choice.describe());
    auto source = render(point.problem, point.choice);
    DRK_REQUIRE_MESSAGE(source.ok(), (source.ok() ? "" : source.error().describe()));
    // The Verifier's static checks pass every rendered kernel (its PTX among them).
    for (const auto& finding : verifier::scan_source(*source, verifier::Dialect::cuda))
      DRK_CHECK_MESSAGE(finding.severity != verifier::Severity::failure, verifier::describe(finding));
    check(point, *source);
    sources.push_back(*source);
  }
  return sources;
}

DRK_TEST_CASE("every family's CUDA space has knobs, and its corners cover each option extreme") {
  for (int index = 0; index < kFamilyCount; ++index) {
    const auto family = static_cast<Family>(index);
    const auto family_knobs = knobs(family, Device::cuda);
    DRK_REQUIRE(!family_knobs.empty());
    std::vector<std::set<uint16_t>> seen(family_knobs.size());
    for (auto precision : {Precision::float32, Precision::float16}) {
      for (const auto& choice : testing::corner_choices(family, Device::cuda, precision)) {
        DRK_REQUIRE(validate(choice, precision).ok());
        for (size_t knob = 0; knob < family_knobs.size(); ++knob) seen[knob].insert(choice.options[knob]);
      }
    }
    for (size_t knob = 0; knob < family_knobs.size(); ++knob) {
      DRK_INFO("knob " << family_knobs[knob].name);
      DRK_CHECK(seen[knob].count(0) == 1);
      DRK_CHECK(seen[knob].count(static_cast<uint16_t>(family_knobs[knob].options.size() - 1)) == 1);
    }
  }
}

DRK_TEST_CASE("a schedule of one device does not render a task evaluated on the other") {
  auto problems = testing::catalog_problems({"relu"}, msg::Device::CUDA);
  DRK_REQUIRE(problems.size() == 1);
  Choice cpu_choice{Family::elementwise, {0, 0, 0, 0}, Device::cpu};
  auto refused = render(problems[0], cpu_choice);
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_CHECK(refused.error().code == Errc::invalid_argument);
  DRK_CHECK(refused.error().message.find("cuda") != std::string::npos);
}

DRK_TEST_CASE("tensor cores render for 16-bit tasks only, the library for float32 tasks only") {
  const auto problems = testing::catalog_problems({"matmul", "matmul_fp16", "matmul@bfloat16"}, msg::Device::CUDA);
  DRK_REQUIRE(problems.size() == 3);
  DRK_CHECK(problems[0].precision == Precision::float32);
  DRK_CHECK(problems[1].precision == Precision::float16);
  DRK_CHECK(problems[2].precision == Precision::bfloat16);
  DRK_CHECK(problems[1].inputs[0].shape == std::vector<int64_t>{4096, 4096});
  Choice tensor_cores{Family::gemm, {0, 0, 0, 0, 0, 0, 1}, Device::cuda};
  Choice library{Family::gemm, {0, 0, 0, 0, 1, 0, 0}, Device::cuda};
  DRK_CHECK(render(problems[1], tensor_cores).ok());
  DRK_CHECK(render(problems[2], tensor_cores).ok());
  DRK_CHECK(render(problems[0], library).ok());
  for (const auto& [problem, choice, option] :
       {std::tuple{problems[0], tensor_cores, "math=tensor_core"}, std::tuple{problems[1], library, "use_library=library"},
        std::tuple{problems[2], library, "use_library=library"}}) {
    auto refused = render(problem, choice);
    DRK_REQUIRE_FALSE(refused.ok());
    DRK_INFO(refused.error().message);
    DRK_CHECK(refused.error().code == Errc::invalid_argument);
    DRK_CHECK(refused.error().message.find(option) != std::string::npos);
    DRK_CHECK(refused.error().message.find(std::string(precision_name(problem.precision)) + " tasks") !=
              std::string::npos);
  }
  // 16-bit is the gemm, rowwise, elementwise, reduction and cross_entropy families' alone: a float16 conv2d is
  // refused before rendering.
  Problem half_conv = testing::catalog_problems({"conv2d"}, msg::Device::CUDA)[0];
  half_conv.precision = Precision::float16;
  auto refused = render(half_conv, testing::corner_choices(Family::conv2d, Device::cuda)[0]);
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_CHECK(refused.error().message.find("float16") != std::string::npos);
}

DRK_TEST_CASE("float16 kernels take float16 tensors; tensor-core sources use WMMA with float accumulators") {
  const auto points = testing::half_matmul_points();
  DRK_REQUIRE(points.size() == 8);
  int tensor_core_points = 0;
  render_checked(points, [&](const testing::RenderPoint& point, const std::string& source) {
    DRK_CHECK(source.find("!drk_is_dense_f16(inputs[index])") != std::string::npos);
    DRK_CHECK(source.find("!drk_is_dense_f32(") == std::string::npos);
    DRK_CHECK(source.find("gemm_f32") == std::string::npos);
    const bool tensor_cores = point.choice.value(cuda_gemm_knob::math) == "tensor_core";
    tensor_core_points += tensor_cores ? 1 : 0;
    DRK_CHECK((source.find("wmma::mma_sync") != std::string::npos) == tensor_cores);
    if (tensor_cores) DRK_CHECK(source.find("wmma::accumulator, 16, 16, 16, float>") != std::string::npos);
  });
  DRK_CHECK(tensor_core_points == 4);
}

DRK_TEST_CASE("bfloat16 matmuls take bfloat16 tensors, use bfloat16 WMMA fragments, and build with the Evaluator's flags") {
  const auto points = testing::brain_matmul_points();
  DRK_REQUIRE(points.size() == 8);
  int tensor_core_points = 0;
  const auto sources = render_checked(points, [&](const testing::RenderPoint& point, const std::string& source) {
    DRK_CHECK(source.find("!drk_is_dense_bf16(inputs[index])") != std::string::npos);
    DRK_CHECK(source.find("DRK_BF16") != std::string::npos);
    DRK_CHECK(source.find("!drk_is_dense_f32(") == std::string::npos);
    DRK_CHECK(source.find("__half") == std::string::npos);
    const bool tensor_cores = point.choice.value(cuda_gemm_knob::math) == "tensor_core";
    tensor_core_points += tensor_cores ? 1 : 0;
    DRK_CHECK((source.find("wmma::mma_sync") != std::string::npos) == tensor_cores);
    if (tensor_cores) DRK_CHECK(source.find("using drk_value = __nv_bfloat16;") != std::string::npos);
  });
  DRK_CHECK(tensor_core_points == 4);
  build_and_check(points, sources);
}

namespace {

bool brain_point(const testing::RenderPoint& point) { return point.problem.precision == Precision::bfloat16; }
std::string sixteen_bit_dense(const testing::RenderPoint& point) {
  return brain_point(point) ? "drk_is_dense_bf16" : "drk_is_dense_f16";
}
std::string sixteen_bit_element(const testing::RenderPoint& point) {
  return brain_point(point) ? "using drk_element = __nv_bfloat16;" : "using drk_element = __half;";
}

// A 16-bit point's source takes x and y of its dtype only, and rounds to it to nearest even.
void check_takes_sixteen_bit(const testing::RenderPoint& point, const std::string& source) {
  const std::string dense = sixteen_bit_dense(point);
  DRK_CHECK(source.find(brain_point(point) ? "DRK_BF16" : "DRK_F16") != std::string::npos);
  DRK_CHECK(source.find("!" + dense + "(x) || !" + dense + "(y)") != std::string::npos);
  DRK_CHECK(source.find("!drk_is_dense_f32(x)") == std::string::npos);
  DRK_CHECK(source.find(brain_point(point) ? "__float2bfloat16_rn" : "__float2half_rn") != std::string::npos);
}

}  // namespace

DRK_TEST_CASE("16-bit rowwise kernels take 16-bit tensors, widen on load, round once, and build with the Evaluator's flags") {
  const auto points = testing::half_rowwise_points();
  DRK_REQUIRE(points.size() == 8);
  const auto sources = render_checked(points, [](const testing::RenderPoint& point, const std::string& source) {
    check_takes_sixteen_bit(point, source);
    DRK_CHECK(source.find(sixteen_bit_element(point)) != std::string::npos);
    // layer_norm's weight and bias are the variant's dtype too.
    const std::string dense = sixteen_bit_dense(point);
    if (point.problem.task.rfind("layer_norm", 0) == 0)
      DRK_CHECK(source.find("!" + dense + "(inputs[1]) || !" + dense + "(inputs[2])") != std::string::npos);
  });
  build_and_check(points, sources);
}

DRK_TEST_CASE("16-bit reductions take 16-bit tensors, widen on load, round each output once, and build with the Evaluator's flags") {
  const auto points = testing::half_reduction_points();
  DRK_REQUIRE(points.size() == 7);
  const auto sources = render_checked(points, [](const testing::RenderPoint& point, const std::string& source) {
    check_takes_sixteen_bit(point, source);
    DRK_CHECK(source.find(sixteen_bit_element(point)) != std::string::npos);
    DRK_CHECK(source.find("drk_narrow(drk_finish(") != std::string::npos);
  });
  build_and_check(points, sources);
}

DRK_TEST_CASE("16-bit cross-entropy kernels take 16-bit predictions and loss, widen on load, round the mean once, and build with the Evaluator's flags") {
  const auto points = testing::half_cross_entropy_points();
  DRK_REQUIRE(points.size() >= 3);
  const auto sources = render_checked(points, [](const testing::RenderPoint& point, const std::string& source) {
    const std::string dense = sixteen_bit_dense(point);
    DRK_CHECK(source.find(sixteen_bit_element(point)) != std::string::npos);
    DRK_CHECK(source.find("!" + dense + "(predictions) || !drk_is_dense_i64(targets) || !" + dense + "(loss)") !=
              std::string::npos);
    DRK_CHECK(source.find("!drk_is_dense_f32(") == std::string::npos);
    DRK_CHECK(source.find("- drk_widen(in[target])") != std::string::npos);
    DRK_CHECK(source.find("*loss = drk_narrow(partial[0] / static_cast<float>(rows))") != std::string::npos);
  });
  build_and_check(points, sources);
}

DRK_TEST_CASE("16-bit elementwise kernels take 16-bit tensors, round once, and build with the Evaluator's flags") {
  const auto points = testing::half_elementwise_points();
  DRK_REQUIRE(points.size() == 12);
  const auto sources = render_checked(points, [](const testing::RenderPoint& point, const std::string& source) {
    check_takes_sixteen_bit(point, source);
    // Intermediates between launches stay float32: several groups go through the workspace.
    const std::string fusion = point.choice.value(cuda_elementwise_knob::fusion);
    const bool one_group = fusion == "fused" || point.problem.param_or("stages", "v").find('|') == std::string::npos;
    DRK_CHECK((source.find("ctx->workspace(ctx, static_cast<size_t>(count) * sizeof(float))") != std::string::npos) ==
              !one_group);
    DRK_CHECK((source.find("(src, dst, count, vectors)") != std::string::npos) == one_group);
  });
  build_and_check(points, sources);
}

DRK_TEST_CASE("FP8 elementwise kernels read bytes and a scale, write bfloat16, and build with the Evaluator's flags") {
  const auto points = testing::float8_elementwise_points();
  DRK_REQUIRE(points.size() == 10);
  const auto sources = render_checked(points, [](const testing::RenderPoint& point, const std::string& source) {
    const bool e4m3 = point.problem.precision == Precision::float8_e4m3fn;
    DRK_CHECK(source.find(e4m3 ? "DRK_F8E4M3" : "DRK_F8E5M2") != std::string::npos);
    DRK_CHECK(source.find(e4m3 ? "__NV_E4M3" : "__NV_E5M2") != std::string::npos);
    DRK_CHECK(source.find("!drk_is_dense_f8(inputs[0]) || !drk_is_scale(x_scale)") != std::string::npos);
    DRK_CHECK(source.find("num_inputs != 2") != std::string::npos);
    DRK_CHECK(source.find("drk_dequantise(values[e].lane[lane], scale)") != std::string::npos);
    DRK_CHECK(source.find("__float2bfloat16_rn") != std::string::npos);
    // Only the first launch reads the scale; later groups read the float32 workspace.
    DRK_CHECK(source.find("drk_map_0<<<blocks, kThreads, 0, stream>>>(src, ") != std::string::npos);
    DRK_CHECK(source.find(", count, vectors, scale);") != std::string::npos);
  });
  build_and_check(points, sources);
}

DRK_TEST_CASE("16-bit batched GEMMs take 16-bit tensors, accumulate in float32 and build with the Evaluator's flags") {
  const auto points = testing::half_batched_gemm_points();
  DRK_REQUIRE(points.size() == 8);
  const auto sources = render_checked(points, [](const testing::RenderPoint& point, const std::string& source) {
    const bool brain = point.problem.precision == Precision::bfloat16;
    DRK_CHECK(source.find(brain ? "DRK_BF16" : "DRK_F16") != std::string::npos);
    DRK_CHECK(source.find(brain ? "__float2bfloat16_rn" : "__float2half_rn") != std::string::npos);
    DRK_CHECK(source.find("!drk_is_dense_f32(") == std::string::npos);
    DRK_CHECK(source.find("gemm_f32") == std::string::npos);
    DRK_CHECK(source.find("blockIdx.z") != std::string::npos);
  });
  build_and_check(points, sources);
}

DRK_TEST_CASE("FP8 GEMMs run on FP8 tensor cores (mma.sync e4m3 / e5m2) and build with the Evaluator's flags") {
  const auto points = testing::float8_gemm_points();
  DRK_REQUIRE(points.size() == 8);
  const auto sources = render_checked(points, [](const testing::RenderPoint& point, const std::string& source) {
    const bool e4m3 = point.problem.precision == Precision::float8_e4m3fn;
    DRK_CHECK(source.find(e4m3 ? "f32.e4m3.e4m3.f32" : "f32.e5m2.e5m2.f32") != std::string::npos);
    DRK_CHECK(source.find("num_inputs != " + std::string(e4m3 ? "4" : "6")) != std::string::npos);
    DRK_CHECK(source.find("!drk_is_dense_bf16(y_tensor)") != std::string::npos);
    // No library call: the library's GEMM is float32's.
    DRK_CHECK(source.find("gemm_f32") == std::string::npos);
    DRK_CHECK(source.find(std::string("constexpr bool kTransposed = ") + (e4m3 ? "false" : "true")) != std::string::npos);
    const bool fused = point.choice.value(cuda_gemm_knob::epilogue) == "fused";
    DRK_CHECK(source.find(std::string("constexpr bool kFusedFinish = ") + (fused ? "true" : "false")) != std::string::npos);
  });
  build_and_check(points, sources);
}

DRK_TEST_CASE("corner points of every CUDA family render sources that nvcc builds with the Evaluator's flags") {
  const auto rendered = testing::render_corner_sample();
  DRK_REQUIRE(rendered.size() == 27);
  const auto sources = render_checked(rendered, [](const testing::RenderPoint& item, const std::string& source) {
    // Precise math only: no fast intrinsics, no fast-math pragmas.
    DRK_CHECK(source.find("__expf") == std::string::npos);
    DRK_CHECK(source.find("__fdividef") == std::string::npos);
    DRK_CHECK(source.find("use_fast_math") == std::string::npos);
    DRK_CHECK(source.find("ctx->stream") != std::string::npos);
    // The library alone: no kernel of its own, so that the Verifier never takes it for a decoy.
    const bool library_only = item.choice.family == Family::gemm &&
                              item.choice.value(cuda_gemm_knob::use_library) == "library" &&
                              item.problem.param_or("bias", "false") == "false" &&
                              item.problem.param_or("epilogue", "v") == "v";
    DRK_CHECK((source.find("__global__") == std::string::npos) == library_only);
  });
  build_and_check(rendered, sources);
}

DRK_TEST_CASE("batched_gemm and conv2d corners render sources that nvcc builds with the Evaluator's flags") {
  const auto rendered = testing::gemm_conv_corner_sample();
  DRK_REQUIRE(rendered.size() == 15);
  const auto sources = render_checked(rendered, [](const testing::RenderPoint& item, const std::string& source) {
    DRK_CHECK(source.find("__expf") == std::string::npos);
    DRK_CHECK(source.find("ctx->stream") != std::string::npos);
    if (item.choice.family == Family::batched_gemm) {
      // The gemm family's product kernel, its batch over blockIdx.z; the library once per entry.
      const bool library = item.choice.value(cuda_batched_gemm_knob::use_library) == "library";
      const bool finish = item.problem.param_or("bias", "false") == "true";
      DRK_CHECK((source.find("__global__") == std::string::npos) == (library && !finish));
      DRK_CHECK((source.find("blockIdx.z") != std::string::npos) == !library);
      DRK_CHECK((source.find("for (int64_t batch = 0; batch < batches; ++batch)") != std::string::npos) == library);
    } else {
      // add_bias reaches the epilogue by output channel.
      const bool reads_add_bias = item.problem.task == "conv2d_relu_biasadd";
      DRK_CHECK((source.find("const float* __restrict__ add_bias)") != std::string::npos) == reads_add_bias);
      DRK_CHECK((source.find("static_cast<const float*>(inputs[3].data)") != std::string::npos) == reads_add_bias);
    }
  });
  build_and_check(rendered, sources);
}

DRK_TEST_CASE("reduction, cross_entropy and attention points render sources that nvcc builds with the Evaluator's flags") {
  const auto rendered = testing::reduction_attention_corner_sample();
  DRK_REQUIRE(rendered.size() == 11);
  const auto sources = render_checked(rendered, [](const testing::RenderPoint& item, const std::string& source) {
    DRK_CHECK(source.find("__expf") == std::string::npos);
    DRK_CHECK(source.find("__logf") == std::string::npos);
    DRK_CHECK(source.find("atomicAdd") == std::string::npos);
    DRK_CHECK(source.find("cudaMalloc") == std::string::npos);
    DRK_CHECK(source.find("ctx->stream") != std::string::npos);
    // Temporary memory only through the ABI's workspace: the per-row losses, the scores.
    const bool scratch = item.choice.family == Family::cross_entropy ||
                         (item.choice.family == Family::attention &&
                          item.choice.value(cuda_attention_knob::algorithm) == "three_kernels");
    DRK_CHECK((source.find("ctx->workspace(ctx,") != std::string::npos) == scratch);
  });
  build_and_check(rendered, sources);
}

}  // namespace
}  // namespace drk::schedule
