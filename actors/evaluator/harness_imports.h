// Harness imports: whether a candidate's shared object would bind, when the sandbox dlopens it,
// to anything of this process other than the C/C++ and CUDA runtimes. A candidate reaches the
// harness only through the ABI (kernels/abi/drk_kernel.h); yet declaring
// `namespace at { void set_num_threads(int); }` and calling it needs no header, and the dynamic
// linker binds that import into the LibTorch the sandbox has loaded (more threads for the library
// table than ctx->max_threads; on CUDA, cuDNN turned off under the reference's conv2d). The
// sandbox checks every candidate before dlopen(), so a refused one never runs (static
// constructors included); the findings are evidence (harness_symbol, docs/verification.md).
//
// read_dynamic_linkage() reads the object's ELF64 dynamic section: the libraries it needs
// (DT_NEEDED, and DT_AUXILIARY / DT_FILTER) and every dynamic symbol its relocations name, which
// is what the dynamic linker looks up. The file is untrusted: every offset and size is checked
// against the file, and a malformed file is an error, never a crash.
//
// find_harness_reach() looks each of those up as the dynamic linker does for an RTLD_LOCAL object,
// in this process's global scope first (dlsym / dlvsym with RTLD_DEFAULT, then dladdr), and names
// each one that binds outside the runtimes (is_runtime_library()) or into the executable itself:
//   - an import (undefined symbol): "imports at::set_num_threads(int) from libtorch_cpu.so.1.13";
//   - a symbol the object defines itself with default visibility, which the global scope still
//     interposes (unless the object is linked -Bsymbolic): "defines at::set_num_threads(int) but
//     binds it to the one in libtorch_cpu.so.1.13";
//   - a needed library outside the runtimes: "needs libtorch_cpu.so";
//   - a definition of one of the C library's clock and time functions (is_c_library_clock), read
//     from the object's hash table (DT_HASH or DT_GNU_HASH) whether or not a relocation names it:
//     inert under RTLD_LOCAL, where the harness's calls are bound before the object loads, but the
//     harness's clock if the object were ever loaded into the global scope (RTLD_GLOBAL, a
//     preload): the rule does not depend on the load flags staying as they are.
// Not findings: a symbol found nowhere (a weak import stays null; a strong one fails dlopen with
// its own message), a name that a loaded runtime also defines (a copy relocation in the
// executable, a library's private copy of a runtime function, a thread-local of libstdc++), and a
// standard-library template instantiation the object defines over standard types only (the same
// code the headers gave it, of which LibTorch exports copies).
//
// Thread-safety: reads the process's loaded objects (dl_iterate_phdr, dlopen RTLD_NOLOAD); safe
// to call from any thread. Errors: io_error when the file cannot be read, invalid_argument when
// it is not an ELF64 shared object of this machine or is malformed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace drk::evaluator {

// One dynamic symbol that the object's relocations name.
struct LinkedSymbol {
  std::string name;       // as in the object (mangled)
  std::string version;    // the version an import requires ("GLIBC_2.2.5"), "" when none
  bool defined = false;   // the object defines it (default visibility)
  bool weak = false;
};

struct DynamicLinkage {
  std::vector<std::string> needed;    // DT_NEEDED, DT_AUXILIARY and DT_FILTER names, in order
  std::vector<LinkedSymbol> symbols;  // each once, in symbol-table order
  std::vector<std::string> exported;  // every symbol it defines with default visibility (its hash table's)
  bool symbolic = false;              // DT_SYMBOLIC or DF_SYMBOLIC: its own definitions bind first
};

// Whether `name` is one of the C library's clock and time functions (clock_gettime, gettimeofday,
// time, clock, ...; the vDSO's entries too).
bool is_c_library_clock(std::string_view name);

Result<DynamicLinkage> read_dynamic_linkage(const std::string& path);

// The same from the file's bytes; `name` names it in errors.
Result<DynamicLinkage> parse_dynamic_linkage(std::string_view bytes, const std::string& name);

// Whether the base name of `path` is one of the runtimes a candidate may bind to: libc.so,
// libm.so, libmvec.so, libstdc++.so, libgcc_s.so, ld-linux*, libpthread.so, libdl.so, librt.so,
// libgomp*, libcudart*, libcuda.so.
bool is_runtime_library(std::string_view path);

// Every way `linkage` reaches into this process outside the runtimes (see above); empty when none.
std::vector<std::string> find_harness_reach(const DynamicLinkage& linkage);

inline constexpr size_t kFindingsShown = 4;

// read_dynamic_linkage() and find_harness_reach(): "" when the object binds only to the
// runtimes, else the findings joined with "; " (the first kFindingsShown, then "and N more").
Result<std::string> check_harness_imports(const std::string& path);

}  // namespace drk::evaluator
