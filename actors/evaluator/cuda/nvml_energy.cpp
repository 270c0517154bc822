#include "actors/evaluator/cuda/nvml_energy.h"

#include <dlfcn.h>

namespace drk::evaluator::cuda {

// NVML's entry points as nvml.h declares them (nvmlReturn_t is an int enum, 0 = success;
// nvmlDevice_t an opaque pointer).
struct NvmlEnergy::Api {
  using Return = int;
  Return (*init)() = nullptr;                                             // nvmlInit_v2
  Return (*shutdown)() = nullptr;                                         // nvmlShutdown
  const char* (*error_string)(Return) = nullptr;                          // nvmlErrorString
  Return (*handle_by_pci_bus_id)(const char*, void**) = nullptr;          // nvmlDeviceGetHandleByPciBusId_v2
  Return (*total_energy)(void*, unsigned long long*) = nullptr;           // nvmlDeviceGetTotalEnergyConsumption

  std::string describe(const char* call, Return status) const {
    std::string text = error_string ? error_string(status) : "";
    return std::string(call) + " returned " + std::to_string(status) + (text.empty() ? "" : " (" + text + ")");
  }
};

namespace {

template <typename Function>
bool resolve(void* library, const char* name, Function& out) {
  out = reinterpret_cast<Function>(dlsym(library, name));
  return out != nullptr;
}

}  // namespace

Result<std::unique_ptr<NvmlEnergy>> NvmlEnergy::open(const std::string& pci_bus_id) {
  std::unique_ptr<NvmlEnergy> nvml(new NvmlEnergy());
  nvml->library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml->library_) {
    const char* why = dlerror();
    return make_error(Errc::unsupported, std::string("NVML is not available: dlopen(libnvidia-ml.so.1) failed: ") +
                                             (why ? why : "unknown reason") + " (it ships with the NVIDIA driver)");
  }
  nvml->api_ = std::make_unique<Api>();
  Api& api = *nvml->api_;
  for (auto [name, found] : {std::pair{"nvmlInit_v2", resolve(nvml->library_, "nvmlInit_v2", api.init)},
                             {"nvmlShutdown", resolve(nvml->library_, "nvmlShutdown", api.shutdown)},
                             {"nvmlErrorString", resolve(nvml->library_, "nvmlErrorString", api.error_string)},
                             {"nvmlDeviceGetHandleByPciBusId_v2",
                              resolve(nvml->library_, "nvmlDeviceGetHandleByPciBusId_v2", api.handle_by_pci_bus_id)},
                             {"nvmlDeviceGetTotalEnergyConsumption",
                              resolve(nvml->library_, "nvmlDeviceGetTotalEnergyConsumption", api.total_energy)}})
    if (!found)
      return make_error(Errc::unsupported, std::string("NVML is not usable: libnvidia-ml.so.1 lacks ") + name);
  if (auto status = api.init(); status != 0)
    return make_error(Errc::unsupported, "NVML is not usable: " + api.describe("nvmlInit_v2", status));
  nvml->initialized_ = true;
  if (auto status = api.handle_by_pci_bus_id(pci_bus_id.c_str(), &nvml->device_); status != 0)
    return make_error(Errc::unsupported, "NVML does not know the CUDA device at PCI bus id " + pci_bus_id + ": " +
                                             api.describe("nvmlDeviceGetHandleByPciBusId_v2", status));
  if (auto energy = nvml->total_millijoules(); !energy) return energy.error();
  return nvml;
}

NvmlEnergy::~NvmlEnergy() {
  if (initialized_ && api_ && api_->shutdown) api_->shutdown();
  if (library_) dlclose(library_);
}

Result<uint64_t> NvmlEnergy::total_millijoules() const {
  unsigned long long millijoules = 0;
  if (auto status = api_->total_energy(device_, &millijoules); status != 0)
    return make_error(Errc::unsupported, "NVML cannot read the energy counter: " +
                                             api_->describe("nvmlDeviceGetTotalEnergyConsumption", status));
  return static_cast<uint64_t>(millijoules);
}

}  // namespace drk::evaluator::cuda
