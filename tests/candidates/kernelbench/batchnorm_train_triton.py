# KernelBench-format training-mode BatchNorm2d, optionally followed by a residual add and a ReLU,
# in Triton: the subgraphs `drk model split` finds in level 3's ResNet blocks. Three kernels:
# per-(sample, channel) partial sums of x and x*x in one pass over the input; per-channel
# statistics (in float64, from float32 partials over a few thousand elements each), the running
# buffers' update and the affine folded into a scale and shift; then one pass that normalises,
# adds the residual and applies the ReLU. PyTorch's modules make 3 (BN), 3 (add) and 2 (ReLU)
# passes over memory where this makes 2 to 4.
#
# The four constants fit it to one subgraph: BN_NAME is the BatchNorm2d's name in the subgraph's
# problem (the model's weights load into it under that name), CHANNELS its width, RESIDUAL and
# RELU what follows it. `tools/scripts/whole-model.sh` sets them from the split's split.json.
import torch
import torch.nn as nn
import triton
import triton.language as tl

BN_NAME = "bn2"
CHANNELS = 64
RESIDUAL = False
RELU = False

PARTS = 4  # programs per (sample, channel) plane
BLOCK = 2048


@triton.jit
def plane_sums(x_ptr, sums_ptr, squares_ptr, hw, chunk, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    part = tl.program_id(1)
    start = part * chunk
    base = x_ptr + plane.to(tl.int64) * hw
    total = tl.zeros([BLOCK], tl.float32)
    total_squares = tl.zeros([BLOCK], tl.float32)
    for offset in range(start, start + chunk, BLOCK):
        index = offset + tl.arange(0, BLOCK)
        mask = (index < hw) & (index < start + chunk)
        value = tl.load(base + index, mask=mask, other=0.0)
        total += value
        total_squares += value * value
    slot = plane * tl.num_programs(1) + part
    tl.store(sums_ptr + slot, tl.sum(total))
    tl.store(squares_ptr + slot, tl.sum(total_squares))


@triton.jit
def channel_statistics(sums_ptr, squares_ptr, weight_ptr, bias_ptr, running_mean_ptr, running_var_ptr,
                       scale_ptr, shift_ptr, samples, channels, parts, count, eps, momentum,
                       SLOTS: tl.constexpr):
    channel = tl.program_id(0)
    p = tl.arange(0, SLOTS)
    mask = p < samples * parts
    slot = ((p // parts) * channels + channel) * parts + p % parts
    total = tl.sum(tl.load(sums_ptr + slot, mask=mask, other=0.0).to(tl.float64))
    total_squares = tl.sum(tl.load(squares_ptr + slot, mask=mask, other=0.0).to(tl.float64))
    n = count.to(tl.float64)
    mean = total / n
    variance = tl.maximum(total_squares / n - mean * mean, 0.0)
    scale = tl.load(weight_ptr + channel) / tl.sqrt(variance.to(tl.float32) + eps)
    tl.store(scale_ptr + channel, scale)
    tl.store(shift_ptr + channel, tl.load(bias_ptr + channel) - mean.to(tl.float32) * scale)
    unbiased = (variance * n / (n - 1.0)).to(tl.float32)
    tl.store(running_mean_ptr + channel,
             (1.0 - momentum) * tl.load(running_mean_ptr + channel) + momentum * mean.to(tl.float32))
    tl.store(running_var_ptr + channel, (1.0 - momentum) * tl.load(running_var_ptr + channel) + momentum * unbiased)


@triton.jit
def normalise(x_ptr, residual_ptr, y_ptr, scale_ptr, shift_ptr, hw, chunk, channels,
              HAS_RESIDUAL: tl.constexpr, HAS_RELU: tl.constexpr, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    part = tl.program_id(1)
    channel = plane % channels
    scale = tl.load(scale_ptr + channel)
    shift = tl.load(shift_ptr + channel)
    base = plane.to(tl.int64) * hw
    start = part * chunk
    for offset in range(start, start + chunk, BLOCK):
        index = offset + tl.arange(0, BLOCK)
        mask = (index < hw) & (index < start + chunk)
        y = tl.load(x_ptr + base + index, mask=mask) * scale + shift
        if HAS_RESIDUAL:
            y += tl.load(residual_ptr + base + index, mask=mask)
        if HAS_RELU:
            y = tl.maximum(y, 0.0)
        tl.store(y_ptr + base + index, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module(BN_NAME, nn.BatchNorm2d(CHANNELS))

    def forward(self, x, residual=None):
        bn = getattr(self, BN_NAME)
        x = x.contiguous()
        samples, channels = x.shape[0], x.shape[1]
        hw = x[0, 0].numel()
        planes = samples * channels
        chunk = triton.cdiv(triton.cdiv(hw, PARTS), BLOCK) * BLOCK
        parts = triton.cdiv(hw, chunk)
        scale = torch.empty(channels, device=x.device, dtype=torch.float32)
        shift = torch.empty_like(scale)
        if self.training:
            sums = torch.empty(planes * parts, device=x.device, dtype=torch.float32)
            squares = torch.empty_like(sums)
            plane_sums[(planes, parts)](x, sums, squares, hw, chunk, BLOCK=BLOCK)
            channel_statistics[(channels,)](sums, squares, bn.weight, bn.bias, bn.running_mean, bn.running_var,
                                            scale, shift, samples, channels, parts, float(samples * hw), bn.eps,
                                            bn.momentum, SLOTS=triton.next_power_of_2(samples * parts))
            bn.num_batches_tracked.add_(1)
        else:
            scale.copy_(bn.weight / torch.sqrt(bn.running_var + bn.eps))
            shift.copy_(bn.bias - bn.running_mean * scale)
        y = torch.empty_like(x)
        residual = residual.contiguous() if RESIDUAL else x
        normalise[(planes, parts)](x, residual, y, scale, shift, hw, chunk, channels,
                                   HAS_RESIDUAL=RESIDUAL, HAS_RELU=RELU, BLOCK=BLOCK)
        return y
