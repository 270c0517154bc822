#include "actors/evaluator/cuda/nvrtc_compiler.h"

#include <nvrtc.h>

#include <memory>

namespace drk::evaluator::cuda {
namespace {

struct ProgramDeleter {
  void operator()(nvrtcProgram* program) const {
    nvrtcDestroyProgram(program);
    delete program;
  }
};
using Program = std::unique_ptr<nvrtcProgram, ProgramDeleter>;

std::string program_log(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  nvrtcGetProgramLog(program, log.data());
  log.resize(size - 1);  // drop the terminating NUL
  return log;
}

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

Result<CudaBinary> compile_cuda(const std::string& source, const NvrtcOptions& options) {
  Program program(new nvrtcProgram(nullptr));
  if (const auto status = nvrtcCreateProgram(program.get(), source.c_str(),
                                             options.source_name.c_str(), 0, nullptr, nullptr);
      status != NVRTC_SUCCESS) {
    return make_error(Errc::internal, std::string("NVRTC cannot create a program: ") +
                                          nvrtcGetErrorString(status));
  }
  std::vector<std::string> arguments = {"--gpu-architecture=" + options.architecture,
                                        "--std=c++17"};
  if (options.line_info) arguments.push_back("--generate-line-info");
  for (const auto& dir : options.include_dirs) arguments.push_back("--include-path=" + dir);
  std::vector<const char*> argv;
  for (const auto& argument : arguments) argv.push_back(argument.c_str());

  const auto status = nvrtcCompileProgram(*program, static_cast<int>(argv.size()), argv.data());
  std::string log = program_log(*program);
  if (status != NVRTC_SUCCESS) {
    return make_error(Errc::compile_error, "candidate '" + options.source_name +
                                               "' does not compile (NVRTC " + nvrtc_version() +
                                               ", " + options.architecture + "):\n" + log);
  }
  size_t size = 0;
  if (nvrtcGetCUBINSize(*program, &size) != NVRTC_SUCCESS || size == 0) {
    return make_error(Errc::internal, "NVRTC produced no CUBIN for '" + options.source_name +
                                          "' (is '" + options.architecture + "' a real GPU "
                                          "architecture such as sm_90, not compute_90?)");
  }
  CudaBinary binary;
  binary.cubin.resize(size);
  nvrtcGetCUBIN(*program, binary.cubin.data());
  binary.log = std::move(log);
  return binary;
}

}  // namespace drk::evaluator::cuda
