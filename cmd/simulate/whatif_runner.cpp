#include "cmd/simulate/whatif_runner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "api/wire/json_depth.h"
#include "cmd/simulate/job_builder.h"
#include "cmd/simulate/scenario.h"
#include "cmd/simulate/scenario_files.h"
#include "cmd/simulate/trace.h"

namespace trainyard::simulate {
namespace {

namespace fs = std::filesystem;

// The upload's scenario file: its default name ("uploaded") is the stem.
constexpr const char* kUploadFile = "uploaded.json";

// Removes the scratch directory however the run ends.
struct Scratch {
  fs::path dir;
  ~Scratch() {
    std::error_code ignored;
    if (!dir.empty()) fs::remove_all(dir, ignored);
  }
};

// A new file of ours (never through a link, never over one): O_CREAT | O_EXCL | O_NOFOLLOW.
Status WriteNew(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  return WriteNewFile(path.string(), text, 0600);
}

// `relative` (as a scenario in `from` names it) copied to the same place under `to`, once.
Status CopyNamed(const fs::path& from, const fs::path& to, const std::string& relative,
                 const FileRules& rules, std::set<std::string>& copied) {
  if (!copied.insert(relative).second) return Status::Ok();
  TY_ASSIGN_OR_RETURN(std::string path,
                      ResolveScenarioPath(from.string(), relative, from.string(), relative, rules));
  TY_ASSIGN_OR_RETURN(std::string text, ReadScenarioFile(path, rules));
  return WriteNew(to / fs::path(relative).lexically_normal(), text);
}

// An offered scenario and the files it names, copied into `to`: the run's user may not be able to
// read the server's folder (root's 0700 home), and it reads nothing of the server's but these.
Status StageOffered(const fs::path& dir, const std::string& name, const fs::path& to,
                    const FileRules& rules, std::set<std::string>& copied) {
  TY_RETURN_IF_ERROR(CopyNamed(dir, to, name + ".json", rules, copied));
  TY_ASSIGN_OR_RETURN(std::string text, ReadScenarioFile((to / (name + ".json")).string(), rules));
  const auto scenario = nlohmann::json::parse(text, nullptr, false);
  if (!scenario.is_object()) return Status::Ok();  // the child says what is wrong with it
  if (scenario.contains("fleet") && scenario["fleet"].is_string()) {
    TY_RETURN_IF_ERROR(CopyNamed(dir, to, scenario["fleet"].get<std::string>(), rules, copied));
  }
  if (scenario.contains("workload") && scenario["workload"].is_object() &&
      scenario["workload"].contains("path") && scenario["workload"]["path"].is_string()) {
    TY_RETURN_IF_ERROR(
        CopyNamed(dir, to, scenario["workload"]["path"].get<std::string>(), rules, copied));
  }
  return Status::Ok();
}

// What the replay refused, as a field of the request: "upload.scenario" with the replay's words.
Status AsUploadField(const Status& status) {
  if (status.code() != Code::kInvalidArgument || !status.violations().empty()) return status;
  return InvalidField("upload.scenario", status.message());
}

// The caller's scenario in `into`, beside its trace, checked as the run will read it: confined to
// its folder, bounded, every trace job buildable. Its fleet, when named, must be one the server
// offers (a plain name in `dir`), copied beside it.
Status StageUpload(const WhatIfUpload& upload, const fs::path& dir, const fs::path& into,
                   const std::vector<std::string>& chosen, const WhatIfRunnerOptions& options) {
  if (!JsonDepthWithin(upload.scenario, kMaxJsonDepth)) {
    return InvalidField("upload.scenario",
                        "nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  auto scenario = nlohmann::json::parse(upload.scenario, nullptr, false);
  if (!scenario.is_object()) {
    return InvalidField("upload.scenario", "is not a JSON object (a scenario file's text)");
  }
  if (!scenario.contains("workload") || !scenario["workload"].is_object()) {
    return InvalidField("upload.scenario.workload", "is required (docs/simulate.md)");
  }
  if (scenario.contains("name")) {
    if (!scenario["name"].is_string() || !ValidScenarioName(scenario["name"].get<std::string>())) {
      return InvalidField("upload.scenario.name", kScenarioNameRule);
    }
    const std::string name = scenario["name"].get<std::string>();
    if (std::find(chosen.begin(), chosen.end(), name) != chosen.end()) {
      return InvalidField("upload.scenario.name",
                          "\"" + name + "\" is a chosen scenario's; give the upload its own");
    }
  }
  scenario["workload"]["path"] = upload.trace_name;
  if (upload.trace_name == kUploadFile) {
    return InvalidField("upload.traceName", std::string("must not be \"") + kUploadFile +
                                                "\", the name the scenario is staged as");
  }
  FileRules rules{.confined = true, .max_bytes = options.max_file_bytes};
  if (scenario.contains("fleet") && scenario["fleet"].is_string()) {
    const std::string fleet = scenario["fleet"].get<std::string>();
    std::set<std::string> copied;
    if (fleet == upload.trace_name || !ValidScenarioName(fleet) ||
        !CopyNamed(dir, into, fleet, rules, copied).ok()) {
      return InvalidField("upload.scenario.fleet",
                          "\"" + fleet +
                              "\" is no fleet file of this server's; name one of its what-if "
                              "directory (e.g. \"fleet.json\") or give the fleet inline");
    }
  }
  TY_RETURN_IF_ERROR(WriteNew(into / kUploadFile, scenario.dump(2)));
  TY_RETURN_IF_ERROR(WriteNew(into / upload.trace_name, upload.trace));
  // Read back as the child will: the same checks, here, so a bad upload is a 400.
  auto loaded = LoadScenario((into / kUploadFile).string(), std::nullopt, rules);
  if (!loaded.ok()) return AsUploadField(loaded.status());
  auto trace = ReadTrace(loaded->workload);
  if (!trace.ok()) return AsUploadField(trace.status());
  if (Status s = CheckScenarioBounds(*loaded, *trace, options.bounds); !s.ok()) {
    return AsUploadField(s);
  }
  for (const TraceJob& job : trace->jobs) {
    if (auto built = BuildJob(*loaded, job); !built.ok()) return AsUploadField(built.status());
  }
  return Status::Ok();
}

// Hands the scratch folder to the run's user: the child writes its reports there.
Status GiveTo(const fs::path& dir, const ChildUser& user) {
  std::error_code ec;
  if (::lchown(dir.c_str(), user.uid, user.gid) != 0)
    return Internal("cannot hand over " + dir.string());
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (::lchown(it->path().c_str(), user.uid, user.gid) != 0) {
      return Internal("cannot hand over " + it->path().string());
    }
  }
  return ec ? Internal(dir.string() + ": " + ec.message()) : Status::Ok();
}

// A staged run: `trainyard simulate` on the staged files, in a child of its own.
class ChildExecution : public WhatIfExecution {
 public:
  ChildExecution(const WhatIfRunnerOptions& options, std::unique_ptr<Scratch> scratch,
                 std::vector<std::string> args)
      : options_(options), scratch_(std::move(scratch)), args_(std::move(args)) {}

  StatusOr<WhatIfOutput> Run(const std::function<void(std::string)>& progress) override {
    {
      std::lock_guard lock(mu_);
      if (cancelled_) return Status(Code::kCancelled, "the what-if run was cancelled");
      TY_ASSIGN_OR_RETURN(child_,
                          SimulateChild::Start(options_.program, args_, scratch_->dir.string(),
                                               options_.user, options_.limits));
    }
    const ChildOutcome outcome = child_->Wait([&](const std::string& line) {
      // "simulate: <scenario>: day 3.0, …": the run's progress, without the CLI's prefix.
      if (line.starts_with("simulate: ")) progress(line.substr(10));
    });
    TY_RETURN_IF_ERROR(Judge(outcome));
    return ReadOutput(scratch_->dir / "out");
  }

  void Cancel() override {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    if (child_) child_->Cancel();
  }

 private:
  Status Judge(const ChildOutcome& outcome) const {
    std::string said = outcome.last_line;
    if (said.starts_with("trainyard simulate: ")) said = said.substr(20);
    switch (outcome.kind) {
      case ChildOutcome::Kind::kCancelled:
        return Status(Code::kCancelled, "the what-if run was cancelled");
      case ChildOutcome::Kind::kTimedOut:
        return Status(Code::kDeadlineExceeded,
                      "the what-if run took longer than its " +
                          std::to_string(options_.limits.wall.count() / 1000) + " s");
      case ChildOutcome::Kind::kSignalled:
        return Status(Code::kResourceExhausted,
                      "the what-if run was ended by signal " + std::to_string(outcome.code) +
                          ": past its limits (" +
                          std::to_string(options_.limits.memory_bytes >> 20) + " MiB, " +
                          std::to_string(options_.limits.cpu_seconds) + " s of CPU)?");
      case ChildOutcome::Kind::kExited:
        if (outcome.code == 0) return Status::Ok();
        // `trainyard simulate` exits 2 for a scenario it refuses, with the reason as its last line.
        if (outcome.code == 2) return InvalidArgument(said);
        return Internal("the what-if run failed (exit " + std::to_string(outcome.code) +
                        "): " + said);
    }
    return Internal("the what-if run ended oddly");
  }

  // The child wrote these as an unprivileged user: read as regular files only, never a link.
  StatusOr<WhatIfOutput> ReadOutput(const fs::path& out) const {
    const FileRules rules{.confined = true, .max_bytes = uint64_t{64} << 20};
    WhatIfOutput output;
    TY_ASSIGN_OR_RETURN(output.comparison_json,
                        ReadScenarioFile((out / "comparison.json").string(), rules));
    std::error_code ec;
    for (auto it = fs::directory_iterator(out, ec); !ec && it != fs::end(it); it.increment(ec)) {
      if (it->path().extension() != ".svg") continue;
      auto svg = ReadScenarioFile(it->path().string(), rules);
      if (svg.ok()) output.plots[it->path().filename().string()] = std::move(svg).value();
    }
    return output;
  }

  const WhatIfRunnerOptions options_;
  std::unique_ptr<Scratch> scratch_;
  std::vector<std::string> args_;
  std::mutex mu_;
  bool cancelled_ = false;
  std::unique_ptr<SimulateChild> child_;
};

class ChildRunner : public WhatIfRunner {
 public:
  explicit ChildRunner(WhatIfRunnerOptions options) : options_(std::move(options)) {}

  StatusOr<std::unique_ptr<WhatIfExecution>> Stage(const std::vector<std::string>& scenarios,
                                                   const std::optional<WhatIfUpload>& upload,
                                                   std::optional<uint64_t> seed) override {
    TY_RETURN_IF_ERROR(options_.refused);
    std::string pattern = (fs::temp_directory_path() / "trainyard-whatif.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return Internal("no scratch directory for a what-if run");
    }
    auto scratch = std::make_unique<Scratch>(Scratch{pattern});
    const fs::path dir(options_.dir);
    const FileRules rules{.confined = true, .max_bytes = options_.max_file_bytes};
    std::vector<std::string> args{"simulate"};
    std::set<std::string> copied;
    for (const std::string& name : scenarios) {
      TY_RETURN_IF_ERROR(StageOffered(dir, name, scratch->dir / "in", rules, copied));
      args.push_back((scratch->dir / "in" / (name + ".json")).string());
    }
    if (upload) {
      TY_RETURN_IF_ERROR(StageUpload(*upload, dir, scratch->dir / "upload", scenarios, options_));
      args.push_back((scratch->dir / "upload" / kUploadFile).string());
    }
    args.insert(
        args.end(),
        {"--out", (scratch->dir / "out").string(), "--confine", "--max-nodes",
         std::to_string(options_.bounds.max_nodes), "--max-jobs",
         std::to_string(options_.bounds.max_jobs), "--max-days",
         std::to_string(
             std::chrono::duration_cast<std::chrono::hours>(options_.bounds.max_span).count() /
             24)});
    if (seed) args.insert(args.end(), {"--seed", std::to_string(*seed)});
    if (options_.user) TY_RETURN_IF_ERROR(GiveTo(scratch->dir, *options_.user));
    return std::unique_ptr<WhatIfExecution>(
        new ChildExecution(options_, std::move(scratch), std::move(args)));
  }

 private:
  WhatIfRunnerOptions options_;
};

}  // namespace

std::vector<std::string> OfferedScenarios(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code error;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, error)) {
    if (e.path().extension() != ".json" || !ValidScenarioName(e.path().stem().string())) continue;
    auto text = ReadScenarioFile(e.path().string(), FileRules{});
    if (!text.ok()) continue;
    auto json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_object() && json.contains("workload")) out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::unique_ptr<WhatIfRunner> MakeWhatIfRunner(WhatIfRunnerOptions options) {
  return std::make_unique<ChildRunner>(std::move(options));
}

}  // namespace trainyard::simulate
