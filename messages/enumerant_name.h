// A Cap'n Proto enum value's name as the schema spells it ("float16", "cuda"), for text that people
// and tables read; the number itself when the value is one this build's schema does not know (a
// newer sender's).
//
// Thread-safety: pure. Errors: none.
#pragma once

#include <string>

#include <capnp/dynamic.h>

namespace drk::msg {

inline std::string enumerant_name(capnp::DynamicEnum value) {
  KJ_IF_MAYBE(enumerant, value.getEnumerant()) { return enumerant->getProto().getName().cStr(); }
  return std::to_string(value.getRaw());
}

}  // namespace drk::msg
