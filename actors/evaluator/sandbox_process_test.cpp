// A sandbox whose start fails leaves nothing behind: its working directory (drk-sandbox-*) goes
// with the failed attempt, here a spawn through a zygote that is gone.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <string>

#include "actors/evaluator/sandbox_process.h"
#include "actors/evaluator/sandbox_zygote.h"
#include "actors/evaluator/shared_region.h"
#include "base/temporary_directory.h"
#include "tests/doctest_drk.h"

using namespace drk::evaluator;

namespace {

int sandbox_directories_in(const std::string& dir) {
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().filename().string().rfind("drk-sandbox-", 0) == 0) ++found;
  return found;
}

}  // namespace

DRK_TEST_CASE("a spawn through a zygote that is gone fails and leaves no working directory behind") {
  auto temporary = drk::TemporaryDirectory::create("drk-sandbox-process-test");
  DRK_REQUIRE_MESSAGE(temporary.ok(), temporary.error().describe());
  DRK_REQUIRE(::setenv("TMPDIR", temporary->path().c_str(), 1) == 0);
  auto zygote = SandboxZygote::start(default_sandbox_executable());
  DRK_REQUIRE_MESSAGE(zygote.ok(), zygote.error().describe());
  auto region = SharedRegion::create(1 << 20);
  DRK_REQUIRE_MESSAGE(region.ok(), region.error().describe());
  std::shared_ptr<SandboxZygote> shared(std::move(*zygote));
  DRK_REQUIRE(::kill(shared->pid(), SIGKILL) == 0);

  auto spawned = SandboxProcess::spawn(shared, SandboxOptions{}, region->fd());
  ::unsetenv("TMPDIR");
  DRK_REQUIRE_FALSE(spawned.ok());
  DRK_CHECK(spawned.error().code == drk::Errc::peer_unavailable);
  DRK_CHECK(sandbox_directories_in(temporary->path()) == 0);
}
