#include "runtime/payload.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <string>

#include "messages/drk.capnp.h"
#include "tests/doctest_drk.h"

namespace drk::runtime {
namespace {

DRK_TEST_CASE("a payload set over another body, or over another payload, is the only thing the envelope carries") {
  capnp::MallocMessageBuilder builder;
  auto envelope = builder.initRoot<msg::Envelope>();
  DRK_CHECK(payload_type(envelope.asReader()) == 0);  // a new envelope's payload is of no type

  envelope.getBody().initControl().setPing();
  init_payload<msg::Candidate>(envelope).setSource("extern \"C\" int drk_kernel(void) { return 0; }");
  DRK_REQUIRE(envelope.getBody().isPayload());
  const auto candidate = payload_of<msg::Candidate>(envelope.asReader());
  DRK_REQUIRE(candidate.has_value());
  DRK_CHECK(std::string(candidate->getSource().cStr()).find("drk_kernel") != std::string::npos);

  capnp::MallocMessageBuilder verdict_builder;
  auto verdict = verdict_builder.initRoot<msg::Verdict>();
  verdict.setHonest(true);
  set_payload<msg::Verdict>(envelope, verdict.asReader());
  DRK_CHECK(payload_type(envelope.asReader()) == payload_type_id<msg::Verdict>());
  DRK_CHECK_FALSE(payload_of<msg::Candidate>(envelope.asReader()).has_value());
  DRK_REQUIRE(payload_of<msg::Verdict>(envelope.asReader()).has_value());
  DRK_CHECK(payload_of<msg::Verdict>(envelope.asReader())->getHonest());
  // The Candidate it replaced is zeroed, not left behind in the message.
  const auto words = capnp::messageToFlatArray(builder);
  const std::string bytes(reinterpret_cast<const char*>(words.asBytes().begin()), words.asBytes().size());
  DRK_CHECK(bytes.find("drk_kernel") == std::string::npos);

  envelope.getBody().initHeartbeat();
  DRK_CHECK(payload_type(envelope.asReader()) == 0);
  DRK_CHECK_FALSE(payload_of<msg::Verdict>(envelope.asReader()).has_value());
}

}  // namespace
}  // namespace drk::runtime
