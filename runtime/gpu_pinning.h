// The device a process pinned to `gpu: K` is given as CUDA_VISIBLE_DEVICES: the K-th of the
// devices its own environment already lets it see when CUDA_VISIBLE_DEVICES is set (Slurm sets
// it to the GPUs of the job: K indexes those, not the machine's), else device K.
//
//   pinned_device(1, nullptr) == "1";  pinned_device(1, "4,6") == "6";  pinned_device(0, "GPU-5f0a,GPU-77c1") == "GPU-5f0a"
//
// A K past the end of the list gives "" (no device: CUDA then finds none, and the process's
// engine says so); the placement of a Slurm task checks K against the job's GPUs first
// (runtime/nodes/slurm_placement.h). Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace drk::runtime {

inline std::string pinned_device(int gpu, const char* visible_devices) {
  if (visible_devices == nullptr || *visible_devices == '\0') return std::to_string(gpu);
  std::string_view list = visible_devices;
  for (int skipped = 0; skipped < gpu; ++skipped) {
    const auto comma = list.find(',');
    if (comma == std::string_view::npos) return "";
    list.remove_prefix(comma + 1);
  }
  return std::string(list.substr(0, list.find(',')));
}

}  // namespace drk::runtime
