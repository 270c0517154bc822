#include "actors/learner/policy_reports.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>

#include "runtime/http_client/http_url.h"

namespace drk::learner {
namespace {

using runtime::http::HttpResponse;

constexpr const char* kFields = "version (required), model, endpoint";
constexpr std::chrono::seconds kLongestWait{60};

}  // namespace

PolicyReports::PolicyReports(training::ServedPolicy current, uint32_t steps, uint32_t max_staleness)
    : current_(std::move(current)), steps_(steps), max_staleness_(max_staleness) {}

std::vector<training::ServedPolicy> PolicyReports::take_new() {
  std::lock_guard lock(mutex_);
  std::vector<training::ServedPolicy> taken(new_.begin(), new_.end());
  new_.clear();
  return taken;
}

void PolicyReports::set_steps_done(uint32_t steps_done) {
  {
    std::lock_guard lock(mutex_);
    steps_done_ = steps_done;
  }
  steps_changed_.notify_all();
}

void PolicyReports::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  steps_changed_.notify_all();
}

HttpResponse PolicyReports::report(const std::string& body) {
  const auto object = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object())
    return HttpResponse::error(400, "the body is not a JSON object: send {\"version\": N} (fields: " +
                                        std::string(kFields) + ")");
  for (const auto& [name, value] : object.items()) {
    if (name != "version" && name != "model" && name != "endpoint")
      return HttpResponse::error(400, "unknown field '" + name + "': the fields are " + kFields);
  }
  const auto version = object.find("version");
  if (version == object.end())
    return HttpResponse::error(400, "field 'version' is missing: the policy version the trainer now serves");
  if (!version->is_number_unsigned() || version->get<uint64_t>() > std::numeric_limits<uint32_t>::max())
    return HttpResponse::error(400, "field 'version' must be an integer from 0 to 4294967295, not " + version->dump());
  training::ServedPolicy reported;
  reported.version = version->get<uint32_t>();
  if (const auto model = object.find("model"); model != object.end()) {
    if (!model->is_string() || model->get<std::string>().empty())
      return HttpResponse::error(400, "field 'model' must be a non-empty string: the served model's name");
    reported.model = model->get<std::string>();
  }
  if (const auto endpoint = object.find("endpoint"); endpoint != object.end()) {
    if (!endpoint->is_string())
      return HttpResponse::error(400, "field 'endpoint' must be a string: the API's base, e.g. http://127.0.0.1:8000/v1");
    reported.endpoint = endpoint->get<std::string>();
    if (auto url = http_client::parse_http_url(reported.endpoint); !url)
      return HttpResponse::error(400, "field 'endpoint': " + url.error().message);
  }
  std::lock_guard lock(mutex_);
  if (reported.version < current_.version || (reported.version == current_.version && !(reported == current_))) {
    return HttpResponse::error(409, "version " + std::to_string(reported.version) + " goes back from version " +
                                        std::to_string(current_.version) +
                                        " (or repeats it with another model or endpoint): report a newer version");
  }
  if (reported.version > current_.version) {
    current_ = reported;
    new_.push_back(reported);
  }
  return HttpResponse::json(200, state_json_locked());
}

HttpResponse PolicyReports::state(const std::string& query) const {
  std::optional<uint32_t> wait_for_steps;
  if (!query.empty()) {
    constexpr std::string_view kKey = "steps_done=";
    const std::string value = query.rfind(kKey, 0) == 0 ? query.substr(kKey.size()) : "";
    char* end = nullptr;
    const unsigned long steps = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || steps > std::numeric_limits<uint32_t>::max())
      return HttpResponse::error(400, "query '" + query + "': the one parameter is steps_done=N, N an integer");
    wait_for_steps = static_cast<uint32_t>(steps);
  }
  std::unique_lock lock(mutex_);
  if (wait_for_steps)
    steps_changed_.wait_for(lock, kLongestWait, [&] { return closed_ || steps_done_ >= *wait_for_steps; });
  return HttpResponse::json(200, state_json_locked());
}

std::string PolicyReports::state_json_locked() const {
  return nlohmann::json({{"version", current_.version},
                         {"model", current_.model},
                         {"endpoint", current_.endpoint},
                         {"steps_done", steps_done_},
                         {"steps", steps_},
                         {"max_staleness", max_staleness_}})
      .dump();
}

void PolicyReports::add_routes(runtime::http::Router& router) {
  router.add("POST", "/policy", [this](const runtime::http::HttpRequest& request, const runtime::http::PathParameters&) {
    return report(request.body);
  });
  router.add("GET", "/policy", [this](const runtime::http::HttpRequest& request, const runtime::http::PathParameters&) {
    return state(request.query);
  });
}

}  // namespace drk::learner
