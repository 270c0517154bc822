#include "actors/evaluator/cuda/cupti_range_profiler.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdint>

namespace drk::evaluator::cuda {
namespace {

Error cupti_failed(const char* call, CUptiResult status) {
  const char* text = nullptr;
  cuptiGetResultString(status, &text);
  return make_error(Errc::unsupported, std::string("hardware metrics are not available: ") + call + " failed: " +
                                           (text ? text : "error " + std::to_string(static_cast<int>(status))));
}

#define DRK_CUPTI(call, params)                                            \
  do {                                                                     \
    if (CUptiResult status_ = call(&params); status_ != CUPTI_SUCCESS) \
      return cupti_failed(#call, status_);                                 \
  } while (0)

// CUPTI's parameter structs: zeroed, with their size.
template <typename Params>
Params make_params(size_t struct_size) {
  Params params{};
  params.structSize = struct_size;
  return params;
}

// Owns what profile_kernels sets up, released in reverse order whatever happens.
struct Session {
  bool profiler_initialized = false;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* range_profiler = nullptr;
  ~Session() {
    if (range_profiler) {
      auto disable = make_params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      disable.pRangeProfilerObject = range_profiler;
      cuptiRangeProfilerDisable(&disable);
    }
    if (host) {
      auto deinitialize = make_params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      deinitialize.pHostObject = host;
      cuptiProfilerHostDeinitialize(&deinitialize);
    }
    if (profiler_initialized) {
      auto deinitialize = make_params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      cuptiProfilerDeInitialize(&deinitialize);
    }
  }
};

}  // namespace

const std::vector<std::string>& hardware_metric_names() {
  static const std::vector<std::string> names = {
      "dram__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "lts__t_sector_hit_rate.pct",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
  };
  return names;
}

Result<std::vector<KernelMetrics>> profile_kernels(int ordinal, const std::function<Status()>& work,
                                                   size_t max_kernels) {
  if (auto status = cudaSetDevice(ordinal); status != cudaSuccess)
    return make_error(Errc::unsupported, std::string("hardware metrics are not available: cudaSetDevice failed: ") +
                                             cudaGetErrorString(status));
  if (auto status = cudaFree(nullptr); status != cudaSuccess)
    return make_error(Errc::unsupported, std::string("hardware metrics are not available: no CUDA context: ") +
                                             cudaGetErrorString(status));
  // The driver's cuCtxGetCurrent through the runtime, so that nothing links libcuda itself.
  void* get_current = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &get_current, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !get_current)
    return make_error(Errc::unsupported, "hardware metrics are not available: the driver has no cuCtxGetCurrent");
  CUcontext context = nullptr;
  if (reinterpret_cast<CUresult (*)(CUcontext*)>(get_current)(&context) != CUDA_SUCCESS || !context)
    return make_error(Errc::unsupported, "hardware metrics are not available: cuCtxGetCurrent found no context");

  std::vector<const char*> metrics;
  for (const auto& name : hardware_metric_names()) metrics.push_back(name.c_str());
  Session session;

  auto initialize = make_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  DRK_CUPTI(cuptiProfilerInitialize, initialize);
  session.profiler_initialized = true;

  auto chip = make_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = static_cast<size_t>(ordinal);
  DRK_CUPTI(cuptiDeviceGetChipName, chip);

  // Host side: the configuration image that schedules the metrics' counters over passes.
  auto host = make_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip.pChipName;
  host.pCounterAvailabilityImage = nullptr;
  DRK_CUPTI(cuptiProfilerHostInitialize, host);
  session.host = host.pHostObject;

  auto add = make_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = session.host;
  add.ppMetricNames = metrics.data();
  add.numMetrics = metrics.size();
  DRK_CUPTI(cuptiProfilerHostConfigAddMetrics, add);

  auto config_size = make_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  config_size.pHostObject = session.host;
  DRK_CUPTI(cuptiProfilerHostGetConfigImageSize, config_size);
  std::vector<uint8_t> config(config_size.configImageSize);
  auto config_image = make_params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  config_image.pHostObject = session.host;
  config_image.configImageSize = config.size();
  config_image.pConfigImage = config.data();
  DRK_CUPTI(cuptiProfilerHostGetConfigImage, config_image);

  // Target side: the range profiler on the context, and the image the counters are decoded into.
  auto enable = make_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = context;
  DRK_CUPTI(cuptiRangeProfilerEnable, enable);
  session.range_profiler = enable.pRangeProfilerObject;

  auto data_size = make_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  data_size.pRangeProfilerObject = session.range_profiler;
  data_size.pMetricNames = metrics.data();
  data_size.numMetrics = metrics.size();
  data_size.maxNumOfRanges = max_kernels;
  data_size.maxNumRangeTreeNodes = static_cast<uint32_t>(max_kernels);
  DRK_CUPTI(cuptiRangeProfilerGetCounterDataSize, data_size);
  std::vector<uint8_t> counter_data(data_size.counterDataSize);
  auto data_init = make_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  data_init.pRangeProfilerObject = session.range_profiler;
  data_init.counterDataSize = counter_data.size();
  data_init.pCounterData = counter_data.data();
  DRK_CUPTI(cuptiRangeProfilerCounterDataImageInitialize, data_init);

  auto set_config = make_params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  set_config.pRangeProfilerObject = session.range_profiler;
  set_config.configSize = config.size();
  set_config.pConfig = config.data();
  set_config.counterDataImageSize = counter_data.size();
  set_config.pCounterDataImage = counter_data.data();
  set_config.range = CUPTI_AutoRange;
  set_config.replayMode = CUPTI_KernelReplay;
  set_config.maxRangesPerPass = max_kernels;
  set_config.numNestingLevels = 1;
  set_config.minNestingLevel = 1;
  set_config.passIndex = 0;
  set_config.targetNestingLevel = 1;
  DRK_CUPTI(cuptiRangeProfilerSetConfig, set_config);

  auto start = make_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = session.range_profiler;
  DRK_CUPTI(cuptiRangeProfilerStart, start);
  Status worked = work();
  cudaError_t synchronized = cudaDeviceSynchronize();
  auto stop = make_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = session.range_profiler;
  DRK_CUPTI(cuptiRangeProfilerStop, stop);
  if (!worked) return worked.error();
  if (synchronized != cudaSuccess)
    return make_error(Errc::sandbox_crashed, std::string("CUDA error while profiling: ") + cudaGetErrorName(synchronized) +
                                                 ": " + cudaGetErrorString(synchronized));

  auto decode = make_params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = session.range_profiler;
  DRK_CUPTI(cuptiRangeProfilerDecodeData, decode);

  auto info = make_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  DRK_CUPTI(cuptiRangeProfilerGetCounterDataInfo, info);

  std::vector<KernelMetrics> kernels;
  std::vector<double> values(metrics.size());
  for (size_t range = 0; range < info.numTotalRanges; ++range) {
    auto range_info = make_params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
    range_info.pCounterDataImage = counter_data.data();
    range_info.counterDataImageSize = counter_data.size();
    range_info.rangeIndex = range;
    range_info.rangeDelimiter = "/";
    DRK_CUPTI(cuptiRangeProfilerCounterDataGetRangeInfo, range_info);
    auto evaluate = make_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    evaluate.pHostObject = session.host;
    evaluate.pCounterDataImage = counter_data.data();
    evaluate.counterDataImageSize = counter_data.size();
    evaluate.rangeIndex = range;
    evaluate.ppMetricNames = metrics.data();
    evaluate.numMetrics = metrics.size();
    evaluate.pMetricValues = values.data();
    DRK_CUPTI(cuptiProfilerHostEvaluateToGpuValues, evaluate);
    KernelMetrics kernel;
    kernel.name = range_info.rangeName ? range_info.rangeName : "";
    kernel.dram_throughput_pct = values[0];
    kernel.sm_throughput_pct = values[1];
    kernel.l2_hit_rate_pct = values[2];
    kernel.achieved_occupancy_pct = values[3];
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

}  // namespace drk::evaluator::cuda
