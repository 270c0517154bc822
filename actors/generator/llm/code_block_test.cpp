#include "actors/generator/llm/code_block.h"

#include "tests/doctest_drk.h"

using drk::generator::last_code_block;

DRK_TEST_CASE("the last fenced code block of an answer is the candidate") {
  const auto block = last_code_block(
      "First a sketch:\n```cpp\nint draft;\n```\nThen the real one:\n\n```python\nclass ModelNew:\n    pass\n```\nDone.");
  DRK_REQUIRE(block.ok());
  DRK_CHECK(block->language == "python");
  DRK_CHECK(block->code == "class ModelNew:\n    pass\n");
}

DRK_TEST_CASE("fences of tildes, longer fences holding shorter ones, and CRLF lines") {
  const auto tildes = last_code_block("~~~~ c++ {.numberLines}\r\n```\r\ninside\r\n```\r\n~~~~\r\n");
  DRK_REQUIRE(tildes.ok());
  DRK_CHECK(tildes->language == "c++");
  DRK_CHECK(tildes->code == "```\ninside\n```\n");
}

DRK_TEST_CASE("an answer without a code block, or with one left open, gives the reason") {
  const auto none = last_code_block("I would use shared memory tiling, and `inline code` is no block.");
  DRK_REQUIRE_FALSE(none.ok());
  DRK_CHECK(none.error().message.find("no fenced code block") != std::string::npos);
  const auto cut = last_code_block("```cpp\nint a;\n```\n```cpp\nint drk_kernel(");
  DRK_REQUIRE_FALSE(cut.ok());
  DRK_CHECK(cut.error().message.find("max_tokens") != std::string::npos);
}
