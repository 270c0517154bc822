// A candidate's own flags: what KernelBench candidates pass goes on to the compilers; what would
// run another program, write elsewhere or feed the linker a script is refused by name.
#include <string>
#include <vector>

#include "kernels/compile/extension_flags.h"
#include "tests/doctest_drk.h"

using namespace drk::compile;

namespace {

InlineExtension with_flags(std::vector<std::string> cflags, std::vector<std::string> cuda_cflags,
                           std::vector<std::string> ldflags) {
  InlineExtension extension;
  extension.name = "flags";
  extension.line = 3;
  extension.extra_cflags = std::move(cflags);
  extension.extra_cuda_cflags = std::move(cuda_cflags);
  extension.extra_ldflags = std::move(ldflags);
  return extension;
}

}  // namespace

DRK_TEST_CASE("the flags KernelBench candidates use are passed on") {
  DRK_CHECK(check_extension_flags(with_flags(
      {"-O3", "-std=c++17", "-march=native", "-ffast-math", "-fopenmp", "-DBLOCK=256", "-Wno-unused", "-I/opt/x"},
      {"-O3", "--use_fast_math", "-lineinfo", "--expt-extended-lambda", "-arch=sm_90", "-gencode",
       "arch=compute_90,code=sm_90", "-Xptxas=-v,-O3", "--maxrregcount=64", "-Xcompiler", "-fopenmp,-O3",
       "-std=c++17"},
      {"-lcublas", "-L/usr/local/cuda/lib64", "-Wl,-rpath,/usr/local/cuda/lib64", "-fopenmp"})));
}

DRK_TEST_CASE("a flag that would run a program, write elsewhere or script the linker is refused by name") {
  const std::vector<InlineExtension> refused = {
      with_flags({"-wrapper", "/bin/sh,-c,id"}, {}, {}),
      with_flags({"-fplugin=/tmp/evil.so"}, {}, {}),
      with_flags({"-B/tmp/tools"}, {}, {}),
      with_flags({"-o", "/tmp/elsewhere"}, {}, {}),
      with_flags({}, {"-ccbin", "/tmp/fake-gcc"}, {}),
      with_flags({}, {"-Xcompiler", "-O3,-wrapper,/bin/sh"}, {}),
      with_flags({}, {"-Xptxas", "--output-file=/tmp/x"}, {}),
      with_flags({}, {}, {"-Wl,-T,/tmp/script.ld"}),
      with_flags({}, {}, {"-Wl,--plugin=/tmp/evil.so"}),
  };
  for (const InlineExtension& extension : refused) {
    const drk::Status checked = check_extension_flags(extension);
    DRK_REQUIRE_FALSE(checked.ok());
    DRK_CHECK(checked.error().code == drk::Errc::invalid_argument);
    DRK_CHECK(checked.error().message.find("extension 'flags' (line 3)") != std::string::npos);
  }
  const drk::Status wrapper = check_extension_flags(refused[0]);
  DRK_CHECK(wrapper.error().message.find("extra_cflags flag '-wrapper'") != std::string::npos);
}
