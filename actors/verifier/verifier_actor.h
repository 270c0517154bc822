// VerifierActor: receives every EvalResult, decides with verify() whether it is honest, and
// sends the Verdict to "oracle". Stateless: a restart loses nothing.
#pragma once

#include <memory>

#include "runtime/actor.h"

namespace drk::verifier {

std::unique_ptr<runtime::Actor> make_verifier_actor(const runtime::ActorSpec& spec);

}  // namespace drk::verifier
