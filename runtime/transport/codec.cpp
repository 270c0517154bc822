#include "runtime/transport/codec.h"

#include <capnp/any.h>
#include <capnp/dynamic.h>
#include <kj/debug.h>
#include <kj/exception.h>

#include <bit>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace drk::runtime {

kj::Array<capnp::word> encode(capnp::MessageBuilder& message) { return capnp::messageToFlatArray(message); }

std::size_t encoded_size_bytes(capnp::MessageBuilder& message) {
  return capnp::computeSerializedSizeInWords(message) * sizeof(capnp::word);
}

void encode_into(capnp::MessageBuilder& message, std::span<std::byte> out) {
  // The wire form written directly (capnp::writeMessage through a kj stream costs a small
  // envelope 5x as much): the segment count less one and each segment's size in words, as
  // 32-bit little-endian words padded to a whole word, then the segments.
  static_assert(std::endian::native == std::endian::little, "the segment table is written as host words");
  const auto segments = message.getSegmentsForOutput();
  KJ_REQUIRE(segments.size() > 0, "encoding a message that has no root");
  const std::size_t table_words = (segments.size() + 2) / 2;
  std::byte* at = out.data();
  std::memset(at, 0, table_words * sizeof(capnp::word));
  const uint32_t count_less_one = static_cast<uint32_t>(segments.size() - 1);
  std::memcpy(at, &count_less_one, sizeof count_less_one);
  for (std::size_t segment = 0; segment < segments.size(); ++segment) {
    const uint32_t words = static_cast<uint32_t>(segments[segment].size());
    std::memcpy(at + (segment + 1) * sizeof words, &words, sizeof words);
  }
  at += table_words * sizeof(capnp::word);
  for (const auto segment : segments) {
    std::memcpy(at, segment.begin(), segment.size() * sizeof(capnp::word));
    at += segment.size() * sizeof(capnp::word);
  }
}

Result<DecodedMessage> DecodedMessage::read(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                                           const DecodeLimits& limits, bool traverse) {
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
  decoded.words_ = view;
  if (auto opened = decoded.open_reader(limits, traverse); !opened) return opened.error();
  return decoded;
}

Status DecodedMessage::open_reader(const DecodeLimits& limits, bool traverse) {
  options_.traversalLimitInWords = size_bytes_ / sizeof(capnp::word) * limits.traversal_factor + 1024;
  options_.nestingLimit = limits.nesting_limit;
  try {
    reader_ = reader_with(options_);
    // Traverses every pointer once so that malformed messages fail here and not in a handler.
    if (traverse) reader_->getRoot<capnp::AnyPointer>().targetSize();
  } catch (const kj::Exception& fault) {
    return make_error(Errc::protocol_error,
                      "malformed Cap'n Proto message: " + std::string(fault.getDescription().cStr()));
  }
  return {};
}

Result<DecodedMessage> DecodedMessage::read_parts(std::span<const std::byte> head, std::span<const std::byte> tail,
                                                 const DecodeLimits& limits, bool traverse) {
  const std::size_t bytes = head.size() + tail.size();
  if (bytes > limits.max_frame_bytes) {
    return make_error(Errc::protocol_error,
                      "message of " + std::to_string(bytes) + " bytes in two parts exceeds the limit of " +
                          std::to_string(limits.max_frame_bytes) +
                          " bytes: the sender must split it or the limit must be raised");
  }
  constexpr std::size_t kTableBytes = 2 * sizeof(capnp::word);  // count less one, two sizes, padding
  uint32_t table[3] = {0, 0, 0};
  if (head.size() >= kTableBytes) std::memcpy(table, head.data(), sizeof table);
  if (head.size() < kTableBytes || table[0] != 1 ||
      head.size() != kTableBytes + std::size_t{table[1]} * sizeof(capnp::word) ||
      tail.size() != std::size_t{table[2]} * sizeof(capnp::word) || tail.empty()) {
    return make_error(Errc::protocol_error, "a message in two parts of " + std::to_string(head.size()) + " and " +
                                                std::to_string(tail.size()) +
                                                " bytes whose head does not name exactly two segments of those sizes");
  }
  const auto aligned = [](std::span<const std::byte> part) {
    return reinterpret_cast<std::uintptr_t>(part.data()) % alignof(capnp::word) == 0;
  };
  if (!aligned(tail)) {
    // One aligned copy of the whole wire form, which the one-part reader then owns and reads in place.
    const std::shared_ptr<capnp::word[]> flat(new capnp::word[bytes / sizeof(capnp::word)]);
    std::memcpy(flat.get(), head.data(), head.size());
    std::memcpy(reinterpret_cast<std::byte*>(flat.get()) + head.size(), tail.data(), tail.size());
    const std::span<const std::byte> flat_bytes(reinterpret_cast<const std::byte*>(flat.get()), bytes);
    return read(flat_bytes, flat, limits, traverse);
  }
  DecodedMessage decoded;
  decoded.size_bytes_ = bytes;
  decoded.segments_ = kj::heapArray<kj::ArrayPtr<const capnp::word>>(2);
  const std::span<const std::byte> first_segment = head.subspan(kTableBytes);
  if (aligned(first_segment)) {
    decoded.segments_[0] = kj::arrayPtr(reinterpret_cast<const capnp::word*>(first_segment.data()), table[1]);
  } else {
    // Over ipc and tcp ZeroMQ hands a small part over at any offset of its receive buffer: only
    // the head is copied, so that the payload is still read, and can be passed on, in place.
    decoded.aligned_copy_ = kj::heapArray<capnp::word>(table[1]);
    std::memcpy(decoded.aligned_copy_.begin(), first_segment.data(), first_segment.size());
    decoded.segments_[0] = decoded.aligned_copy_.asPtr();
  }
  decoded.segments_[1] = kj::arrayPtr(reinterpret_cast<const capnp::word*>(tail.data()), table[2]);
  if (auto opened = decoded.open_reader(limits, traverse); !opened) return opened.error();
  return decoded;
}

std::unique_ptr<capnp::MessageReader> DecodedMessage::reader_with(const capnp::ReaderOptions& options) const {
  if (segments_.size() > 0) return std::make_unique<capnp::SegmentArrayMessageReader>(segments_.asPtr(), options);
  return std::make_unique<capnp::FlatArrayMessageReader>(words_, options);
}

Result<DecodedMessage> decode(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                              const DecodeLimits& limits) {
  return DecodedMessage::read(bytes, std::move(owner), limits, true);
}

Result<DecodedMessage> decode_own(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                                  const DecodeLimits& limits) {
  return DecodedMessage::read(bytes, std::move(owner), limits, false);
}

Result<DecodedMessage> decode_checked(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                                      const DecodeLimits& limits, const SchemaCheck& check) {
  auto decoded = DecodedMessage::read(bytes, std::move(owner), limits, !check.follows_every_pointer());
  if (!decoded) return decoded;
  if (auto checked = check_schema(*decoded, check); !checked) return checked.error();
  return decoded;
}

Result<DecodedMessage> decode_own_parts(std::span<const std::byte> head, std::span<const std::byte> tail,
                                        const DecodeLimits& limits) {
  return DecodedMessage::read_parts(head, tail, limits, false);
}

Result<DecodedMessage> decode_checked_parts(std::span<const std::byte> head, std::span<const std::byte> tail,
                                            const DecodeLimits& limits, const SchemaCheck& check) {
  auto decoded = DecodedMessage::read_parts(head, tail, limits, !check.follows_every_pointer());
  if (!decoded) return decoded;
  if (auto checked = check_schema(*decoded, check); !checked) return checked.error();
  return decoded;
}

Result<std::size_t> first_message_bytes(std::span<const std::byte> bytes) {
  constexpr uint64_t kMaxSegments = 512;  // Cap'n Proto's own reader refuses more
  const auto word_at = [&](uint64_t index) {
    uint32_t value = 0;
    std::memcpy(&value, bytes.data() + index * sizeof value, sizeof value);
    return value;
  };
  if (bytes.size() < sizeof(capnp::word)) {
    return make_error(Errc::protocol_error, "a frame of " + std::to_string(bytes.size()) +
                                                " bytes is too short for a Cap'n Proto segment table");
  }
  const uint64_t segments = uint64_t{word_at(0)} + 1;
  if (segments > kMaxSegments) {
    return make_error(Errc::protocol_error, "a message names " + std::to_string(segments) +
                                                " segments (at most " + std::to_string(kMaxSegments) + ")");
  }
  const uint64_t table_bytes = (4 * (1 + segments) + 7) / 8 * 8;
  if (table_bytes > bytes.size()) {
    return make_error(Errc::protocol_error, "a message's segment table (" + std::to_string(table_bytes) +
                                                " bytes) runs past its frame of " + std::to_string(bytes.size()));
  }
  uint64_t total = table_bytes;
  for (uint64_t segment = 0; segment < segments; ++segment) total += uint64_t{word_at(1 + segment)} * 8;
  if (total > bytes.size()) {
    return make_error(Errc::protocol_error, "a message of " + std::to_string(total) +
                                                " bytes runs past its frame of " + std::to_string(bytes.size()));
  }
  return static_cast<std::size_t>(total);
}

// A SchemaCheck's compiled form. A Layout is what one struct or group must hold in its pointer
// section: pointer slots with the type each holds, the groups that share the struct, and its
// union (the discriminant's place and, per discriminant value, the member's own Layout). A
// PointerType says how to read one pointer: as Text, Data, a struct (its Layout) or a list (its
// schema, for Cap'n Proto's element-size check, and the type of its elements). Both live in
// vectors and refer to each other by index, so that recursive schemas compile to cycles.
struct SchemaCheck::Plan {
  enum class Kind : uint8_t { text, data, structure, list };

  struct PointerType {
    Kind kind = Kind::text;
    uint32_t layout = 0;                     // structure
    std::optional<capnp::ListSchema> list;   // list
    std::optional<uint32_t> element;         // list: the elements' PointerType, when they are pointers
  };

  struct Slot {
    uint16_t index;  // in the pointer section
    uint32_t type;   // PointerType
  };

  // A typed pointer: the struct type of the pointer at `pointer` is named by the UInt64 at
  // `type_id_byte` of the data section; `layouts` holds a Layout per type id (a hash lookup:
  // every payload a peer sends makes one).
  struct Typed {
    uint16_t pointer = 0;
    uint32_t type_id_byte = 0;
    std::unordered_map<uint64_t, uint32_t> layouts;
  };

  // Thrown by the walk for a typed pointer whose type id names no type of the check.
  struct UnknownType {
    uint64_t id;
  };

  struct Layout {
    std::optional<Typed> typed;
    std::vector<Slot> pointers;
    std::vector<uint32_t> groups;
    bool has_union = false;
    uint32_t discriminant_byte = 0;                   // offset in the data section
    std::vector<std::optional<uint32_t>> members;     // Layout per discriminant value
  };

  std::vector<PointerType> types;
  std::vector<Layout> layouts;
  bool opaque_pointers = false;  // an AnyPointer or capability field somewhere
  std::map<uint64_t, uint32_t> layout_of;  // schema id -> Layout, while compiling
  std::optional<TypedPointers> typed;      // while compiling

  uint32_t compile_layout(capnp::StructSchema schema) {
    if (auto found = layout_of.find(schema.getProto().getId()); found != layout_of.end()) return found->second;
    const auto index = static_cast<uint32_t>(layouts.size());
    layout_of.emplace(schema.getProto().getId(), index);
    layouts.emplace_back();
    Layout layout;
    for (const auto field : schema.getNonUnionFields()) add_field(layout, field);
    const auto union_fields = schema.getUnionFields();
    if (union_fields.size() > 0) {
      layout.has_union = true;
      layout.discriminant_byte = schema.getProto().getStruct().getDiscriminantOffset() * 2;
      for (const auto field : union_fields) {
        Layout member;
        add_field(member, field);
        if (member.pointers.empty() && member.groups.empty() && !member.typed) continue;
        const uint16_t value = field.getProto().getDiscriminantValue();
        if (layout.members.size() <= value) layout.members.resize(value + 1);
        layout.members[value] = static_cast<uint32_t>(layouts.size());
        layouts.push_back(std::move(member));
      }
    }
    layouts[index] = std::move(layout);
    return index;
  }

  // The Typed of `typed`: its two fields' places and a Layout per type.
  Typed compile_typed() {
    const auto type_id = typed->type_id.getProto().getSlot();
    const auto content = typed->content.getProto().getSlot();
    KJ_REQUIRE(type_id.getType().isUint64() && content.getType().isAnyPointer(),
               "a typed pointer needs a `:UInt64` type id and an `:AnyPointer` content");
    Typed result;
    result.pointer = static_cast<uint16_t>(content.getOffset());
    result.type_id_byte = type_id.getOffset() * sizeof(uint64_t);
    for (const auto type : typed->types) result.layouts.emplace(type.getProto().getId(), compile_layout(type));
    return result;
  }

  void add_field(Layout& layout, capnp::StructSchema::Field field) {
    const auto proto = field.getProto();
    if (typed && field == typed->content) {
      layout.typed = compile_typed();
      return;
    }
    if (proto.isGroup()) {
      layout.groups.push_back(compile_layout(field.getType().asStruct()));
      return;
    }
    const auto type = compile_type(field.getType());
    if (type) layout.pointers.push_back(Slot{static_cast<uint16_t>(proto.getSlot().getOffset()), *type});
  }

  // The PointerType of `type`; nullopt for a type that is not a pointer.
  std::optional<uint32_t> compile_type(capnp::Type type) {
    PointerType pointer;
    switch (type.which()) {
      case capnp::schema::Type::TEXT:
        pointer.kind = Kind::text;
        break;
      case capnp::schema::Type::DATA:
        pointer.kind = Kind::data;
        break;
      case capnp::schema::Type::STRUCT:
        pointer.kind = Kind::structure;
        pointer.layout = compile_layout(type.asStruct());
        break;
      case capnp::schema::Type::LIST: {
        const auto list = type.asList();
        pointer.kind = Kind::list;
        pointer.list = list;
        pointer.element = compile_type(list.getElementType());
        break;
      }
      case capnp::schema::Type::ANY_POINTER:
      case capnp::schema::Type::INTERFACE:  // read as the handler chooses: nothing to check here
        opaque_pointers = true;
        return std::nullopt;
      default:  // not a pointer
        return std::nullopt;
    }
    types.push_back(pointer);
    return static_cast<uint32_t>(types.size() - 1);
  }

  void check_layout(uint32_t index, capnp::AnyStruct::Reader record) const {
    const Layout& layout = layouts[index];
    const auto section = record.getPointerSection();
    // A slot beyond a short pointer section reads as null, as the generated reader reads it: a
    // payload there is one of type 0, which is refused.
    for (const Slot& slot : layout.pointers) {
      check_pointer(slot.type, slot.index < section.size() ? section[slot.index] : capnp::AnyPointer::Reader());
    }
    for (const uint32_t group : layout.groups) check_layout(group, record);
    if (layout.typed) check_typed(*layout.typed, record);
    if (!layout.has_union) return;
    const auto data = record.getDataSection();
    uint16_t discriminant = 0;  // beyond the data section: the default, 0
    if (layout.discriminant_byte + 2 <= data.size()) {
      discriminant = static_cast<uint16_t>(data[layout.discriminant_byte] | (data[layout.discriminant_byte + 1] << 8));
    }
    if (discriminant < layout.members.size() && layout.members[discriminant]) {
      check_layout(*layout.members[discriminant], record);
    }
  }

  void check_typed(const Typed& typed_pointer, capnp::AnyStruct::Reader record) const {
    const auto data = record.getDataSection();
    uint64_t id = 0;  // beyond the data section: the default, 0
    if (typed_pointer.type_id_byte + sizeof id <= data.size()) {
      std::memcpy(&id, data.begin() + typed_pointer.type_id_byte, sizeof id);
    }
    const auto found = typed_pointer.layouts.find(id);
    if (found == typed_pointer.layouts.end()) throw UnknownType{id};
    const auto section = record.getPointerSection();
    if (typed_pointer.pointer < section.size()) {
      check_layout(found->second, section[typed_pointer.pointer].getAs<capnp::AnyStruct>());
    }
  }

  // The reads a generated reader makes, each of which throws on a pointer that does not fit.
  // A null pointer reads as its type's default (an empty Text, Data, struct or list): no test
  // for null first, which would cost every pointer that is set a call of its own.
  void check_pointer(uint32_t index, capnp::AnyPointer::Reader pointer) const {
    const PointerType& type = types[index];
    switch (type.kind) {
      case Kind::text:
        pointer.getAs<capnp::Text>();
        break;
      case Kind::data:
        pointer.getAs<capnp::Data>();
        break;
      case Kind::structure:
        check_layout(type.layout, pointer.getAs<capnp::AnyStruct>());
        break;
      case Kind::list:
        check_list(type, pointer.getAs<capnp::DynamicList>(*type.list));
        break;
    }
  }

  // Reading an element of a list of pointers checks it (DynamicList reads it as its type says).
  void check_list(const PointerType& type, const capnp::DynamicList::Reader& list) const {
    if (!type.element) return;  // primitives, AnyPointer: the element size check was the whole check
    const PointerType& element = types[*type.element];
    for (const auto value : list) {
      if (element.kind == Kind::structure) {
        check_layout(element.layout, value.as<capnp::DynamicStruct>());
      } else if (element.kind == Kind::list) {
        check_list(element, value.as<capnp::DynamicList>());
      }
    }
  }
};

SchemaCheck::SchemaCheck(capnp::StructSchema root, const std::optional<TypedPointers>& typed)
    : root_name_(root.getShortDisplayName().cStr()) {
  auto plan = std::make_unique<Plan>();
  plan->typed = typed;
  plan->compile_layout(root);  // the root is Layout 0
  plan->layout_of.clear();
  plan->typed.reset();
  plan_ = std::move(plan);
}

SchemaCheck::~SchemaCheck() = default;

bool SchemaCheck::follows_every_pointer() const { return !plan_->opaque_pointers; }

Status check_schema(DecodedMessage& message, const SchemaCheck& check) {
  capnp::ReaderOptions options = message.options_;
  options.traversalLimitInWords /= 4;
  try {
    const auto reader = message.reader_with(options);
    check.plan_->check_layout(0, reader->getRoot<capnp::AnyStruct>());
  } catch (const kj::Exception& error) {
    return make_error(Errc::protocol_error, "a message that does not fit its schema (" + check.root_name_ +
                                                "): " + error.getDescription().cStr());
  } catch (const SchemaCheck::Plan::UnknownType& unknown) {
    char id[19];
    std::snprintf(id, sizeof id, "0x%016llx", static_cast<unsigned long long>(unknown.id));
    return make_error(Errc::protocol_error, "a " + check.root_name_ + " whose payload is of type " + id +
                                                ", which this program does not register: refused unread "
                                                "(the sender's program is another version, or the type "
                                                "is missing from the receiver's registrations)");
  }
  return {};
}

Status check_schema(DecodedMessage& message, capnp::StructSchema schema) {
  return check_schema(message, SchemaCheck(schema));
}

}  // namespace drk::runtime
