// BumpWorkspace: the scratch memory a candidate asks for through ctx->workspace, in the CPU and
// the CUDA sandbox alike. A bump allocator over one block that grows to what the last call
// needed; what does not fit this call comes from extra blocks, freed when the call ends, and the
// next call finds one block of the size the last one used.
//
// `Memory` says where the blocks live: `static void* allocate(size_t bytes)` (nullptr when it
// cannot; aligned to kWorkspaceAlignment) and `static void release(void*)`.
//
// Thread-safety: none; the sandbox's serving thread owns it (a candidate's own threads must not
// ask for workspace: drk_context says so). Ownership: every block it hands out, until end_call()
// (extra blocks) or release() / destruction (the block). Errors: allocate returns nullptr beyond
// the call's budget or when the memory is exhausted.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace drk::evaluator {

constexpr size_t kWorkspaceAlignment = 256;

template <typename Memory>
class BumpWorkspace {
 public:
  BumpWorkspace() = default;
  ~BumpWorkspace() { release(); }
  BumpWorkspace(const BumpWorkspace&) = delete;
  BumpWorkspace& operator=(const BumpWorkspace&) = delete;

  // `budget`: what this call may take in all.
  void begin_call(size_t budget) {
    used_ = 0;
    budget_ = budget;
  }
  void* allocate(size_t bytes) {
    const size_t rounded = (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
    if (rounded > budget_ || used_ + rounded > budget_) return nullptr;
    if (used_ + rounded <= capacity_) {
      void* p = block_ + used_;
      used_ += rounded;
      return p;
    }
    void* extra = Memory::allocate(rounded);
    if (!extra) return nullptr;
    extra_.push_back(extra);
    used_ += rounded;
    return extra;
  }
  // Frees the extra blocks and, when there were any, regrows the block to this call's use.
  void end_call() {
    if (extra_.empty()) return;
    release();
    if (void* grown = Memory::allocate(used_)) {
      block_ = static_cast<char*>(grown);
      capacity_ = used_;
    }
  }
  // Frees everything (a new candidate starts without the last one's block).
  void release() {
    for (void* p : extra_) Memory::release(p);
    extra_.clear();
    if (block_) Memory::release(block_);
    block_ = nullptr;
    capacity_ = 0;
  }
  size_t capacity() const { return capacity_; }

 private:
  char* block_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
  size_t budget_ = 0;
  std::vector<void*> extra_;
};

}  // namespace drk::evaluator
