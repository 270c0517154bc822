#include "runtime/topology/visible_gpus.h"

#include <cstdlib>

namespace drk::runtime {
namespace {

std::optional<int> device_index(const std::string& text) {
  if (text.empty() || text.size() > 6) return std::nullopt;
  int value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

}  // namespace

Result<VisibleGpus> visible_gpus(const std::optional<std::string>& cuda_visible_devices,
                                 const CudaDeviceCount& count) {
  VisibleGpus visible;
  if (cuda_visible_devices) {
    visible.source = "CUDA_VISIBLE_DEVICES=" + *cuda_visible_devices;
    std::size_t start = 0;
    while (start <= cuda_visible_devices->size() && !trimmed(*cuda_visible_devices).empty()) {
      const auto comma = cuda_visible_devices->find(',', start);
      const std::string entry =
          trimmed(cuda_visible_devices->substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (entry == "-1") break;  // CUDA stops reading the list here
      const auto index = device_index(entry);
      if (!index) {
        return make_error(Errc::invalid_argument,
                          visible.source + " names device '" + entry +
                              "' by something other than its index; `gpus:` pins processes by index: set "
                              "CUDA_VISIBLE_DEVICES to indices (e.g. 0,1) or unset it");
      }
      visible.devices.push_back(*index);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return visible;
  }
  auto counted = count ? count() : Result<int>(make_error(Errc::unsupported, "this program cannot count CUDA devices"));
  if (!counted) {
    visible.source = "no CUDA device (" + counted.error().message + ")";
    return visible;
  }
  for (int device = 0; device < *counted; ++device) visible.devices.push_back(device);
  visible.source = std::to_string(*counted) + " CUDA device" + (*counted == 1 ? "" : "s");
  return visible;
}

Result<VisibleGpus> visible_gpus_of_this_process(const CudaDeviceCount& count) {
  const char* value = std::getenv("CUDA_VISIBLE_DEVICES");
  return visible_gpus(value ? std::optional<std::string>(value) : std::nullopt, count);
}

}  // namespace drk::runtime
