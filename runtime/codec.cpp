#include "runtime/codec.h"

#include <capnp/any.h>
#include <capnp/dynamic.h>
#include <kj/exception.h>

#include <cstring>
#include <string>

namespace drk::runtime {

kj::Array<capnp::word> encode(capnp::MessageBuilder& message) { return capnp::messageToFlatArray(message); }

Result<DecodedMessage> decode(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                              const DecodeLimits& limits) {
  if (bytes.size() > limits.max_frame_bytes) {
    return make_error(Errc::protocol_error,
                      "message of " + std::to_string(bytes.size()) + " bytes exceeds the limit of " +
                          std::to_string(limits.max_frame_bytes) +
                          " bytes: the sender must split it or the limit must be raised");
  }
  if (bytes.empty() || bytes.size() % sizeof(capnp::word) != 0) {
    return make_error(Errc::protocol_error,
                      "message of " + std::to_string(bytes.size()) +
                          " bytes is not a whole number of 8-byte words: not a Cap'n Proto message");
  }
  DecodedMessage decoded;
  decoded.size_bytes_ = bytes.size();
  const std::size_t words = bytes.size() / sizeof(capnp::word);
  const bool aligned = reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(capnp::word) == 0;
  kj::ArrayPtr<const capnp::word> view;
  if (owner && aligned) {
    decoded.owner_ = std::move(owner);
    view = kj::arrayPtr(reinterpret_cast<const capnp::word*>(bytes.data()), words);
  } else {
    decoded.aligned_copy_ = kj::heapArray<capnp::word>(words);
    std::memcpy(decoded.aligned_copy_.begin(), bytes.data(), bytes.size());
    view = decoded.aligned_copy_.asPtr();
  }
  capnp::ReaderOptions options;
  options.traversalLimitInWords = words * limits.traversal_factor + 1024;
  options.nestingLimit = limits.nesting_limit;
  decoded.words_ = view;
  decoded.options_ = options;
  try {
    decoded.reader_ = std::make_unique<capnp::FlatArrayMessageReader>(view, options);
    // Traverses every pointer once so that malformed messages fail here and not in a handler.
    decoded.reader_->getRoot<capnp::AnyPointer>().targetSize();
  } catch (const kj::Exception& fault) {
    return make_error(Errc::protocol_error,
                      "malformed Cap'n Proto message: " + std::string(fault.getDescription().cStr()));
  }
  return decoded;
}

namespace {

void read_everything(const capnp::DynamicValue::Reader& value) {
  switch (value.getType()) {
    case capnp::DynamicValue::TEXT:
      value.as<capnp::Text>();
      break;
    case capnp::DynamicValue::DATA:
      value.as<capnp::Data>();
      break;
    case capnp::DynamicValue::LIST:
      for (const auto element : value.as<capnp::DynamicList>()) read_everything(element);
      break;
    case capnp::DynamicValue::STRUCT: {
      const auto record = value.as<capnp::DynamicStruct>();
      for (const auto field : record.getSchema().getNonUnionFields()) {
        if (record.has(field)) read_everything(record.get(field));
      }
      KJ_IF_MAYBE(member, record.which()) {
        if (record.has(*member)) read_everything(record.get(*member));
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace

Status check_schema(DecodedMessage& message, capnp::StructSchema schema) {
  capnp::ReaderOptions options = message.options_;
  options.traversalLimitInWords /= 4;
  try {
    capnp::FlatArrayMessageReader reader(message.words_, options);
    read_everything(reader.getRoot<capnp::DynamicStruct>(schema));
  } catch (const kj::Exception& error) {
    return make_error(Errc::protocol_error, "a message that does not fit its schema (" +
                                                std::string(schema.getShortDisplayName().cStr()) +
                                                "): " + error.getDescription().cStr());
  }
  return {};
}

}  // namespace drk::runtime
