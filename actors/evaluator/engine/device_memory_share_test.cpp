#include "actors/evaluator/engine/device_memory_share.h"
#include "actors/evaluator/engine/shared_gpu.h"

#include <atomic>
#include <thread>

#include "tests/doctest_drk.h"

using namespace drk::evaluator;

namespace {

constexpr size_t kGiB = size_t{1} << 30;

// A share of 100 GiB once the margin is taken from the measured free memory.
DeviceMemoryShare hundred_gib_share() {
  return DeviceMemoryShare([] { return static_cast<size_t>(100 * kGiB / (1 - DeviceMemoryShare::kMarginShare)) + 1; });
}

// Waits, without sleeping a fixed time, until `share` has `count` claims waiting.
void wait_for_waiting(const DeviceMemoryShare& share, size_t count) {
  while (share.waiting() != count) std::this_thread::yield();
}

}  // namespace

DRK_TEST_CASE("a device memory share is measured by its first claim, less the margin") {
  int measured = 0;
  DeviceMemoryShare share([&] {
    ++measured;
    return 200 * kGiB;
  });
  DRK_CHECK(share.capacity() == 0);
  auto first = share.claim(kGiB);
  auto second = share.claim(kGiB);
  DRK_CHECK(measured == 1);
  DRK_CHECK(share.capacity() == static_cast<size_t>(200.0 * kGiB * (1 - DeviceMemoryShare::kMarginShare)));
  DRK_CHECK(share.claimed() == 2 * kGiB);
}

DRK_TEST_CASE("claims that fit together are held at once; one that does not waits for a release") {
  auto share = hundred_gib_share();
  auto first = share.claim(60 * kGiB);
  auto small = share.claim(30 * kGiB);
  std::atomic<bool> granted = false;
  std::thread third([&] {
    auto claim = share.claim(60 * kGiB);
    granted = true;
  });
  wait_for_waiting(share, 1);
  DRK_CHECK_FALSE(granted.load());
  small = {};
  DRK_CHECK_FALSE(granted.load());  // 60 + 60 is still over 100
  first = {};
  third.join();
  DRK_CHECK(granted.load());
  DRK_CHECK(share.claimed() == 0);
}

DRK_TEST_CASE("a claim larger than the whole share runs alone, once the others are released") {
  auto share = hundred_gib_share();
  auto held = share.claim(10 * kGiB);
  std::atomic<bool> granted = false;
  std::thread huge([&] {
    auto claim = share.claim(500 * kGiB);
    granted = true;
    DRK_CHECK(share.claimed() == 500 * kGiB);
  });
  wait_for_waiting(share, 1);
  DRK_CHECK_FALSE(granted.load());
  held = {};
  huge.join();
  DRK_CHECK(granted.load());
}

DRK_TEST_CASE("claims are granted in the order asked: a small one does not pass a large one that waits") {
  auto share = hundred_gib_share();
  auto held = share.claim(50 * kGiB);
  std::atomic<int> order = 0, large_at = 0, small_at = 0;
  std::thread large([&] {
    auto claim = share.claim(80 * kGiB);
    large_at = ++order;
  });
  wait_for_waiting(share, 1);
  std::thread small([&] {
    // Fits beside the 50 held, but the 80 asked first; and not beside the 80, so that it is
    // granted only once the large one is done (a grant beside it would race it to `order`).
    auto claim = share.claim(30 * kGiB);
    small_at = ++order;
  });
  wait_for_waiting(share, 2);
  DRK_CHECK(order.load() == 0);
  held = {};
  large.join();
  small.join();
  DRK_CHECK(large_at.load() == 1);
  DRK_CHECK(small_at.load() == 2);
}

DRK_TEST_CASE("a moved claim is released once, by its last owner") {
  auto share = hundred_gib_share();
  DeviceMemoryShare::Claim outer;
  {
    auto inner = share.claim(40 * kGiB);
    outer = std::move(inner);
  }
  DRK_CHECK(share.claimed() == 40 * kGiB);
  outer = {};
  DRK_CHECK(share.claimed() == 0);
}

DRK_TEST_CASE("engines on one GPU take turns to time and share its memory; one alone, or on the CPU, shares nothing") {
  EngineOptions on_cpu;
  on_cpu.device = drk::kernels::DeviceKind::cpu;
  share_one_gpu(on_cpu, 4);
  DRK_CHECK_FALSE(on_cpu.device_timing_lock);
  DRK_CHECK_FALSE(on_cpu.device_memory_share);

  EngineOptions alone;
  alone.device = drk::kernels::DeviceKind::cuda;
  share_one_gpu(alone, 1);
  DRK_CHECK_FALSE(alone.device_timing_lock);
  DRK_CHECK_FALSE(alone.device_memory_share);

  EngineOptions workers;
  workers.device = drk::kernels::DeviceKind::cuda;
  share_one_gpu(workers, 2);
  DRK_REQUIRE(workers.device_timing_lock);
  DRK_REQUIRE(workers.device_memory_share);
  const EngineOptions second_worker = workers;  // as each worker's engine is made from a copy
  DRK_CHECK(second_worker.device_timing_lock == workers.device_timing_lock);
  DRK_CHECK(second_worker.device_memory_share == workers.device_memory_share);
}
