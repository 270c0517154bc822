// The Generator with a language model (experiment.generator.backend: openai): each RolloutRequest
// is a conversation with a model behind an OpenAI-compatible server (llm/openai_client.h), one
// answer per turn. Turn 1 states the task (llm/prompt_builder.h); the answer's last fenced code
// block is the candidate (a KernelBench problem's ModelNew, Candidate.language python with
// generator.kernelbench_backend; for our tasks C++ or CUDA by the task's device), sent to the
// Oracle; its Feedback (reward, verdict, the multi-resolution summary) becomes the next turn's
// message. After the last turn the Trajectory goes to the Learner, each Turn with the answer's
// token log-probabilities in actionLogprobs (where the embedded policy's behaviour
// log-probabilities go; no family, observation or actions: the embedded Learner trains nothing
// from them and marks them malformed), the messages its request added to the conversation
// (promptAdded), the whole answer and the model: what a Python trainer needs (docs/archive.md).
//
// Failures are turns, not crashes: an answer without a code block, or no answer at all (the
// server failed past its retries or the deadline), is a turn with reward 0 and the reason, which
// the next turn tells the model.
//
// Protocol duties as the embedded Generator's (generator_actor.h): requests deduplicated by
// trajectory id, a finished trajectory's Trajectory sent again when asked, a candidate without
// Feedback sent again after experiment.eval_timeout_s and whenever another actor restarts.
// Requests to the model run on the client's threads (generator.max_in_flight); the actor looks
// at the answers every 10 ms while any is awaited (no other thread can wake it).
//
// Sampling seed: generator.seed, when set, plus a hash of the candidate id, in 31 bits: a turn's
// request is the same whatever the interleaving.
// Thread-safety: an actor. Errors: settings, templates or an API key that cannot be read are a
// fault at start (load_topology refuses the first two before anything starts).
#pragma once

#include <memory>

#include "runtime/actor.h"

namespace drk::generator {

std::unique_ptr<runtime::Actor> make_llm_generator_actor(const runtime::ActorSpec& spec);

}  // namespace drk::generator
