// capnp_json: a message as the JSON codec names its fields, numbers that stay integers, and
// valid JSON from a Text field that is not UTF-8.
#include "runtime/capnp_json.h"

#include <capnp/message.h>

#include "messages/drk.capnp.h"
#include "tests/doctest_drk.h"

namespace drk::runtime {
namespace {

DRK_TEST_CASE("a message with a compiler's message that is not UTF-8 prints as valid JSON") {
  capnp::MallocMessageBuilder message;
  auto result = message.initRoot<msg::EvalResult>();
  result.setCompiled(false);
  result.setCompileLog("k.cpp:1: stray '\xff' in program\n\"quoted\"");
  result.setTrials(3);
  result.setEvalMs(12.5);
  const std::string text = json_text(capnp_json(result.asReader()));
  DRK_REQUIRE_MESSAGE(nlohmann::json::accept(text), text);
  const auto parsed = nlohmann::json::parse(text);
  DRK_CHECK(parsed.at("compileLog") == "k.cpp:1: stray '\xef\xbf\xbd' in program\n\"quoted\"");
  DRK_CHECK(parsed.at("compiled") == false);
  DRK_CHECK(parsed.at("trials").is_number_integer());
  DRK_CHECK(parsed.at("trials") == 3);
  DRK_CHECK(parsed.at("evalMs") == 12.5);
}

}  // namespace
}  // namespace drk::runtime
