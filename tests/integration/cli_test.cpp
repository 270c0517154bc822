// The `drk` command line as people meet it: the generated --help of every command agrees with the
// README's command reference, and a malformed command line is refused, naming what is wrong.
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/support/ran_program.h"
#include "tests/support/run_dir.h"

namespace {

using drk::testing::Ran;
using drk::testing::RunDir;

Ran drk(const std::vector<std::string>& arguments) {
  RunDir dir;
  return drk::testing::run_program(dir, DRK_BINARY, arguments);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The entries of a help section ("Subcommands:", "Options:"): the first word of each line
// indented by two spaces, up to the blank line that ends the section.
std::vector<std::string> section(const std::string& help, const std::string& title) {
  std::vector<std::string> entries;
  bool inside = false;
  for (const std::string& line : lines_of(help)) {
    if (line == title) {
      inside = true;
    } else if (inside && line.empty()) {
      break;
    } else if (inside && line.rfind("  ", 0) == 0 && line[2] != ' ') {
      entries.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  return entries;
}

// The long options a help's "Options:" section names ("-h,--help" gives --help).
std::vector<std::string> options_of(const std::string& help) {
  std::vector<std::string> options;
  for (const std::string& entry : section(help, "Options:")) {
    options.push_back(entry.substr(entry.find("--")));
  }
  return options;
}

// The README's command reference: the code block under "## The `drk` command", one block of lines
// per command, each starting with "    drk COMMAND".
std::vector<std::string> readme_entries() {
  std::ifstream in(std::string(DRK_SOURCE_DIR) + "/README.md");
  std::vector<std::string> entries;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) inside = line == "## The `drk` command";
    if (!inside) continue;
    if (line.rfind("    drk ", 0) == 0) {
      entries.push_back(line);
    } else if (line.rfind("     ", 0) == 0 && !entries.empty()) {
      entries.back() += "\n" + line;
    }
  }
  return entries;
}

// "drk eval --task ..." -> "eval".
std::string command_of(const std::string& entry) {
  const size_t begin = entry.find("drk ") + 4;
  return entry.substr(begin, entry.find_first_of(" \n", begin) - begin);
}

bool names_option(const std::string& text, const std::string& option) {
  for (size_t at = text.find(option); at != std::string::npos; at = text.find(option, at + 1)) {
    const size_t end = at + option.size();
    if (end == text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '-')) return true;
  }
  return false;
}

DRK_TEST_CASE("drk --help lists the commands of the README's command reference, and no other") {
  const Ran help = drk({"--help"});
  DRK_CHECK(help.exit_code == 0);
  const auto listed = section(help.output, "Subcommands:");
  const std::set<std::string> in_help(listed.begin(), listed.end());
  std::set<std::string> in_readme;
  for (const std::string& entry : readme_entries()) in_readme.insert(command_of(entry));
  DRK_REQUIRE(in_help.size() >= 10);
  for (const std::string& command : in_help) DRK_CHECK_MESSAGE(in_readme.count(command) == 1, (std::string("not in the README: ") + command));
  for (const std::string& command : in_readme) DRK_CHECK_MESSAGE(in_help.count(command) == 1, (std::string("not in drk --help: ") + command));
}

DRK_TEST_CASE("every option of every drk command's --help is in the README's entry for that command") {
  std::vector<std::vector<std::string>> commands;
  for (const std::string& command : section(drk({"--help"}).output, "Subcommands:")) commands.push_back({command});
  size_t checked = 0;
  for (size_t index = 0; index < commands.size(); ++index) {
    std::vector<std::string> arguments = commands[index];
    arguments.push_back("--help");
    const Ran help = drk(arguments);
    DRK_CHECK_MESSAGE(help.exit_code == 0, help.output);
    for (const std::string& sub : section(help.output, "Subcommands:")) {
      commands.push_back(commands[index]);
      commands.back().push_back(sub);
    }
    std::string readme;
    for (const std::string& entry : readme_entries())
      if (command_of(entry) == commands[index].front()) readme += entry + "\n";
    for (const std::string& option : options_of(help.output)) {
      if (option == "--help") continue;  // every command's; the README says so once
      DRK_CHECK_MESSAGE(names_option(readme, option),
                        ("drk " + commands[index].front() + ": " + option + " is not in the README's entry"));
      ++checked;
    }
  }
  DRK_CHECK(commands.size() > 20);  // the commands and their subcommands (bench eval, tasks audit, ...)
  DRK_CHECK(checked > 50);
}

DRK_TEST_CASE("drk without a command prints the help and exits 2") {
  const Ran bare = drk({});
  DRK_CHECK(bare.exit_code == 2);
  DRK_CHECK(bare.output.find("Subcommands:") != std::string::npos);
}

DRK_TEST_CASE("an unknown option is refused, named, with the command's usage") {
  const Ran bogus = drk({"eval", "--bogus"});
  DRK_CHECK(bogus.exit_code != 0);
  DRK_CHECK_MESSAGE(bogus.output.find("--bogus") != std::string::npos, bogus.output);
  DRK_CHECK_MESSAGE(bogus.output.find("Usage: drk eval --task NAME --candidate FILE") != std::string::npos, bogus.output);

  const Ran among_valid = drk({"eval", "--task", "relu", "--candidate", "relu.cpp", "--bogus"});
  DRK_CHECK(among_valid.exit_code != 0);
  DRK_CHECK_MESSAGE(among_valid.output.find("--bogus") != std::string::npos, among_valid.output);
}

DRK_TEST_CASE("a malformed value is refused, naming its option") {
  const Ran iterations = drk({"generate", "runs/none", "--task", "relu", "--iterations", "abc"});
  DRK_CHECK(iterations.exit_code != 0);
  DRK_CHECK_MESSAGE(iterations.output.find("--iterations") != std::string::npos, iterations.output);
  DRK_CHECK_MESSAGE(iterations.output.find("abc") != std::string::npos, iterations.output);

  const Ran device = drk({"eval", "--task", "relu", "--candidate", "relu.cpp", "--device", "tpu"});
  DRK_CHECK(device.exit_code != 0);
  DRK_CHECK_MESSAGE(device.output.find("--device") != std::string::npos, device.output);

  const Ran trials = drk({"verify-corpus", "tests/hacks", "--trials", "0"});
  DRK_CHECK(trials.exit_code != 0);
  DRK_CHECK_MESSAGE(trials.output.find("--trials") != std::string::npos, trials.output);
}

}  // namespace
