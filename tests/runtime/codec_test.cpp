#include "runtime/transport/codec.h"

#include <capnp/message.h>
#include <capnp/orphan.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "messages/drk.capnp.h"
#include "runtime/payload.h"
#include "runtime/transport/payload_types.h"
#include "runtime/transport/transport.h"
#include "tests/doctest_drk.h"

namespace drk::runtime {
namespace {

std::vector<std::byte> encoded_envelope(const std::string& sender) {
  capnp::MallocMessageBuilder builder;
  auto envelope = builder.initRoot<msg::Envelope>();
  envelope.setSender(sender);
  envelope.setRecipient("ponger");
  envelope.getBody().initHeartbeat().setSequence(42);
  const auto words = encode(builder);
  const auto bytes = words.asBytes();
  std::vector<std::byte> copy(bytes.size());
  std::memcpy(copy.data(), bytes.begin(), bytes.size());
  return copy;
}

// One segment of one word, whose root struct pointer claims data 1000 words away.
std::vector<std::byte> root_pointer_outside_its_segment() {
  const uint32_t table[2] = {0, 1};
  const uint64_t pointer = (uint64_t{1} << 32) | (uint64_t{1000} << 2);
  std::vector<std::byte> bytes(16);
  std::memcpy(bytes.data(), table, 8);
  std::memcpy(bytes.data() + 8, &pointer, 8);
  return bytes;
}

DRK_TEST_CASE("an encoded envelope decodes to the same fields") {
  auto bytes = std::make_shared<std::vector<std::byte>>(encoded_envelope("pinger"));
  auto decoded = decode(*bytes, bytes);
  DRK_REQUIRE(decoded.ok());
  auto envelope = decoded->root<msg::Envelope>();
  DRK_CHECK(std::string(envelope.getSender().cStr()) == "pinger");
  DRK_CHECK(envelope.getBody().getHeartbeat().getSequence() == 42);
}

DRK_TEST_CASE("a frame that is not 8-byte aligned decodes (it is copied)") {
  const auto bytes = encoded_envelope("misaligned");
  auto buffer = std::make_shared<std::vector<std::byte>>(bytes.size() + 1);
  std::memcpy(buffer->data() + 1, bytes.data(), bytes.size());
  const std::span<const std::byte> shifted(buffer->data() + 1, bytes.size());
  DRK_REQUIRE(reinterpret_cast<std::uintptr_t>(shifted.data()) % 8 != 0);
  auto decoded = decode(shifted, buffer);
  DRK_REQUIRE(decoded.ok());
  DRK_CHECK(std::string(decoded->root<msg::Envelope>().getSender().cStr()) == "misaligned");
}

// An envelope of two segments, the second a 4 KiB payload, as its two parts (codec.h).
struct TwoParts {
  std::vector<capnp::word> head, tail;
  std::span<const std::byte> head_bytes() const { return std::as_bytes(std::span(head)); }
  std::span<const std::byte> tail_bytes() const { return std::as_bytes(std::span(tail)); }
};

TwoParts two_part_envelope() {
  std::vector<capnp::word> payload(512);
  std::memset(payload.data(), 0x42, payload.size() * sizeof(capnp::word));
  capnp::MallocMessageBuilder builder;
  auto envelope = builder.initRoot<msg::Envelope>();
  envelope.setSender("two-parts");
  auto weights = runtime::init_payload<msg::PolicyWeights>(envelope);
  weights.adoptParameters(capnp::Orphanage::getForMessageContaining(weights).referenceExternalData(
      kj::arrayPtr(reinterpret_cast<const kj::byte*>(payload.data()), payload.size() * sizeof(capnp::word))));
  const auto segments = builder.getSegmentsForOutput();
  DRK_REQUIRE(segments.size() == 2);
  TwoParts parts;
  const uint32_t table[4] = {1, static_cast<uint32_t>(segments[0].size()), static_cast<uint32_t>(segments[1].size()), 0};
  parts.head.resize(2 + segments[0].size());
  std::memcpy(parts.head.data(), table, sizeof table);
  std::memcpy(parts.head.data() + 2, segments[0].begin(), segments[0].size() * sizeof(capnp::word));
  parts.tail.assign(segments[1].begin(), segments[1].end());
  return parts;
}

DRK_TEST_CASE("an envelope in two parts decodes in place; heads that do not describe their parts are refused") {
  const TwoParts parts = two_part_envelope();
  auto decoded = decode_checked_parts<msg::Envelope>(parts.head_bytes(), parts.tail_bytes());
  DRK_REQUIRE_MESSAGE(decoded.ok(), decoded.error().message);
  auto envelope = decoded->root<msg::Envelope>();
  DRK_CHECK(std::string(envelope.getSender().cStr()) == "two-parts");
  const auto parameters = runtime::payload_of<msg::PolicyWeights>(envelope).value().getParameters();
  DRK_CHECK(parameters.size() == 4096);
  DRK_CHECK(static_cast<const void*>(parameters.begin()) == parts.tail.data());

  const auto refused = [&](std::span<const std::byte> head, std::span<const std::byte> tail, DecodeLimits limits = {}) {
    auto result = decode_checked_parts<msg::Envelope>(head, tail, limits);
    if (result.ok()) return false;
    DRK_CHECK(result.error().code == Errc::protocol_error);
    DRK_INFO(result.error().message);
    return true;
  };
  TwoParts one_segment = parts;
  const uint32_t count_less_one = 0;
  std::memcpy(one_segment.head.data(), &count_less_one, sizeof count_less_one);
  DRK_CHECK(refused(one_segment.head_bytes(), one_segment.tail_bytes()));
  DRK_CHECK(refused(parts.head_bytes(), parts.tail_bytes().first(parts.tail_bytes().size() - 8)));
  DRK_CHECK(refused(parts.head_bytes().first(8), parts.tail_bytes()));
  DRK_CHECK(refused(parts.head_bytes(), {}));
  DecodeLimits small;
  small.max_frame_bytes = parts.head_bytes().size() + parts.tail_bytes().size() - 8;
  DRK_CHECK(refused(parts.head_bytes(), parts.tail_bytes(), small));

  // A tail that is not 8-byte aligned is copied, with the head, into one aligned message.
  std::vector<std::byte> shifted(parts.tail_bytes().size() + 1);
  std::memcpy(shifted.data() + 1, parts.tail.data(), parts.tail_bytes().size());
  auto copied = decode_own_parts(parts.head_bytes(), std::span<const std::byte>(shifted).subspan(1));
  DRK_REQUIRE(copied.ok());
  DRK_CHECK(runtime::payload_of<msg::PolicyWeights>(copied->root<msg::Envelope>()).value().getParameters()[4095] == 0x42);

  // A head that is not (ZeroMQ's receive buffer over ipc and tcp) is copied alone: the payload
  // is still read in place, so that a reply can share it.
  std::vector<std::byte> shifted_head(parts.head_bytes().size() + 3);
  std::memcpy(shifted_head.data() + 3, parts.head.data(), parts.head_bytes().size());
  const auto misaligned_head = std::span<const std::byte>(shifted_head).subspan(3);
  for (int check = 0; check < 2; ++check) {
    auto read = check == 0 ? decode_own_parts(misaligned_head, parts.tail_bytes())
                           : decode_checked_parts<msg::Envelope>(misaligned_head, parts.tail_bytes());
    DRK_REQUIRE_MESSAGE(read.ok(), read.error().message);
    const auto envelope_read = read->root<msg::Envelope>();
    DRK_CHECK(std::string(envelope_read.getSender().cStr()) == "two-parts");
    const auto in_place = runtime::payload_of<msg::PolicyWeights>(envelope_read).value().getParameters();
    DRK_CHECK(static_cast<const void*>(in_place.begin()) == parts.tail.data());
  }
}

DRK_TEST_CASE("messages back to back in one frame are found by their segment tables") {
  const auto first = encoded_envelope("first");
  const auto second = encoded_envelope("a longer sender name, so the sizes differ");
  std::vector<std::byte> frame(first);
  frame.insert(frame.end(), second.begin(), second.end());
  auto length = first_message_bytes(frame);
  DRK_REQUIRE(length.ok());
  DRK_CHECK(*length == first.size());
  auto rest = std::span<const std::byte>(frame).subspan(*length);
  auto second_length = first_message_bytes(rest);
  DRK_REQUIRE(second_length.ok());
  DRK_CHECK(*second_length == second.size());
  auto decoded = decode(rest.first(*second_length), nullptr);
  DRK_REQUIRE(decoded.ok());
  DRK_CHECK(std::string(decoded->root<msg::Envelope>().getSender().cStr()) == "a longer sender name, so the sizes differ");
  // Cut short, or naming absurdly many segments: protocol errors.
  DRK_CHECK(first_message_bytes(std::span<const std::byte>(frame).first(first.size() - 8)).error().code ==
            Errc::protocol_error);
  DRK_CHECK(first_message_bytes(std::span<const std::byte>(frame).first(4)).error().code == Errc::protocol_error);
  std::vector<std::byte> many(first);
  const uint32_t segments_minus_one = 100000;
  std::memcpy(many.data(), &segments_minus_one, sizeof segments_minus_one);
  DRK_CHECK(first_message_bytes(many).error().code == Errc::protocol_error);
}

DRK_TEST_CASE("a frame over the size limit is a protocol error") {
  const auto bytes = encoded_envelope(std::string(200, 'x'));
  DecodeLimits limits;
  limits.max_frame_bytes = 64;
  auto decoded = decode(bytes, nullptr, limits);
  DRK_REQUIRE_FALSE(decoded.ok());
  DRK_CHECK(decoded.error().code == Errc::protocol_error);
  DRK_CHECK(decoded.error().message.find("exceeds the limit of 64 bytes") != std::string::npos);
}

DRK_TEST_CASE("garbage frames are protocol errors, not crashes") {
  DRK_SUBCASE("a length that is not whole words") {
    std::vector<std::byte> bytes(13, std::byte{0});
    auto decoded = decode(bytes, nullptr);
    DRK_REQUIRE_FALSE(decoded.ok());
    DRK_CHECK(decoded.error().code == Errc::protocol_error);
  }
  DRK_SUBCASE("a segment table that claims more than there is") {
    std::vector<std::byte> bytes(16, std::byte{0xff});
    auto decoded = decode(bytes, nullptr);
    DRK_REQUIRE_FALSE(decoded.ok());
    DRK_CHECK(decoded.error().code == Errc::protocol_error);
  }
  DRK_SUBCASE("a root pointer that points outside its segment") {
    const std::vector<std::byte> bytes = root_pointer_outside_its_segment();
    auto decoded = decode(bytes, nullptr);
    DRK_REQUIRE_FALSE(decoded.ok());
    DRK_CHECK(decoded.error().code == Errc::protocol_error);
  }
}

DRK_TEST_CASE("decode_checked refuses malformed pointers that only a structural walk would see") {
  // decode_checked leaves out decode()'s traversal: its schema check must meet these itself.
  DRK_SUBCASE("a root pointer that points outside its segment") {
    const std::vector<std::byte> bytes = root_pointer_outside_its_segment();
    const auto decoded = decode_checked<msg::Envelope>(bytes, nullptr);
    DRK_REQUIRE_FALSE(decoded.ok());
    DRK_CHECK(decoded.error().code == Errc::protocol_error);
  }
  DRK_SUBCASE("a Data in the active union member that runs past its segment") {
    capnp::MallocMessageBuilder builder;
    const std::vector<kj::byte> payload(64, 7);
    runtime::init_payload<msg::PolicyWeights>(builder.initRoot<msg::Envelope>()).setParameters(
        kj::arrayPtr(payload.data(), payload.size()));
    const auto words = encode(builder);
    std::vector<std::byte> bytes(words.asBytes().size());
    std::memcpy(bytes.data(), words.asBytes().begin(), bytes.size());
    // The list pointer to the payload: element size 2 (bytes), count 64. Claim 64 KiB instead.
    const uint64_t list_tag = (uint64_t{64} << 35) | (uint64_t{2} << 32) | 1;
    bool patched = false;
    for (std::size_t at = 8; at + 8 <= bytes.size(); at += 8) {
      uint64_t word = 0;
      std::memcpy(&word, bytes.data() + at, 8);
      if ((word & 0xffffffff00000003ull) != list_tag) continue;
      word = (word & 0x00000007ffffffffull) | (uint64_t{64 << 10} << 35);
      std::memcpy(bytes.data() + at, &word, 8);
      patched = true;
    }
    DRK_REQUIRE(patched);
    const auto decoded = decode_checked<msg::Envelope>(bytes, nullptr);
    DRK_REQUIRE_FALSE(decoded.ok());
    DRK_CHECK(decoded.error().code == Errc::protocol_error);
  }
}

DRK_TEST_CASE("a message that decodes but does not fit the Envelope schema is refused before a handler reads it") {
  // An Advantages message keeps a list of structs in its first pointer, where an Envelope keeps
  // its sender (Text): structurally valid, unreadable as an Envelope.
  capnp::MallocMessageBuilder builder;
  auto advantages = builder.initRoot<msg::Advantages>();
  advantages.initItems(2)[0].setTrajectoryId("s0/relu/0");
  const auto words = encode(builder);
  auto bytes = std::make_shared<std::vector<std::byte>>(words.asBytes().size());
  std::memcpy(bytes->data(), words.asBytes().begin(), bytes->size());
  auto decoded = decode(*bytes, bytes);
  DRK_REQUIRE(decoded.ok());
  const auto checked = check_schema(*decoded, capnp::Schema::from<msg::Envelope>());
  DRK_REQUIRE_FALSE(checked.ok());
  DRK_CHECK(checked.error().code == Errc::protocol_error);
  DRK_CHECK(checked.error().message.find("Envelope") != std::string::npos);

  auto good_bytes = std::make_shared<std::vector<std::byte>>(encoded_envelope("pinger"));
  auto good = decode(*good_bytes, good_bytes);
  DRK_REQUIRE(good.ok());
  DRK_CHECK(check_schema(*good, capnp::Schema::from<msg::Envelope>()).ok());
}

// An Envelope whose payload is a Candidate, with its type id replaced by `type_id`, as bytes.
std::vector<std::byte> candidate_envelope(uint64_t type_id) {
  capnp::MallocMessageBuilder builder;
  auto envelope = builder.initRoot<msg::Envelope>();
  init_payload<msg::Candidate>(envelope).setSource("extern \"C\" int drk_kernel(void) { return 0; }");
  envelope.setPayloadType(type_id);
  const auto words = encode(builder);
  std::vector<std::byte> bytes(words.asBytes().size());
  std::memcpy(bytes.data(), words.asBytes().begin(), bytes.size());
  return bytes;
}

DRK_TEST_CASE("a payload from a peer is checked as its registered type, and one of a type not registered is refused") {
  register_payload_types<msg::Candidate>();
  const auto good = candidate_envelope(payload_type_id<msg::Candidate>());
  auto decoded = decode_checked(good, nullptr, {}, envelope_check());
  DRK_REQUIRE_MESSAGE(decoded.ok(), decoded.error().message);
  const auto candidate = payload_of<msg::Candidate>(decoded->root<msg::Envelope>());
  DRK_REQUIRE(candidate.has_value());
  DRK_CHECK(std::string(candidate->getSource().cStr()).find("drk_kernel") != std::string::npos);
  DRK_CHECK_FALSE(payload_of<msg::Verdict>(decoded->root<msg::Envelope>()).has_value());
  DRK_CHECK(body_kind(decoded->root<msg::Envelope>()) == "candidate");

  const auto unknown = decode_checked(candidate_envelope(0x1234), nullptr, {}, envelope_check());
  DRK_REQUIRE_FALSE(unknown.ok());
  DRK_CHECK(unknown.error().code == Errc::protocol_error);
  DRK_CHECK_MESSAGE(unknown.error().message.find("0x0000000000001234, which this program does not register") !=
                        std::string::npos,
                    unknown.error().message);

  // Advantages' items (a list of structs) where a Candidate keeps its id (Text): well-formed
  // bytes whose content does not fit the type they name.
  capnp::MallocMessageBuilder builder;
  auto envelope = builder.initRoot<msg::Envelope>();
  envelope.setPayloadType(payload_type_id<msg::Candidate>());
  envelope.getBody().initPayload().initAs<msg::Advantages>().initItems(2)[0].setTrajectoryId("s0/relu/0");
  const auto words = encode(builder);
  std::vector<std::byte> bytes(words.asBytes().size());
  std::memcpy(bytes.data(), words.asBytes().begin(), bytes.size());
  const auto refused = decode_checked(bytes, nullptr, {}, envelope_check());
  DRK_REQUIRE_FALSE(refused.ok());
  DRK_CHECK_MESSAGE(refused.error().message.find("does not fit its schema") != std::string::npos,
                    refused.error().message);
}

DRK_TEST_CASE("encode_into writes the bytes encode returns, for one segment and for several") {
  for (const std::size_t payload_bytes : {std::size_t{64}, std::size_t{64} << 10}) {
    kj::Array<capnp::word> first_segment = kj::heapArray<capnp::word>(16);
    std::memset(first_segment.begin(), 0, first_segment.asBytes().size());
    capnp::MallocMessageBuilder builder(first_segment);
    const std::vector<kj::byte> payload(payload_bytes, 7);
    runtime::init_payload<msg::PolicyWeights>(builder.initRoot<msg::Envelope>()).setParameters(
        kj::arrayPtr(payload.data(), payload.size()));
    const auto words = encode(builder);
    std::vector<std::byte> written(encoded_size_bytes(builder));
    DRK_REQUIRE(written.size() == words.asBytes().size());
    encode_into(builder, written);
    DRK_CHECK(std::memcmp(written.data(), words.asBytes().begin(), written.size()) == 0);
  }
}

DRK_TEST_CASE("a Text without its NUL inside the active union member is refused by the schema check") {
  capnp::MallocMessageBuilder builder;
  auto envelope = builder.initRoot<msg::Envelope>();
  envelope.setSender("generator.0");
  runtime::init_payload<msg::Candidate>(envelope).setSource("__global__ void kernel() {}");
  const auto words = encode(builder);
  auto bytes = std::make_shared<std::vector<std::byte>>(words.asBytes().size());
  std::memcpy(bytes->data(), words.asBytes().begin(), bytes->size());
  const std::string source = "__global__ void kernel() {}";
  const auto at = std::search(bytes->begin(), bytes->end(), reinterpret_cast<const std::byte*>(source.data()),
                              reinterpret_cast<const std::byte*>(source.data()) + source.size());
  DRK_REQUIRE(at != bytes->end());
  *(at + static_cast<std::ptrdiff_t>(source.size())) = std::byte{'x'};  // the NUL

  auto decoded = decode(*bytes, bytes);
  DRK_REQUIRE(decoded.ok());  // structurally sound: only the schema says it is Text
  register_payload_types<msg::Candidate>();  // the payload is checked as the type it names
  const auto checked = check_schema(*decoded, envelope_check());
  DRK_REQUIRE_FALSE(checked.ok());
  DRK_CHECK(checked.error().message.find("does not fit its schema (Envelope)") != std::string::npos);
  DRK_CHECK_FALSE(decode_checked(*bytes, bytes, {}, envelope_check()).ok());
}

DRK_TEST_CASE("decode_own reads an envelope this process encoded, and still holds the size limit") {
  auto bytes = std::make_shared<std::vector<std::byte>>(encoded_envelope("pinger"));
  auto decoded = decode_own(*bytes, bytes);
  DRK_REQUIRE(decoded.ok());
  const auto envelope = decoded->root<msg::Envelope>();
  DRK_CHECK(std::string(envelope.getSender().cStr()) == "pinger");
  DRK_CHECK(envelope.getBody().getHeartbeat().getSequence() == 42);

  DecodeLimits limits;
  limits.max_frame_bytes = bytes->size() - 8;
  const auto too_large = decode_own(*bytes, bytes, limits);
  DRK_REQUIRE_FALSE(too_large.ok());
  DRK_CHECK(too_large.error().code == Errc::protocol_error);
  DRK_CHECK_FALSE(decode_own(std::span<const std::byte>(*bytes).first(bytes->size() - 3), bytes).ok());
}

}  // namespace
}  // namespace drk::runtime
