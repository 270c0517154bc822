#include "kernels/compile/cuda_source_split.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "base/cxx_source.h"

namespace drk::compile {
namespace {

// What the host unit declares before the candidate's first line: nvcc's launch configuration call
// (declared by the CUDA headers for nvcc only), with the defaults nvcc's headers give it.
// Then the annotations that no item of the host unit carries, made errors: device code a macro hid
// from the split (`#define KERNEL(name) __global__ void name(...)`) then fails to compile, and the
// file is compiled whole, instead of becoming a host function or a plain host variable.
const char kHostPreamble[] =
    "#include <cuda_runtime.h>\n"
    "extern \"C\" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim = 1, size_t sharedMem = 0,\n"
    "                                                  struct CUstream_st* stream = 0);\n"
    "#undef __global__\n#define __global__ __global___outside_the_device_unit__\n"
    "#undef __constant__\n#define __constant__ __constant___outside_the_device_unit__\n"
    "#undef __shared__\n#define __shared__ __shared___outside_the_device_unit__\n"
    "#undef __managed__\n#define __managed__ __managed___outside_the_device_unit__\n";

// Headers that only the host unit includes: torch's, pybind11's and Python's.
bool torch_header(std::string_view path) {
  for (std::string_view prefix : {"torch/", "ATen/", "c10/", "caffe2/", "pybind11/", "THC/", "Python.h"})
    if (path.substr(0, prefix.size()) == prefix) return true;
  return false;
}

// Headers of device-only APIs (warp matrices, cooperative groups, pipelines, CUB): the device unit
// alone includes them, as the host compiler cannot compile some of them.
bool device_header(std::string_view path) {
  for (std::string_view prefix : {"mma.h", "cooperative_groups", "cuda_pipeline", "cuda_awbarrier", "cuda/pipeline",
                                  "cuda/barrier", "cuda/ptx", "cub/"})
    if (path.substr(0, prefix.size()) == prefix) return true;
  return false;
}

// A namespace of those APIs: a declaration that names one (`using namespace nvcuda;`,
// `namespace cg = cooperative_groups;`) is for device code.
bool device_namespace(const std::string& name) {
  return name == "nvcuda" || name == "wmma" || name == "cooperative_groups" || name == "cub";
}

// A name that says the code uses torch: it stays on the host.
bool torch_name(const std::string& name) {
  static const std::set<std::string> names = {"torch", "at", "c10", "caffe2", "pybind11", "py", "PYBIND11_MODULE"};
  if (names.count(name)) return true;
  for (std::string_view prefix : {"TORCH_", "AT_", "C10_"})
    if (name.compare(0, prefix.size(), prefix) == 0) return true;
  return false;
}

std::set<std::string> identifiers(std::string_view code) {
  std::set<std::string> found;
  for (size_t i = 0; i < code.size();) {
    if (is_identifier_char(code[i]) && !(code[i] >= '0' && code[i] <= '9')) {
      size_t end = i;
      while (end < code.size() && is_identifier_char(code[end])) ++end;
      found.emplace(code.substr(i, end - i));
      i = end;
    } else if (is_identifier_char(code[i])) {
      while (i < code.size() && is_identifier_char(code[i])) ++i;  // a number, with its suffix
    } else {
      ++i;
    }
  }
  return found;
}

std::string trimmed(std::string_view text) {
  const auto not_space = [](char c) { return c != ' ' && c != '\t' && c != '\n' && c != '\r'; };
  auto begin = std::find_if(text.begin(), text.end(), not_space);
  auto end = std::find_if(text.rbegin(), text.rend(), not_space).base();
  return begin < end ? std::string(begin, end) : std::string();
}

// The head without a leading `template <...>`: what the declaration is.
std::string_view without_template_prefix(std::string_view head) {
  static const std::regex template_start(R"(^\s*template\s*<)");
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_search(head.begin(), head.end(), match, template_start)) return head;
  size_t i = static_cast<size_t>(match.length(0));
  for (int depth = 1; i < head.size() && depth > 0; ++i) depth += head[i] == '<' ? 1 : head[i] == '>' ? -1 : 0;
  return head.substr(i);
}

bool type_declaration(std::string_view head) {
  static const std::regex type_start(R"(^\s*(typedef|struct|class|union|enum|using|static_assert|namespace)\b)");
  const std::string_view rest = without_template_prefix(head);
  return std::regex_search(rest.begin(), rest.end(), type_start);
}

// The first '(' of the head outside brackets, and whether an '=' (not ==, <=, >=, !=) comes first.
struct HeadShape {
  size_t first_paren = std::string::npos;
  bool assignment_first = false;
};

HeadShape head_shape(std::string_view head) {
  HeadShape shape;
  for (size_t i = 0; i < head.size(); ++i) {
    if (head[i] == '(') {
      shape.first_paren = i;
      return shape;
    }
    if (head[i] == '=' && (i + 1 >= head.size() || head[i + 1] != '=') &&
        (i == 0 || std::string_view("=<>!").find(head[i - 1]) == std::string_view::npos))
      shape.assignment_first = true;
  }
  return shape;
}

// A function's definition: not a type, a '(' before any '='.
bool function_head(std::string_view head) {
  if (type_declaration(head)) return false;
  const HeadShape shape = head_shape(head);
  return shape.first_paren != std::string::npos && !shape.assignment_first;
}

// The host unit's declaration of a kernel's stub: the kernel's head less what only nvcc knows.
std::string stub_declaration(std::string head) {
  static const std::regex device_only(
      R"(\b__global__\b|\b__grid_constant__\b|\b(__launch_bounds__|__maxnreg__|__cluster_dims__)\s*\((?:[^()]|\([^()]*\))*\))");
  return std::regex_replace(head, device_only, "");
}

// The kernel's name: the last identifier before the parameter list.
std::string kernel_name(std::string_view head_code) {
  const std::string code = stub_declaration(std::string(head_code));
  const size_t paren = head_shape(code).first_paren;
  if (paren == std::string::npos) return {};
  size_t end = paren;
  while (end > 0 && (code[end - 1] == ' ' || code[end - 1] == '\n' || code[end - 1] == '\t')) --end;
  size_t begin = end;
  while (begin > 0 && is_identifier_char(code[begin - 1])) --begin;
  return code.substr(begin, end - begin);
}

// The name a variable declaration declares: the last identifier before its initialiser, its
// bounds or its end.
std::string declared_name(std::string_view head_code) {
  size_t end = head_code.find_first_of("=[;{(");
  if (end == std::string_view::npos) end = head_code.size();
  while (end > 0 && !is_identifier_char(head_code[end - 1])) --end;
  size_t begin = end;
  while (begin > 0 && is_identifier_char(head_code[begin - 1])) --begin;
  return std::string(head_code.substr(begin, end - begin));
}

class Splitter {
 public:
  explicit Splitter(std::string_view source) : source_(source), views_(split_cxx_source(source)), code_(views_.code) {
    for (size_t i = 0; i <= source_.size(); ++i)
      if (i == 0 || source_[i - 1] == '\n') line_starts_.push_back(i);
    for (size_t start : line_starts_) {
      size_t i = start;
      while (i < code_.size() && (code_[i] == ' ' || code_[i] == '\t')) ++i;
      if (i < code_.size() && code_[i] == '#') directives_[i] = directive_end(i);
    }
    for (size_t at : views_.includes) directives_[at] = directive_end(at);
  }

  Result<CudaSourceSplit> run() {
    split_.host = kHostPreamble;
    size_t pos = 0;
    if (auto parsed = parse(pos); !parsed) return parsed.error();
    if (pos < code_.size()) return refuse(pos, "a '}' closes nothing");
    return split_;
  }

 private:
  // Past the directive starting at `at`: its line and the lines its backslashes continue it to.
  size_t directive_end(size_t at) const {
    size_t i = at;
    while (i < source_.size()) {
      if (source_[i] == '\n' && (i == 0 || source_[i - 1] != '\\')) return i + 1;
      ++i;
    }
    return source_.size();
  }

  int line_of(size_t offset) const {
    return static_cast<int>(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - line_starts_.begin());
  }

  Error refuse(size_t at, const std::string& why) const {
    return Error{Errc::unsupported, "cuda.cu line " + std::to_string(line_of(at)) + ": " + why};
  }

  // Past blanks, to the next code or directive (an #include line is blank in the code view).
  size_t skip_space(size_t i) const {
    while (i < code_.size() && (code_[i] == ' ' || code_[i] == '\t' || code_[i] == '\n' || code_[i] == '\r') &&
           !directives_.count(i))
      ++i;
    return i;
  }

  // The '}' that closes the '{' at `open`, skipping directives; npos when none does.
  size_t matching_brace(size_t open) const {
    int depth = 0;
    for (size_t i = open; i < code_.size(); ++i) {
      if (auto directive = directives_.find(i); directive != directives_.end()) {
        i = directive->second - 1;
        continue;
      }
      if (code_[i] == '{') ++depth;
      if (code_[i] == '}' && --depth == 0) return i;
    }
    return std::string::npos;
  }

  void emit(std::string& part, size_t begin, std::string_view text) {
    part += "#line " + std::to_string(line_of(begin)) + " \"cuda.cu\"\n";
    part += text;
    if (part.back() != '\n') part += '\n';
  }
  void emit_both(size_t begin, std::string_view text) {
    emit(split_.device, begin, text);
    emit(split_.host, begin, text);
  }

  // Items from `pos` to the '}' of the enclosing namespace or linkage block, or to the end.
  Status parse(size_t& pos) {
    while (true) {
      pos = skip_space(pos);
      if (pos >= code_.size() || code_[pos] == '}') return {};
      if (auto directive = directives_.find(pos); directive != directives_.end()) {
        directive_item(pos, directive->second);
        pos = directive->second;
        continue;
      }
      if (code_[pos] == ';') {
        ++pos;
        continue;
      }
      if (auto item = parse_item(pos); !item) return item;
    }
  }

  void directive_item(size_t begin, size_t end) {
    const std::string_view text = source_.substr(begin, end - begin);
    static const std::regex include_path(R"(^#\s*include\s*[<"]([^>"]+)[>"])");
    std::match_results<std::string_view::const_iterator> match;
    const bool include = std::regex_search(text.begin(), text.end(), match, include_path);
    if (include && torch_header(match.str(1)))
      emit(split_.host, begin, text);
    else if (include && device_header(match.str(1)))
      emit(split_.device, begin, text);
    else
      emit_both(begin, text);
  }

  Status parse_item(size_t& pos) {
    const size_t start = pos;
    int depth = 0;
    size_t head_end = std::string::npos;
    bool has_body = false;
    for (size_t i = pos; i < code_.size(); ++i) {
      if (auto directive = directives_.find(i); directive != directives_.end()) {
        i = directive->second - 1;
        continue;
      }
      const char c = code_[i];
      if (c == '(' || c == '[') {
        ++depth;
      } else if ((c == ')' || c == ']') && depth > 0) {
        --depth;
      } else if (c == '}' && depth == 0) {
        return refuse(i, "a '}' closes nothing");
      } else if (c == ';' && depth == 0) {
        if (head_end == std::string::npos) head_end = i;
        pos = i + 1;
        return item(start, head_end, pos, has_body);
      } else if (c == '{' && depth == 0) {
        const std::string_view head(code_.data() + start, i - start);
        if (auto container = container_at(start, i)) return parse_container(start, i, *container, pos);
        const size_t close = matching_brace(i);
        if (close == std::string::npos) return refuse(i, "a '{' that nothing closes");
        if (head_end == std::string::npos) head_end = i;
        has_body = true;
        if (function_head(head)) {
          pos = close + 1;
          return item(start, head_end, pos, has_body);
        }
        i = close;  // a class body or a braced initialiser: the declaration ends at its ';'
      }
    }
    return refuse(start, "a declaration without its end");
  }

  // A block whose items are parsed as the file's: a namespace (with its name, empty when unnamed)
  // or a linkage block (extern "C" { ... }).
  struct Container {
    enum class Kind { named_namespace, unnamed_namespace, linkage } kind;
    std::string name;
  };

  std::optional<Container> container_at(size_t start, size_t open) const {
    const std::string head = trimmed(code_.substr(start, open - start));
    static const std::regex namespace_head(R"(^(inline\s+)?namespace(\s+([A-Za-z_][\w:]*))?$)");
    std::smatch match;
    if (std::regex_match(head, match, namespace_head))
      return Container{match[2].matched ? Container::Kind::named_namespace : Container::Kind::unnamed_namespace,
                       match[3].str()};
    static const std::regex linkage_head(R"re(^extern\s*"(C|C\+\+)"$)re");
    if (std::regex_match(trimmed(source_.substr(start, open - start)), linkage_head))
      return Container{Container::Kind::linkage, {}};
    return std::nullopt;
  }

  Status parse_container(size_t start, size_t open, const Container& container, size_t& pos) {
    emit_both(start, std::string(source_.substr(start, open - start)) + "{");
    const bool named = container.kind == Container::Kind::named_namespace;
    if (named) scopes_.push_back(container.name + "::");
    pos = open + 1;
    const bool was_unnamed = in_unnamed_namespace_;
    in_unnamed_namespace_ = was_unnamed || container.kind == Container::Kind::unnamed_namespace;
    auto parsed = parse(pos);
    in_unnamed_namespace_ = was_unnamed;
    if (named) scopes_.pop_back();
    if (!parsed) return parsed;
    if (pos >= code_.size()) return refuse(open, "a '{' that nothing closes");
    emit_both(pos, "}");
    ++pos;
    return {};
  }

  Status item(size_t start, size_t head_end, size_t end, bool has_body) {
    const std::string_view head(code_.data() + start, head_end - start);
    const std::string_view code(code_.data() + start, end - start);
    const std::string_view text = source_.substr(start, end - start);
    const std::set<std::string> head_names = identifiers(head);
    const auto in_head = [&](const char* name) { return head_names.count(name) > 0; };
    const bool launches = code.find("<<<") != std::string_view::npos;

    if (in_head("__global__")) {
      const std::string name = kernel_name(head);
      if (name.empty()) return refuse(start, "a kernel whose name the split cannot read");
      if (in_head("static") || in_unnamed_namespace_)
        return refuse(start, "kernel '" + name + "' has internal linkage: the host unit could not call its stub");
      if (launches) return refuse(start, "kernel '" + name + "' launches a kernel (dynamic parallelism)");
      emit(split_.device, start, text);
      emit(split_.host, start, stub_declaration(std::string(source_.substr(start, head_end - start))) + ";");
      split_.kernels.push_back(name);
      if (in_head("template")) {
        std::string qualified;
        for (const std::string& scope : scopes_) qualified += scope;
        split_.template_kernels.push_back(qualified + name);
      }
      return {};
    }
    const bool device = in_head("__device__") || in_head("__constant__") || in_head("__shared__") || in_head("__managed__");
    if (device && !in_head("__host__")) {
      if (launches) return refuse(start, "device code launches a kernel (dynamic parallelism)");
      emit(split_.device, start, text);
      if (!function_head(head)) return device_variable(start, head_end, end);
      return {};
    }
    const std::set<std::string> names = identifiers(code);
    const bool uses_torch = std::any_of(names.begin(), names.end(), torch_name);
    const bool function_definition = has_body && function_head(head);
    if (!function_definition && !uses_torch && std::any_of(names.begin(), names.end(), device_namespace)) {
      emit(split_.device, start, text);
      return {};
    }
    bool shared = false;
    if (device) {
      shared = true;  // __host__ __device__
    } else if (function_definition) {
      shared = in_head("constexpr") && !uses_torch;
    } else if (type_declaration(head)) {
      shared = !uses_torch;
    } else if (!function_head(head)) {
      shared = (in_head("const") || in_head("constexpr")) && !in_head("extern") && !uses_torch;
    }
    for (const std::string& name : names)
      if (unshared_device_variables_.count(name))
        return refuse(start, "host code names the device variable '" + name + "', which the split cannot share");
    if (!device && names.count("__device__")) return refuse(start, "a device lambda in host code");
    auto host_text = with_launches_rewritten(start, end);
    if (!host_text) return host_text.error();
    if (shared) {
      if (launches) return refuse(start, "a launch in a __host__ __device__ or constexpr function");
      emit(split_.device, start, text);
    }
    emit(split_.host, start, *host_text);
    return {};
  }

  // A __device__ or __constant__ variable, already in the device unit. Host code names it only
  // for the runtime (cudaMemcpyToSymbol(weights, ...), cudaGetSymbolAddress), which wants the
  // address of nvcc's host-side shadow of it, a variable of internal linkage in nvcc's object. So
  // the device unit exports that address (`extern "C" void* __drk_shadow_N()`), and the host unit
  // declares the name as a reference to it, of the declared type:
  //   struct __drk_shadow_type_N { static float weights[16]; };
  //   static auto& weights = *reinterpret_cast<decltype(__drk_shadow_type_N::weights)*>(__drk_shadow_N());
  // One the split cannot declare so (__managed__, several declarators, constexpr, an unnamed
  // namespace's) is kept from host code: naming it there is refused.
  Status device_variable(size_t start, size_t head_end, size_t end) {
    const std::string_view head(code_.data() + start, head_end - start);
    const std::string name = declared_name(head);
    const std::set<std::string> head_names = identifiers(head);
    const std::string_view declarator = head.substr(0, head.find('='));
    const HeadShape shape = head_shape(declarator);
    bool several = false;
    for (int depth = 0; const char c : declarator) {
      depth += (c == '(' || c == '[' || c == '<') ? 1 : (c == ')' || c == ']' || c == '>') ? -1 : 0;
      several = several || (c == ',' && depth == 0);
    }
    if (name.empty() || head_names.count("__managed__") || head_names.count("constexpr") || head_names.count("__shared__") ||
        several || shape.first_paren != std::string::npos || in_unnamed_namespace_) {
      unshared_device_variables_.insert(name);
      return {};
    }
    // The declaration without its storage, its initialiser or its attributes of device memory.
    size_t declaration_end = end - 1;  // the ';'
    for (size_t i = start; i < end; ++i)
      if (code_[i] == '{' || (code_[i] == '=' && code_[i + 1] != '=')) {
        declaration_end = i;
        break;
      }
    static const std::regex storage(R"(\b(__constant__|__device__|static|extern|inline)\b)");
    const std::string declaration =
        std::regex_replace(std::string(source_.substr(start, declaration_end - start)), storage, "");
    const std::string number = std::to_string(shadows_++);
    const std::string accessor = "__drk_shadow_" + number, type = "__drk_shadow_type_" + number;
    emit(split_.device, start, "extern \"C\" void* " + accessor + "() { return (void*)&" + name + "; }");
    emit(split_.host, start,
         "struct " + type + " { static " + trimmed(declaration) + "; };\n" + "extern \"C\" void* " + accessor +
             "();\nstatic auto& " + name + " = *reinterpret_cast<decltype(" + type + "::" + name + ")*>(" + accessor +
             "());");
    return {};
  }

  // The item's source with each `callee<<<configuration>>>(arguments)` written as cudafe++ writes
  // it. Newlines inside the launch are kept, so the lines after it keep their numbers.
  Result<std::string> with_launches_rewritten(size_t start, size_t end) {
    std::string out;
    size_t copied = start;
    for (size_t at = code_.find("<<<", start); at != std::string::npos && at < end; at = code_.find("<<<", at + 3)) {
      size_t callee_end = at;
      while (callee_end > start && std::isspace(static_cast<unsigned char>(code_[callee_end - 1]))) --callee_end;
      size_t name_end = callee_end;
      if (name_end > start && code_[name_end - 1] == '>') {  // an instance: kernel<float>
        int angle = 0;
        do {
          --name_end;
          angle += code_[name_end] == '>' ? 1 : code_[name_end] == '<' ? -1 : 0;
        } while (name_end > start && angle > 0);
        if (angle != 0) return refuse(at, "a launch whose kernel's template arguments the split cannot read");
        while (name_end > start && std::isspace(static_cast<unsigned char>(code_[name_end - 1]))) --name_end;
      }
      size_t callee_begin = name_end;
      while (callee_begin > start && (is_identifier_char(code_[callee_begin - 1]) || code_[callee_begin - 1] == ':'))
        --callee_begin;
      if (callee_begin == name_end) return refuse(at, "a launch whose kernel the split cannot read");
      int depth = 0;
      size_t close = std::string::npos;
      for (size_t i = at + 3; i + 2 < end; ++i) {
        if (code_[i] == '(' || code_[i] == '[' || code_[i] == '{') ++depth;
        if (code_[i] == ')' || code_[i] == ']' || code_[i] == '}') --depth;
        if (depth == 0 && code_.compare(i, 3, ">>>") == 0) {
          close = i;
          break;
        }
      }
      if (close == std::string::npos) return refuse(at, "a launch configuration without its '>>>'");
      const size_t open_paren = skip_space(close + 3);
      if (open_paren >= end || code_[open_paren] != '(') return refuse(at, "a launch without its arguments");
      size_t close_paren = open_paren;
      for (int paren = 0; close_paren < end; ++close_paren) {
        if (code_[close_paren] == '(') ++paren;
        if (code_[close_paren] == ')' && --paren == 0) break;
      }
      if (close_paren >= end) return refuse(at, "a launch whose arguments do not close");
      const auto newlines = [&](size_t from, size_t to) {
        return std::string(static_cast<size_t>(std::count(source_.begin() + from, source_.begin() + to, '\n')), '\n');
      };
      out += source_.substr(copied, callee_begin - copied);
      out += "(__cudaPushCallConfiguration(";
      out += source_.substr(at + 3, close - at - 3);
      out += ") ? (void)0 : ";
      out += source_.substr(callee_begin, callee_end - callee_begin);
      out += source_.substr(open_paren, close_paren + 1 - open_paren);
      out += ")" + newlines(callee_end, at) + newlines(close + 3, open_paren);
      copied = close_paren + 1;
      ++split_.launches;
      at = close_paren;
    }
    out += source_.substr(copied, end - copied);
    return out;
  }

  std::string_view source_;
  CxxSourceViews views_;
  const std::string& code_;
  std::vector<size_t> line_starts_;
  std::map<size_t, size_t> directives_;  // where each directive starts, and where it ends
  std::set<std::string> unshared_device_variables_;
  int shadows_ = 0;
  bool in_unnamed_namespace_ = false;  // inside `namespace { ... }`
  std::vector<std::string> scopes_;  // the enclosing named namespaces, each with its "::"
  CudaSourceSplit split_;
};

}  // namespace

Result<CudaSourceSplit> split_cuda_source(std::string_view source) { return Splitter(source).run(); }

Result<KernelInstances> explicit_instantiations(std::string_view undefined_symbols,
                                                const std::vector<std::string>& template_kernels) {
  // torch's 16-bit types, which AT_DISPATCH_..._AND_HALF and _AND_BFLOAT16 name: each from the
  // light header torch's own CUDA sources compile it from.
  static const std::vector<std::pair<std::string, std::string>> torch_types = {
      {"c10::Half", "#include <c10/util/Half.h>\n"}, {"c10::BFloat16", "#include <c10/util/BFloat16.h>\n"}};
  KernelInstances instances;
  size_t begin = 0;
  while (begin < undefined_symbols.size()) {
    size_t end = undefined_symbols.find('\n', begin);
    if (end == std::string_view::npos) end = undefined_symbols.size();
    std::string symbol = trimmed(undefined_symbols.substr(begin, end - begin));
    begin = end + 1;
    if (symbol.rfind("U ", 0) == 0) symbol = trimmed(symbol.substr(2));
    if (symbol.rfind("void ", 0) != 0) continue;
    const std::string function = symbol.substr(5);
    const bool instance = std::any_of(template_kernels.begin(), template_kernels.end(), [&](const std::string& kernel) {
      return function.rfind(kernel + "<", 0) == 0;
    });
    if (!instance) continue;
    std::string rest = function;
    for (const auto& [type, header] : torch_types) {
      if (rest.find(type) == std::string::npos) continue;
      if (instances.includes.find(header) == std::string::npos) instances.includes += header;
      for (size_t at = rest.find(type); at != std::string::npos; at = rest.find(type)) rest.erase(at, type.size());
    }
    for (std::string_view foreign : {"c10::", "at::", "torch::", "caffe2::", "{lambda", "(anonymous namespace)"})
      if (rest.find(foreign) != std::string::npos)
        return Error{Errc::unsupported, "the kernel instance '" + function + "' names a type of torch's or the host's"};
    instances.instantiations += "template __global__ void " + function + ";\n";
  }
  return instances;
}

std::vector<std::string> host_compiler_flags(const std::vector<std::string>& nvcc_flags) {
  std::vector<std::string> host;
  const auto passed_on = [&](const std::string& value) {
    size_t begin = 0;
    while (begin <= value.size()) {
      size_t comma = value.find(',', begin);
      if (comma == std::string::npos) comma = value.size();
      if (comma > begin) host.push_back(value.substr(begin, comma - begin));
      begin = comma + 1;
    }
  };
  for (size_t i = 0; i < nvcc_flags.size(); ++i) {
    const std::string& flag = nvcc_flags[i];
    const bool takes_value = flag == "-Xcompiler" || flag == "--compiler-options";
    if (takes_value && i + 1 < nvcc_flags.size()) {
      passed_on(nvcc_flags[++i]);
    } else if (flag.rfind("-Xcompiler=", 0) == 0 || flag.rfind("--compiler-options=", 0) == 0) {
      passed_on(flag.substr(flag.find('=') + 1));
    } else if (flag == "-g" || flag == "-w") {
      host.push_back(flag);
    } else {
      for (std::string_view prefix : {"-O", "-D", "-U", "-I", "-std="})
        if (flag.compare(0, prefix.size(), prefix) == 0) {
          host.push_back(flag);
          break;
        }
    }
  }
  return host;
}

}  // namespace drk::compile
