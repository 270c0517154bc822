// cached_torch_facts(): torch_facts() of a Python (inline_extension.h), kept on disk so that a
// process that builds load_inline extensions does not import torch for them each time it starts:
// importing torch takes 2-2.5 s, which a one-shot `drk eval` of a cached candidate otherwise
// spends before its 0.05 s cache hit (docs/kernelbench.md, "Compiling load_inline candidates").
//
// The facts are filed under <cache_dir>/torch-facts/<key>.json, the key the SHA-256 of the
// Python's torch_fingerprint(): a torch upgraded or reinstalled, another interpreter, another CUDA
// found, and the key changes, so torch is asked again. A Python without torch (fingerprint "") is
// asked every time, so that its error is torch_facts()'s. A filed copy that does not parse is asked
// again and replaced; a copy that cannot be filed (a read-only or full disk) is no error: the
// facts are returned and the next process asks torch again.
//
// Thread-safety: no shared state but the files, written atomically (write_file_atomically).
// Errors: torch_fingerprint()'s and torch_facts()'s.
#pragma once

#include <memory>
#include <string>

#include "base/file_system.h"
#include "base/result.h"
#include "kernels/compile/command_runner.h"
#include "kernels/compile/inline_extension.h"

namespace drk::compile {

Result<TorchFacts> cached_torch_facts(const std::string& python, const std::string& cache_dir, FileSystem& files,
                                      std::shared_ptr<CommandRunner> runner = system_command_runner());

}  // namespace drk::compile
