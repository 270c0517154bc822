// Compiled artifacts: a candidate compiled where it was generated and shipped inside its
// Candidate (msg::CompiledArtifact), so that an Evaluator on a GPU node does not compile it
// (docs/gpu.md: compile ahead on a CPU node).
//
// The sender compiles with the Evaluator's options (compiler_options_for(): same compiler, flags
// and ABI header, so the same cache key) and packs the object with pack_artifact(). The Evaluator
// checks it with verify_artifact() before CompilePool::adopt() files it into its cache: the key
// must be the one its own compiler computes for the source, which differs for another source, a
// compiler of another version, other flags, another native target (-march=native) or another ABI
// header; and the object's SHA-256 must be the one sent, which a corrupt or cut object fails.
// Anything else is ignored and the source compiled as usual.
//
// Trust: the key says which source and compiler the object claims; only the sender's honesty
// says it was built from them. An artifact is trusted as far as the actor that sent it (every
// envelope of a run comes from one of its actors; across nodes CURVE authenticates them,
// docs/security.md), and the object runs in the sandbox like any candidate.
//
// Python candidates: their load_inline modules (CompiledCandidate::extensions) travel with the
// checked source, each with its place under the extension cache and its SHA-256; the Evaluator
// files them where its own keys will look (Compiler::adopt), so that a module built from the same
// sources, flags, compilers and torch is not built again, and any other is built as usual.
//
// Size: an object (with its modules) over kMaxShippedObjectBytes is withheld (use = withheld, the note says why)
// and the Evaluator compiles: a quarter of the largest envelope a receiver decodes
// (kMaxFrameBytes), so that a Candidate with its object fits in an EvalRequest with room.
//
// Thread-safety: pure functions over their arguments (pack_artifact reads one file).
#pragma once

#include <capnp/message.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/compile/compiler.h"
#include "messages/drk.capnp.h"
#include "base/frame_limit.h"
#include "base/result.h"

namespace drk::compile {

inline constexpr std::size_t kMaxShippedObjectBytes = kMaxFrameBytes / 4;

// Fills `out` from `compiled`, a compile by `compiler`: the object read from
// compiled.library_path, its SHA-256, the key, the command line, the compiler's output, the
// compile time and `built_by`, with use = shipped. An object over `max_object_bytes` is withheld:
// no object, use = withheld, and a note with its size and the limit.
// Errors: io_error when the object cannot be read.
Status pack_artifact(const Compiler& compiler, const CompiledCandidate& compiled, std::string_view built_by,
                     msg::CompiledArtifact::Builder out, std::size_t max_object_bytes = kMaxShippedObjectBytes);

// Nothing when `artifact` may stand for compiling `source` with `compiler`.
// Errors: invalid_argument saying why not: withheld by its sender, no object, a key other than
// compiler.cache_key(source), an object or a module whose SHA-256 is not the one sent, or a
// module path that is not a place in the extension cache.
Status verify_artifact(const Compiler& compiler, const std::string& source, msg::CompiledArtifact::Reader artifact);

// The artifact's load_inline modules as Compiler::adopt() files them (views into `artifact`).
std::vector<Compiler::ModuleFile> shipped_modules(msg::CompiledArtifact::Reader artifact);

// `candidate` copied into `message` without its artifact's object (the rest of the artifact
// kept), as results carry it: they travel on to the Verifier, the Oracle and the archive.
msg::Candidate::Builder without_object(msg::Candidate::Reader candidate, capnp::MallocMessageBuilder& message);

}  // namespace drk::compile
