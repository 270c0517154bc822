// KernelBench-format sources the KernelBench integration tests share (nothing of KernelBench is in
// this repository): problems as KernelBench writes them (a Model, get_inputs(), get_init_inputs())
// an honest candidate (a ModelNew) and a hacking one.
#pragma once

namespace drk::testing {

// ReLU of a 16 x 4096 tensor.
inline constexpr const char* kRelu = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    """Simple model that performs a ReLU activation."""
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)

batch_size = 16
dim = 4096

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return []
)";

// Weights from the seeded constructor, and a plain value among forward's arguments.
inline constexpr const char* kLinearScale = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    """A linear layer, a GELU, then a scale."""
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x, factor):
        return torch.nn.functional.gelu(self.linear(x)) * factor

def get_inputs():
    return [torch.randn(32, 256), 0.5]

def get_init_inputs():
    return [256, 128]
)";

// kRelu's ModelNew, written another way.
inline constexpr const char* kHonestRelu = R"(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
)";

// A kRelu candidate that returns its input, rectified in place: the output aliases the input.
inline constexpr const char* kReturnsInput = R"(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_(min=0.0)
)";

}  // namespace drk::testing
