// The one place that chooses a device: the CUDA device exists only in builds with the CUDA
// toolkit.
#include "actors/evaluator/engine/evaluation_device.h"

#include "actors/evaluator/engine/host_evaluation_device.h"
#include "actors/evaluator/engine/python_host_evaluation_device.h"
#ifdef DRK_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "actors/evaluator/cuda/cuda_evaluation_device.h"
#include "actors/evaluator/cuda/python_cuda_evaluation_device.h"
#endif

namespace drk::evaluator {

size_t free_device_memory() {
#ifdef DRK_HAVE_CUDA
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) == cudaSuccess) return free;
  cudaGetLastError();
#endif
  return 0;
}

Result<std::unique_ptr<EvaluationDevice>> make_evaluation_device(const EngineOptions& options) {
  if (options.python) {
    if (options.device == kernels::DeviceKind::cpu) return PythonHostEvaluationDevice::create();
#ifdef DRK_HAVE_CUDA
    return cuda::PythonCudaEvaluationDevice::create(options);
#else
    return make_error(Errc::unsupported,
                      "this build has no CUDA toolkit, so it evaluates Python candidates on the cpu only: rebuild "
                      "where /usr/local/cuda exists for --device cuda, or use --device cpu");
#endif
  }
  switch (options.device) {
    case kernels::DeviceKind::cpu:
      return std::unique_ptr<EvaluationDevice>(std::make_unique<HostEvaluationDevice>());
    case kernels::DeviceKind::cuda:
#ifdef DRK_HAVE_CUDA
      return std::unique_ptr<EvaluationDevice>(std::make_unique<cuda::CudaEvaluationDevice>(options));
#else
      return make_error(Errc::unsupported,
                        "this build has no CUDA toolkit, so it evaluates CPU candidates only: rebuild where "
                        "/usr/local/cuda exists for --device cuda, or use --device cpu");
#endif
  }
  return make_error(Errc::unsupported, "unknown device");
}

}  // namespace drk::evaluator
