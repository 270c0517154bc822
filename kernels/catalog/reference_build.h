// ReferenceBuild: what the LibTorch reference runs on, which a user needs to trust a speedup:
// LibTorch's version, the BLAS behind its CPU products, whether that BLAS is netlib's unoptimised
// reference implementation (a crippled CPU baseline: Debian's LibTorch links it unless an
// optimised one is installed), and the intra-op threads it uses.
//
// Thread-safety: reference_build() reads process state (the dynamic linker's, LibTorch's thread
// count); call it from the thread that set the threads. Errors: none; what cannot be found
// reads "unknown".
#pragma once

#include <string>

namespace drk::kernels {

struct ReferenceBuild {
  std::string libtorch;          // "1.13.0"
  std::string blas;              // "OpenBLAS 0.3.21 (OpenMP) in .../openblas-openmp/libblas.so.3"
  bool unoptimised_blas = false; // netlib's reference BLAS
  int threads = 0;               // LibTorch's intra-op threads (at::get_num_threads())
  int blas_threads = 0;          // the BLAS's own count where it keeps one (OpenBLAS), else 0
  // "LibTorch 1.13.0, OpenBLAS 0.3.21 (OpenMP) in ..., 1 thread"
  std::string describe() const;
};

ReferenceBuild reference_build();

// Sets LibTorch's intra-op threads and the BLAS's own thread count where it keeps one (OpenBLAS
// built with pthreads), so that both sides of a comparison use `threads` cores.
void set_reference_threads(int threads);

}  // namespace drk::kernels
