#pragma once
// A replay held against what the trace's machine recorded: a Parallel Workloads Archive log says
// when each job waited (SWF field 3) and ran, so a replay of the log on the machine it came from
// can be compared figure by figure: utilization, wait mean/p50/p95, mean bounded slowdown, and how
// closely the waits follow the recorded ones week by week.
#include <optional>

#include <nlohmann/json.hpp>

#include "cmd/simulate/simulation.h"
#include "cmd/simulate/trace.h"

namespace trainyard::simulate {

// Slowdown's bound on short jobs, as the scheduling literature uses it (Feitelson et al.).
inline constexpr double kSlowdownBoundSeconds = 10;

struct HistoryFigures {
  double utilization = 0;  // processor-seconds of work ÷ (capacity × span)
  double wait_mean = 0, wait_p50 = 0, wait_p95 = 0;
  double bounded_slowdown = 0;  // mean of max(1, (wait + run) / max(run, 10 s))
};

// The recorded figures beside the replay's, over the jobs with a recorded wait, for a trace whose
// header gives the machine's processors; nullopt otherwise.
std::optional<nlohmann::ordered_json> ValidationOf(const Trace& trace,
                                                   const SimulationResult& result);

// Pearson's correlation of two series of equal length (nullopt below two points or with no
// variance).
std::optional<double> Correlation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace trainyard::simulate
