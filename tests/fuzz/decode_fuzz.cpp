// decode_fuzz: a libFuzzer target for runtime::decode_checked, the reader of every byte an actor
// receives from another process.
//
// Each input is read as the host reads a ZeroMQ frame: split into messages by their segment
// tables (first_message_bytes; a batching sender puts several in one frame), each handed to
// decode_checked() against envelope_check() with the training's messages registered as payload
// types and the production limits (DecodeLimits{}), as ActorHost reads them, in place. An input whose first table names two segments is also read as the two parts of a
// message whose payload travels in a part of its own (decode_checked_parts: the head is the
// table and the first segment, the tail the rest), once in place and once with the head at an
// odd address (ZeroMQ's receive buffer over ipc and tcp). When it decodes, every field of the Envelope
// is read through Cap'n Proto's reflection: the non-union fields and the active union member of
// every struct, a payload's content as the registered type its type id names, every list
// element, every byte of every Text and Data, so that traversal limits, list bounds and text
// terminators are all exercised.
//
// Outcomes: decode_checked() may refuse the input (a protocol_error value), as the host does.
// An input it accepts must be readable in full: a kj::Exception thrown by the walk (a Text
// without its NUL, a pointer of the wrong kind or out of bounds, a list of the wrong element
// size that the check let through) aborts, so that libFuzzer records the input. Memory errors,
// undefined behaviour and leaks crash too: the target is built with AddressSanitizer and UBSan
// (tests/fuzz/clang/).
#include <capnp/dynamic.h>
#include <capnp/schema.h>
#include <kj/exception.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "messages/envelope.capnp.h"
#include "runtime/transport/codec.h"
#include "runtime/transport/payload_types.h"
#include "training/domain_messages.h"

namespace {

// Keeps the reads from being optimised away.
volatile uint64_t observed = 0;

void walk_value(const capnp::DynamicValue::Reader& value);

void walk_struct(const capnp::DynamicStruct::Reader& reader) {
  for (const capnp::StructSchema::Field field : reader.getSchema().getNonUnionFields()) {
    walk_value(reader.get(field));
  }
  // A payload's content is read as its handler reads it: as the type its type id names.
  const auto envelope = reader.getSchema() == capnp::Schema::from<drk::msg::Envelope>()
                            ? std::optional(reader.as<drk::msg::Envelope>())
                            : std::nullopt;
  if (envelope && envelope->getBody().isPayload()) {
    const drk::runtime::PayloadType* type = drk::runtime::find_payload_type(envelope->getPayloadType());
    if (type == nullptr) {
      std::fprintf(stderr, "decode_fuzz: a payload of an unregistered type passed the check\n");
      std::abort();
    }
    walk_struct(envelope->getBody().getPayload().getAs<capnp::DynamicStruct>(type->schema));
  }
  KJ_IF_MAYBE (active, reader.which()) {
    walk_value(reader.get(*active));
  }
}

template <typename Bytes>
void touch_every_byte(const Bytes& bytes) {
  uint64_t sum = 0;
  for (const auto byte : bytes) sum += static_cast<uint8_t>(byte);
  observed = observed + sum + bytes.size();
}

void walk_value(const capnp::DynamicValue::Reader& value) {
  switch (value.getType()) {
    case capnp::DynamicValue::BOOL:
      observed = observed + value.as<bool>();
      break;
    case capnp::DynamicValue::INT:
      observed = observed + static_cast<uint64_t>(value.as<int64_t>());
      break;
    case capnp::DynamicValue::UINT:
      observed = observed + value.as<uint64_t>();
      break;
    case capnp::DynamicValue::FLOAT: {
      const double number = value.as<double>();
      uint64_t bits = 0;
      std::memcpy(&bits, &number, sizeof bits);
      observed = observed + bits;
      break;
    }
    case capnp::DynamicValue::TEXT: {
      const capnp::Text::Reader text = value.as<capnp::Text>();
      touch_every_byte(text);
      observed = observed + std::strlen(text.cStr());  // the terminator must be where size() says
      break;
    }
    case capnp::DynamicValue::DATA:
      touch_every_byte(value.as<capnp::Data>());
      break;
    case capnp::DynamicValue::LIST:
      for (const capnp::DynamicValue::Reader element : value.as<capnp::DynamicList>()) walk_value(element);
      break;
    case capnp::DynamicValue::ENUM:
      observed = observed + value.as<capnp::DynamicEnum>().getRaw();
      break;
    case capnp::DynamicValue::STRUCT:
      walk_struct(value.as<capnp::DynamicStruct>());
      break;
    case capnp::DynamicValue::UNKNOWN:
    case capnp::DynamicValue::VOID:
    case capnp::DynamicValue::CAPABILITY:
    case capnp::DynamicValue::ANY_POINTER:
      break;
  }
}

}  // namespace

namespace {

void walk_if_decoded(drk::Result<drk::runtime::DecodedMessage> decoded) {
  if (!decoded) return;
  try {
    walk_struct(capnp::toDynamic(decoded->root<drk::msg::Envelope>()));
  } catch (const kj::Exception& fault) {
    std::fprintf(stderr, "decode_fuzz: a message that passed check_schema cannot be read: %s\n",
                 fault.getDescription().cStr());
    std::abort();
  }
}

void read_one(std::span<const std::byte> bytes, const std::shared_ptr<const void>& borrowed) {
  walk_if_decoded(drk::runtime::decode_checked(bytes, borrowed, drk::runtime::DecodeLimits{},
                                               drk::runtime::envelope_check()));
}

void read_as_two_parts(std::span<const std::byte> bytes) {
  uint32_t table[2] = {0, 0};
  if (bytes.size() < 2 * sizeof(uint64_t)) return;
  std::memcpy(table, bytes.data(), sizeof table);
  if (table[0] != 1) return;
  const std::size_t head = 2 * sizeof(uint64_t) + std::size_t{table[1]} * sizeof(uint64_t);
  if (head > bytes.size()) return;
  walk_if_decoded(drk::runtime::decode_checked_parts(bytes.first(head), bytes.subspan(head),
                                                     drk::runtime::DecodeLimits{}, drk::runtime::envelope_check()));
  // Again with the head at an odd address, as ZeroMQ hands a small part over ipc and tcp: the
  // decoder copies the head alone and still reads the tail in place.
  std::vector<std::byte> shifted(head + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), head);
  walk_if_decoded(drk::runtime::decode_checked_parts(std::span<const std::byte>(shifted).subspan(1),
                                                     bytes.subspan(head), drk::runtime::DecodeLimits{},
                                                     drk::runtime::envelope_check()));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  drk::training::register_domain_messages();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data), size);
  // libFuzzer keeps `data` alive for the call: a non-owning owner makes decode read aligned
  // inputs in place, as the host does with a ZeroMQ frame.
  const std::shared_ptr<const void> borrowed(data, [](const void*) {});
  read_as_two_parts(rest);
  while (!rest.empty()) {
    auto length = drk::runtime::first_message_bytes(rest);
    if (!length) return 0;
    read_one(rest.first(*length), borrowed);
    rest = rest.subspan(*length);
  }
  return 0;
}
