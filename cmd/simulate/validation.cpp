#include "cmd/simulate/validation.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "cmd/simulate/figures.h"

namespace trainyard::simulate {
namespace {

constexpr double kWeek = 7 * 86400;

// One job's submit, wait and run, in seconds from the trace's first submit.
struct JobTimes {
  double submit = 0, wait = 0, run = 0;
  int64_t procs = 0;
};

HistoryFigures FiguresOf(const std::vector<JobTimes>& jobs, double capacity) {
  HistoryFigures f;
  std::vector<double> waits;
  double work = 0, first = 0, last = 0, slowdown = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobTimes& j = jobs[i];
    waits.push_back(j.wait);
    work += static_cast<double>(j.procs) * j.run;
    first = i == 0 ? j.submit : std::min(first, j.submit);
    last = std::max(last, j.submit + j.wait + j.run);
    slowdown += std::max(1.0, (j.wait + j.run) / std::max(j.run, kSlowdownBoundSeconds));
  }
  if (jobs.empty()) return f;
  double sum = 0;
  for (double w : waits) sum += w;
  f.wait_mean = sum / static_cast<double>(waits.size());
  std::sort(waits.begin(), waits.end());
  f.wait_p50 = Percentile(waits, 50);
  f.wait_p95 = Percentile(waits, 95);
  f.bounded_slowdown = slowdown / static_cast<double>(jobs.size());
  f.utilization = last > first && capacity > 0 ? work / (capacity * (last - first)) : 0;
  return f;
}

nlohmann::ordered_json Json(const HistoryFigures& f) {
  return {{"utilization", Round(f.utilization, 4)},
          {"wait_mean_s", Round(f.wait_mean, 1)},
          {"wait_p50_s", Round(f.wait_p50, 1)},
          {"wait_p95_s", Round(f.wait_p95, 1)},
          {"bounded_slowdown", Round(f.bounded_slowdown, 2)}};
}

// Mean wait by week of submission; weeks with no job in either series are left out.
std::map<int64_t, double> WeeklyMeans(const std::vector<JobTimes>& jobs) {
  std::map<int64_t, std::pair<double, int64_t>> sums;
  for (const JobTimes& j : jobs) {
    auto& [sum, n] = sums[static_cast<int64_t>(j.submit / kWeek)];
    sum += j.wait;
    ++n;
  }
  std::map<int64_t, double> means;
  for (const auto& [week, s] : sums) means[week] = s.first / static_cast<double>(s.second);
  return means;
}

}  // namespace

std::optional<double> Correlation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return std::nullopt;
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ma += a[i] / n;
    mb += b[i] / n;
  }
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    cov += (a[i] - ma) * (b[i] - mb);
    va += (a[i] - ma) * (a[i] - ma);
    vb += (b[i] - mb) * (b[i] - mb);
  }
  if (va <= 0 || vb <= 0) return std::nullopt;
  return cov / std::sqrt(va * vb);
}

std::optional<nlohmann::ordered_json> ValidationOf(const Trace& trace,
                                                   const SimulationResult& result) {
  if (trace.max_procs <= 0 || result.jobs.empty()) return std::nullopt;
  std::vector<JobTimes> recorded, replayed;
  const Timestamp epoch = ReplayEpoch();
  int64_t unstarted = 0, unrecorded = 0;
  for (const JobOutcome& j : result.jobs) {
    // A job the log has no wait for is left out of both sides.
    if (!j.trace->recorded_wait) {
      ++unrecorded;
      continue;
    }
    const double submit = Seconds(j.trace->submit);
    const double run = Seconds(j.trace->duration);
    recorded.push_back({submit, Seconds(*j.trace->recorded_wait), run, j.trace->gpus});
    const CustomJob& job = j.record->job;
    if (!job.start_time) {
      ++unstarted;
      continue;
    }
    const double start = Seconds(*job.start_time - epoch);
    replayed.push_back({submit, std::max(0.0, start - submit), run, j.trace->gpus});
  }
  if (recorded.empty()) return std::nullopt;  // not a log of what a machine did
  const double capacity = static_cast<double>(trace.max_procs);
  const HistoryFigures was = FiguresOf(recorded, capacity);
  const HistoryFigures is = FiguresOf(replayed, capacity);
  const std::map<int64_t, double> weekly_was = WeeklyMeans(recorded);
  const std::map<int64_t, double> weekly_is = WeeklyMeans(replayed);
  std::vector<double> a, b;
  for (const auto& [week, mean] : weekly_was) {
    if (auto it = weekly_is.find(week); it != weekly_is.end()) {
      a.push_back(mean);
      b.push_back(it->second);
    }
  }
  nlohmann::ordered_json out;
  out["capacity_processors"] = trace.max_procs;
  out["jobs"] = static_cast<int64_t>(recorded.size());
  out["jobs_never_started"] = unstarted;
  out["jobs_without_recorded_wait"] = unrecorded;
  out["recorded"] = Json(was);
  out["replay"] = Json(is);
  const auto ratio = [](double replay, double recorded) {
    return recorded > 0 ? Round(replay / recorded, 3) : 0.0;
  };
  out["replay_over_recorded"] = {
      {"utilization_points", Round((is.utilization - was.utilization) * 100, 2)},
      {"wait_mean", ratio(is.wait_mean, was.wait_mean)},
      {"bounded_slowdown", ratio(is.bounded_slowdown, was.bounded_slowdown)}};
  if (auto r = Correlation(a, b)) out["weekly_wait_correlation"] = Round(*r, 3);
  out["weeks"] = static_cast<int64_t>(a.size());
  return out;
}

}  // namespace trainyard::simulate
