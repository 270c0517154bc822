#include "runtime/capnp_json.h"

#include <capnp/compat/json.h>
#include <capnp/message.h>

#include <cmath>
#include <stdexcept>

namespace drk::runtime {
namespace {

// Integers up to 2^53 are exact in the codec's doubles; written as integers, as the codec does.
constexpr double kLargestExactInteger = 9007199254740992.0;

Json from_codec(capnp::JsonValue::Reader value) {
  switch (value.which()) {
    case capnp::JsonValue::NULL_: return nullptr;
    case capnp::JsonValue::BOOLEAN: return value.getBoolean();
    case capnp::JsonValue::NUMBER: {
      const double number = value.getNumber();
      if (std::trunc(number) == number && std::fabs(number) <= kLargestExactInteger) return static_cast<int64_t>(number);
      return number;
    }
    case capnp::JsonValue::STRING: return std::string(value.getString().cStr(), value.getString().size());
    case capnp::JsonValue::ARRAY: {
      Json array = Json::array();
      for (auto element : value.getArray()) array.push_back(from_codec(element));
      return array;
    }
    case capnp::JsonValue::OBJECT: {
      Json object = Json::object();
      for (auto field : value.getObject()) object[field.getName().cStr()] = from_codec(field.getValue());
      return object;
    }
    case capnp::JsonValue::CALL: break;
  }
  // The codec writes calls only for annotated types, which our schemas have none of.
  throw std::logic_error("Cap'n Proto's JSON codec wrote a value kind capnp_json does not know");
}

}  // namespace

Json capnp_json(capnp::DynamicStruct::Reader message) {
  capnp::JsonCodec codec;
  capnp::MallocMessageBuilder encoded;
  auto value = encoded.initRoot<capnp::JsonValue>();
  codec.encode(capnp::DynamicValue::Reader(message), message.getSchema(), value);
  return from_codec(value.asReader());
}

}  // namespace drk::runtime
