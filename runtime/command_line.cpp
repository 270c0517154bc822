#include "runtime/command_line.h"

#include <charconv>
#include <iostream>
#include <sstream>

namespace drk::runtime {
namespace {

// "drk bench eval": the names from the program down to `command`.
std::string full_name(const CLI::App& command) {
  const CLI::App* parent = command.get_parent();
  return parent ? full_name(*parent) + " " + command.get_name() : command.get_name();
}

// Lists a command by the first line of its description, its summary; its usage line names the
// options it requires ("Usage: drk eval --task NAME --candidate FILE [OPTIONS]").
class SummaryFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string required;
    for (const CLI::Option* option :
         app->get_options([](const CLI::Option* option) { return option->get_required() && option->nonpositional(); })) {
      required += " " + option->get_name() + " " + option->get_type_name();
    }
    std::string usage = CLI::Formatter::make_usage(app, name);
    return usage.insert(get_label("Usage").size() + 2 + name.size(), required);
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    const std::string& description = sub->get_description();
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), description.substr(0, description.find('\n')),
                             get_column_width());
    return out.str();
  }
};

// "drk eval: --trials: needs a number >= 1, got 'abc'", the usage line, and where the rest is.
std::string failure_message(const CLI::App* app, const CLI::Error& error) {
  const CLI::App& command = chosen_command(*app);
  const std::string name = full_name(command);
  std::string what = error.what();
  // CLI11 names the subcommand of an unexpected argument itself ("eval: The following ...").
  if (const std::string own = command.get_name() + ": "; what.rfind(own, 0) == 0) what.erase(0, own.size());
  // A missing argument is reported before an unexpected one (`drk eval --bogus`): both are said.
  std::string unexpected;
  if (dynamic_cast<const CLI::ExtrasError*>(&error) == nullptr) {
    for (const std::string& argument : command.remaining()) unexpected += " " + argument;
  }
  return (unexpected.empty() ? "" : name + ": unexpected:" + unexpected + "\n") + name + ": " + what + "\n" +
         SummaryFormatter().make_usage(&command, name) + "`" + name + " --help` explains every option\n";
}

void use_formatter(CLI::App& app, const std::shared_ptr<CLI::Formatter>& formatter) {
  app.formatter(formatter);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) use_formatter(*sub, formatter);
}

}  // namespace

std::optional<int> parse_command_line(CLI::App& app, const std::vector<std::string>& command_line) {
  std::vector<const char*> argv;
  for (const std::string& argument : command_line) argv.push_back(argument.c_str());
  use_formatter(app, std::make_shared<SummaryFormatter>());
  app.failure_message(failure_message);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  return std::nullopt;
}

const CLI::App& chosen_command(const CLI::App& app) {
  const auto chosen = app.get_subcommands();
  return chosen.empty() ? app : chosen_command(*chosen.front());
}

CLI::Validator checked_by(std::function<Status(const std::string& value)> check) {
  return CLI::Validator(
      [check = std::move(check)](std::string& value) {
        const Status checked = check(value);
        return checked ? std::string() : checked.error().message;
      },
      "");
}

CLI::Validator at_least(double low) {
  std::ostringstream bound;
  bound << low;
  return checked_by([low, bound = bound.str()](const std::string& value) -> Status {
    double number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error != std::errc() || end != value.data() + value.size() || number < low) {
      return make_error(Errc::invalid_argument, "needs a number >= " + bound + ", got '" + value + "'");
    }
    return {};
  });
}

CLI::Option* add_megabytes_option(CLI::App& app, const std::string& name, uint64_t& bytes, double low_mb,
                                  const std::string& description) {
  return app.add_option_function<uint64_t>(name, [&bytes](uint64_t megabytes) { bytes = megabytes << 20; }, description)
      ->type_name("MB")
      ->check(at_least(low_mb));
}

}  // namespace drk::runtime
