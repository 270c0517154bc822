#include "kernels/schedule/space.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <stdexcept>
#include <utility>
#include <vector>

namespace drk::schedule {
namespace {

using FamilyTables = std::array<std::vector<Knob>, kFamilyCount>;

// The gemm family's knobs, which batched_gemm shares position for position (its renderers
// reuse the gemm renderers' pieces and static_assert the positions).
std::vector<Knob> cpu_gemm_knobs() {
  return {
      {"loop_order", {"ijk", "ikj"}},
      {"tile", {"none", "16", "32", "64"}},
      {"unroll", {"1", "4"}},
      {"use_library", {"own", "library"}},
      {"epilogue", {"fused", "separate"}},
      {"threads", {"1", "2", "4"}},
  };
}

// The CUDA gemm family's product knobs: all of batched_gemm's; gemm adds `math`.
std::vector<Knob> cuda_gemm_product_knobs() {
  return {
      {"block_tile", {"32", "64", "128"}},
      {"thread_tile", {"2", "4", "8"}},
      {"k_tile", {"8", "16", "32"}},
      {"staging", {"single", "double"}},
      {"use_library", {"own", "library"}},
      {"epilogue", {"fused", "separate"}},
  };
}

std::vector<Knob> with_knob(std::vector<Knob> knobs, Knob last) {
  knobs.push_back(std::move(last));
  return knobs;
}

const FamilyTables& cpu_tables() {
  static const FamilyTables kTables{{
      {
          {"fusion", {"fused", "unfused"}},
          {"vector_width", {"1", "4", "8", "16"}},
          {"chunk", {"1024", "4096", "16384", "65536"}},
          {"threads", {"1", "2", "4"}},
      },
      {
          {"passes", {"three_pass", "two_pass"}},
          {"vector_width", {"1", "4", "8"}},
          {"inner_tile", {"16", "64", "256"}},
          {"threads", {"1", "2", "4"}},
      },
      cpu_gemm_knobs(),
      {
          {"strategy", {"per_output", "accumulate_rows"}},
          {"vector_width", {"1", "4", "8"}},
          {"inner_tile", {"16", "64", "256"}},
          {"threads", {"1", "2", "4"}},
      },
      with_knob(cpu_gemm_knobs(), {"parallel_over", {"batch", "rows"}}),
      {
          {"algorithm", {"direct", "im2col", "im2col_library"}},
          {"channel_tile", {"1", "4", "8"}},
          {"vector_width", {"1", "4", "8"}},
          {"epilogue", {"fused", "separate"}},
          {"threads", {"1", "2", "4"}},
      },
      {
          {"passes", {"three_pass", "online"}},
          {"vector_width", {"1", "4", "8"}},
          {"rows_per_item", {"1", "8", "64"}},
          {"threads", {"1", "2", "4"}},
      },
      {
          {"algorithm", {"materialize", "online"}},
          {"key_tile", {"16", "64", "256"}},
          {"vector_width", {"1", "4", "8"}},
          {"threads", {"1", "2", "4"}},
      },
  }};
  return kTables;
}

const FamilyTables& cuda_tables() {
  static const FamilyTables kTables{{
      {
          {"fusion", {"fused", "pairs", "unfused"}},
          {"vector_width", {"1", "2", "4"}},
          {"elements_per_thread", {"1", "2", "4", "8"}},
          {"threads", {"128", "256", "512", "1024"}},
          {"grid", {"cover", "persistent"}},
      },
      {
          {"strategy", {"warp_per_row", "block_per_row"}},
          {"passes", {"three_pass", "online"}},
          {"vector_width", {"1", "4"}},
          {"threads", {"128", "256", "512", "1024"}},
      },
      with_knob(cuda_gemm_product_knobs(), {"math", {"simt", "tensor_core"}}),
      {
          {"strategy", {"thread_per_output", "warp_per_output", "block_per_output"}},
          {"vector_width", {"1", "4"}},
          {"unroll", {"1", "4"}},
          {"threads", {"128", "256", "512", "1024"}},
      },
      cuda_gemm_product_knobs(),
      {
          {"algorithm", {"direct", "implicit_gemm"}},
          {"channel_tile", {"4", "8", "16"}},
          {"spatial_tile", {"8", "16", "32"}},
          {"staging", {"none", "shared"}},
          {"epilogue", {"fused", "separate"}},
          {"threads", {"128", "256"}},
      },
      {
          {"strategy", {"warp_per_row", "block_per_row"}},
          {"passes", {"three_pass", "online"}},
          {"vector_width", {"1", "4"}},
          {"threads", {"128", "256", "512", "1024"}},
      },
      {
          {"algorithm", {"three_kernels", "fused_online"}},
          {"query_tile", {"16", "32", "64"}},
          {"key_tile", {"16", "32", "64"}},
          {"threads", {"128", "256"}},
      },
  }};
  return kTables;
}

const FamilyTables& tables(Device device) { return device == Device::cuda ? cuda_tables() : cpu_tables(); }

}  // namespace

std::string_view family_name(Family family) {
  switch (family) {
    case Family::elementwise: return "elementwise";
    case Family::rowwise: return "rowwise";
    case Family::gemm: return "gemm";
    case Family::reduction: return "reduction";
    case Family::batched_gemm: return "batched_gemm";
    case Family::conv2d: return "conv2d";
    case Family::cross_entropy: return "cross_entropy";
    case Family::attention: return "attention";
  }
  return "unknown";
}

Result<Family> parse_family(std::string_view name) {
  for (int index = 0; index < kFamilyCount; ++index) {
    const auto family = static_cast<Family>(index);
    if (family_name(family) == name) return family;
  }
  return make_error(Errc::invalid_argument,
                    "task family '" + std::string(name) +
                        "' is unknown: the embedded policy renders elementwise, rowwise, gemm, reduction, "
                        "batched_gemm, conv2d, cross_entropy and attention");
}

std::string_view device_name(Device device) { return device == Device::cuda ? "cuda" : "cpu"; }

Result<Device> parse_device(std::string_view name) {
  if (name == "cpu") return Device::cpu;
  if (name == "cuda") return Device::cuda;
  return make_error(Errc::invalid_argument,
                    "device '" + std::string(name) + "' is unknown: the embedded policy renders for cpu or cuda");
}

std::string_view precision_name(Precision precision) {
  switch (precision) {
    case Precision::float16: return "float16";
    case Precision::bfloat16: return "bfloat16";
    case Precision::float8_e4m3fn: return "float8_e4m3fn";
    case Precision::float8_e5m2: return "float8_e5m2";
    case Precision::float32: break;
  }
  return "float32";
}

bool renders_precision(Family family, Device device, Precision precision) {
  switch (precision) {
    case Precision::float32: return true;
    case Precision::float16:
    case Precision::bfloat16:
      return family == Family::elementwise || family == Family::rowwise || family == Family::reduction ||
             family == Family::cross_entropy ||
             (device == Device::cuda && (family == Family::gemm || family == Family::batched_gemm)) ||
             (device == Device::cpu && family == Family::attention);
    case Precision::float8_e4m3fn:
    case Precision::float8_e5m2: return family == Family::elementwise || (device == Device::cuda && family == Family::gemm);
  }
  return false;
}

std::string rendered_precisions() {
  return "float32 kernels for every family, float16 and bfloat16 for the elementwise, rowwise, reduction and "
         "cross_entropy families on both devices, the cuda gemm (tensor cores) and batched_gemm families and the cpu "
         "attention family, and FP8 "
         "(float8_e4m3fn, float8_e5m2) for the elementwise family on both devices and the cuda gemm family (FP8 tensor "
         "cores)";
}

std::span<const Knob> knobs(Family family, Device device) {
  return tables(device).at(static_cast<size_t>(family));
}

int max_option_slots(Device device) {
  int widest = 0;
  for (const auto& table : tables(device)) {
    int slots = 0;
    for (const auto& knob : table) slots += static_cast<int>(knob.options.size());
    widest = std::max(widest, slots);
  }
  return widest;
}

const std::string& Choice::value(int knob) const {
  return knobs(family, device)[static_cast<size_t>(knob)].options.at(at(knob));
}

std::string Choice::describe() const {
  std::string text;
  const auto family_knobs = knobs(family, device);
  for (size_t index = 0; index < options.size() && index < family_knobs.size(); ++index) {
    if (!text.empty()) text += ' ';
    text += family_knobs[index].name + "=" + value(static_cast<int>(index));
  }
  return text;
}

Status validate(const Choice& choice) {
  const auto family_knobs = knobs(choice.family, choice.device);
  if (choice.options.size() != family_knobs.size()) {
    return make_error(Errc::invalid_argument,
                      "a " + std::string(device_name(choice.device)) + " " +
                          std::string(family_name(choice.family)) + " schedule needs " +
                          std::to_string(family_knobs.size()) + " options, got " +
                          std::to_string(choice.options.size()));
  }
  for (size_t index = 0; index < family_knobs.size(); ++index) {
    if (choice.options[index] >= family_knobs[index].options.size()) {
      return make_error(Errc::invalid_argument,
                        "option " + std::to_string(choice.options[index]) + " of knob '" +
                            family_knobs[index].name + "' is out of range: it has " +
                            std::to_string(family_knobs[index].options.size()) + " options");
    }
  }
  return {};
}

bool option_applies(Family family, Device device, Precision precision, int knob, uint16_t option) {
  if (device != Device::cuda || (family != Family::gemm && family != Family::batched_gemm)) return true;
  const auto& knob_entry = knobs(family, device)[static_cast<size_t>(knob)];
  if (option >= knob_entry.options.size()) return true;  // "keep": the previous turn's option, which applied
  const std::string& value = knob_entry.options[option];
  if (knob_entry.name == "math" && value == "tensor_core") return precision != Precision::float32;
  if (knob_entry.name == "use_library" && value == "library") return precision == Precision::float32;
  return true;
}

Status validate(const Choice& choice, Precision precision) {
  if (auto status = validate(choice); !status) return status;
  const auto family_knobs = knobs(choice.family, choice.device);
  for (size_t index = 0; index < family_knobs.size(); ++index) {
    const int knob = static_cast<int>(index);
    if (option_applies(choice.family, choice.device, precision, knob, choice.options[index])) continue;
    return make_error(Errc::invalid_argument,
                      "option " + family_knobs[index].name + "=" + choice.value(knob) + " of the " +
                          std::string(device_name(choice.device)) + " " + std::string(family_name(choice.family)) +
                          " space does not apply to " + std::string(precision_name(precision)) +
                          " tasks (kernels/schedule/space.h, docs/scheduling-space.md)");
  }
  return {};
}

int numeric_value(const Choice& choice, int knob) {
  const std::string& text = choice.value(knob);
  int parsed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw std::logic_error("knob option '" + text + "' is not numeric");
  }
  return parsed;
}

}  // namespace drk::schedule
