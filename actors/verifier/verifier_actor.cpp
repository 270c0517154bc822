#include "actors/verifier/verifier_actor.h"

#include "messages/drk.capnp.h"
#include "runtime/payload.h"
#include "actors/verifier/verify.h"
#include "runtime/log.h"

namespace drk::verifier {
namespace {

class VerifierActor final : public runtime::Actor {
 public:
  void on_message(runtime::ActorContext& context, msg::Envelope::Reader envelope) override {
    const auto evaluated = runtime::payload_of<msg::EvalResult>(envelope);
    if (!evaluated) return;
    const auto result = *evaluated;
    runtime::SendOptions traced;
    traced.trace_id = envelope.getTraceId();
    const auto status = context.send(
        "oracle", [&](msg::Envelope::Builder out) { verify(result, runtime::init_payload<msg::Verdict>(out)); }, traced);
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
