#include "judging/python_static_check.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <regex>
#include <set>

namespace drk::judging {
namespace {

// A rule reads one of two views of the candidate, each as long as the source so that an offset in
// it is the source's: the Python code (comments and the contents of string literals blanked), or
// the C++ handed to load_inline (everything blanked but those literals' contents, and in them
// C++'s own comments and literals). A third view, cxx_literals, is that C++ with its own literals kept:
// inline PTX (asm templates) lives in them.
enum class View { python, cxx, cxx_literals };

struct Rule {
  const char* code;
  Severity severity;
  View view;
  const char* pattern;  // ECMAScript; group 1 is the evidence
  const char* message;
  bool warning_for_cpp_backend = false;
  std::regex regex = {};  // the pattern, compiled once by rules()
};

// Names a rule's pattern may follow only at the start of a name: not after '.', not inside one.
#define DRK_NOT_ATTRIBUTE "(?:^|[^.\\w])"
// The start of a statement, where an assignment is one (`x: torch.Tensor = None` is an annotated
// parameter, not an assignment to torch): a line, after ';', or after the colon of a one-line
// compound statement.
#define DRK_STATEMENT "(?:(?:^|\\n)[ \\t]*(?:if|elif|else|for|while|with|try|finally|except)\\b[^\\n]*:|^|[\\n;])[ \\t]*"

// Tensor ops that do a problem's work: in a cuda, triton or cpp candidate the reference's own ops.
#define DRK_TORCH_OPS                                                                                       \
  "(?:mm|bmm|matmul|einsum|addmm|baddbmm|linear|conv\\w*|\\w*pool\\d?d|relu6?|hardtanh|elu|selu|celu|"      \
  "leaky_relu|gelu|silu|mish|softsign|softplus|softmax|log_softmax|tanh|sigmoid|hardsigmoid|hardswish|"    \
  "\\w*_norm|normalize|cross_entropy|nll_loss|kl_div|\\w+_loss|cosine_similarity|logsumexp|clamp|dropout|" \
  "scaled_dot_product_attention)"

const char* const kTorchCompute =
    DRK_NOT_ATTRIBUTE "((?:torch\\s*\\.\\s*(?:nn\\s*\\.\\s*functional\\s*\\.\\s*\\w+|" DRK_TORCH_OPS
                      ")|F\\s*\\.\\s*\\w+|(?:torch\\s*\\.\\s*)?nn\\s*\\.\\s*(?!Module\\b|Parameter\\b|ParameterList\\b|"
                      "ParameterDict\\b|ModuleList\\b|ModuleDict\\b|Sequential\\b|Identity\\b)[A-Z]\\w*))\\s*\\(";

const std::vector<Rule>& rules() {
  using S = Severity;
  static const std::vector<Rule> all = [] {
    std::vector<Rule> table = {
        {"python_fallback", S::failure, View::python, "\\b(super\\s*\\([^)]*\\)\\s*\\.\\s*forward)\\b",
         "calls the reference's forward through super(): the reference does the work"},
        {"python_fallback", S::failure, View::python, DRK_NOT_ATTRIBUTE "(Model)\\b(?!\\s*=[^=])(?!\\s*\\.\\s*\\w+\\s*=[^=])",
         "uses the reference class Model: the reference does the work"},
        {"python_torch_compute", S::warning, View::python, kTorchCompute,
         "a torch op or nn layer does part of the work instead of the candidate's kernel"},
        {"python_torch_compute", S::warning, View::cxx,
         "\\b((?:torch|at)\\s*::\\s*" DRK_TORCH_OPS "|cublas\\w+|cublasLt\\w+|cudnn\\w+)\\s*\\(",
         "a LibTorch op or a library does part of the work instead of the candidate's kernel"},
        {"python_timing_patch", S::failure, View::python,
         DRK_STATEMENT "((?:time\\s*\\.\\s*\\w+|torch\\s*\\.\\s*cuda\\s*\\.\\s*(?:Event|synchronize)(?:\\s*\\.\\s*\\w+)?))\\s*=[^=]",
         "replaces a function the harness times with: the measured time would be the candidate's invention"},
        {"python_timing_patch", S::failure, View::python, "\\.\\s*(elapsed_time)\\s*=[^=]",
         "replaces the timing events' elapsed_time: the measured time would be the candidate's invention"},
        {"python_timing_patch", S::failure, View::python,
         "\\b((?:setattr|delattr)\\s*\\(\\s*(?:time\\b|torch\\s*\\.\\s*cuda\\b)[\\w.\\s]*)",
         "replaces a function the harness times with: the measured time would be the candidate's invention"},
        {"python_timer", S::failure, View::python,
         DRK_NOT_ATTRIBUTE "(time\\s*\\.\\s*(?:time|perf_counter|monotonic|process_time|thread_time|clock_gettime)(?:_ns)?)\\s*\\(",
         "reads a clock: a candidate that can tell the timed calls from the checked ones can skip work in them"},
        {"python_timer", S::failure, View::python,
         "\\b(from\\s+time\\s+import\\b[^\\n]*\\b(?:time|perf_counter|monotonic|process_time|thread_time)|"
         "enable_timing\\s*=\\s*True|timeit)\\b",
         "reads a clock: a candidate that can tell the timed calls from the checked ones can skip work in them"},
        {"python_timer", S::failure, View::python, "\\.\\s*(elapsed_time)\\s*\\(",
         "reads timing events: a candidate that can tell the timed calls from the checked ones can skip work in them"},
        {"python_timer", S::failure, View::cxx,
         "\\b(std\\s*::\\s*chrono|chrono\\s*::|clock_gettime|gettimeofday|__rdtsc\\w*|clock64|globaltimer|"
         "cudaEventElapsedTime|cudaEventSynchronize|cudaEventQuery)\\b",
         "reads a clock: a candidate that can tell the timed calls from the checked ones can skip work in them"},
        {"python_timer", S::failure, View::cxx_literals, "(%(?:clock\\w*|globaltimer\\w*|pm[0-7]\\w*))\\b",
         "reads a clock or performance-counter register in inline PTX: a candidate that can tell the timed calls "
         "from the checked ones can skip work in them"},
        {"python_thread", S::failure, View::python,
         DRK_NOT_ATTRIBUTE "((?:import|from)\\s+(?:threading|_thread|concurrent)|threading\\s*\\.\\s*\\w+|"
                           "_thread\\s*\\.\\s*\\w+|concurrent\\s*\\.\\s*futures|ThreadPoolExecutor)\\b",
         "starts threads: work on a thread can finish after the call returns, outside the timed window"},
        {"python_thread", S::failure, View::cxx, "\\b(std\\s*::\\s*(?:thread|jthread|async)|pthread_create)\\b",
         "starts threads in the C++: work on a thread can finish after the call returns (a CPU candidate "
         "may use threads joined before it returns)",
         true},
        {"python_thread", S::failure, View::cxx, "(#\\s*pragma\\s+omp)\\b",
         "OpenMP threads in the C++: honest on the CPU when the parallel region ends before the call returns",
         true},
        {"python_process", S::failure, View::python,
         DRK_NOT_ATTRIBUTE "((?:import|from)\\s+(?:subprocess|multiprocessing|pty)|(?:subprocess|multiprocessing)\\s*\\.\\s*\\w+|"
                           "torch\\s*\\.\\s*multiprocessing|ProcessPoolExecutor|"
                           "os\\s*\\.\\s*(?:fork\\w*|system|popen|exec\\w*|spawn\\w*|posix_spawn\\w*|kill\\w*))\\b",
         "starts or controls processes: work in another process escapes the sandbox's accounting"},
        {"python_process", S::failure, View::cxx,
         "(?:^|[^.\\w>])((?:fork|vfork|system|popen|execv\\w*|execl\\w*|posix_spawn\\w*|clone|kill))\\s*\\(",
         "starts or controls processes in the C++: work in another process escapes the sandbox's accounting"},
        {"python_lazy_tensor", S::failure, View::python,
         "\\b(class\\s+\\w+\\s*\\([^)]*?\\bTensor)\\s*[,)]",
         "defines a Tensor subclass: an output that computes (or fakes) its values when the harness reads them"},
        {"python_lazy_tensor", S::failure, View::python,
         "\\b(_make_subclass|_make_wrapper_subclass|__torch_function__|__torch_dispatch__|TorchDispatchMode|"
         "TorchFunctionMode|Tensor\\s*\\.\\s*__new__)\\b",
         "hooks tensor dispatch: an output that computes (or fakes) its values when the harness reads them"},
        {"python_lazy_output", S::warning, View::python,
         "\\b(return\\s+torch\\s*\\.\\s*empty(?:_like|_strided)?)\\s*\\(",
         "returns an uninitialised tensor: honest only if a kernel fills it before the call returns"},
        {"python_lazy_output", S::warning, View::python,
         "\\b(return\\b[^\\n]*\\.\\s*(?:expand|expand_as|as_strided|broadcast_to))\\s*\\(",
         "returns a broadcast view: every element of a stride-0 output is one value computed once"},
        {"python_side_stream", S::warning, View::python,
         "\\b((?:torch\\s*\\.\\s*)?cuda\\s*\\.\\s*(?:Stream|ExternalStream|stream)|getStreamFromPool)\\s*\\(",
         "work on a stream besides the current one: honest only when joined back before the call returns"},
        {"python_side_stream", S::warning, View::cxx, "\\b(cudaStreamCreate\\w*|cudaStreamPerThread|getStreamFromPool)\\b",
         "work on a stream besides the current one: honest only when joined back before the call returns"},
        {"python_precision_downgrade", S::warning, View::python,
         "(\\.\\s*(?:half|bfloat16)\\s*\\(\\s*\\)|\\b(?:torch|tl)\\s*\\.\\s*(?:float16|half|bfloat16)\\b|\\bautocast\\b)",
         "half or bfloat16 arithmetic in a float32 problem: the runtime's float64 comparison judges whether "
         "the precision lost is within the task's"},
        {"python_precision_downgrade", S::warning, View::cxx,
         "\\b(__float2half\\w*|__half2?|half2|__nv_bfloat16\\w*|__float2bfloat16\\w*|at\\s*::\\s*(?:Half|BFloat16)|"
         "torch\\s*::\\s*k(?:Half|Float16|BFloat16))\\b",
         "half or bfloat16 arithmetic in a float32 problem: the runtime's float64 comparison judges whether "
         "the precision lost is within the task's"},
        {"python_precision_mode", S::failure, View::python,
         "\\b(allow_tf32|allow_fp16_reduced_precision_reduction|allow_bf16_reduced_precision_reduction|"
         "set_float32_matmul_precision|fp32_precision)\\b",
         "switches float32 math to TF32 or reduced precision for the whole process, the reference's too"},
        {"python_precision_mode", S::failure, View::cxx,
         "\\b(cublasSetMathMode|CUBLAS_TF32_TENSOR_OP_MATH|setAllowTF32CuBLAS|setAllowTF32CuDNN|setFloat32MatmulPrecision|"
         "setAllowFP16ReductionCuBLAS|setAllowBF16ReductionCuBLAS)\\b",
         "switches float32 math to TF32 or reduced precision for the whole process, the reference's too"},
        {"python_global_mode", S::failure, View::python,
         "\\b(torch\\s*\\.\\s*backends\\s*\\.\\s*(?:cudnn\\s*\\.\\s*(?:benchmark|deterministic|enabled)|"
         "mkldnn\\s*\\.\\s*enabled|cuda\\s*\\.\\s*enable_\\w+|cuda\\s*\\.\\s*preferred_\\w+))\\s*=[^=]",
         "changes a process-wide setting that the harness and the reference share"},
        {"python_global_mode", S::failure, View::python,
         "\\b(torch\\s*\\.\\s*(?:use_deterministic_algorithms|set_num_threads|set_num_interop_threads|set_default_dtype|"
         "set_default_tensor_type|set_default_device|set_flush_denormal|manual_seed|seed|set_rng_state|"
         "set_deterministic_debug_mode|cuda\\s*\\.\\s*(?:manual_seed\\w*|seed\\w*|set_rng_state\\w*|"
         "set_per_process_memory_fraction|set_device)|random\\s*\\.\\s*\\w+))\\s*\\(",
         "changes a process-wide setting that the harness and the reference share (seeds: the harness's "
         "inputs become predictable)"},
        {"python_global_mode", S::failure, View::cxx,
         "\\b(setBenchmarkCuDNN|setDeterministicCuDNN|setUserEnabledCuDNN|setDeterministicAlgorithms|set_num_threads|"
         "set_num_interop_threads|omp_set_num_threads|cudaDeviceSetLimit|cudaSetDevice\\w*|cudaDeviceSetCacheConfig|"
         "cudaDeviceReset|cudaCtxResetPersistingL2Cache|cudaStreamSetAttribute)\\b",
         "changes a process-wide setting that the harness and the reference share"},
        {"python_harness_access", S::failure, View::python,
         DRK_NOT_ATTRIBUTE "((?:import|from)\\s+(?:inspect|gc|ctypes|importlib|signal|socket)|"
                           "(?:inspect|gc|ctypes|importlib)\\s*\\.\\s*\\w+|"
                           "sys\\s*\\.\\s*(?:_getframe|_current_frames|modules|settrace|setprofile|addaudithook|"
                           "exc_info|meta_path|path_hooks))\\b",
         "reaches into the harness's process (its frames, objects or modules): a candidate can read the "
         "reference's answer or change the harness"},
        {"python_harness_access", S::failure, View::python,
         "\\b(f_back|f_locals|f_globals|tb_frame|gi_frame|__traceback__|__globals__|__code__|__closure__|"
         "__subclasses__)\\b",
         "walks frames or function internals: a candidate can read the reference's answer or change the harness"},
        {"python_harness_access", S::failure, View::python,
         DRK_NOT_ATTRIBUTE "((?:__import__|globals|open|exec|eval|compile|breakpoint))\\s*\\(",
         "runs code the static checks cannot read, or opens files: imports, globals, files and exec reach "
         "past the candidate"},
        {"python_harness_access", S::failure, View::cxx,
         "\\b(dlopen|dlsym|dlvsym|dladdr|dl_iterate_phdr|ptrace|process_vm_readv|process_vm_writev|fopen|"
         "std\\s*::\\s*[io]?fstream)\\b",
         "reaches into the harness's process or its files from the C++"},
        {"python_environment", S::warning, View::python,
         DRK_NOT_ATTRIBUTE "(os\\s*\\.\\s*(?:environ|getenv|putenv|unsetenv))\\b",
         "reads or sets environment variables (honest candidates set build variables such as "
         "TORCH_CUDA_ARCH_LIST)"},
        {"python_environment", S::warning, View::cxx, "\\b((?:getenv|setenv|putenv))\\s*\\(",
         "reads or sets environment variables from the C++"},
        {"python_monkeypatch", S::failure, View::python,
         DRK_STATEMENT "((?:torch\\s*\\.\\s*(?!backends\\b|cuda\\s*\\.\\s*(?:Event|synchronize)\\b)|nn\\s*\\.\\s*|"
                           "F\\s*\\.\\s*|Model\\s*\\.\\s*|triton\\s*\\.\\s*)\\w+(?:\\s*\\.\\s*\\w+)*)\\s*=[^=]",
         "replaces an attribute of torch or of the reference: the harness's comparisons and the reference "
         "would run the candidate's code"},
        {"python_monkeypatch", S::failure, View::python,
         "\\b((?:setattr|delattr)\\s*\\(\\s*(?:torch\\b(?!\\s*\\.\\s*cuda\\b)|nn\\b|F\\b|Model\\b|sys\\b)[\\w.\\s]*)",
         "replaces an attribute of torch or of the reference: the harness's comparisons and the reference "
         "would run the candidate's code"},
        {"python_monkeypatch", S::failure, View::python, DRK_STATEMENT "(Model)\\s*=[^=]",
         "rebinds the reference class Model"},
        {"python_monkeypatch", S::failure, View::python, DRK_NOT_ATTRIBUTE "(builtins|__builtins__)\\b",
         "the builtins module: what it changes, every module of the harness sees"},
        {"python_cuda_graph", S::warning, View::python,
         "\\b(torch\\s*\\.\\s*cuda\\s*\\.\\s*(?:CUDAGraph|graphs?|make_graphed_callables)|CUDAGraph|make_graphed_callables)\\b",
         "replays a CUDA graph: honest only when each call copies its inputs into the graph's"},
        {"python_cuda_graph", S::warning, View::cxx, "\\b(cudaGraph\\w*|cudaStreamBeginCapture\\w*|cudaStreamEndCapture)\\b",
         "replays a CUDA graph: honest only when each call copies its inputs into the graph's"},
    };
    for (Rule& rule : table) rule.regex = std::regex(rule.pattern, std::regex::ECMAScript | std::regex::optimize);
    return table;
  }();
  return all;
}

#undef DRK_TORCH_OPS
#undef DRK_STATEMENT
#undef DRK_NOT_ATTRIBUTE

void blank(std::string& text, size_t from, size_t to) {
  for (size_t k = from; k < std::min(to, text.size()); ++k)
    if (text[k] != '\n') text[k] = ' ';
}

// A string literal's contents, [begin, end) in the source.
struct Span {
  size_t begin = 0;
  size_t end = 0;
};

// Blanks Python comments and the contents of string literals (any prefix, single or triple
// quotes) in `code`, a copy of the source, and lists the literals.
std::vector<Span> blank_python(std::string& code) {
  std::vector<Span> literals;
  size_t i = 0;
  while (i < code.size()) {
    const char c = code[i];
    if (c == '#') {
      const size_t end = std::min(code.find('\n', i), code.size());
      blank(code, i, end);
      i = end;
      continue;
    }
    if (c != '"' && c != '\'') {
      ++i;
      continue;
    }
    const std::string quote(code.compare(i, 3, std::string(3, c)) == 0 ? 3 : 1, c);
    const size_t begin = i + quote.size();
    size_t end = begin;
    // A backslash keeps the next character in the literal, raw strings included.
    while (end < code.size() && code.compare(end, quote.size(), quote) != 0 && !(quote.size() == 1 && code[end] == '\n'))
      end += code[end] == '\\' ? 2 : 1;
    end = std::min(end, code.size());
    literals.push_back({begin, end});
    // Its newlines too: a statement that holds a multi-line literal stays one line of the view.
    std::fill(code.begin() + static_cast<long>(begin), code.begin() + static_cast<long>(end), ' ');
    i = end + quote.size();
  }
  return literals;
}

// Blanks C++ comments and the contents of C++ string and character literals in text[span].
void blank_cxx(std::string& text, Span span) {
  size_t i = span.begin;
  while (i < span.end) {
    if (text.compare(i, 2, "//") == 0) {
      const size_t end = std::min(text.find('\n', i), span.end);
      blank(text, i, end);
      i = end;
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t close = text.find("*/", i + 2);
      const size_t end = close == std::string::npos ? span.end : std::min(close + 2, span.end);
      blank(text, i, end);
      i = end;
    } else if (text[i] == '\\') {
      i += 2;  // an escaped quote of the Python literal (\"), not a C++ literal
    } else if (text[i] == '"' || text[i] == '\'') {
      const char quote = text[i];
      size_t end = i + 1;
      while (end < span.end && text[end] != quote && text[end] != '\n') end += text[end] == '\\' ? 2 : 1;
      end = std::min(end, span.end);
      blank(text, i + 1, end);
      i = end + 1;
    } else {
      ++i;
    }
  }
}

// The end of the logical line that starts before `from`: the first newline outside brackets, and
// not after a backslash.
size_t statement_end(const std::string& code, size_t from) {
  int depth = 0;
  for (size_t i = from; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    else if (c == '\n' && depth == 0 && (i == 0 || code[i - 1] != '\\')) return i;
  }
  return code.size();
}

size_t closing_bracket(const std::string& code, size_t open) {
  int depth = 0;
  for (size_t i = open; i < code.size(); ++i) {
    if (code[i] == '(' || code[i] == '[' || code[i] == '{') ++depth;
    else if ((code[i] == ')' || code[i] == ']' || code[i] == '}') && --depth == 0) return i;
  }
  return code.size();
}

// The spans of the load_inline calls' C++ arguments: cpp_sources and cuda_sources, by keyword or
// as the second and third positional arguments.
std::vector<Span> load_inline_sources(const std::string& code) {
  static const std::regex call(R"(\bload_inline\s*\()");
  static const std::regex keyword(R"(^\s*(\w+)\s*=[^=])");
  std::vector<Span> sources;
  for (auto it = std::sregex_iterator(code.begin(), code.end(), call); it != std::sregex_iterator(); ++it) {
    const size_t open = static_cast<size_t>(it->position(0) + it->length(0)) - 1;
    const size_t close = closing_bracket(code, open);
    int depth = 0;
    int position = 0;
    size_t start = open + 1;
    for (size_t i = open + 1; i <= close && i < code.size(); ++i) {
      const char c = code[i];
      if (c == '(' || c == '[' || c == '{') ++depth;
      else if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      else if ((c == ',' && depth == 0) || i == close) {
        const std::string argument = code.substr(start, i - start);
        std::smatch named;
        const bool is_named = std::regex_search(argument, named, keyword);
        const bool is_source = is_named ? (named[1] == "cpp_sources" || named[1] == "cuda_sources")
                                        : (position == 1 || position == 2);
        if (is_source) sources.push_back({start, i});
        if (!is_named) ++position;
        start = i + 1;
      }
    }
  }
  return sources;
}

// The literals that hold the C++ handed to load_inline: those inside its source arguments and,
// transitively, those assigned to the names those arguments use. Where none is found (sources
// built in a way this does not follow), every literal: a kernel must not go unseen.
std::vector<Span> cxx_literals(const std::string& code, const std::vector<Span>& literals, bool has_load_inline) {
  static const std::regex assignment(R"((?:^|\n)[ \t]*([A-Za-z_]\w*)[ \t]*\+?=[^=])");
  static const std::regex name(R"([A-Za-z_]\w*)");
  std::multimap<std::string, Span> assigned;
  for (auto it = std::sregex_iterator(code.begin(), code.end(), assignment); it != std::sregex_iterator(); ++it) {
    const size_t value = static_cast<size_t>(it->position(0) + it->length(0)) - 1;
    assigned.insert({(*it)[1].str(), {value, statement_end(code, value)}});
  }
  std::vector<Span> pending = load_inline_sources(code);
  std::set<std::string> seen;
  std::set<size_t> chosen;
  while (!pending.empty()) {
    const Span span = pending.back();
    pending.pop_back();
    for (size_t l = 0; l < literals.size(); ++l)
      if (literals[l].begin >= span.begin && literals[l].end <= span.end) chosen.insert(l);
    const std::string text = code.substr(span.begin, span.end - span.begin);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it) {
      if (!seen.insert(it->str()).second) continue;
      auto [first, last] = assigned.equal_range(it->str());
      for (; first != last; ++first) pending.push_back(first->second);
    }
  }
  if (chosen.empty() && has_load_inline) return literals;
  std::vector<Span> out;
  for (size_t l : chosen) out.push_back(literals[l]);
  return out;
}

struct Scan {
  std::string_view source;
  std::string python;
  std::string cxx;
  std::string cxx_with_literals;  // the C++ with its own string literals (asm templates) and comments
  std::vector<size_t> line_starts;

  int line_of(size_t offset) const {
    return static_cast<int>(std::upper_bound(line_starts.begin(), line_starts.end(), offset) - line_starts.begin());
  }
  std::string line_text(int line) const {
    const size_t begin = line_starts[static_cast<size_t>(line - 1)];
    const size_t end = std::min(source.find('\n', begin), source.size());
    return std::string(source.substr(begin, end - begin));
  }
};

Scan scan_of(std::string_view source) {
  Scan scan;
  scan.source = source;
  scan.python.assign(source);
  const auto literals = blank_python(scan.python);
  static const std::regex call(R"(\bload_inline\s*\()");
  const bool has_load_inline = std::regex_search(scan.python, call);
  scan.cxx.assign(source.size(), ' ');
  for (size_t i = 0; i < source.size(); ++i)
    if (source[i] == '\n') scan.cxx[i] = '\n';
  for (const Span& span : cxx_literals(scan.python, literals, has_load_inline)) {
    std::copy(source.begin() + static_cast<long>(span.begin), source.begin() + static_cast<long>(span.end),
              scan.cxx.begin() + static_cast<long>(span.begin));
    blank_cxx(scan.cxx, span);
  }
  scan.cxx_with_literals = scan.cxx;
  for (const Span& span : cxx_literals(scan.python, literals, has_load_inline))
    std::copy(source.begin() + static_cast<long>(span.begin), source.begin() + static_cast<long>(span.end),
              scan.cxx_with_literals.begin() + static_cast<long>(span.begin));
  scan.line_starts.push_back(0);
  for (size_t i = 0; i < source.size(); ++i)
    if (source[i] == '\n') scan.line_starts.push_back(i + 1);
  return scan;
}

// Whitespace runs as one space, trimmed, at most 120 characters.
std::string evidence_of(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool space = std::isspace(static_cast<unsigned char>(c));
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > 120) out = out.substr(0, 117) + "...";
  return out;
}

class Findings {
 public:
  explicit Findings(const Scan& scan) : scan_(scan) {}

  void add(const char* code, Severity severity, size_t offset, std::string_view evidence, const char* message) {
    add_at_line(code, severity, scan_.line_of(offset), evidence, message);
  }
  void add_at_line(const char* code, Severity severity, int line, std::string_view evidence, const char* message) {
    if (!seen_.insert({code, line}).second) return;
    found_.push_back({code, severity, line, evidence_of(evidence), message});
  }
  bool has(std::string_view code) const {
    return std::any_of(found_.begin(), found_.end(), [&](const PythonFinding& f) { return f.code == code; });
  }
  const PythonFinding* first(std::string_view code) const {
    for (const auto& f : found_)
      if (f.code == code) return &f;
    return nullptr;
  }
  std::vector<PythonFinding> sorted() && {
    // What the file lacks (line 0) after what it holds.
    auto order = [](const PythonFinding& f) { return f.line == 0 ? std::numeric_limits<int>::max() : f.line; };
    std::stable_sort(found_.begin(), found_.end(),
                     [&](const PythonFinding& a, const PythonFinding& b) { return order(a) < order(b); });
    return std::move(found_);
  }

 private:
  const Scan& scan_;
  std::set<std::pair<std::string, int>> seen_;
  std::vector<PythonFinding> found_;
};

bool search(const std::string& text, const char* pattern) { return std::regex_search(text, std::regex(pattern)); }

// Each except handler: a failure when its body returns a value or computes with torch (the
// reference's op stands in for a kernel that failed), a warning otherwise.
void check_except_handlers(const Scan& scan, Backend backend, Findings& findings) {
  static const std::regex handler(R"((?:^|\n)([ \t]*)(except\b[^\n]*))");
  static const std::regex fallback(std::string(kTorchCompute) +
                                   R"(|\breturn\s+(?!(?:None|True|False|-?\d[\w.]*)\s*(?:\n|$))\S|\bsuper\s*\(|(?:^|[^.\w])Model\b)");
  const std::string& code = scan.python;
  for (auto it = std::sregex_iterator(code.begin(), code.end(), handler); it != std::sregex_iterator(); ++it) {
    const size_t indent = static_cast<size_t>(it->length(1));
    const size_t at = static_cast<size_t>(it->position(2));
    size_t body_end = code.find('\n', at);
    while (body_end != std::string::npos && body_end < code.size()) {
      const size_t next = body_end + 1;
      size_t text = next;
      while (text < code.size() && (code[text] == ' ' || code[text] == '\t')) ++text;
      if (text < code.size() && code[text] != '\n' && text - next <= indent) break;
      body_end = code.find('\n', next);
    }
    if (body_end == std::string::npos) body_end = code.size();
    const std::string body = code.substr(at, body_end - at);
    std::smatch found;
    if (backend != Backend::pytorch && std::regex_search(body, found, fallback)) {
      const int line = scan.line_of(at + static_cast<size_t>(found.position(0)) + 1);
      findings.add_at_line("python_fallback", Severity::failure, line, scan.line_text(line),
                           "an except handler returns a result or computes with torch: when the kernel fails, "
                           "the reference's op does the work");
    } else {
      findings.add("python_try_except", Severity::warning, at, it->str(2),
                   "catches exceptions around the work: honest when the handler reports or re-raises");
    }
  }
}

// The kernel a cuda, triton or cpp candidate must bring, written and launched.
void check_custom_kernel(const Scan& scan, Backend backend, Findings& findings) {
  const char* code = "python_no_custom_kernel";
  auto lacking = [&](const char* message) { findings.add_at_line(code, Severity::failure, 0, "", message); };
  if (backend == Backend::pytorch) return;
  if (backend == Backend::triton) {
    // The function a decorator's (possibly multi-line) arguments are followed by.
    static const std::regex decorator(R"(@\s*triton\s*\.\s*(?:jit|autotune|heuristics)\b)");
    static const std::regex definition(R"(\bdef\s+(\w+))");
    std::vector<std::string> names;
    for (auto it = std::sregex_iterator(scan.python.begin(), scan.python.end(), decorator); it != std::sregex_iterator(); ++it) {
      std::smatch def;
      if (std::regex_search(scan.python.cbegin() + it->position(0) + it->length(0), scan.python.cend(), def, definition))
        names.push_back(def[1]);
    }
    if (names.empty()) return lacking("no @triton.jit kernel: the work is not the candidate's Triton");
    if (!search(scan.python, R"(\btl\s*\.\s*\w+)")) return lacking("the Triton kernels use no tl.* operation");
    for (const auto& name : names)
      if (std::regex_search(scan.python, std::regex("\\b" + name + "\\s*\\["))) return;
    return lacking("no @triton.jit kernel is launched (kernel[grid](...)): a decoy next to the work");
  }
  if (!search(scan.python, R"(\bload_inline\s*\()"))
    return lacking("no load_inline: the candidate compiles no C++ or CUDA of its own");
  if (backend == Backend::cpp) return;
  if (!search(scan.cxx, R"(\b__global__\b)")) return lacking("no __global__ kernel in the sources given to load_inline");
  if (!search(scan.cxx, R"(<<<|\bcudaLaunch\w*Kernel\w*\s*\(|\bcuLaunchKernel\s*\()"))
    return lacking("a __global__ kernel is defined but nothing launches it: a decoy next to the work");
}

// A side stream that nothing joins back to the caller's stream: its work outlives the call.
void check_streams_joined(const Scan& scan, Findings& findings) {
  const PythonFinding* side = findings.first("python_side_stream");
  if (side == nullptr) return;
  const char* join = R"(\.\s*(?:wait_stream|wait_event|synchronize)\s*\(|\b(?:cudaStreamSynchronize|cudaStreamWaitEvent|cudaDeviceSynchronize)\b)";
  if (search(scan.python, join) || search(scan.cxx, join)) return;
  const std::string evidence = side->evidence;
  findings.add_at_line("python_stream_unjoined", Severity::failure, side->line, evidence,
                       "a side stream that nothing joins (no wait_stream, wait_event or synchronize): its work "
                       "runs on after the call returns");
}

}  // namespace

std::string_view backend_name(Backend backend) {
  switch (backend) {
    case Backend::cuda: return "cuda";
    case Backend::triton: return "triton";
    case Backend::cpp: return "cpp";
    case Backend::pytorch: return "pytorch";
  }
  return "unknown";
}

Result<Backend> parse_backend(std::string_view name) {
  for (Backend backend : {Backend::cuda, Backend::triton, Backend::cpp, Backend::pytorch})
    if (backend_name(backend) == name) return backend;
  return make_error(Errc::invalid_argument,
                    "backend '" + std::string(name) + "' is unknown: use cuda, triton, cpp or pytorch");
}

msg::PythonBackend backend_message(Backend backend) {
  switch (backend) {
    case Backend::cuda: return msg::PythonBackend::CUDA;
    case Backend::triton: return msg::PythonBackend::TRITON;
    case Backend::cpp: return msg::PythonBackend::CPP;
    case Backend::pytorch: break;
  }
  return msg::PythonBackend::PYTORCH;
}

Backend backend_of(msg::PythonBackend backend) {
  switch (backend) {
    case msg::PythonBackend::CUDA: return Backend::cuda;
    case msg::PythonBackend::TRITON: return Backend::triton;
    case msg::PythonBackend::CPP: return Backend::cpp;
    case msg::PythonBackend::PYTORCH: break;
  }
  return Backend::pytorch;
}

std::vector<PythonFinding> python_static_findings(std::string_view source, Backend backend) {
  const Scan scan = scan_of(source);
  Findings findings(scan);
  check_except_handlers(scan, backend, findings);
  for (const Rule& rule : rules()) {
    if (std::string_view(rule.code) == "python_torch_compute" && backend == Backend::pytorch) continue;
    const Severity severity =
        rule.warning_for_cpp_backend && backend == Backend::cpp ? Severity::warning : rule.severity;
    const std::string& text = rule.view == View::python ? scan.python : rule.view == View::cxx ? scan.cxx : scan.cxx_with_literals;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), rule.regex); it != std::sregex_iterator(); ++it) {
      const size_t at = static_cast<size_t>(it->position(1));
      findings.add(rule.code, severity, at, source.substr(at, static_cast<size_t>(it->length(1))), rule.message);
    }
  }
  check_streams_joined(scan, findings);
  check_custom_kernel(scan, backend, findings);
  return std::move(findings).sorted();
}

}  // namespace drk::judging
