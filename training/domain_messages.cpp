#include "training/domain_messages.h"

#include "messages/drk.capnp.h"
#include "runtime/transport/payload_types.h"

namespace drk::training {

void register_domain_messages() {
  runtime::register_payload_types<msg::RolloutRequest, msg::Candidate, msg::EvalRequest, msg::EvalResult, msg::Verdict,
                                  msg::Feedback, msg::Trajectory, msg::AdvantageRequest, msg::Advantages,
                                  msg::PolicyWeights, msg::StepReport, msg::Scored, msg::EvaluatorReady>();
}

}  // namespace drk::training
