#include "kernels/catalog/reference_build.h"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <string>

#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/version.h>

namespace drk::kernels {
namespace {

template <typename Function>
Function find_symbol(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

// The file that holds `function`, with its links resolved; "" when none does.
std::string library_of(void* function) {
  Dl_info info{};
  if (!function || dladdr(function, &info) == 0 || !info.dli_fname) return "";
  char resolved[PATH_MAX];
  return realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
}

bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

}  // namespace

ReferenceBuild reference_build() {
  ReferenceBuild build;
  build.libtorch = TORCH_VERSION;
  build.threads = at::get_num_threads();
  // The BLAS is the library that holds sgemm_: several may be loaded (Debian's OpenBLAS LAPACK
  // beside netlib's BLAS), and only that one does LibTorch's products.
  const std::string sgemm_library = library_of(dlsym(RTLD_DEFAULT, "sgemm_"));
  const std::string config = at::show_config();
  const bool mkl_in_libtorch = contains(config, "BLAS_INFO=mkl") || contains(config, "USE_MKL=ON");
  if (contains(sgemm_library, "openblas")) {
    auto openblas_config = find_symbol<char* (*)()>("openblas_get_config");
    std::string text = openblas_config ? openblas_config() : "OpenBLAS";
    if (auto parallel = find_symbol<int (*)()>("openblas_get_parallel"))
      text += parallel() == 2 ? " (OpenMP)" : parallel() == 1 ? " (pthreads)" : " (single-threaded)";
    if (auto threads = find_symbol<int (*)()>("openblas_get_num_threads")) build.blas_threads = threads();
    build.blas = text;
  } else if (contains(sgemm_library, "mkl") || (mkl_in_libtorch && (sgemm_library.empty() ||
                                                                      contains(sgemm_library, "libtorch")))) {
    build.blas = "Intel MKL";
  } else if (contains(sgemm_library, "blis")) {
    build.blas = "BLIS";
  } else if (contains(sgemm_library, "atlas")) {
    build.blas = "ATLAS";
  } else if (!sgemm_library.empty()) {
    // Debian's netlib alternative (/usr/lib/<arch>/blas/libblas.so.3) and any other BLAS that
    // names itself nowhere: the reference implementation, unoptimised.
    build.blas = "netlib's reference BLAS (unoptimised)";
    build.unoptimised_blas = true;
  } else {
    build.blas = "unknown";
  }
  if (!sgemm_library.empty()) build.blas += " in " + sgemm_library;
  return build;
}

std::string ReferenceBuild::describe() const {
  std::string text = "LibTorch " + libtorch + ", " + blas + ", " + std::to_string(threads) +
                     (threads == 1 ? " thread" : " threads");
  if (blas_threads > 0 && blas_threads != threads) text += " (the BLAS: " + std::to_string(blas_threads) + ")";
  return text;
}

void set_reference_threads(int threads) {
  at::set_num_threads(threads);
  if (auto set_blas = find_symbol<void (*)(int)>("openblas_set_num_threads")) set_blas(threads);
}

}  // namespace drk::kernels
