#include "kernels/compile/narrow_torch_headers.h"

#include <regex>

#include "base/cxx_source.h"

namespace drk::compile {

const std::vector<std::string>& narrow_module_headers() {
  static const std::vector<std::string> headers = {"torch/types.h", "torch/csrc/utils/pybind.h",
                                                   "torch/csrc/Exceptions.h"};
  return headers;
}

const std::vector<std::string>& narrow_host_headers() {
  static const std::vector<std::string> headers = {"torch/types.h"};
  return headers;
}

std::string without_whole_api_includes(std::string_view source) {
  static const std::regex whole_api(R"(^#\s*include\s*[<"]torch/(extension|torch|all|python)\.h[>"])");
  std::string narrowed(source);
  for (size_t at : split_cxx_source(source).includes) {
    size_t end = narrowed.find('\n', at);
    if (end == std::string::npos) end = narrowed.size();
    if (std::regex_search(narrowed.cbegin() + static_cast<std::ptrdiff_t>(at),
                          narrowed.cbegin() + static_cast<std::ptrdiff_t>(end), whole_api))
      narrowed.replace(at, end - at, end - at, ' ');
  }
  return narrowed;
}

}  // namespace drk::compile
