// install_prebuilt_extensions(): in drk-sandbox --python, before the candidate's file runs,
// torch.utils.cpp_extension.load_inline becomes a loader of the modules the compile step built
// outside the sandbox (kernels/compile/candidate_extensions.h), so that the candidate's
// `from torch.utils.cpp_extension import load_inline` (or `cpp_extension.load_inline`) runs no
// compiler here, where the syscall filter would forbid one (docs/kernelbench.md).
//
// A call gets the module built for its `name`, loaded as load_inline loads what it builds
// (importlib.util.spec_from_file_location, module_from_spec, exec_module) and kept, so that two
// calls with one name get one module. A call whose name the compile step did not build raises
// RuntimeError saying so: its arguments could not be read before the file ran. The loader is
// installed whether or not there are modules, so that no call reaches torch's own load_inline.
// The modules bind to libtorch and libpython by design: harness_imports.h's check of C ABI objects
// does not apply to them.
//
// Thread-safety: the sandbox's main thread, holding the GIL (python_runtime.h). Errors: internal
// when torch.utils.cpp_extension cannot be imported or patched.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace drk::evaluator {

// A module built for one load_inline name (LoadRequest.python.extensions).
struct PrebuiltModule {
  std::string name;
  std::string path;  // a copy the sandbox may read
};

Status install_prebuilt_extensions(const std::vector<PrebuiltModule>& modules);

}  // namespace drk::evaluator
