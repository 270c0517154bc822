#include "kernels/compile/extension_flags.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>

namespace drk::compile {
namespace {

bool starts_with_any(std::string_view flag, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view prefix) { return flag.starts_with(prefix); });
}

bool one_of(std::string_view flag, std::initializer_list<std::string_view> flags) {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

// Each comma-separated part of `list` passes `allowed`.
template <typename Check>
bool all_parts(std::string_view list, Check allowed) {
  while (true) {
    const size_t comma = list.find(',');
    if (!allowed(list.substr(0, comma))) return false;
    if (comma == std::string_view::npos) return true;
    list.remove_prefix(comma + 1);
  }
}

bool cxx_flag(std::string_view flag) {
  if (starts_with_any(flag, {"-Wl,", "-Wa,", "-Wp,", "-fplugin", "-fdump", "-fprofile", "-fsave-optimization-record",
                             "-fstack-usage", "-fcallgraph-info"}))
    return false;
  return starts_with_any(flag, {"-O", "-D", "-U", "-std=", "-W", "-f", "-m", "-g", "-I"}) ||
         one_of(flag, {"-w", "-pthread", "-pedantic"});
}

bool linker_flag(std::string_view flag) {
  return starts_with_any(flag, {"-l", "-L", "-Wl,-rpath,", "-Wl,-rpath="}) ||
         one_of(flag, {"-pthread", "-fopenmp", "-Wl,--no-as-needed", "-Wl,--as-needed"});
}

bool ptxas_option(std::string_view option) {
  return starts_with_any(option, {"-O", "-dlcm=", "-dscm=", "--allow-expensive-optimizations"}) ||
         one_of(option, {"-v", "--verbose", "--warn-on-spills", "--warn-on-local-memory-usage"});
}

// nvcc's flags that take their value as the next argument, and what that value may be.
bool nvcc_value(std::string_view flag, std::string_view value) {
  if (one_of(flag, {"-Xcompiler", "--compiler-options"})) return all_parts(value, cxx_flag);
  if (one_of(flag, {"-Xptxas", "--ptxas-options"})) return all_parts(value, ptxas_option);
  return one_of(flag, {"-arch", "--gpu-architecture", "-gencode", "--generate-code", "-code", "--gpu-code",
                       "-maxrregcount", "--maxrregcount"});
}

bool takes_value(std::string_view flag) {
  return one_of(flag, {"-Xcompiler", "--compiler-options", "-Xptxas", "--ptxas-options", "-arch",
                       "--gpu-architecture", "-gencode", "--generate-code", "-code", "--gpu-code", "-maxrregcount",
                       "--maxrregcount"});
}

bool nvcc_flag(std::string_view flag) {
  if (const size_t equals = flag.find('='); equals != std::string_view::npos && takes_value(flag.substr(0, equals)))
    return nvcc_value(flag.substr(0, equals), flag.substr(equals + 1));
  return starts_with_any(flag, {"-O", "-D", "-U", "-std=", "-I", "-l", "--expt-", "-ftz=", "--ftz=", "-prec-div=",
                                "--prec-div=", "-prec-sqrt=", "--prec-sqrt=", "-fmad=", "--fmad="}) ||
         one_of(flag, {"--use_fast_math", "-use_fast_math", "-lineinfo", "--generate-line-info", "-res-usage",
                       "--resource-usage", "-extended-lambda", "--extended-lambda", "-restrict", "--restrict", "-w",
                       "-g", "-G"});
}

Status check(const InlineExtension& extension, const std::vector<std::string>& flags, const char* argument,
             bool (*allowed)(std::string_view), bool nvcc) {
  for (size_t i = 0; i < flags.size(); ++i) {
    std::string_view flag = flags[i];
    bool ok;
    if (nvcc && takes_value(flag)) {
      ok = i + 1 < flags.size() && nvcc_value(flag, flags[i + 1]);
      if (ok) flag = flags[++i];
    } else {
      ok = allowed(flag);
    }
    if (!ok)
      return make_error(Errc::invalid_argument,
                        "extension '" + extension.name + "' (line " + std::to_string(extension.line) + "): " + argument +
                            " flag '" + std::string(flag) +
                            "' is not one drkernel passes on (the build runs outside the sandbox): remove it");
  }
  return {};
}

}  // namespace

Status check_extension_flags(const InlineExtension& extension) {
  if (auto checked = check(extension, extension.extra_cflags, "extra_cflags", cxx_flag, false); !checked)
    return checked;
  if (auto checked = check(extension, extension.extra_cuda_cflags, "extra_cuda_cflags", nvcc_flag, true); !checked)
    return checked;
  return check(extension, extension.extra_ldflags, "extra_ldflags", linker_flag, false);
}

}  // namespace drk::compile
