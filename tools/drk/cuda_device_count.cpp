#include "tools/drk/cuda_device_count.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/unique_fd.h"

#if DRK_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace drk::tools {

#if DRK_HAVE_CUDA
namespace {

// What the child writes: the count, or a negative CUDA error code.
int count_in_this_process() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  return status == cudaSuccess ? count : -static_cast<int>(status);
}

}  // namespace

Result<int> cuda_device_count() {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    return make_error(Errc::io_error, std::string("cannot count CUDA devices: pipe: ") + std::strerror(errno));
  }
  UniqueFd read_end(ends[0]), write_end(ends[1]);
  const pid_t child = ::fork();
  if (child < 0) {
    return make_error(Errc::io_error, std::string("cannot count CUDA devices: fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    const int answer = count_in_this_process();
    const ssize_t written = ::write(write_end.get(), &answer, sizeof answer);
    ::_exit(written == static_cast<ssize_t>(sizeof answer) ? 0 : 1);
  }
  write_end.reset();
  int answer = 0;
  ssize_t got = 0;
  do {
    got = ::read(read_end.get(), &answer, sizeof answer);
  } while (got < 0 && errno == EINTR);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (got != static_cast<ssize_t>(sizeof answer)) {
    return make_error(Errc::internal, "cannot count CUDA devices: the counting process ended without an answer");
  }
  if (answer < 0) {
    return make_error(Errc::unsupported,
                      std::string("CUDA: ") + cudaGetErrorString(static_cast<cudaError_t>(-answer)));
  }
  return answer;
}

#else

Result<int> cuda_device_count() {
  return make_error(Errc::unsupported, "this drk was built without CUDA");
}

#endif

runtime::VisibleGpusQuery this_machine_gpus() {
  return [] { return runtime::visible_gpus_of_this_process(cuda_device_count); };
}

}  // namespace drk::tools
