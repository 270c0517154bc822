#include "runtime/http/router.h"

#include <exception>
#include <optional>

namespace drk::runtime::http {
namespace {

std::vector<std::string> segments_of(const std::string& path) {
  std::vector<std::string> segments;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = path.find('/', start);
    const std::string segment = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!segment.empty()) segments.push_back(segment);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return segments;
}

bool is_parameter(const std::string& segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

std::optional<PathParameters> match(const std::vector<std::string>& pattern, const std::vector<std::string>& path) {
  if (pattern.size() != path.size()) return std::nullopt;
  PathParameters parameters;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (is_parameter(pattern[i]))
      parameters[pattern[i].substr(1, pattern[i].size() - 2)] = path[i];
    else if (pattern[i] != path[i])
      return std::nullopt;
  }
  return parameters;
}

}  // namespace

void Router::add(std::string method, const std::string& pattern, Handler handler) {
  routes_.push_back(Route{std::move(method), segments_of(pattern), std::move(handler)});
}

HttpResponse Router::dispatch(const HttpRequest& request) const {
  const auto path = segments_of(request.path);
  std::string allowed;
  for (const auto& route : routes_) {
    auto parameters = match(route.segments, path);
    if (!parameters) continue;
    if (route.method != request.method) {
      allowed += (allowed.empty() ? "" : ", ") + route.method;
      continue;
    }
    try {
      return route.handler(request, *parameters);
    } catch (const std::exception& e) {
      return HttpResponse::error(500, std::string("the server failed on this request: ") + e.what());
    }
  }
  if (allowed.empty()) return HttpResponse::error(404, "no endpoint at " + request.path);
  auto refused = HttpResponse::error(405, request.method + " is not allowed on " + request.path + ": use " + allowed);
  refused.headers.emplace_back("Allow", allowed);
  return refused;
}

}  // namespace drk::runtime::http
