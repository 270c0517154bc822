// A fake ActorContext for handler tests: records every send (as its own Cap'n Proto message),
// every timer request, answers members() from a table, and has a settable clock. Also builds
// envelopes to hand to an actor's on_message.
//
// Thread-safety: single-threaded, like an actor's handlers.
#pragma once

#include <capnp/message.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "messages/drk.capnp.h"
#include "runtime/actor.h"

namespace drk::testing {

class FakeActorContext final : public runtime::ActorContext {
 public:
  struct Sent {
    std::string recipient;
    std::unique_ptr<capnp::MallocMessageBuilder> message;
    msg::Envelope::Reader envelope() const { return message->getRoot<msg::Envelope>().asReader(); }
  };
  struct Timer {
    std::chrono::milliseconds delay;
    uint64_t token;
  };

  explicit FakeActorContext(runtime::ActorSpec spec) : spec_(std::move(spec)) {}

  const runtime::ActorSpec& spec() const override { return spec_; }

  Status send(std::string_view recipient, const std::function<void(msg::Envelope::Builder)>& fill,
              const runtime::SendOptions&) override {
    Sent sent{std::string(recipient), std::make_unique<capnp::MallocMessageBuilder>()};
    auto envelope = sent.message->initRoot<msg::Envelope>();
    envelope.setSender(spec_.name);
    envelope.setRecipient(std::string(recipient));
    envelope.setSentUnixMs(now_ms);
    fill(envelope);
    this->sent.push_back(std::move(sent));
    return {};
  }

  // Recorded as a send with the next correlation id; tests deliver replies or failures.
  Result<uint64_t> request(std::string_view recipient, const std::function<void(msg::Envelope::Builder)>& fill,
                           std::chrono::milliseconds) override {
    runtime::SendOptions options;
    options.correlation_id = ++last_request_id;
    if (auto sent = send(recipient, fill, options); !sent) return sent.error();
    sent.back().message->getRoot<msg::Envelope>().setCorrelationId(last_request_id);
    return last_request_id;
  }

  std::vector<std::string> members(std::string_view role) const override {
    const auto found = roles.find(std::string(role));
    return found == roles.end() ? std::vector<std::string>{} : found->second;
  }

  void start_timer(std::chrono::milliseconds delay, uint64_t token) override {
    timers.push_back({delay, token});
  }

  int64_t now_unix_ms() const override { return now_ms; }

  // The sends whose payload is a T, in order.
  template <typename T>
  std::vector<const Sent*> sent_of() const {
    std::vector<const Sent*> matching;
    for (const auto& item : sent) {
      if (runtime::payload_of<T>(item.envelope())) matching.push_back(&item);
    }
    return matching;
  }

  std::map<std::string, std::vector<std::string>> roles;
  std::vector<Sent> sent;
  std::vector<Timer> timers;
  int64_t now_ms = 1'000'000;
  uint64_t last_request_id = 0;

 private:
  runtime::ActorSpec spec_;
};

// Delivers an envelope built by `fill` to `actor`.
inline void deliver(runtime::Actor& actor, runtime::ActorContext& context,
                    const std::function<void(msg::Envelope::Builder)>& fill) {
  capnp::MallocMessageBuilder message;
  auto envelope = message.initRoot<msg::Envelope>();
  fill(envelope);
  actor.on_message(context, envelope.asReader());
}

}  // namespace drk::testing
