// NvmlEnergy: the GPU's total-energy counter (NVML's nvmlDeviceGetTotalEnergyConsumption, in
// millijoules since the driver loaded), for energy per call.
//
// NVML is loaded at run time with dlopen("libnvidia-ml.so.1"): the library ships with the
// driver, not the toolkit, and there is no nvml.h to build against, so the few entry points
// used are declared here. A machine without the driver (CI) gets Errc::unsupported naming the
// call that failed, never a crash. The device is found by its PCI bus id, so that it is the one
// the CUDA runtime calls device 0 whatever CUDA_VISIBLE_DEVICES says.
//
// The counter is updated by the driver only every few tens of milliseconds: read it around a
// batch that lasts far longer than that (energy_of in cuda_sandbox_energy.cpp).
//
// Ownership: RAII; the destructor calls nvmlShutdown and dlclose. Thread-safety: one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/result.h"

namespace drk::evaluator::cuda {

class NvmlEnergy {
 public:
  // pci_bus_id as cudaDeviceGetPCIBusId writes it ("0000:3b:00.0").
  static Result<std::unique_ptr<NvmlEnergy>> open(const std::string& pci_bus_id);
  ~NvmlEnergy();
  NvmlEnergy(const NvmlEnergy&) = delete;
  NvmlEnergy& operator=(const NvmlEnergy&) = delete;

  // Millijoules consumed by the device since the driver loaded.
  Result<uint64_t> total_millijoules() const;

 private:
  struct Api;
  NvmlEnergy() = default;
  void* library_ = nullptr;
  std::unique_ptr<Api> api_;
  void* device_ = nullptr;  // nvmlDevice_t
  bool initialized_ = false;
};

}  // namespace drk::evaluator::cuda
