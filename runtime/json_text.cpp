#include "runtime/json_text.h"

namespace drk::runtime {

std::string json_text(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace drk::runtime
