#include "kernels/compile/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/unique_fd.h"

extern char** environ;

namespace drk::compile {
namespace {

class SystemCommandRunner final : public CommandRunner {
 public:
  explicit SystemCommandRunner(size_t max_output) : max_output_(max_output) {}

  Result<CommandRun> run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) override {
    if (argv.empty()) return make_error(Errc::invalid_argument, "no program to run");
    auto output = open_pipe("the output of '" + argv[0] + "'");
    if (!output) return output.error();

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, output->write.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, output->write.get(), 2);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);

    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    int spawn_error = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    output->write.reset();  // the child's copies hold the pipe open while it runs
    if (spawn_error != 0) {
      return make_error(Errc::io_error, "cannot start '" + argv[0] + "': " + std::strerror(spawn_error));
    }

    CommandRun result;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    char buffer[4096];
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        result.timed_out = true;
        break;
      }
      pollfd descriptor{output->read.get(), POLLIN, 0};
      int ready = poll(&descriptor, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) continue;
      ssize_t n = read(output->read.get(), buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      size_t room = max_output_ - std::min(max_output_, result.output.size());
      result.output.append(buffer, std::min(room, static_cast<size_t>(n)));
    }
    output->read.reset();
    if (result.timed_out) kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    else if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (result.timed_out) result.signal = 0;
    return result;
  }

 private:
  size_t max_output_;
};

}  // namespace

std::shared_ptr<CommandRunner> system_command_runner(size_t max_output) {
  return std::make_shared<SystemCommandRunner>(max_output);
}

}  // namespace drk::compile
