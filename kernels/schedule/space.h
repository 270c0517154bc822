// The scheduling space of the embedded policy: per device (cpu: C++ candidates, cuda: CUDA C++
// candidates) and task family, a fixed list of knobs, each a list of options. A point of the
// space (a Choice) picks one option per knob; every point of every family renders a correct
// kernel (kernels/schedule/render.h), so the policy only ever decides how fast, never whether
// the kernel is right. docs/scheduling-space.md lists every knob.
//
// The lists are part of the policy's contract: a policy network serves one device's space, with
// one head per knob of each family and one output per option (plus "keep" from the second
// turn), and observations one-hot the previous turn's options. Appending options or knobs of a
// device changes that device's network: its old checkpoints no longer load (the other device's
// still do), and Policy::load says so.
//
// Some options apply to tasks of one precision only (option_applies): on cuda, the gemm family's
// math=tensor_core to 16-bit tasks (float32 tasks never run on tensor cores, where they would
// compute in TF32), and its use_library=library to float32 tasks (the library table has
// gemm_f32 only). The policy never samples an option that does not apply to its task, and
// render() refuses one.
//
// Thread-safety: immutable tables; free to read from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace drk::schedule {

// One per family of the task catalog (kernels/catalog: a task's `family`), in the order of the
// observation's one-hot and of the policy's heads.
enum class Family : uint8_t {
  elementwise = 0,
  rowwise = 1,
  gemm = 2,
  reduction = 3,
  batched_gemm = 4,
  conv2d = 5,
  cross_entropy = 6,
  attention = 7,
};
inline constexpr int kFamilyCount = 8;

std::string_view family_name(Family family);
// invalid_argument naming the families when `name` is none of them.
Result<Family> parse_family(std::string_view name);

// The device whose candidates a space renders (the device a run evaluates on).
enum class Device : uint8_t { cpu = 0, cuda = 1 };

std::string_view device_name(Device device);  // "cpu" | "cuda"
// invalid_argument naming the devices when `name` is neither.
Result<Device> parse_device(std::string_view name);

// The element type of a task's tensors (they share one): float32 everywhere; float16 and
// bfloat16 where renders_precision says (the cuda gemm family, on tensor cores, and the cuda
// batched_gemm family, on CUDA cores; the cpu attention family; the elementwise,
// rowwise, reduction and cross_entropy families on both devices, in float32 between a 16-bit load
// and a rounded store). The two FP8 precisions are an FP8 variant's (docs/tasks.md): FP8 input
// bytes each followed by a float32 scale, a bfloat16 output; the elementwise family renders them
// on both devices (decoded and scaled on load, in float32 between), the gemm family on cuda (FP8
// tensor cores).
enum class Precision : uint8_t { float32 = 0, float16 = 1, bfloat16 = 2, float8_e4m3fn = 3, float8_e5m2 = 4 };

// "float32" | "float16" | "bfloat16" | "float8_e4m3fn" | "float8_e5m2"
std::string_view precision_name(Precision precision);
inline bool is_float8(Precision precision) {
  return precision == Precision::float8_e4m3fn || precision == Precision::float8_e5m2;
}

// Whether the family's space on the device renders kernels for tasks of `precision`.
bool renders_precision(Family family, Device device, Precision precision);
// "float32 everywhere, float16 for the cuda gemm family, ...": for refusals.
std::string rendered_precisions();

struct Knob {
  std::string name;                  // "vector_width"
  std::vector<std::string> options;  // "1", "4", ... as written in Decision.value
};

// The knobs of a family on a device, in a fixed order (the order of Choice::options and of the
// heads).
std::span<const Knob> knobs(Family family, Device device);

// Knob positions, so that renderers read a Choice by name without string lookups.
// CPU (C++ candidates):
namespace elementwise_knob {
enum : int { fusion = 0, vector_width, chunk, threads };
}
namespace rowwise_knob {
enum : int { passes = 0, vector_width, inner_tile, threads };
}
namespace gemm_knob {
enum : int { loop_order = 0, tile, unroll, use_library, epilogue, threads };
}
namespace reduction_knob {
enum : int { strategy = 0, vector_width, inner_tile, threads };
}
namespace batched_gemm_knob {
enum : int { loop_order = 0, tile, unroll, use_library, epilogue, threads, parallel_over };
}
namespace conv2d_knob {
enum : int { algorithm = 0, channel_tile, vector_width, epilogue, threads };
}
namespace cross_entropy_knob {
enum : int { passes = 0, vector_width, rows_per_item, threads };
}
namespace attention_knob {
enum : int { algorithm = 0, key_tile, vector_width, threads };
}
// CUDA (CUDA C++ candidates):
namespace cuda_elementwise_knob {
enum : int { fusion = 0, vector_width, elements_per_thread, threads, grid };
}
namespace cuda_rowwise_knob {
enum : int { strategy = 0, passes, vector_width, threads };
}
namespace cuda_gemm_knob {
enum : int { block_tile = 0, thread_tile, k_tile, staging, use_library, epilogue, math };
}
namespace cuda_reduction_knob {
enum : int { strategy = 0, vector_width, unroll, threads };
}
namespace cuda_batched_gemm_knob {
enum : int { block_tile = 0, thread_tile, k_tile, staging, use_library, epilogue };
}
namespace cuda_conv2d_knob {
enum : int { algorithm = 0, channel_tile, spatial_tile, staging, epilogue, threads };
}
namespace cuda_cross_entropy_knob {
enum : int { strategy = 0, passes, vector_width, threads };
}
namespace cuda_attention_knob {
enum : int { algorithm = 0, query_tile, key_tile, threads };
}

// The widest one-hot encoding of any family's options on `device`: sum over its knobs of their
// option counts (the observation reserves this many slots for the previous turn's decisions).
int max_option_slots(Device device);

// One point of a family's space on a device: an option index per knob, in
// knobs(family, device) order. Never holds "keep": the policy resolves "keep" to the previous
// turn's option before rendering.
struct Choice {
  Family family = Family::elementwise;
  std::vector<uint16_t> options;
  Device device = Device::cpu;

  uint16_t at(int knob) const { return options.at(static_cast<size_t>(knob)); }
  // The option's text, e.g. value(elementwise_knob::vector_width) == "8".
  const std::string& value(int knob) const;
  // "fusion=fused vector_width=8 chunk=4096 threads=2", for people and logs.
  std::string describe() const;
};

// invalid_argument when the option count or an index does not fit the family's knobs on the
// choice's device.
Status validate(const Choice& choice);

// Whether option `option` of knob `knob` of the family on the device applies to tasks of
// `precision` (the header's note: cuda gemm's math and use_library knobs depend on it). The
// index one past the options ("keep" in the policy's decisions) applies.
bool option_applies(Family family, Device device, Precision precision, int knob, uint16_t option);

// validate(choice), then invalid_argument naming the knob, the option and the precision when an
// option does not apply to tasks of `precision`.
Status validate(const Choice& choice, Precision precision);

// The option text parsed as an integer ("16" -> 16), for numeric knobs.
int numeric_value(const Choice& choice, int knob);

}  // namespace drk::schedule
