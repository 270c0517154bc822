// A Cap'n Proto message as Json (base/json_text.h), for the `--json` outputs that print a
// message (`drk eval --json` prints the Verdict): the fields as Cap'n Proto's JSON codec names
// and encodes them (camelCase names, enums by name, 64-bit integers as strings, Data as arrays
// of bytes), whole numbers as integers. Going through Json makes the text valid JSON even where
// a Text field holds bytes that are not UTF-8 (a compiler's message about a candidate's bytes),
// which the codec's own text passes through.
// Thread-safety: pure function.
#pragma once

#include <capnp/dynamic.h>

#include "base/json_text.h"

namespace drk::runtime {

Json capnp_json(capnp::DynamicStruct::Reader message);

}  // namespace drk::runtime
