// The host sandbox (drk-sandbox): candidates run on the CPU, on the shared region itself, so
// there is no device to mirror it on (sandbox_device.h).
#include "actors/evaluator/sandbox_device.h"

namespace drk::evaluator {

std::unique_ptr<SandboxDevice> make_sandbox_device(const SandboxDeviceOptions&, std::string&) { return nullptr; }
bool sandbox_runs_on_device() { return false; }

}  // namespace drk::evaluator
