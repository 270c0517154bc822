#include "tools/gateway/evaluate_request.h"

namespace drk::gateway {
namespace {

Error refuse(const std::string& field, const std::string& what) {
  return make_error(Errc::invalid_argument, "field '" + field + "' " + what);
}

template <typename T>
Status read_number(const Json& body, const char* field, std::optional<T>& into) {
  if (!body.contains(field) || body[field].is_null()) return {};
  if (!body[field].is_number()) return refuse(field, "must be a number");
  into = body[field].get<T>();
  return {};
}

Status read_text(const Json& body, const char* field, std::string& into, bool required) {
  if (!body.contains(field) || body[field].is_null()) {
    if (required) return refuse(field, "is required");
    return {};
  }
  if (!body[field].is_string()) return refuse(field, "must be a string");
  into = body[field].get<std::string>();
  if (required && into.empty()) return refuse(field, "is empty");
  return {};
}

Status read_priority(const Json& body, int& into) {
  if (!body.contains("priority") || body["priority"].is_null()) return {};
  const Json& value = body["priority"];
  if (value.is_number_integer()) {
    into = value.get<int>();
    return {};
  }
  if (value.is_string()) {
    const auto name = value.get<std::string>();
    if (name == "high") into = 1;
    else if (name == "normal") into = 0;
    else if (name == "low") into = -1;
    else return refuse("priority", "must be high, normal, low or an integer, got '" + name + "'");
    return {};
  }
  return refuse("priority", "must be high, normal, low or an integer");
}

}  // namespace

Result<EvaluateRequest> parse_evaluate_request(const Json& body, const std::string& generated_id) {
  if (!body.is_object()) return make_error(Errc::invalid_argument, "the request must be a JSON object");
  EvaluateRequest request;
  std::string backend = "cuda";
  for (auto status : {read_text(body, "task_id", request.task_id, false),
                      read_text(body, "reference_code", request.reference_code, true),
                      read_text(body, "kernel_code", request.kernel_code, true),
                      read_text(body, "backend", backend, false),
                      read_text(body, "entry_point", request.entry_point, false),
                      read_number(body, "num_correct_trials", request.num_correct_trials),
                      read_number(body, "num_perf_trials", request.num_perf_trials),
                      read_number(body, "num_warmup", request.num_warmup),
                      read_number(body, "timeout", request.timeout), read_priority(body, request.priority)})
    if (!status) return status.error();
  if (body.contains("enable_profiling") && !body["enable_profiling"].is_null()) {
    if (!body["enable_profiling"].is_boolean()) return refuse("enable_profiling", "must be true or false");
    request.enable_profiling = body["enable_profiling"].get<bool>();
  }
  if (request.task_id.empty()) request.task_id = generated_id;
  if (request.task_id.size() > 200 || request.task_id.find('/') != std::string::npos)
    return refuse("task_id", "must be at most 200 characters without '/' (it is part of the URLs /status/{id})");
  auto parsed_backend = judging::parse_backend(backend);
  if (!parsed_backend) return refuse("backend", "must be cuda, triton, pytorch or cpp, got '" + backend + "'");
  request.backend = *parsed_backend;
  if (request.entry_point != "Model")
    return refuse("entry_point", "must be Model: drkernel evaluates KernelBench's format, whose reference class is "
                                 "Model and whose candidate class is ModelNew, got '" + request.entry_point + "'");
  if (request.num_correct_trials && *request.num_correct_trials < 1)
    return refuse("num_correct_trials", "must be at least 1");
  if (request.num_perf_trials && *request.num_perf_trials < 1) return refuse("num_perf_trials", "must be at least 1");
  if (request.num_warmup && *request.num_warmup < 0) return refuse("num_warmup", "must be at least 0");
  if (request.timeout && !(*request.timeout > 0)) return refuse("timeout", "must be a positive number of seconds");
  return request;
}

Json requested_knobs_json(const EvaluateRequest& request) {
  const auto or_null = [](const auto& value) { return value ? Json(*value) : Json(); };
  return Json{{"num_correct_trials", or_null(request.num_correct_trials)},
              {"num_perf_trials", or_null(request.num_perf_trials)},
              {"num_warmup", or_null(request.num_warmup)},
              {"timeout", or_null(request.timeout)},
              {"enable_profiling", request.enable_profiling}};
}

Json evaluate_request_json(const EvaluateRequest& request) {
  Json json{{"task_id", request.task_id},
            {"reference_code", request.reference_code},
            {"kernel_code", request.kernel_code},
            {"backend", std::string(judging::backend_name(request.backend))},
            {"entry_point", request.entry_point},
            {"priority", request.priority}};
  json.update(requested_knobs_json(request));
  return json;
}

}  // namespace drk::gateway
