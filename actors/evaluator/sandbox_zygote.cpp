#include "actors/evaluator/sandbox_zygote.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "actors/evaluator/descriptor_channel.h"
#include "actors/evaluator/sandbox_channel.h"
#include "actors/evaluator/sandbox_launch.h"
#include "messages/sandbox.capnp.h"

namespace drk::evaluator {
namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<int64_t>(left, 0));
}

}  // namespace

Result<std::unique_ptr<SandboxZygote>> SandboxZygote::start(const std::string& executable,
                                                           const std::vector<std::string>& arguments) {
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { signal(SIGPIPE, SIG_IGN); });
  auto ends = open_socket_pair(SOCK_SEQPACKET | SOCK_CLOEXEC, "the zygote's control");
  if (!ends) return ends.error();
  LaunchSpec spec;
  spec.argv = {executable, "--zygote"};
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  spec.descriptors = {ends->theirs.get()};
  auto launched = launch_sandbox(spec);
  if (!launched) return launched.error();
  std::unique_ptr<SandboxZygote> zygote(new SandboxZygote());
  zygote->pid_ = *launched;
  zygote->control_ = std::move(ends->ours);
  return zygote;
}

SandboxZygote::~SandboxZygote() { stop(); }

void SandboxZygote::stop() {
  if (pid_ <= 0) return;
  // On EOF the zygote kills its sandboxes and exits; a zygote that does not, within a few
  // seconds, is killed.
  control_.reset();
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0 && Clock::now() < deadline) usleep(1000);
  if (waitpid(pid_, &status, WNOHANG) == 0) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

Status SandboxZygote::read_event(int timeout_ms) {
  auto received = receive_with_descriptors(control_.get(), timeout_ms);
  if (!received) {
    if (received.error().code == Errc::peer_unavailable || received.error().code == Errc::protocol_error) stop();
    return received.error();
  }
  capnp::FlatArrayMessageReader reader(received->words, frame_reader_options());
  auto event = reader.getRoot<msg::ZygoteEvent>();
  switch (event.which()) {
    case msg::ZygoteEvent::SPAWNED: {
      auto spawned = event.getSpawned();
      SpawnedSandbox sandbox;
      sandbox.id = spawned.getId();
      sandbox.pid = spawned.getPid();
      sandbox.uid = spawned.getUid();
      if (!received->descriptors.empty()) sandbox.pidfd = std::move(received->descriptors.front());
      answer_id_ = sandbox.id;
      answer_ = std::move(sandbox);
      break;
    }
    case msg::ZygoteEvent::FAILED:
      answer_id_ = event.getFailed().getId();
      answer_ = make_error(Errc::invalid_argument, "the zygote could not make a sandbox: " +
                                                       std::string(event.getFailed().getMessage().cStr()));
      break;
    case msg::ZygoteEvent::EXITED: {
      auto exited = event.getExited();
      leftovers_ += exited.getLeftovers();
      if (forgotten_.erase(exited.getId()) > 0) break;
      SandboxExit end;
      end.signal = exited.getSignal();
      end.exit_code = exited.getExitCode();
      exits_[exited.getId()] = end;
      break;
    }
  }
  return {};
}

Result<SpawnedSandbox> SandboxZygote::spawn(const SpawnRequest& request, std::chrono::milliseconds timeout) {
  if (!alive()) return make_error(Errc::peer_unavailable, "the sandbox zygote is not running");
  const uint64_t id = next_id_++;
  capnp::MallocMessageBuilder message;
  auto spawn = message.initRoot<msg::ZygoteSpawn>();
  spawn.setId(id);
  spawn.setWorkDirectory(request.work_directory);
  spawn.setMaxThreads(request.max_threads);
  spawn.setGpuMemoryLimitBytes(request.gpu_memory_limit_bytes);
  auto limits = spawn.initLimits();
  limits.setCpuSeconds(request.limits.cpu_seconds);
  limits.setMemoryBytes(request.limits.memory_bytes);
  limits.setAddressSpace(request.limits.address_space);
  limits.setMaxOpenFiles(request.limits.max_open_files);
  limits.setMaxTasks(request.limits.max_tasks);
  limits.setOwnUser(request.limits.own_user);
  auto cpus = limits.initCpus(static_cast<unsigned>(request.limits.cpus.size()));
  for (unsigned i = 0; i < cpus.size(); ++i) cpus.set(i, request.limits.cpus[i]);
  const int descriptors[] = {request.request_read, request.reply_write, request.region_fd};
  if (auto sent = send_with_descriptors(control_.get(), message, descriptors); !sent) {
    if (sent.error().code == Errc::peer_unavailable) stop();
    return sent.error();
  }
  const auto deadline = Clock::now() + timeout;
  while (!answer_ || answer_id_ != id) {
    if (Clock::now() >= deadline)
      return make_error(Errc::timeout, "the sandbox zygote did not answer within " +
                                           std::to_string(timeout.count()) + " ms");
    if (auto read = read_event(remaining_ms(deadline)); !read && read.error().code != Errc::timeout) return read.error();
  }
  auto answer = std::move(*answer_);
  answer_.reset();
  return answer;
}

std::optional<SandboxExit> SandboxZygote::wait_exit(uint64_t id, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (auto found = exits_.find(id); found != exits_.end()) {
      SandboxExit end = found->second;
      exits_.erase(found);
      return end;
    }
    if (!alive() || Clock::now() >= deadline) return std::nullopt;
    if (auto read = read_event(remaining_ms(deadline)); !read && read.error().code != Errc::timeout) return std::nullopt;
  }
}

void SandboxZygote::forget(uint64_t id) {
  if (exits_.erase(id) == 0) forgotten_[id] = true;
}

}  // namespace drk::evaluator
