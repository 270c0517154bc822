// The workspace both sandboxes hand to candidates: a call's requests beyond the block come from
// extra blocks, freed when the call ends; the next call finds one block of the last call's size;
// nothing is handed out beyond the budget or when memory runs out; everything is freed.
#include "actors/evaluator/bump_workspace.h"

#include <cstdint>
#include <cstdlib>
#include <set>

#include "tests/doctest_drk.h"

using drk::evaluator::BumpWorkspace;
using drk::evaluator::kWorkspaceAlignment;

namespace {

// Host memory that counts its live blocks and can be made to run out.
struct CountedMemory {
  static inline std::set<void*> live;
  static inline size_t allocations = 0;
  static inline bool exhausted = false;
  static void* allocate(size_t bytes) {
    if (exhausted) return nullptr;
    void* p = std::aligned_alloc(kWorkspaceAlignment, bytes);
    live.insert(p);
    ++allocations;
    return p;
  }
  static void release(void* p) {
    live.erase(p);
    std::free(p);
  }
};

}  // namespace

DRK_TEST_CASE("a call's extra blocks are freed at its end and the block regrows to its use") {
  {
    BumpWorkspace<CountedMemory> workspace;
    workspace.begin_call(1 << 20);
    void* a = workspace.allocate(100);
    void* b = workspace.allocate(300);
    DRK_REQUIRE(a != nullptr);
    DRK_REQUIRE(b != nullptr);
    DRK_CHECK(reinterpret_cast<uintptr_t>(b) % kWorkspaceAlignment == 0);
    DRK_CHECK(CountedMemory::live.size() == 2);
    workspace.end_call();
    DRK_CHECK(CountedMemory::live.size() == 1);
    DRK_CHECK(workspace.capacity() == 256 + 512);

    // The same requests again fit the block: no allocation, addresses inside it.
    const size_t before = CountedMemory::allocations;
    workspace.begin_call(1 << 20);
    char* first = static_cast<char*>(workspace.allocate(100));
    char* second = static_cast<char*>(workspace.allocate(300));
    DRK_CHECK(second - first == 256);
    workspace.end_call();
    DRK_CHECK(CountedMemory::allocations == before);
  }
  DRK_CHECK(CountedMemory::live.empty());
}

DRK_TEST_CASE("nothing beyond the call's budget, nor when memory runs out") {
  BumpWorkspace<CountedMemory> workspace;
  workspace.begin_call(1024);
  DRK_CHECK(workspace.allocate(1025) == nullptr);
  DRK_CHECK(workspace.allocate(1024) != nullptr);
  DRK_CHECK(workspace.allocate(1) == nullptr);
  workspace.end_call();
  workspace.begin_call(1 << 20);
  CountedMemory::exhausted = true;
  DRK_CHECK(workspace.allocate(1024) != nullptr);  // the block from the last call
  DRK_CHECK(workspace.allocate(1) == nullptr);
  CountedMemory::exhausted = false;
  workspace.end_call();
  workspace.release();
  DRK_CHECK(CountedMemory::live.empty());
  DRK_CHECK(workspace.capacity() == 0);
}
