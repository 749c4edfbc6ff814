#include "cmd/simulate_command.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cmd/simulate/compare.h"

namespace trainyard::cmd {
namespace {

struct SimulateOptions {
  std::vector<std::string> scenarios;
  std::string out;
  std::optional<uint64_t> seed;
  simulate::CompareLimits limits;
  int64_t max_days = 0;
  bool every_minute = false;
};

// Exit 2 for a scenario refused (the server's what-if runs read it as a bad request), 1 for the
// rest; the reason is the last line either way.
int Fail(const Status& status) {
  std::cerr << "trainyard simulate: " << status.message() << "\n";
  return status.code() == Code::kInvalidArgument ? 2 : 1;
}

int RunSimulate(const SimulateOptions& options) {
  // The control plane logs every admission; a replay's are in jobs.csv.
  spdlog::set_level(spdlog::level::err);
  auto progress = [](const std::string& scenario, double days, int64_t submitted, size_t jobs,
                     int64_t ended, double wall) {
    std::fprintf(stderr, "simulate: %s: day %.1f, %lld of %zu jobs submitted, %lld ended, %.1f s\n",
                 scenario.c_str(), days, static_cast<long long>(submitted), jobs,
                 static_cast<long long>(ended), wall);
  };
  simulate::CompareLimits limits = options.limits;
  limits.bounds.max_span = std::chrono::hours(24 * options.max_days);
  if (Status s = simulate::CompareScenarios(
          options.scenarios, options.seed, options.out, progress, limits,
          options.every_minute ? simulate::ReplayWakes::kEveryMinute
                               : simulate::ReplayWakes::kWhenDecisionsMayChange);
      !s.ok()) {
    return Fail(s);
  }
  std::cout << std::filesystem::path(options.out) / "comparison.md"
            << "\n";
  return 0;
}

}  // namespace

void AddSimulateCommand(CLI::App& app, CommandRun* run) {
  auto options = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Replay a workload trace under each scenario's capacity mix and compare them");
  cmd->footer("Scenarios, traces and the reports: docs/simulate.md.");
  cmd->add_option("scenarios", options->scenarios, "scenario files (JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", options->out, "directory for the reports")->required();
  cmd->add_option("--seed", options->seed,
                  "seed of every scenario's failures, reclaims and ids (default: each fleet's)");
  // For scenarios others wrote (the server's what-if runs pass these).
  cmd->add_flag("--confine", options->limits.files.confined,
                "each scenario may name only files below its own folder");
  cmd->add_option("--max-nodes", options->limits.bounds.max_nodes,
                  "refuse a fleet of more nodes (0: no bound)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-jobs", options->limits.bounds.max_jobs,
                  "refuse a trace of more jobs (0: no bound)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-days", options->max_days,
                  "refuse a trace that spans more days (0: no bound)")
      ->check(CLI::NonNegativeNumber);
  // The same decisions either way (docs/performance.md); kept to show it and to compare.
  cmd->add_flag("--every-minute", options->every_minute,
                "pass every simulated minute, as a server's loop does, not only when a decision "
                "may be due (slower, the same reports)");
  cmd->callback([run, options] { *run = [options] { return RunSimulate(*options); }; });
}

}  // namespace trainyard::cmd
