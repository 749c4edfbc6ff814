#include "cmd/simulate_command.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cmd/simulate/report.h"
#include "cmd/simulate/scenario.h"
#include "cmd/simulate/simulation.h"
#include "cmd/simulate/trace.h"

namespace trainyard::cmd {
namespace {

struct SimulateOptions {
  std::vector<std::string> scenarios;
  std::string out;
  std::optional<uint64_t> seed;
};

int Fail(const Status& status) {
  std::cerr << "trainyard simulate: " << status.message() << "\n";
  return 1;
}

int RunSimulate(const SimulateOptions& options) {
  // The control plane logs every admission; a replay's are in jobs.csv.
  spdlog::set_level(spdlog::level::err);
  // Every scenario is read and checked before any runs: a bad one never leaves half a comparison.
  std::vector<simulate::Scenario> scenarios;
  std::vector<simulate::Trace> traces;
  for (const std::string& path : options.scenarios) {
    auto scenario = simulate::LoadScenario(path, options.seed);
    if (!scenario.ok()) return Fail(scenario.status());
    for (const simulate::Scenario& other : scenarios) {
      if (other.name == scenario->name) {
        return Fail(InvalidArgument(path + ": name: \"" + other.name + "\" is also " +
                                    other.source + "'s; each scenario needs its own"));
      }
    }
    auto trace = simulate::ReadTrace(scenario->workload);
    if (!trace.ok()) return Fail(trace.status());
    for (const simulate::TraceJob& job : trace->jobs) {
      auto built = simulate::BuildJob(*scenario, job);
      if (!built.ok()) return Fail(built.status());
    }
    scenarios.push_back(std::move(scenario).value());
    traces.push_back(std::move(trace).value());
  }
  std::vector<simulate::ScenarioReport> reports;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const simulate::Scenario& scenario = scenarios[i];
    const auto started = std::chrono::steady_clock::now();
    auto wall = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    };
    auto progress = [&](int64_t created, int64_t ended, Duration simulated) {
      std::fprintf(stderr,
                   "simulate: %s: day %.1f, %lld of %zu jobs submitted, %lld ended, %.1f s\n",
                   scenario.name.c_str(), std::chrono::duration<double>(simulated).count() / 86400,
                   static_cast<long long>(created), traces[i].jobs.size(),
                   static_cast<long long>(ended), wall());
    };
    auto result = simulate::RunScenario(scenario, traces[i], progress);
    if (!result.ok()) return Fail(result.status());
    const double seconds = wall();
    auto report = simulate::WriteScenario(options.out, scenario, traces[i], *result);
    if (!report.ok()) return Fail(report.status());
    if (Status s = simulate::WriteTiming(options.out, scenario, *result, seconds); !s.ok()) {
      return Fail(s);
    }
    reports.push_back(std::move(report).value());
  }
  if (Status s = simulate::WriteComparison(options.out, reports); !s.ok()) return Fail(s);
  std::cout << std::filesystem::path(options.out) / "comparison.md"
            << "\n";
  return 0;
}

}  // namespace

void AddSimulateCommand(CLI::App& app, CommandRun* run) {
  auto options = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Replay a workload trace through the server's scheduler under each scenario's capacity mix "
      "and compare them (docs/simulate.md)");
  cmd->add_option("scenarios", options->scenarios, "scenario files (JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", options->out, "directory for the reports")->required();
  cmd->add_option("--seed", options->seed,
                  "seed of every scenario's failures, reclaims and ids (default: each fleet's)");
  cmd->callback([run, options] { *run = [options] { return RunSimulate(*options); }; });
}

}  // namespace trainyard::cmd
