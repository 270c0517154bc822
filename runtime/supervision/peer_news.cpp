#include "runtime/supervision/peer_news.h"

#include <chrono>

#include "runtime/log.h"

namespace drk::runtime {
namespace {

constexpr std::chrono::milliseconds kControlWaitForRoom{200};

}  // namespace

std::vector<std::string> news_recipients(const Topology& topology, const std::string& subject,
                                         const std::string& skip_node) {
  const ActorEntry* entry = topology.find(subject);
  std::vector<std::string> recipients;
  for (const ActorEntry& recipient : topology.actors) {
    if (!skip_node.empty() && recipient.node == skip_node) continue;
    if (entry && recipient.role == entry->role) continue;
    recipients.push_back(recipient.name);
  }
  return recipients;
}

void tell_every_actor(Outbox& control, const Topology& topology, const std::vector<std::string>& actors,
                      PeerNews news, const std::string& skip_node) {
  SendOptions options;
  options.wait_for_room = kControlWaitForRoom;
  for (const std::string& actor : actors) {
    for (const std::string& recipient : news_recipients(topology, actor, skip_node)) {
      const auto sent = control.send(
          recipient,
          [&](msg::Envelope::Builder envelope) {
            auto body = envelope.getBody().initControl();
            if (news == PeerNews::restarted) {
              body.setPeerRestarted(actor);
            } else {
              body.setPeerLost(actor);
            }
          },
          options);
      if (!sent) {
        log::warn() << "supervisor: cannot tell '" << recipient << "' that '" << actor << "' "
                    << (news == PeerNews::restarted ? "restarted" : "was lost") << ": " << sent.error().message;
      }
    }
  }
}

}  // namespace drk::runtime
