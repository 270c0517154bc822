// A load_inline extension built as torch would build it, with Debian's python3-torch: the module
// imports and runs, the second build is a cache hit, a compile error is a value with the
// compiler's message, main.cpp is compiled with the narrow headers where it can be and with
// torch/extension.h where it needs more, and main.cpp really uses the precompiled torch/extension.h.
// Skipped (exit 77, CTest's SKIP_RETURN_CODE) where that Python has no torch.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/file_system.h"
#include "base/temporary_directory.h"
#include "kernels/compile/torch_extension.h"
#include "tests/doctest_drk.h"
#include "tests/support/device_skip.h"

using namespace drk::compile;

namespace {

std::string python() {
  const char* chosen = std::getenv("DRK_PYTHON");
  return chosen && *chosen ? chosen : "/usr/bin/python3";
}

// This Python's torch facts, or nothing (the test is then skipped, with the reason printed).
const TorchFacts* facts() {
  static const drk::Result<TorchFacts> found = torch_facts(python());
  if (found) return &*found;
  std::printf("skipped: %s has no torch (apt-get install python3-torch): %s\n", python().c_str(),
              found.error().message.c_str());
  drk::testing::skipped_for_missing_device() = true;
  return nullptr;
}

// One cache for the whole binary: its precompiled header (tens of seconds) is built once.
const std::string& shared_cache() {
  static const drk::Result<drk::TemporaryDirectory> cache = drk::TemporaryDirectory::create("drk-extension-test");
  DRK_REQUIRE(cache.ok());
  return cache->path();
}

InlineExtension twice_extension() {
  InlineExtension extension;
  extension.name = "twice_ext";
  extension.line = 7;
  extension.cpp_sources = {"torch::Tensor twice(torch::Tensor x) { return x * 2; }"};
  extension.functions = {{"twice", "twice"}};
  return extension;
}

// What `python` prints running `statement` on the module `built` (as `module`), loaded as the
// evaluator's sandbox would load it in place of load_inline's; `library_path` is searched first
// for the shared libraries the module needs.
std::string run_on_module(const BuiltExtension& built, const std::string& statement,
                          const std::string& library_path = "") {
  const std::string script = "import importlib.util, torch\n"
                             "spec = importlib.util.spec_from_file_location('" + built.module_name + "', '" +
                             built.module_path + "')\n"
                             "module = importlib.util.module_from_spec(spec)\n"
                             "spec.loader.exec_module(module)\n" + statement + "\n";
  auto run = system_command_runner()->run({"/usr/bin/env", "LD_LIBRARY_PATH=" + library_path, python(), "-c", script},
                                          std::chrono::seconds(60));
  DRK_REQUIRE(run);
  DRK_INFO(run->output);
  return run->output;
}

std::string call_twice(const BuiltExtension& built) {
  return run_on_module(built, "print(module.twice(torch.ones(3)).tolist())");
}

}  // namespace

DRK_TEST_CASE("main.cpp is torch's: its header, the sources and a binding per function") {
  InlineExtension extension = twice_extension();
  extension.cuda_sources = {"__global__ void k() {}"};
  const ExtensionSources sources = extension_sources(extension);
  DRK_CHECK(sources.main_cpp ==
            "#include <torch/extension.h>\n"
            "torch::Tensor twice(torch::Tensor x) { return x * 2; }\n"
            "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
            "m.def(\"twice\", torch::wrap_pybind_function(twice), \"twice\");\n"
            "}");
  DRK_CHECK(sources.cuda_cu == "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"
                               "__global__ void k() {}");
  extension.with_pytorch_error_handling = false;
  extension.no_implicit_headers = true;
  const ExtensionSources bare = extension_sources(extension);
  DRK_CHECK(bare.main_cpp.find("#include") == std::string::npos);
  DRK_CHECK(bare.main_cpp.find("m.def(\"twice\", twice, \"twice\");") != std::string::npos);
  DRK_CHECK(bare.cuda_cu == "__global__ void k() {}");
}

DRK_TEST_CASE("a CPU extension builds, imports and runs; the second build is a cache hit") {
  const TorchFacts* torch = facts();
  if (!torch) return;
  auto builder = TorchExtensionBuilder::create({.cache_dir = shared_cache()}, *torch);
  DRK_REQUIRE(builder);

  auto built = (*builder)->build(twice_extension());
  DRK_REQUIRE_MESSAGE(built.ok(), (built ? std::string() : built.error().message));
  DRK_CHECK_FALSE(built->cached);
  DRK_CHECK(built->used_precompiled_header);
  DRK_CHECK(built->narrow_main);
  DRK_CHECK(built->module_path.ends_with("/twice_ext" + torch->extension_suffix));
  DRK_CHECK(call_twice(*built) == "[2.0, 2.0, 2.0]\n");

  auto again = (*builder)->build(twice_extension());
  DRK_REQUIRE(again);
  DRK_CHECK(again->cached);
  DRK_CHECK(again->module_path == built->module_path);
  DRK_CHECK(again->build_ms < 50.0);
}

DRK_TEST_CASE("main.cpp that needs more of torch than the narrow headers is compiled with torch/extension.h") {
  const TorchFacts* torch = facts();
  if (!torch) return;
  auto builder = TorchExtensionBuilder::create({.cache_dir = shared_cache()}, *torch);
  DRK_REQUIRE(builder);
  InlineExtension extension = twice_extension();
  extension.name = "twice_nn_ext";
  // torch::nn is torch/all.h's, not torch/types.h's.
  extension.cpp_sources = {"#include <torch/extension.h>\n"
                           "torch::Tensor twice(torch::Tensor x) { return torch::nn::functional::relu(x) * 2; }"};
  auto built = (*builder)->build(extension);
  DRK_REQUIRE_MESSAGE(built.ok(), (built ? std::string() : built.error().message));
  DRK_CHECK_FALSE(built->narrow_main);
  DRK_CHECK(built->used_precompiled_header);
  // Only the build that compiled speaks: the narrow attempt's errors are not the candidate's.
  DRK_CHECK(built->compiler_output.find("error") == std::string::npos);
  DRK_CHECK(call_twice(*built) == "[2.0, 2.0, 2.0]\n");
}

DRK_TEST_CASE("an extension that does not compile is a compile_error with the compiler's message, cached") {
  const TorchFacts* torch = facts();
  if (!torch) return;
  auto builder = TorchExtensionBuilder::create({.cache_dir = shared_cache()}, *torch);
  DRK_REQUIRE(builder);
  InlineExtension broken = twice_extension();
  broken.cpp_sources = {"torch::Tensor twice(torch::Tensor x) { return x * undefined_factor; }"};

  auto failed = (*builder)->build(broken);
  DRK_REQUIRE_FALSE(failed);
  DRK_CHECK(failed.error().code == drk::Errc::compile_error);
  const std::string& message = failed.error().message;
  DRK_INFO(message);
  DRK_CHECK(message.find("main.cpp:2:") != std::string::npos);
  DRK_CHECK(message.find("undefined_factor") != std::string::npos);
  DRK_CHECK(message.find(shared_cache()) == std::string::npos);

  auto again = (*builder)->build(broken);
  DRK_REQUIRE_FALSE(again);
  DRK_CHECK(again.error().message == message);
}

DRK_TEST_CASE("main.cpp is compiled with the precompiled torch/extension.h, not by parsing it again") {
  const TorchFacts* torch = facts();
  if (!torch) return;
  auto builder = TorchExtensionBuilder::create({.cache_dir = shared_cache()}, *torch);
  DRK_REQUIRE(builder);
  const InlineExtension extension = twice_extension();
  auto header = (*builder)->precompiled_header(extension);
  DRK_REQUIRE_MESSAGE(header.ok(), (header ? std::string() : header.error().message));
  auto scratch = drk::TemporaryDirectory::create("drk-extension-test");
  DRK_REQUIRE(scratch);
  const std::string main_cpp = scratch->path() + "/main.cpp";
  DRK_REQUIRE(drk::write_file_atomically(drk::real_file_system(), main_cpp, extension_sources(extension).main_cpp));

  // -H lists each header read: "! X.gch" for a precompiled header used, "x X.gch" for one refused.
  std::vector<std::string> argv = {"c++"};
  for (const auto& flag : (*builder)->cpp_flags(extension)) argv.push_back(flag);
  for (const char* flag : {"-include", header->c_str(), "-Winvalid-pch", "-H", "-fsyntax-only", main_cpp.c_str()})
    argv.push_back(flag);
  auto run = system_command_runner()->run(argv, std::chrono::seconds(300));
  DRK_REQUIRE(run);
  DRK_INFO(run->output.substr(0, 2000));
  DRK_CHECK(run->succeeded());
  DRK_CHECK(run->output.starts_with("! " + *header + ".gch"));
  DRK_CHECK(run->output.find("invalid") == std::string::npos);
}

namespace {

const char kNvcc[] = "/usr/local/cuda/bin/nvcc";

// This torch with CUDA: the CUDA toolkit's headers, nvcc and runtime, and for torch's own CUDA
// libraries (which a CPU torch lacks, and these modules do not call) empty ones in `stubs`.
TorchFacts with_cuda(TorchFacts facts, const std::string& stubs) {
  facts.cuda_version = "13.0";
  facts.cuda_home = "/usr/local/cuda";
  facts.cuda_include_paths = {"/usr/local/cuda/include"};
  facts.cuda_library_paths = {"/usr/local/cuda/lib64", stubs};
  facts.cxx_standard = "c++17";  // CUDA 13's headers need it
  return facts;
}

InlineExtension cuda_extension(const std::string& name, const std::string& kernel, const std::string& launch) {
  InlineExtension extension;
  extension.name = name;
  extension.line = 4;
  extension.cpp_sources = {"torch::Tensor scaled(torch::Tensor x);"};
  extension.cuda_sources = {"#include <torch/extension.h>\n" + kernel +
                            "\ntorch::Tensor scaled(torch::Tensor x) {\n"
                            "  auto y = torch::empty_like(x);\n"
                            "  int n = x.numel();\n  " +
                            launch + "\n  return y;\n}\n"};
  extension.functions = {{"scaled", "scaled"}};
  return extension;
}

// Whether the module at `built` imports (every symbol it needs resolved: CPython loads modules
// with RTLD_NOW) and has `scaled`.
bool imports_with_scaled(const BuiltExtension& built, const std::string& stubs) {
  return run_on_module(built, "print(hasattr(module, 'scaled'))", stubs + ":/usr/local/cuda/lib64") == "True\n";
}

}  // namespace

DRK_TEST_CASE("a CUDA extension's kernel is compiled by nvcc without torch, its host code by g++, and they link") {
  // (Linked and imported here; launched on the H200 by the GPU script's load_inline cases.)
  const TorchFacts* torch = facts();
  if (!torch) return;
  if (!std::filesystem::exists(kNvcc)) {
    std::printf("not run: the CUDA extension case needs %s (the CUDA toolkit)\n", kNvcc);
    return;
  }
  auto stubs = drk::TemporaryDirectory::create("drk-torch-cuda-stubs");
  DRK_REQUIRE(stubs);
  for (const char* library : {"libc10_cuda.so", "libtorch_cuda.so"}) {
    auto made = system_command_runner()->run(
        {"c++", "-shared", "-x", "c++", "/dev/null", "-o", stubs->path() + "/" + library}, std::chrono::seconds(60));
    DRK_REQUIRE((made && made->succeeded()));
  }
  auto builder = TorchExtensionBuilder::create({.cache_dir = shared_cache()}, with_cuda(*torch, stubs->path()));
  DRK_REQUIRE(builder);

  const auto headers = [] {
    size_t count = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(shared_cache() + "/pch"))
      count += entry.path().extension() == ".gch";
    return count;
  };
  const size_t headers_before = headers();
  auto split = (*builder)->build(cuda_extension(
      "scaled_split_ext", "__constant__ float factor[1];\n"
                          "__global__ void scale_kernel(const float* x, float* y, int n) {\n"
                          "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = factor[0] * x[i];\n}",
      "const float two = 2.f;\n  cudaMemcpyToSymbol(factor, &two, sizeof two);\n"
      "  scale_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);"));
  DRK_REQUIRE_MESSAGE(split.ok(), (split ? std::string() : split.error().message));
  DRK_CHECK_MESSAGE(split->cuda_split, split->cuda_whole_reason);
  DRK_CHECK(split->cuda_whole_reason.empty());
  // ptxas's report of the candidate's kernel, which the Evaluator reads, is in the output.
  DRK_CHECK(split->compiler_output.find("_Z12scale_kernelPKfPfi") != std::string::npos);
  DRK_CHECK(imports_with_scaled(*split, stubs->path()));
  // Both units compiled with their narrow headers: main.cpp's and the host unit's, precompiled,
  // and no torch/extension.h.
  DRK_CHECK(split->narrow_main);
  DRK_CHECK(split->narrow_host);
  DRK_CHECK(headers() == headers_before + 2);

  // Another kernel behind the same declaration and name: main.cpp's object is linked, not
  // compiled, and the module imports. (The same kernel under a new name first, for the time of a
  // build that compiles main.cpp with its headers present.)
  const auto grid_stride = [&](const std::string& name) {
    return (*builder)->build(cuda_extension(
        name, "__global__ void scale_kernel(const float* x, float* y, int n) {\n"
              "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
              "    y[i] = 2.f * x[i];\n}",
        "scale_kernel<<<132, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);"));
  };
  auto renamed = grid_stride("scaled_renamed_ext");
  DRK_REQUIRE_MESSAGE(renamed.ok(), (renamed ? std::string() : renamed.error().message));
  DRK_CHECK_FALSE(renamed->main_reused);
  auto faster = grid_stride("scaled_split_ext");
  DRK_REQUIRE_MESSAGE(faster.ok(), (faster ? std::string() : faster.error().message));
  DRK_CHECK_FALSE(faster->cached);
  DRK_CHECK(faster->main_reused);
  DRK_CHECK(faster->narrow_main);
  DRK_CHECK(imports_with_scaled(*faster, stubs->path()));
  std::printf("split CUDA extension: %.0f ms with its headers built, %.0f ms with them present, %.0f ms for a new "
              "kernel behind bindings built before\n",
              split->build_ms, renamed->build_ms, faster->build_ms);

  // A kernel template's instances, named by AT_DISPATCH in the host unit (float, double and
  // torch's Half), are instantiated in the device unit.
  auto dispatched = (*builder)->build(cuda_extension(
      "scaled_dispatch_ext", "template <typename T>\n__global__ void scale_kernel(const T* x, T* y, int n) {\n"
                             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = T(2) * x[i];\n}",
      "AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), \"scaled\", ([&] {\n"
      "    scale_kernel<scalar_t><<<(n + 255) / 256, 256>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);\n"
      "  }));"));
  DRK_REQUIRE_MESSAGE(dispatched.ok(), (dispatched ? std::string() : dispatched.error().message));
  DRK_CHECK_MESSAGE(dispatched->cuda_split, dispatched->cuda_whole_reason);
  DRK_CHECK(dispatched->narrow_host);
  DRK_CHECK(dispatched->compiler_output.find("_Z12scale_kernelIdEvPKT_PS0_i") != std::string::npos);
  DRK_CHECK(dispatched->compiler_output.find("_Z12scale_kernelIN3c104HalfEEvPKT_PS2_i") != std::string::npos);
  DRK_CHECK(imports_with_scaled(*dispatched, stubs->path()));

  // A kernel a macro defines is out of the split's sight: its host unit does not compile, and the
  // whole cuda.cu is compiled by nvcc, as torch compiles it.
  auto whole = (*builder)->build(cuda_extension(
      "scaled_whole_ext", "#define SCALE_KERNEL(name, factor) __global__ void name(const float* x, float* y, int n) { \\\n"
                          "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = factor * x[i]; }\n"
                          "SCALE_KERNEL(scale_kernel, 2.f)",
      "scale_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);"));
  DRK_REQUIRE_MESSAGE(whole.ok(), (whole ? std::string() : whole.error().message));
  DRK_CHECK_FALSE(whole->cuda_split);
  DRK_CHECK(whole->cuda_whole_reason.find("its split did not compile") != std::string::npos);
  DRK_CHECK(imports_with_scaled(*whole, stubs->path()));
}
