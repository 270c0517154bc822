# KernelBench-format ReLU (level1/19_ReLU): a CUDA kernel through load_inline, one thread per element.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
__global__ void relu_kernel(const float* x, float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    long n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
relu = load_inline(name="drk_relu_cuda", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                   cuda_sources=cuda_source, functions=["relu_cuda"], verbose=False)

class ModelNew(nn.Module):
    def forward(self, x):
        return relu.relu_cuda(x)
