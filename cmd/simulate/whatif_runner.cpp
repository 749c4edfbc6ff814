#include "cmd/simulate/whatif_runner.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cmd/simulate/compare.h"
#include "services/log.h"

namespace trainyard::simulate {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Removes the scratch directory however the run ends.
struct Scratch {
  fs::path dir;
  ~Scratch() {
    std::error_code ignored;
    if (!dir.empty()) fs::remove_all(dir, ignored);
  }
};

}  // namespace

std::vector<std::string> OfferedScenarios(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code error;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, error)) {
    if (e.path().extension() != ".json") continue;
    auto json = nlohmann::json::parse(ReadAll(e.path()), nullptr, false);
    if (json.is_object() && json.contains("workload")) out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

WhatIfRunner MakeWhatIfRunner(std::string dir) {
  return [dir = std::move(dir)](
             const std::vector<std::string>& scenarios, std::optional<uint64_t> seed,
             const std::function<void(std::string)>& progress) -> StatusOr<WhatIfOutput> {
    std::vector<std::string> paths;
    for (const std::string& name : scenarios)
      paths.push_back((fs::path(dir) / name).string() + ".json");
    std::string pattern = (fs::temp_directory_path() / "trainyard-whatif.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      return Internal("no scratch directory for a what-if run");
    Scratch scratch{pattern};
    // The replay's own control plane would log every admission as the server's.
    ScopedLogMute mute;
    TY_RETURN_IF_ERROR(CompareScenarios(
        paths, seed, scratch.dir.string(),
        [&](const std::string& scenario, double days, int64_t submitted, size_t jobs, int64_t ended,
            double) {
          char line[256];
          std::snprintf(line, sizeof(line), "%s: day %.1f, %lld of %zu jobs submitted, %lld ended",
                        scenario.c_str(), days, static_cast<long long>(submitted), jobs,
                        static_cast<long long>(ended));
          progress(line);
        }));
    WhatIfOutput out;
    out.comparison_json = ReadAll(scratch.dir / "comparison.json");
    for (const fs::directory_entry& e : fs::directory_iterator(scratch.dir)) {
      if (e.path().extension() == ".svg")
        out.plots[e.path().filename().string()] = ReadAll(e.path());
    }
    return out;
  };
}

}  // namespace trainyard::simulate
