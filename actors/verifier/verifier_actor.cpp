#include "actors/verifier/verifier_actor.h"

#include "actors/verifier/verify.h"
#include "runtime/log.h"

namespace drk::verifier {
namespace {

class VerifierActor final : public runtime::Actor {
 public:
  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    if (!envelope.getBody().isEvalResult()) return;
    const auto result = envelope.getBody().getEvalResult();
    const auto status = context.send("oracle", [&](msg::Envelope::Builder out) {
      out.setTraceId(envelope.getTraceId());
      verify(result, out.getBody().initVerdict());
    });
    // A busy or dead Oracle loses this verdict; the Generator re-sends the candidate after
    // its deadline, so the failure is visible but not fatal.
    if (!status) {
      log::warn() << context.self() << ": verdict for '" << result.getCandidate().getId().cStr()
                  << "' not delivered: " << status.error().describe();
    }
  }
};

}  // namespace

std::unique_ptr<runtime::Actor> make_verifier_actor(const runtime::ActorSpec&) {
  return std::make_unique<VerifierActor>();
}

}  // namespace drk::verifier
