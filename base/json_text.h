// The JSON every drkernel output writes (`--json` of the drk commands, the JSONL export, the
// benchmarks): nlohmann::ordered_json values, whose fields keep the order they were added in,
// and json_text() to write one.
//
// json_text() never fails and always writes valid JSON: text from candidates, compilers and peers
// may hold any bytes, so bytes that are not UTF-8 become U+FFFD (valid UTF-8 stays as it is),
// control characters are escaped, and numbers that are not finite are written as null.
// Thread-safety: pure function.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace drk {

using Json = nlohmann::ordered_json;

// Compact (one line) when `indent` is negative, else indented by that many spaces per level.
std::string json_text(const Json& value, int indent = -1);

}  // namespace drk
