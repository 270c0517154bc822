// The main of every doctest binary. Besides running the tests, it prints a stack trace when a
// test crashes (doctest reports the crash, then re-raises the signal to this handler): a crash
// seen only on another machine can then be read from the log. A binary whose tests were skipped
// for want of a device, and that failed nothing, exits with the status CTest reads as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <execinfo.h>
#include <unistd.h>

#include <csignal>

#include "tests/support/device_skip.h"

namespace {

void print_stack_and_die(int signal_number) {
  constexpr const char kHeader[] = "\n== stack at the crash ==\n";
  ::write(STDERR_FILENO, kHeader, sizeof kHeader - 1);
  void* frames[64];
  const int count = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, count, STDERR_FILENO);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace

int main(int argc, char** argv) {
  for (int signal_number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    std::signal(signal_number, print_stack_and_die);
  }
  doctest::Context context(argc, argv);
  const int status = context.run();
  if (status == 0 && drk::testing::skipped_for_missing_device()) return drk::testing::kSkippedReturnCode;
  return status;
}
