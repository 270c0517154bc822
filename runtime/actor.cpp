#include "runtime/actor.h"

#include <map>

#include "runtime/role_registry.h"

namespace drk::runtime {
namespace {

std::map<std::string, ActorFactory>& registry() {
  static std::map<std::string, ActorFactory> factories;
  return factories;
}

}  // namespace

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
