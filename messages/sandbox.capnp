# The protocol between an Evaluator and its sandbox processes: length-prefixed Cap'n Proto
# messages over a pipe pair. It is language-neutral on purpose: a Python sandbox worker
# (KernelBench-format problems, Triton candidates) will speak the same protocol.
# Evolution rules: as in drk.capnp (new fields with new ordinals only).
@0xcad552739e058fee;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("drk::msg");

# Filled in by the Evaluator's implementation (actors/evaluator/sandbox_protocol.md).
struct SandboxRequest {
  id @0 :UInt64;
}

struct SandboxReply {
  id @0 :UInt64;
}
