// The split of a load_inline cuda.cu: torch's code on the host side only, the kernels on the
// device side with their stubs declared for the host, launches written as cudafe++ writes them,
// lines kept; what cannot be kept whole is refused with its reason.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/compile/cuda_source_split.h"
#include "tests/doctest_drk.h"

using namespace drk::compile;

namespace {

// torch's cuda.cu for a ReLU candidate: the implicit headers, then the candidate's source.
const char kRelu[] = R"(#include <torch/types.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <torch/extension.h>
#define BLOCK 256
struct Range { long begin, end; };  // { not a body
constexpr int kUnroll = 4;
int calls = 0;
__device__ __forceinline__ float clamp0(float v) { return v > 0.f ? v : 0.f; }
__host__ __device__ inline int blocks_for(long n) { return (n + BLOCK - 1) / BLOCK; }
__global__ void __launch_bounds__(BLOCK) relu_kernel(const float* __restrict__ x, float* y, Range r) {
  long i = r.begin + blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < r.end) y[i] = clamp0(x[i]);
}
torch::Tensor relu_cuda(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor {<<<");
  auto y = torch::empty_like(x);
  ++calls;
  relu_kernel<<<blocks_for(x.numel()), BLOCK, 0,
                at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(),
                                                    Range{0, x.numel()});
  return y;
}
)";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string refusal(const std::string& source) {
  auto split = split_cuda_source(source);
  DRK_REQUIRE_FALSE(split);
  DRK_CHECK(split.error().code == drk::Errc::unsupported);
  return split.error().message;
}

}  // namespace

DRK_TEST_CASE("torch stays on the host side; the kernel and its device code on the device side") {
  auto split = split_cuda_source(kRelu);
  DRK_REQUIRE_MESSAGE(split.ok(), (split ? std::string() : split.error().message));
  DRK_CHECK(split->kernels == std::vector<std::string>{"relu_kernel"});
  DRK_CHECK(split->launches == 1);

  const std::string& device = split->device;
  DRK_CHECK_FALSE(has(device, "torch"));
  DRK_CHECK_FALSE(has(device, "relu_cuda"));
  DRK_CHECK_FALSE(has(device, "int calls"));
  for (const char* part : {"#include <cuda_runtime.h>", "#define BLOCK 256", "struct Range { long begin, end; };",
                           "constexpr int kUnroll = 4;", "__device__ __forceinline__ float clamp0",
                           "__host__ __device__ inline int blocks_for", "__global__ void __launch_bounds__(BLOCK)"})
    DRK_CHECK_MESSAGE(has(device, part), part);

  const std::string& host = split->host;
  for (const char* part : {"#include <torch/types.h>", "#include <torch/extension.h>", "#define BLOCK 256",
                           "struct Range { long begin, end; };", "int calls = 0;", "__host__ __device__ inline int blocks_for",
                           "extern \"C\" unsigned __cudaPushCallConfiguration("})
    DRK_CHECK_MESSAGE(has(host, part), part);
  DRK_CHECK_FALSE(has(host, "__global__ void"));
  DRK_CHECK_FALSE(has(host, "__launch_bounds__"));
  DRK_CHECK_FALSE(has(host, "clamp0"));
  DRK_CHECK(has(host, "void  relu_kernel(const float* __restrict__ x, float* y, Range r) ;"));
  // The launch as cudafe++ writes it; the string literal's "{<<<" is not a launch.
  DRK_CHECK(has(host, "(__cudaPushCallConfiguration(blocks_for(x.numel()), BLOCK, 0,\n"
                      "                at::cuda::getCurrentCUDAStream()) ? (void)0 : relu_kernel(x.data_ptr<float>(), "
                      "y.data_ptr<float>(),\n                                                    Range{0, x.numel()}))"));
  DRK_CHECK(has(host, "\"x must be a CUDA tensor {<<<\""));
}

DRK_TEST_CASE("each item keeps its line in cuda.cu, so compiler messages name the candidate's lines") {
  auto split = split_cuda_source(kRelu);
  DRK_REQUIRE(split);
  DRK_CHECK(has(split->device, "#line 11 \"cuda.cu\"\n__global__ void __launch_bounds__(BLOCK) relu_kernel("));
  DRK_CHECK(has(split->host, "#line 15 \"cuda.cu\"\ntorch::Tensor relu_cuda("));
  // The launch spans three lines and keeps them: `return y;` is still on line 22.
  const std::string host = split->host;
  const size_t function = host.find("#line 15 \"cuda.cu\"\n") + std::string("#line 15 \"cuda.cu\"\n").size();
  const size_t ret = host.find("  return y;", function);
  DRK_CHECK(std::count(host.begin() + static_cast<long>(function), host.begin() + static_cast<long>(ret), '\n') ==
            22 - 15);
}

DRK_TEST_CASE("namespaces and linkage blocks open and close on both sides") {
  auto split = split_cuda_source(R"(#include <torch/extension.h>
namespace ops {
extern "C" {
__global__ void fill(float* y, float v) { y[threadIdx.x] = v; }
}
torch::Tensor run(torch::Tensor y) { fill<<<1, 32>>>(y.data_ptr<float>(), 1.f); return y; }
}  // namespace ops
)");
  DRK_REQUIRE_MESSAGE(split.ok(), (split ? std::string() : split.error().message));
  DRK_CHECK(has(split->device, "namespace ops {"));
  DRK_CHECK(has(split->device, "extern \"C\" {"));
  DRK_CHECK(has(split->host, "namespace ops {"));
  DRK_CHECK(has(split->host, "void fill(float* y, float v) ;"));
  DRK_CHECK(has(split->host, "(__cudaPushCallConfiguration(1, 32) ? (void)0 : fill(y.data_ptr<float>(), 1.f))"));
  DRK_CHECK(std::count(split->device.begin(), split->device.end(), '}') ==
            std::count(split->device.begin(), split->device.end(), '{'));
}

DRK_TEST_CASE("what cannot be split whole is refused with its reason") {
  DRK_CHECK(has(refusal("static __global__ void k(float* y) {}\n"), "kernel 'k' has internal linkage"));
  DRK_CHECK(has(refusal("namespace {\n__global__ void k(float* y) {}\n}\n"), "kernel 'k' has internal linkage"));
  DRK_CHECK(has(refusal("__managed__ int count;\nint read() {\n  return count;\n}\n"),
                "line 2: host code names the device variable 'count'"));
  DRK_CHECK(has(refusal("__global__ void child(float* y) {}\n"
                        "__global__ void parent(float* y) { child<<<1, 1>>>(y); }\n"),
                "dynamic parallelism"));
  DRK_CHECK(has(refusal("void run(float* y) {\n  go><<<1, 1>>>(y);\n}\n"), "line 2: a launch whose kernel's template"));
  DRK_CHECK(has(refusal("void run(float* y) {\n  auto f = [] __device__ (float v) { return v; };\n}\n"), "device lambda"));
  DRK_CHECK(has(refusal("void run() {\n"), "a '{' that nothing closes"));
}

DRK_TEST_CASE("a __constant__ variable is the device unit's; the host unit only refers to nvcc's shadow of it") {
  auto split = split_cuda_source("__constant__ float scale[4];\n"
                                 "__global__ void k(float* y) { y[0] = scale[0]; }\n"
                                 "void run(float* y) { k<<<1, 1>>>(y); }\n");
  DRK_REQUIRE_MESSAGE(split.ok(), (split ? std::string() : split.error().message));
  DRK_CHECK(has(split->device, "__constant__ float scale[4];"));
  DRK_CHECK_FALSE(has(split->host, "__constant__ float"));
  DRK_CHECK(has(split->host, "static auto& scale = "));
}

DRK_TEST_CASE("the host compiler receives what nvcc passes its host compiler") {
  DRK_CHECK(host_compiler_flags({"-O3", "--use_fast_math", "-arch=sm_90", "-Xcompiler", "-fopenmp,-march=native",
                                 "-DTILE=32", "-Xptxas=-v", "--compiler-options=-O2", "-std=c++17", "-lineinfo", "-g"}) ==
            std::vector<std::string>{"-O3", "-fopenmp", "-march=native", "-DTILE=32", "-O2", "-std=c++17", "-g"});
}

DRK_TEST_CASE("a kernel template is declared for the host; its launches name the instance") {
  auto split = split_cuda_source(R"(#include <torch/extension.h>
namespace ops {
template <typename scalar_t, int kBlock>
__global__ void scale_kernel(const scalar_t* x, scalar_t* y, int n) { y[0] = x[0]; }
}
torch::Tensor scaled(torch::Tensor x) {
  auto y = torch::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "scaled", ([&] {
    ops::scale_kernel<scalar_t, 256><<<1, 256>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), 1);
  }));
  return y;
}
)");
  DRK_REQUIRE_MESSAGE(split.ok(), (split ? std::string() : split.error().message));
  DRK_CHECK(split->template_kernels == std::vector<std::string>{"ops::scale_kernel"});
  DRK_CHECK(has(split->host, "template <typename scalar_t, int kBlock>\n void scale_kernel(const scalar_t* x, scalar_t* y, int n) ;"));
  DRK_CHECK(has(split->host, "(__cudaPushCallConfiguration(1, 256) ? (void)0 : ops::scale_kernel<scalar_t, 256>("
                             "x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), 1))"));
}

DRK_TEST_CASE("the host unit's undefined instances become the device unit's explicit instantiations") {
  const std::string symbols = "                 U cudaGetLastError\n"
                              "                 U void ops::scale_kernel<float, 256>(float const*, float*, int)\n"
                              "                 U void ops::scale_kernel<double, 256>(double const*, double*, int)\n"
                              "                 U void other<float>(float*)\n";
  auto instances = explicit_instantiations(symbols, {"ops::scale_kernel"});
  DRK_REQUIRE(instances);
  DRK_CHECK(instances->includes.empty());
  DRK_CHECK(instances->instantiations ==
            "template __global__ void ops::scale_kernel<float, 256>(float const*, float*, int);\n"
            "template __global__ void ops::scale_kernel<double, 256>(double const*, double*, int);\n");
  auto half = explicit_instantiations("U void k<c10::Half>(c10::Half const*)\nU void k<c10::BFloat16>(c10::BFloat16 const*)\n"
                                      "U void k<c10::Half>(c10::Half const*, c10::Half*)\n", {"k"});
  DRK_REQUIRE(half);
  DRK_CHECK(half->includes == "#include <c10/util/Half.h>\n#include <c10/util/BFloat16.h>\n");
  auto torch_type = explicit_instantiations("U void k<c10::complex<float> >(c10::complex<float> const*)\n", {"k"});
  DRK_REQUIRE_FALSE(torch_type);
  DRK_CHECK(has(torch_type.error().message, "k<c10::complex<float> >"));
  auto lambda = explicit_instantiations("U void k<run()::{lambda()#1}>(int)\n", {"k"});
  DRK_REQUIRE_FALSE(lambda);
}

DRK_TEST_CASE("device-only APIs stay on the device side: their headers and the names that use them") {
  auto split = split_cuda_source(R"(#include <torch/extension.h>
#include <mma.h>
#include <cooperative_groups.h>
#include <cuda_fp16.h>
using namespace nvcuda;
namespace cg = cooperative_groups;
__global__ void k(const half* a, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  cg::this_thread_block().sync();
}
void run(const half* a, float* c) { k<<<1, 32>>>(a, c); }
)");
  DRK_REQUIRE_MESSAGE(split.ok(), (split ? std::string() : split.error().message));
  for (const char* part : {"#include <mma.h>", "#include <cooperative_groups.h>", "using namespace nvcuda;",
                           "namespace cg = cooperative_groups;"}) {
    DRK_CHECK_MESSAGE(has(split->device, part), part);
    DRK_CHECK_MESSAGE(!has(split->host, part), part);
  }
  DRK_CHECK(has(split->host, "#include <cuda_fp16.h>"));
  DRK_CHECK(has(split->host, "void k(const half* a, float* c) ;"));
}

DRK_TEST_CASE("host code reaches a __constant__ variable through nvcc's shadow of it, exported by the device unit") {
  auto split = split_cuda_source("namespace ops {\n__constant__ float weights[16] = {1.f};\n}\n"
                                 "void load(const float* w) { cudaMemcpyToSymbol(ops::weights, w, 64); }\n");
  DRK_REQUIRE_MESSAGE(split.ok(), (split ? std::string() : split.error().message));
  DRK_CHECK(has(split->device, "__constant__ float weights[16] = {1.f};"));
  DRK_CHECK(has(split->device, "extern \"C\" void* __drk_shadow_0() { return (void*)&weights; }"));
  DRK_CHECK(has(split->host, "struct __drk_shadow_type_0 { static float weights[16]; };\n"
                             "extern \"C\" void* __drk_shadow_0();\n"
                             "static auto& weights = *reinterpret_cast<decltype(__drk_shadow_type_0::weights)*>("
                             "__drk_shadow_0());"));
  DRK_CHECK(has(split->host, "cudaMemcpyToSymbol(ops::weights, w, 64);"));
}

DRK_TEST_CASE("device annotations a macro hides from the split are errors in the host unit") {
  auto split = split_cuda_source("#define KERNEL(name) __global__ void name(float* y) { y[0] = 1.f; }\n"
                                 "KERNEL(fill)\nvoid run(float* y) { fill<<<1, 1>>>(y); }\n");
  DRK_REQUIRE_MESSAGE(split.ok(), (split ? std::string() : split.error().message));
  DRK_CHECK(split->kernels.empty());
  // The host unit holds the macro's use; there `__global__` names nothing, so g++ stops.
  DRK_CHECK(has(split->host, "#define __global__ __global__" + std::string(kHiddenDeviceCode)));
  DRK_CHECK(split->host.find("#define __global__ __global___outside") < split->host.find("KERNEL(fill)"));
}
