#include "tests/policy/kernel_harness.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>

namespace drk::testing {
namespace {

std::string source_dir() {
  const char* from_env = std::getenv("DRK_SOURCE_DIR");
  return from_env != nullptr ? from_env : DRK_TEST_SOURCE_DIR;
}

struct CommandOutput {
  int status = 0;
  std::string text;
};

CommandOutput run_command(const std::string& command) {
  CommandOutput output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  char buffer[4096];
  size_t read = 0;
  while ((read = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.text.append(buffer, read);
  output.status = pclose(pipe);
  return output;
}

struct HarnessState {
  std::vector<std::unique_ptr<float[], decltype(&std::free)>> scratch;
  int* library_calls = nullptr;
};

void* workspace(const drk_context* ctx, size_t bytes) {
  auto* state = static_cast<HarnessState*>(ctx->harness);
  void* memory = std::aligned_alloc(256, ((bytes + 255) / 256) * 256 + 256);
  state->scratch.emplace_back(static_cast<float*>(memory), &std::free);
  return memory;
}

int reference_gemm(const drk_context* ctx, int64_t m, int64_t n, int64_t k, float alpha,
                   const float* a, int64_t lda, const float* b, int64_t ldb, int b_transposed,
                   float beta, float* c, int64_t ldc) {
  ++*static_cast<HarnessState*>(ctx->harness)->library_calls;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const float b_value = b_transposed ? b[j * ldb + p] : b[p * ldb + j];
        sum += static_cast<double>(a[i * lda + p]) * b_value;
      }
      const float previous = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
      c[i * ldc + j] = alpha * static_cast<float>(sum) + previous;
    }
  }
  return 0;
}

drk_tensor describe(const HostTensor& tensor) {
  drk_tensor described{};
  described.data = tensor.dtype == DRK_I64 ? static_cast<void*>(const_cast<int64_t*>(tensor.integers.data()))
                                            : static_cast<void*>(const_cast<float*>(tensor.values.data()));
  described.dtype = tensor.dtype;
  described.ndim = static_cast<int32_t>(tensor.shape.size());
  int64_t stride = 1;
  for (int dim = described.ndim - 1; dim >= 0; --dim) {
    described.shape[dim] = tensor.shape[static_cast<size_t>(dim)];
    described.strides[dim] = stride;
    stride *= tensor.shape[static_cast<size_t>(dim)];
  }
  return described;
}

}  // namespace

KernelHarness::KernelHarness() {
  std::string pattern = (std::filesystem::temp_directory_path() / "drk-render-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  directory_ = pattern;
}

KernelHarness::~KernelHarness() {
  if (library_ != nullptr) dlclose(library_);
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

Status KernelHarness::compile(const std::vector<std::string>& sources) {
  const std::string abi = source_dir() + "/kernels/abi";
  std::vector<std::string> objects;
  std::vector<std::string> commands;
  for (size_t index = 0; index < sources.size(); ++index) {
    const std::string stem = directory_ + "/kernel" + std::to_string(index);
    std::ofstream(stem + ".cpp") << "#define drk_kernel drk_kernel_" << index << "\n"
                                 << sources[index];
    objects.push_back(stem + ".o");
    commands.push_back("c++ -O3 -march=native -std=c++17 -fPIC -c -I " + abi + " " + stem +
                       ".cpp -o " + stem + ".o");
  }
  // Two compilers at a time (CI has two cores).
  std::vector<CommandOutput> results(commands.size());
  std::atomic<size_t> next{0};
  auto compile_some = [&] {
    for (size_t index = next++; index < commands.size(); index = next++) {
      results[index] = run_command(commands[index]);
    }
  };
  std::thread helper(compile_some);
  compile_some();
  helper.join();
  for (size_t index = 0; index < results.size(); ++index) {
    if (results[index].status == 0) continue;
    return make_error(Errc::compile_error, "kernel " + std::to_string(index) +
                                               " does not compile:\n" + results[index].text +
                                               "\n--- source ---\n" + sources[index]);
  }
  std::string link = "c++ -shared -o " + directory_ + "/kernels.so";
  for (const auto& object : objects) link += " " + object;
  if (auto output = run_command(link); output.status != 0) {
    return make_error(Errc::compile_error, "link failed: " + output.text);
  }
  library_ = dlopen((directory_ + "/kernels.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) return make_error(Errc::io_error, dlerror());
  for (size_t index = 0; index < sources.size(); ++index) {
    const std::string symbol = "drk_kernel_" + std::to_string(index);
    auto* kernel = reinterpret_cast<drk_kernel_fn>(dlsym(library_, symbol.c_str()));
    if (kernel == nullptr) return make_error(Errc::not_found, symbol + " is missing");
    kernels_.push_back(kernel);
  }
  return {};
}

int KernelHarness::call(size_t index, const std::vector<HostTensor>& inputs,
                        std::vector<HostTensor>& outputs, int max_threads) {
  HarnessState state;
  state.library_calls = &library_calls_;
  drk_library library{DRK_ABI_VERSION, &reference_gemm};
  drk_context context{DRK_ABI_VERSION, DRK_CPU, nullptr, max_threads, &workspace, &library, &state};
  std::vector<drk_tensor> input_tensors, output_tensors;
  for (const auto& input : inputs) input_tensors.push_back(describe(input));
  for (auto& output : outputs) {
    int64_t count = 1;
    for (int64_t dim : output.shape) count *= dim;
    output.values.assign(static_cast<size_t>(count), std::numeric_limits<float>::quiet_NaN());
    output_tensors.push_back(describe(output));
  }
  return kernels_.at(index)(&context, input_tensors.data(), static_cast<int32_t>(inputs.size()),
                            output_tensors.data(), static_cast<int32_t>(outputs.size()));
}

}  // namespace drk::testing
