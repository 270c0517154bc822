#include "kernels/compile/torch_facts_cache.h"

#include "kernels/compile/content_hash.h"

namespace drk::compile {

Result<TorchFacts> cached_torch_facts(const std::string& python, const std::string& cache_dir, FileSystem& files,
                                      std::shared_ptr<CommandRunner> runner) {
  auto fingerprint = torch_fingerprint(python, runner);
  if (!fingerprint) return fingerprint.error();
  if (fingerprint->empty()) return torch_facts(python, runner);
  const std::string directory = cache_dir + "/torch-facts";
  const std::string path = directory + "/" + content_hash(*fingerprint) + ".json";
  if (auto text = files.read_file(path); text)
    if (auto filed = torch_facts_from_json(*text); filed) return filed;
  auto facts = torch_facts(python, runner);
  if (!facts) return facts;
  if (files.create_directories(directory)) (void)write_file_atomically(files, path, facts->text);
  return facts;
}

}  // namespace drk::compile
