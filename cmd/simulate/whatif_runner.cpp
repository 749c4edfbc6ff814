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

namespace {

// The caller's scenario in `into`, beside its trace: its workload is the trace sent with it, and a
// fleet named by file must be one the server offers (a plain name in `dir`), copied beside it.
StatusOr<std::string> WriteUpload(const WhatIfUpload& upload, const std::string& dir,
                                  const fs::path& into) {
  auto scenario = nlohmann::json::parse(upload.scenario, nullptr, false);
  if (!scenario.is_object()) {
    return InvalidField("upload.scenario", "is not a JSON object (a scenario file's text)");
  }
  if (!scenario.contains("workload") || !scenario["workload"].is_object()) {
    return InvalidField("upload.scenario.workload", "is required (docs/simulate.md)");
  }
  scenario["workload"]["path"] = upload.trace_name;
  fs::create_directories(into);
  if (scenario.contains("fleet") && scenario["fleet"].is_string()) {
    const std::string fleet = scenario["fleet"].get<std::string>();
    const fs::path offered = fs::path(dir) / fleet;
    if (fleet.empty() || fleet.find('/') != std::string::npos || fleet.starts_with(".") ||
        !fs::is_regular_file(offered)) {
      return InvalidField("upload.scenario.fleet",
                          "\"" + fleet +
                              "\" is no fleet file of this server's; name one of its what-if "
                              "directory (e.g. \"fleet.json\") or give the fleet inline");
    }
    fs::copy_file(offered, into / fleet, fs::copy_options::overwrite_existing);
  }
  const fs::path path = into / "uploaded.json";
  std::ofstream(path) << scenario.dump(2);
  std::ofstream(into / upload.trace_name, std::ios::binary) << upload.trace;
  return path.string();
}

}  // namespace

WhatIfRunner MakeWhatIfRunner(std::string dir) {
  return [dir = std::move(dir)](
             const std::vector<std::string>& scenarios, const std::optional<WhatIfUpload>& upload,
             std::optional<uint64_t> seed,
             const std::function<void(std::string)>& progress) -> StatusOr<WhatIfOutput> {
    std::vector<std::string> paths;
    for (const std::string& name : scenarios) {
      paths.push_back((fs::path(dir) / name).string() + ".json");
    }
    std::string pattern = (fs::temp_directory_path() / "trainyard-whatif.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return Internal("no scratch directory for a what-if run");
    }
    Scratch scratch{pattern};
    if (upload) {
      TY_ASSIGN_OR_RETURN(std::string path, WriteUpload(*upload, dir, scratch.dir / "upload"));
      paths.push_back(std::move(path));
    }
    const fs::path out = scratch.dir / "out";
    // The replay's own control plane would log every admission as the server's.
    ScopedLogMute mute;
    TY_RETURN_IF_ERROR(CompareScenarios(
        paths, seed, out.string(),
        [&](const std::string& scenario, double days, int64_t submitted, size_t jobs, int64_t ended,
            double) {
          char line[256];
          std::snprintf(line, sizeof(line), "%s: day %.1f, %lld of %zu jobs submitted, %lld ended",
                        scenario.c_str(), days, static_cast<long long>(submitted), jobs,
                        static_cast<long long>(ended));
          progress(line);
        }));
    WhatIfOutput output;
    output.comparison_json = ReadAll(out / "comparison.json");
    for (const fs::directory_entry& e : fs::directory_iterator(out)) {
      if (e.path().extension() == ".svg") {
        output.plots[e.path().filename().string()] = ReadAll(e.path());
      }
    }
    return output;
  };
}

}  // namespace trainyard::simulate
