// Watches a Python candidate's calls for code that reaches for the harness's frames and objects
// by names no static pattern reads (getattr with a name built at run time): a CPython audit hook
// (PEP 578), which Python code cannot remove, counts while a HarnessAccessWatch is alive:
//   - a traceback's frame read (`tb_frame`), the way into the callers' frames and their locals;
//   - sys._current_frames(), every thread's frame;
//   - gc.get_objects(), gc.get_referrers(), gc.get_referents(): every live object.
// Not counted: sys._getframe (logging, typing and torch.compile use it for their own frames).
// The sandbox arms it around the model's forward call only, so that the harness's own formatting
// of a traceback afterwards is not the candidate's.
//
// Thread-safety: under the interpreter's lock (python_runtime.h); one watch alive at a time. The
// hook sees the candidate's threads too while a watch is alive. Errors: the hook cannot fail.
#pragma once

#include <string>

namespace drk::evaluator {

// Adds the audit hook once per process; later calls do nothing.
void install_harness_access_watch();

class HarnessAccessWatch {
 public:
  HarnessAccessWatch();
  ~HarnessAccessWatch();
  HarnessAccessWatch(const HarnessAccessWatch&) = delete;
  HarnessAccessWatch& operator=(const HarnessAccessWatch&) = delete;

  // The first access seen while this watch was alive ("a traceback's frame (tb_frame)"); "" if none.
  const std::string& first_access() const;
};

}  // namespace drk::evaluator
