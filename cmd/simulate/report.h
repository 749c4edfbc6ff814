#pragma once
// What `simulate` writes: per scenario jobs.csv and summary.json (and timing.json, the one file
// that depends on the machine), across scenarios comparison.md, comparison.json and SVG plots.
// Every figure is computed from the run alone, in a fixed order, so the same run gives the same
// bytes. docs/simulate.md documents each key.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmd/simulate/simulation.h"

namespace trainyard::simulate {

struct ScenarioReport {
  std::string name;
  nlohmann::ordered_json summary;
  std::vector<double> waits;  // seconds from submit to first start, of the jobs that started
  std::vector<CapacitySample> capacity;
};

// Writes DIR/<scenario>/jobs.csv and summary.json; returns what the comparison needs.
StatusOr<ScenarioReport> WriteScenario(const std::string& dir, const Scenario& scenario,
                                       const Trace& trace, const SimulationResult& result);
Status WriteTiming(const std::string& dir, const Scenario& scenario, const SimulationResult& result,
                   double wall_seconds);
// DIR/comparison.md, comparison.json, wait_cdf.svg, cost_vs_wait.svg, capacity_<scenario>.svg.
Status WriteComparison(const std::string& dir, const std::vector<ScenarioReport>& reports);

}  // namespace trainyard::simulate
