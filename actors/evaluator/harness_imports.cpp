#include "actors/evaluator/harness_imports.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "base/cxx_source.h"
#include "base/unique_fd.h"

namespace drk::evaluator {
namespace {

#if defined(__x86_64__)
constexpr uint16_t kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kMachine = EM_AARCH64;
#else
#error "harness_imports: this machine's ELF e_machine is not known"
#endif

// Candidate objects are a few MiB at most (nvcc's fat binaries included).
constexpr uint64_t kMaxObjectBytes = uint64_t{1} << 30;
// Version-needed entries walked at most: a chain that loops is malformed, not endless.
constexpr int kMaxVersionEntries = 4096;

// The file's bytes, every read checked against their end.
class ElfBytes {
 public:
  ElfBytes(std::string_view bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  template <typename T>
  std::optional<T> read(uint64_t offset) const {
    if (offset > bytes_.size() || sizeof(T) > bytes_.size() - offset) return std::nullopt;
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }

  bool contains(uint64_t offset, uint64_t size) const {
    return offset <= bytes_.size() && size <= bytes_.size() - offset;
  }

  // The NUL-terminated string at `offset` within [begin, end).
  std::optional<std::string> string(uint64_t begin, uint64_t end, uint64_t offset) const {
    if (end > bytes_.size() || begin > end || offset >= end - begin) return std::nullopt;
    const char* first = bytes_.data() + begin + offset;
    const void* nul = std::memchr(first, '\0', end - begin - offset);
    if (!nul) return std::nullopt;
    return std::string(first, static_cast<const char*>(nul));
  }

  Error malformed(const std::string& why) const {
    return make_error(Errc::invalid_argument,
                      "'" + name_ + "' is not a shared object the sandbox can check (" + why +
                          "): candidates are compiled by the Evaluator's compiler, never shipped hand-made");
  }

 private:
  std::string_view bytes_;
  const std::string& name_;
};

struct Segment {
  uint64_t vaddr = 0, offset = 0, file_size = 0;
};

// The dynamic section's entries this reader uses.
struct DynamicEntries {
  std::vector<uint64_t> needed;  // string-table offsets
  std::optional<uint64_t> strtab, strsz, symtab, syment, versym, verneed, verneednum;
  std::optional<uint64_t> rela, relasz, relaent, rel, relsz, relent, jmprel, pltrelsz, pltrel;
  std::optional<uint64_t> hash, gnu_hash;
  bool symbolic = false;
};

// More dynamic symbols than any compiled candidate has: a hash table that claims more is malformed.
constexpr uint32_t kMaxDynamicSymbols = 1u << 20;

class ElfReader {
 public:
  ElfReader(std::string_view bytes, const std::string& name) : bytes_(bytes, name) {}

  Result<DynamicLinkage> read() {
    if (auto s = read_program_headers(); !s) return s.error();
    if (auto s = read_dynamic(); !s) return s.error();
    DynamicLinkage linkage;
    linkage.symbolic = dynamic_.symbolic;
    for (uint64_t offset : dynamic_.needed) {
      auto name = dynamic_string(offset);
      if (!name) return name.error();
      linkage.needed.push_back(std::move(*name));
    }
    auto indices = symbol_indices();
    if (!indices) return indices.error();
    if (!indices->empty() && !dynamic_.symtab) return bytes_.malformed("relocations name symbols but there is no DT_SYMTAB");
    if (auto s = read_version_needs(); !s) return s.error();
    for (uint32_t index : *indices) {
      auto symbol = read_symbol(index);
      if (!symbol) return symbol.error();
      if (*symbol) linkage.symbols.push_back(std::move(**symbol));
    }
    auto count = symbol_count();
    if (!count) return count.error();
    for (uint32_t index = 1; index < *count; ++index) {
      auto symbol = read_symbol(index);
      if (!symbol) return symbol.error();
      if (*symbol && (*symbol)->defined) linkage.exported.push_back(std::move((*symbol)->name));
    }
    return linkage;
  }

 private:
  Status read_program_headers() {
    const auto header = bytes_.read<Elf64_Ehdr>(0);
    if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0) return bytes_.malformed("no ELF header");
    if (header->e_ident[EI_CLASS] != ELFCLASS64) return bytes_.malformed("not ELF64");
    if (header->e_ident[EI_DATA] != ELFDATA2LSB) return bytes_.malformed("not little-endian");
    if (header->e_machine != kMachine) return bytes_.malformed("built for another machine");
    if (header->e_type != ET_DYN) return bytes_.malformed("not a shared object (e_type is not ET_DYN)");
    if (header->e_phentsize != sizeof(Elf64_Phdr)) return bytes_.malformed("program header entries of a wrong size");
    if (!bytes_.contains(header->e_phoff, uint64_t{header->e_phnum} * sizeof(Elf64_Phdr)))
      return bytes_.malformed("program headers beyond the end of the file");
    std::optional<Elf64_Phdr> dynamic;
    for (uint64_t i = 0; i < header->e_phnum; ++i) {
      const auto phdr = bytes_.read<Elf64_Phdr>(header->e_phoff + i * sizeof(Elf64_Phdr));
      if (!phdr) return bytes_.malformed("a program header beyond the end of the file");
      if (phdr->p_type == PT_LOAD) {
        if (!bytes_.contains(phdr->p_offset, phdr->p_filesz) || phdr->p_vaddr + phdr->p_filesz < phdr->p_vaddr)
          return bytes_.malformed("a loadable segment beyond the end of the file");
        segments_.push_back({phdr->p_vaddr, phdr->p_offset, phdr->p_filesz});
      } else if (phdr->p_type == PT_DYNAMIC) {
        if (dynamic) return bytes_.malformed("two dynamic segments");
        dynamic = phdr;
      }
    }
    if (!dynamic) return bytes_.malformed("no dynamic segment");
    if (!bytes_.contains(dynamic->p_offset, dynamic->p_filesz))
      return bytes_.malformed("the dynamic segment lies beyond the end of the file");
    dynamic_offset_ = dynamic->p_offset;
    dynamic_size_ = dynamic->p_filesz;
    return {};
  }

  Status read_dynamic() {
    bool ended = false;
    for (uint64_t at = 0; at + sizeof(Elf64_Dyn) <= dynamic_size_; at += sizeof(Elf64_Dyn)) {
      const auto entry = bytes_.read<Elf64_Dyn>(dynamic_offset_ + at);
      if (!entry) return bytes_.malformed("a dynamic entry beyond the end of the file");
      const uint64_t value = entry->d_un.d_val;
      switch (entry->d_tag) {
        case DT_NULL: ended = true; break;
        case DT_NEEDED:
        case DT_AUXILIARY:
        case DT_FILTER: dynamic_.needed.push_back(value); break;
        case DT_STRTAB: dynamic_.strtab = value; break;
        case DT_STRSZ: dynamic_.strsz = value; break;
        case DT_SYMTAB: dynamic_.symtab = value; break;
        case DT_SYMENT: dynamic_.syment = value; break;
        case DT_VERSYM: dynamic_.versym = value; break;
        case DT_VERNEED: dynamic_.verneed = value; break;
        case DT_VERNEEDNUM: dynamic_.verneednum = value; break;
        case DT_RELA: dynamic_.rela = value; break;
        case DT_RELASZ: dynamic_.relasz = value; break;
        case DT_RELAENT: dynamic_.relaent = value; break;
        case DT_REL: dynamic_.rel = value; break;
        case DT_RELSZ: dynamic_.relsz = value; break;
        case DT_RELENT: dynamic_.relent = value; break;
        case DT_JMPREL: dynamic_.jmprel = value; break;
        case DT_PLTRELSZ: dynamic_.pltrelsz = value; break;
        case DT_PLTREL: dynamic_.pltrel = value; break;
        case DT_SYMBOLIC: dynamic_.symbolic = true; break;
        case DT_HASH: dynamic_.hash = value; break;
        case DT_GNU_HASH: dynamic_.gnu_hash = value; break;
        case DT_FLAGS:
          if (value & DF_SYMBOLIC) dynamic_.symbolic = true;
          break;
        default: break;
      }
      if (ended) break;
    }
    if (!ended) return bytes_.malformed("the dynamic section has no DT_NULL end");
    if (dynamic_.syment && *dynamic_.syment != sizeof(Elf64_Sym)) return bytes_.malformed("DT_SYMENT is not 24");
    if (dynamic_.relaent && *dynamic_.relaent != sizeof(Elf64_Rela)) return bytes_.malformed("DT_RELAENT is not 24");
    if (dynamic_.relent && *dynamic_.relent != sizeof(Elf64_Rel)) return bytes_.malformed("DT_RELENT is not 16");
    if (dynamic_.strtab) {
      if (!dynamic_.strsz) return bytes_.malformed("DT_STRTAB without DT_STRSZ");
      auto offset = file_offset(*dynamic_.strtab, *dynamic_.strsz);
      if (!offset) return bytes_.malformed("the dynamic string table lies outside the file's loaded segments");
      strtab_begin_ = *offset;
      strtab_end_ = *offset + *dynamic_.strsz;
    }
    return {};
  }

  // The file offset of [vaddr, vaddr + size), which must lie in one loadable segment's file bytes.
  std::optional<uint64_t> file_offset(uint64_t vaddr, uint64_t size) const {
    for (const auto& segment : segments_) {
      if (vaddr < segment.vaddr) continue;
      const uint64_t into = vaddr - segment.vaddr;
      if (into > segment.file_size || size > segment.file_size - into) continue;
      return segment.offset + into;
    }
    return std::nullopt;
  }

  Result<std::string> dynamic_string(uint64_t offset) const {
    if (!dynamic_.strtab) return bytes_.malformed("a name but no DT_STRTAB");
    auto text = bytes_.string(strtab_begin_, strtab_end_, offset);
    if (!text) return bytes_.malformed("a name outside the dynamic string table");
    return std::move(*text);
  }

  // The number of entries of the dynamic symbol table, from its hash table (DT_HASH's nchain, or
  // past DT_GNU_HASH's last chain); 0 without either.
  Result<uint32_t> symbol_count() const {
    if (!dynamic_.symtab) return 0u;
    if (dynamic_.hash) {
      auto offset = file_offset(*dynamic_.hash, 2 * sizeof(uint32_t));
      if (!offset) return bytes_.malformed("DT_HASH lies outside the file's loaded segments");
      const auto chains = bytes_.read<uint32_t>(*offset + sizeof(uint32_t));
      if (!chains || *chains > kMaxDynamicSymbols) return bytes_.malformed("DT_HASH's chain count is out of range");
      return *chains;
    }
    if (!dynamic_.gnu_hash) return 0u;
    auto header_offset = file_offset(*dynamic_.gnu_hash, 4 * sizeof(uint32_t));
    if (!header_offset) return bytes_.malformed("DT_GNU_HASH lies outside the file's loaded segments");
    const auto buckets = bytes_.read<uint32_t>(*header_offset);
    const auto first = bytes_.read<uint32_t>(*header_offset + 4);
    const auto bloom_words = bytes_.read<uint32_t>(*header_offset + 8);
    if (!buckets || !first || !bloom_words || *buckets > kMaxDynamicSymbols || *bloom_words > kMaxDynamicSymbols)
      return bytes_.malformed("DT_GNU_HASH's header is out of range");
    const uint64_t buckets_address = *dynamic_.gnu_hash + 16 + uint64_t{*bloom_words} * 8;
    auto buckets_offset = file_offset(buckets_address, uint64_t{*buckets} * 4);
    if (!buckets_offset) return bytes_.malformed("DT_GNU_HASH's buckets lie outside the file's loaded segments");
    uint32_t last = 0;
    for (uint32_t b = 0; b < *buckets; ++b) last = std::max(last, *bytes_.read<uint32_t>(*buckets_offset + 4ull * b));
    if (last < *first) return *first;
    // The chain of the highest symbol runs until an entry's low bit ends it.
    const uint64_t chains_address = buckets_address + uint64_t{*buckets} * 4;
    for (uint32_t index = last; index < kMaxDynamicSymbols; ++index) {
      auto entry_offset = file_offset(chains_address + 4ull * (index - *first), 4);
      if (!entry_offset) return bytes_.malformed("DT_GNU_HASH's chains lie outside the file's loaded segments");
      if (*bytes_.read<uint32_t>(*entry_offset) & 1u) return index + 1;
    }
    return bytes_.malformed("DT_GNU_HASH's last chain does not end");
  }

  // Every symbol index the relocation tables name (0, "no symbol", left out), sorted.
  Result<std::set<uint32_t>> symbol_indices() const {
    std::set<uint32_t> indices;
    struct Table {
      std::optional<uint64_t> address, size;
      uint64_t entry;
      const char* name;
    };
    const uint64_t plt_entry = dynamic_.pltrel && *dynamic_.pltrel == DT_REL ? sizeof(Elf64_Rel) : sizeof(Elf64_Rela);
    for (const Table& table : {Table{dynamic_.rela, dynamic_.relasz, sizeof(Elf64_Rela), "DT_RELA"},
                               Table{dynamic_.rel, dynamic_.relsz, sizeof(Elf64_Rel), "DT_REL"},
                               Table{dynamic_.jmprel, dynamic_.pltrelsz, plt_entry, "DT_JMPREL"}}) {
      if (!table.address) continue;
      if (!table.size) return bytes_.malformed(std::string(table.name) + " without its size");
      if (*table.size % table.entry != 0) return bytes_.malformed(std::string(table.name) + "'s size is not whole entries");
      auto offset = file_offset(*table.address, *table.size);
      if (!offset) return bytes_.malformed(std::string(table.name) + " lies outside the file's loaded segments");
      for (uint64_t at = 0; at < *table.size; at += table.entry) {
        // r_info is the second word of both entry kinds.
        const auto info = bytes_.read<uint64_t>(*offset + at + sizeof(uint64_t));
        if (!info) return bytes_.malformed(std::string(table.name) + " entry beyond the end of the file");
        if (const uint32_t index = ELF64_R_SYM(*info); index != 0) indices.insert(index);
      }
    }
    return indices;
  }

  // Version index -> name, from DT_VERNEED (the versions the object's imports require).
  Status read_version_needs() {
    if (!dynamic_.verneed) return {};
    uint64_t need_address = *dynamic_.verneed;
    const uint64_t needs = dynamic_.verneednum.value_or(0);
    int walked = 0;
    for (uint64_t n = 0; n < needs; ++n) {
      auto need_offset = file_offset(need_address, sizeof(Elf64_Verneed));
      if (!need_offset) return bytes_.malformed("a version-needed entry outside the file's loaded segments");
      const auto need = bytes_.read<Elf64_Verneed>(*need_offset);
      if (!need) return bytes_.malformed("a version-needed entry beyond the end of the file");
      uint64_t aux_address = need_address + need->vn_aux;
      for (uint16_t a = 0; a < need->vn_cnt; ++a) {
        if (++walked > kMaxVersionEntries) return bytes_.malformed("too many version-needed entries");
        auto aux_offset = file_offset(aux_address, sizeof(Elf64_Vernaux));
        if (!aux_offset) return bytes_.malformed("a version-needed name outside the file's loaded segments");
        const auto aux = bytes_.read<Elf64_Vernaux>(*aux_offset);
        if (!aux) return bytes_.malformed("a version-needed name beyond the end of the file");
        auto name = dynamic_string(aux->vna_name);
        if (!name) return name.error();
        versions_[aux->vna_other & 0x7fff] = std::move(*name);
        if (aux->vna_next == 0) break;
        aux_address += aux->vna_next;
      }
      if (need->vn_next == 0) break;
      need_address += need->vn_next;
    }
    return {};
  }

  // The symbol at `index`; nullopt when the dynamic linker binds it without a lookup (a local
  // symbol, a definition of hidden or protected visibility, a nameless one).
  Result<std::optional<LinkedSymbol>> read_symbol(uint32_t index) const {
    auto offset = file_offset(*dynamic_.symtab + uint64_t{index} * sizeof(Elf64_Sym), sizeof(Elf64_Sym));
    if (!offset) return bytes_.malformed("a relocation names a symbol outside the file's loaded segments");
    const auto symbol = bytes_.read<Elf64_Sym>(*offset);
    if (!symbol) return bytes_.malformed("a symbol beyond the end of the file");
    const unsigned binding = ELF64_ST_BIND(symbol->st_info);
    const bool defined = symbol->st_shndx != SHN_UNDEF;
    if (binding == STB_LOCAL) return std::optional<LinkedSymbol>{};
    if (defined && ELF64_ST_VISIBILITY(symbol->st_other) != STV_DEFAULT) return std::optional<LinkedSymbol>{};
    auto name = dynamic_string(symbol->st_name);
    if (!name) return name.error();
    if (name->empty()) return std::optional<LinkedSymbol>{};
    LinkedSymbol linked{std::move(*name), "", defined, binding == STB_WEAK};
    if (dynamic_.versym && !defined) {
      auto versym_offset = file_offset(*dynamic_.versym + uint64_t{index} * sizeof(Elf64_Half), sizeof(Elf64_Half));
      if (!versym_offset) return bytes_.malformed("a symbol's version outside the file's loaded segments");
      const auto version = bytes_.read<Elf64_Half>(*versym_offset);
      if (!version) return bytes_.malformed("a symbol's version beyond the end of the file");
      if (const uint16_t v = *version & 0x7fff; v >= 2) {
        const auto found = versions_.find(v);
        if (found == versions_.end()) return bytes_.malformed("a symbol requires a version the object does not name");
        linked.version = found->second;
      }
    }
    return std::optional<LinkedSymbol>{std::move(linked)};
  }

  ElfBytes bytes_;
  std::vector<Segment> segments_;
  uint64_t dynamic_offset_ = 0, dynamic_size_ = 0;
  DynamicEntries dynamic_;
  uint64_t strtab_begin_ = 0, strtab_end_ = 0;
  std::map<uint16_t, std::string> versions_;
};

std::string_view base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string demangled(const std::string& name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> text(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                   &std::free);
  return status == 0 && text ? std::string(text.get()) : name;
}

// Whether a mangled name is of the standard library (std::, __gnu_cxx::), vtables, typeinfo and
// guard variables of such names and their local statics included.
bool standard_library_mangling(std::string_view name) {
  if (name.substr(0, 2) != "_Z") return false;
  name.remove_prefix(2);
  for (std::string_view special : {"TV", "TI", "TS", "TT", "GV"})
    if (name.substr(0, 2) == special) {
      name.remove_prefix(2);
      break;
    }
  if (name.substr(0, 1) == "Z") name.remove_prefix(1);  // a local static: the function that holds it
  if (name.substr(0, 1) == "N") {
    name.remove_prefix(1);
    while (!name.empty() && (name[0] == 'r' || name[0] == 'V' || name[0] == 'K')) name.remove_prefix(1);
    if (!name.empty() && (name[0] == 'R' || name[0] == 'O')) name.remove_prefix(1);
  }
  for (std::string_view prefix : {"St", "Sa", "Sb", "Ss", "Si", "So", "Sd", "9__gnu_cxx"})
    if (name.substr(0, prefix.size()) == prefix) return true;
  return false;
}

// Whether every qualified name in a demangled symbol starts in the standard library: the
// template arguments of a standard instantiation are then standard types or unqualified ones.
// Anything the walk does not understand (a function's parameters before "::", a lambda, an
// operator) counts as not standard.
bool only_standard_qualifiers(std::string_view text) {
  for (size_t colons = text.find("::"); colons != std::string_view::npos; colons = text.find("::", colons + 2)) {
    size_t end = colons;
    for (;;) {
      if (end > 0 && text[end - 1] == '>') {
        int depth = 0;
        size_t at = end;
        while (at > 0) {
          const char c = text[--at];
          if (c == '>') ++depth;
          else if (c == '<' && --depth == 0) break;
        }
        if (depth != 0) return false;
        end = at;
      }
      size_t start = end;
      while (start > 0 && is_identifier_char(text[start - 1])) --start;
      if (start == end) return false;
      if (start >= 2 && text.substr(start - 2, 2) == "::") {
        end = start - 2;
        continue;
      }
      const std::string_view first = text.substr(start, end - start);
      if (first != "std" && first != "__gnu_cxx" && first != "__cxxabiv1") return false;
      break;
    }
  }
  return true;
}

// The runtimes loaded in this process, opened again (RTLD_NOLOAD) for lookups of their own.
class LoadedRuntimes {
 public:
  LoadedRuntimes() {
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
          auto& paths = *static_cast<std::vector<std::string>*>(data);
          if (info->dlpi_name && *info->dlpi_name && is_runtime_library(info->dlpi_name)) paths.emplace_back(info->dlpi_name);
          return 0;
        },
        &paths_);
    for (const auto& path : paths_)
      if (void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) handles_.push_back(handle);
  }
  ~LoadedRuntimes() {
    for (void* handle : handles_) dlclose(handle);
  }
  LoadedRuntimes(const LoadedRuntimes&) = delete;
  LoadedRuntimes& operator=(const LoadedRuntimes&) = delete;

  bool define(const LinkedSymbol& symbol) const {
    for (void* handle : handles_)
      if (lookup(handle, symbol)) return true;
    return false;
  }

  static void* lookup(void* handle, const LinkedSymbol& symbol) {
    return symbol.version.empty() ? dlsym(handle, symbol.name.c_str())
                                  : dlvsym(handle, symbol.name.c_str(), symbol.version.c_str());
  }

 private:
  std::vector<std::string> paths_;
  std::vector<void*> handles_;
};

// Where this process's executable is mapped (dladdr's dli_fbase for it).
const void* executable_base() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(getauxval(AT_PHDR)), &info) == 0) return nullptr;
  return info.dli_fbase;
}

}  // namespace

Result<DynamicLinkage> parse_dynamic_linkage(std::string_view bytes, const std::string& name) {
  return ElfReader(bytes, name).read();
}

Result<DynamicLinkage> read_dynamic_linkage(const std::string& path) {
  const UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) return make_error(Errc::io_error, "cannot open the candidate's object '" + path + "': " + std::strerror(errno));
  const int fd = file.get();
  struct stat status {};
  if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode))
    return make_error(Errc::io_error, "the candidate's object '" + path + "' is not a regular file");
  if (static_cast<uint64_t>(status.st_size) > kMaxObjectBytes)
    return make_error(Errc::invalid_argument, "the candidate's object '" + path + "' is over 1 GiB");
  // Read, not mapped: a file that shrinks under a mapping faults the reader.
  std::string bytes(static_cast<size_t>(status.st_size), '\0');
  size_t filled = 0;
  while (filled < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + filled, bytes.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    filled += static_cast<size_t>(n);
  }
  bytes.resize(filled);
  return parse_dynamic_linkage(bytes, path);
}

bool is_runtime_library(std::string_view path) {
  const std::string_view name = base_name(path);
  for (std::string_view prefix : {"libc.so", "libm.so", "libmvec.so", "libstdc++.so", "libgcc_s.so", "ld-linux",
                                  "libpthread.so", "libdl.so", "librt.so", "libgomp", "libcudart", "libcuda.so"})
    if (name.substr(0, prefix.size()) == prefix) return true;
  return false;
}

bool is_c_library_clock(std::string_view name) {
  for (std::string_view clock : {"clock_gettime", "clock_getres", "clock_nanosleep", "clock_getcpuclockid", "gettimeofday",
                                 "time", "clock", "times", "timespec_get", "timespec_getres", "ftime", "nanosleep",
                                 "usleep", "sleep", "getrusage", "pthread_getcpuclockid", "__clock_gettime",
                                 "__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time"})
    if (name == clock) return true;
  return false;
}

std::vector<std::string> find_harness_reach(const DynamicLinkage& linkage) {
  std::vector<std::string> findings;
  // Inert while the sandbox loads candidates RTLD_LOCAL (its own calls are bound already), but a
  // clock of the harness the moment anything loads the object into the global scope.
  for (const auto& name : linkage.exported)
    if (is_c_library_clock(name))
      findings.push_back("defines " + name + ", a clock of the C library, which would replace the harness's own "
                         "were the object ever loaded into the process's global scope");
  for (const auto& library : linkage.needed)
    if (!is_runtime_library(library)) findings.push_back("needs " + library);
  const LoadedRuntimes runtimes;
  const void* executable = executable_base();
  for (const auto& symbol : linkage.symbols) {
    if (symbol.defined && linkage.symbolic) continue;  // its own definition binds first
    void* address = LoadedRuntimes::lookup(RTLD_DEFAULT, symbol);
    if (!address) continue;  // its own definition, a weak null, or dlopen's own error
    Dl_info info{};
    const bool located = dladdr(address, &info) != 0 && info.dli_fname;
    const bool in_executable = located && info.dli_fbase == executable;
    if (located && !in_executable && is_runtime_library(info.dli_fname)) continue;
    if (runtimes.define(symbol)) continue;
    const std::string name = demangled(symbol.name);
    if (symbol.defined && standard_library_mangling(symbol.name) && only_standard_qualifiers(name)) continue;
    std::string where = !located        ? std::string("an object outside the runtimes (a thread-local variable)")
                        : in_executable ? "the sandbox executable (" + std::string(base_name(info.dli_fname)) + ")"
                                        : std::string(base_name(info.dli_fname));
    findings.push_back(symbol.defined ? "defines " + name + " but binds it to the one in " + where
                                      : "imports " + name + " from " + where);
  }
  return findings;
}

Result<std::string> check_harness_imports(const std::string& path) {
  auto linkage = read_dynamic_linkage(path);
  if (!linkage) return linkage.error();
  const auto findings = find_harness_reach(*linkage);
  std::string text;
  for (size_t i = 0; i < findings.size() && i < kFindingsShown; ++i) text += (i ? "; " : "") + findings[i];
  if (findings.size() > kFindingsShown) text += "; and " + std::to_string(findings.size() - kFindingsShown) + " more";
  return text;
}

}  // namespace drk::evaluator
