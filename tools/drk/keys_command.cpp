// drk keys generate|show: the CURVE key pairs that secure the links between nodes
// (runtime/nodes/curve_keys.h, docs/security.md).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "runtime/command_line.h"
#include "runtime/log.h"
#include "runtime/nodes/curve_keys.h"
#include "tools/drk/commands.h"

namespace drk::tools {
namespace {

// What `drk keys generate` or `drk keys show` was asked.
struct KeysArgs {
  std::string dir;
  std::vector<std::string> names;
  bool force = false;
};

int generate(const std::string& dir, const std::vector<std::string>& names, bool force) {
  for (const auto& name : names) {
    auto pair = runtime::generate_curve_key_pair();
    if (!pair) {
      log::error() << "drk keys: " << pair.error().message;
      return 1;
    }
    if (auto written = runtime::write_key_pair(dir, name, *pair, force); !written) {
      log::error() << "drk keys: " << written.error().message;
      return 1;
    }
    const auto base = (std::filesystem::path(dir) / name).string();
    std::cout << "wrote " << base << ".key (secret, mode 0600) and " << base << ".pub  public key "
              << pair->public_key << "\n";
  }
  const auto node = std::find_if(names.begin(), names.end(), [](const std::string& name) { return name != "head"; });
  const std::string example = node != names.end() ? *node : names.front();
  std::cout << "\nnext: each machine gets, in its key directory, its own NAME.key and every .pub of " << dir
            << ",\nand no other .key. For example, for '" << example << "':\n"
            << "  scp " << (std::filesystem::path(dir) / example).string() << ".key "
            << (std::filesystem::path(dir) / "*.pub").string() << " " << example << ":" << dir << "/\n"
            << "Name the directory in the topology with `network.keys: " << dir
            << "`; `drk keys show " << dir << "` lists what a directory holds.\n";
  return 0;
}

int show(const std::string& dir) {
  auto allowed = runtime::read_allowed_keys(dir);
  if (!allowed) {
    log::error() << "drk keys: " << allowed.error().message;
    return 1;
  }
  std::set<std::string> pairs_here;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error))
    if (entry.path().extension() == ".key" && entry.path().filename().string().front() != '.')
      pairs_here.insert(entry.path().stem().string());
  std::set<std::string> identities(pairs_here);
  for (const auto& [name, key] : *allowed) identities.insert(name);
  if (identities.empty()) {
    std::cout << "no identities in " << dir << ": `drk keys generate " << dir << " NAME` makes one\n";
    return 0;
  }
  std::size_t width = 8;
  for (const auto& name : identities) width = std::max(width, name.size());
  auto pad = [&](const std::string& text) { return text + std::string(width - text.size() + 2, ' '); };
  std::cout << pad("IDENTITY") << "PUBLIC KEY                                  KEY PAIR HERE\n";
  int problems = 0;
  for (const auto& name : identities) {
    const auto listed = allowed->find(name);
    std::string public_key = listed != allowed->end() ? listed->second : std::string();
    std::string pair_note = "no";
    if (pairs_here.count(name)) {
      auto pair = runtime::read_key_pair(dir, name);
      if (!pair) {
        log::error() << "drk keys: " << pair.error().message;
        ++problems;
        pair_note = "unusable (see above)";
      } else {
        pair_note = "yes (" + name + ".key)";
        if (public_key.empty()) {
          public_key = pair->public_key;
          pair_note += ", but no " + name + ".pub: not admitted by this machine";
        } else if (public_key != pair->public_key) {
          pair_note += ", but " + name + ".pub holds another key";
          ++problems;
        }
      }
    }
    std::cout << pad(name) << (public_key.empty() ? std::string(40, '-') : public_key) << "    " << pair_note << "\n";
  }
  std::cout << allowed->size() << " identit" << (allowed->size() == 1 ? "y" : "ies")
            << " allowed to connect (every .pub of " << dir << ")\n";
  return problems ? 1 : 0;
}

}  // namespace

void add_keys_command(CLI::App& drk, Actions& actions) {
  CLI::App* keys = drk.add_subcommand(
      "keys",
      "CURVE keys for the links between nodes\n"
      "\n"
      "The links between the machines of a run are encrypted and authenticated with CURVE. Every\n"
      "identity (the head is `head`, a node is its node name) has a key pair; a machine admits the\n"
      "identities whose NAME.pub is in its key directory (topology key `network.keys: DIR`).");
  keys->footer("See docs/security.md.");
  auto generate_args = std::make_shared<KeysArgs>();
  CLI::App* generate_command = keys->add_subcommand(
      "generate",
      "writes DIR/NAME.key (public and secret key, mode 0600) and DIR/NAME.pub for each NAME\n"
      "\n"
      "Writes DIR/NAME.key (public and secret key, mode 0600) and DIR/NAME.pub (public key) for each\n"
      "NAME; refuses to replace existing files unless --force is given. Then give each machine its own\n"
      "NAME.key and every .pub, and nothing else.");
  generate_command->add_option("DIR", generate_args->dir, "the key directory")->required()->type_name("");
  generate_command->add_option("NAME", generate_args->names, "the identities: head, and each node's name")
      ->required()
      ->type_name("")
      ->check(runtime::checked_by([](const std::string& name) { return runtime::check_identity_name(name); }));
  generate_command->add_flag("--force", generate_args->force,
                             "replace existing NAME.key and NAME.pub (the old key stops working everywhere)");
  actions[generate_command] = [generate_args] {
    return generate(generate_args->dir, generate_args->names, generate_args->force);
  };
  auto show_args = std::make_shared<KeysArgs>();
  CLI::App* show_command = keys->add_subcommand(
      "show",
      "lists the identities of DIR with their public keys, and which key pairs are here\n"
      "\n"
      "Lists the identities of DIR with their public keys, and which key pairs are here (secret keys\n"
      "are never printed).");
  show_command->add_option("DIR", show_args->dir, "the key directory")->required()->type_name("");
  actions[show_command] = [show_args] { return show(show_args->dir); };
}

}  // namespace drk::tools
