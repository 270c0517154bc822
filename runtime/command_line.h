// How drkernel's programs read their command lines: one CLI11 parser (CLI::App) per program,
// a subcommand per command, so that --help is generated from the options themselves.
//
// parse_command_line() parses; --help prints the help of the command it follows (exit 0), and a
// malformed command line (an unknown option or command, a value an option refuses, a missing
// argument) prints what is wrong, naming the option, then the command's usage line, and exits
// with CLI11's code (ExitCodes: 105 a refused value, 106 a missing argument, 109 an unexpected one).
// A command's description is a summary line, then (after a blank line) what it does in full: the
// help of its parent lists it by the summary alone. The checks below make an option refuse a
// value with a message that names the fix.
//
// Thread-safety: plain functions; the App belongs to the caller.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace drk::runtime {

// Parses `command_line` (argv[0] first) into `app`. Returns the exit code when the program is
// done (help printed: 0; a malformed command line: CLI11's code, the message on stderr), or
// none when the chosen command is to run.
std::optional<int> parse_command_line(CLI::App& app, const std::vector<std::string>& command_line);

// The command the parsed command line chose: the last of its chain of subcommands (`drk bench
// eval` chooses bench's eval), or `app` itself when it named none.
const CLI::App& chosen_command(const CLI::App& app);

// A value is refused, with `check`'s message, when `check` fails on it.
CLI::Validator checked_by(std::function<Status(const std::string& value)> check);

// A value is refused unless it is a number >= `low`: "needs a number >= 1, got 'abc'".
CLI::Validator at_least(double low);

// An option whose value `parse` (text -> Result<T>) turns into `into`; a value that `parse`
// refuses is refused with its message.
template <typename T, typename Parse>
CLI::Option* add_parsed_option(CLI::App& app, const std::string& name, T& into, Parse parse,
                               const std::string& description) {
  return app
      .add_option_function<std::string>(
          name, [&into, parse](const std::string& value) { into = *parse(value); }, description)
      ->check(checked_by([parse](const std::string& value) -> Status {
        auto parsed = parse(value);
        if (!parsed) return parsed.error();
        return {};
      }));
}

// An option given in MiB (`--memory-mb 512`), at least `low_mb`, stored in bytes.
CLI::Option* add_megabytes_option(CLI::App& app, const std::string& name, uint64_t& bytes, double low_mb,
                                  const std::string& description);

}  // namespace drk::runtime
