// The Python functions the harness and the problem's reference call, as they were before a
// candidate's file ran: what a candidate that replaces one of them (torch.cuda.Event.elapsed_time
// reading 1 us, torch.allclose always agreeing, torch.Tensor.add doing less) changes, even through
// an alias or a name built at run time that no static pattern follows. The snapshot holds the
// callable attributes (functions, methods, classes) of torch, torch.nn.functional, time,
// torch.Tensor and torch.cuda.Event (each class with its bases but object); values that are not
// callable (flags, counters LibTorch updates itself) and attributes added later (submodules
// imported lazily) are not compared.
//
// Thread-safety: under the interpreter's lock (python_runtime.h). Ownership: the snapshot holds
// references to the namespaces and the original values. Errors: snapshot() returns unsupported
// when torch cannot be imported; a comparison cannot fail.
#pragma once

#include <string>
#include <vector>

#include "actors/evaluator/python/python_runtime.h"
#include "base/result.h"

namespace drk::evaluator {

class HarnessFunctions {
 public:
  static Result<HarnessFunctions> snapshot();

  // The first function that is no longer the original, by its name ("torch.cuda.Event.elapsed_time");
  // "" when every one is.
  std::string first_replaced() const;

 private:
  struct Namespace {
    std::string name;  // "torch.Tensor"
    PyRef live;        // the module's dict or the class's mapping proxy: what lookups see now
    PyRef original;    // a dict of its callable attributes at the snapshot
  };
  std::vector<Namespace> namespaces_;
};

}  // namespace drk::evaluator
