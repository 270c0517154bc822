#include "runtime/actor.h"

#include <map>

#include "runtime/role_registry.h"

namespace drk::runtime {
namespace {

std::map<std::string, ActorFactory>& registry() {
  static std::map<std::string, ActorFactory> factories;
  return factories;
}

std::map<std::string, std::vector<RequiredPeer>>& peer_registry() {
  static std::map<std::string, std::vector<RequiredPeer>> peers;
  return peers;
}

}  // namespace

void register_required_peer(const std::string& role, const std::string& peer, const std::string& why) {
  peer_registry()[role].push_back({peer, why});
}

std::vector<RequiredPeer> required_peers(const std::string& role) {
  const auto found = peer_registry().find(role);
  return found == peer_registry().end() ? std::vector<RequiredPeer>{} : found->second;
}

void register_role(const std::string& role, ActorFactory factory) { registry()[role] = std::move(factory); }

bool is_role_registered(const std::string& role) { return registry().count(role) != 0; }

std::vector<std::string> registered_roles() {
  std::vector<std::string> roles;
  for (const auto& [role, factory] : registry()) roles.push_back(role);
  return roles;
}

Result<std::unique_ptr<Actor>> create_actor(const ActorSpec& spec) {
  const auto found = registry().find(spec.role);
  if (found == registry().end()) {
    std::string known;
    for (const auto& role : registered_roles()) known += (known.empty() ? "" : ", ") + role;
    return make_error(Errc::not_found,
                      "actor '" + spec.name + "' has the role '" + spec.role +
                          "', which is not registered; known roles: " + (known.empty() ? "none" : known));
  }
  std::unique_ptr<Actor> actor = found->second(spec);
  if (!actor) {
    return make_error(Errc::internal,
                      "the factory of role '" + spec.role + "' returned no actor for '" + spec.name + "'");
  }
  return actor;
}

}  // namespace drk::runtime
