// Inspection of the role registry that runtime/actor.h's register_role() fills.
// Lets `drk run` check a topology's roles before any process starts.
// Thread-safety: like register_role(): read after registration is complete.
#pragma once

#include <string>
#include <vector>

namespace drk::runtime {

bool is_role_registered(const std::string& role);
std::vector<std::string> registered_roles();  // sorted

// What register_required_peer() said of `role`.
struct RequiredPeer {
  std::string peer;
  std::string why;
};
std::vector<RequiredPeer> required_peers(const std::string& role);

}  // namespace drk::runtime
