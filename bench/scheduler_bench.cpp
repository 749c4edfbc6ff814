// The scheduler core at scale (docs/scheduler.md, "Benchmarks"): pending {1k, 10k, 100k} × nodes
// {100, 1k, 10k} over 10 or 200 queues. Each iteration is one cycle over a fresh state that
// evaluates every pending job (no budget, no lookback), so verdicts/s is the core's full-pass rate;
// the default cycle evaluates at most 5,000 jobs.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>

#include "services/scheduler/scheduler.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;

const Timestamp kT0 = FromUnixMicros(1'800'000'000'000'000);

// Three zones; each has a reservation, on-demand, spot and flex pool of A3 Mega and an on-demand
// pool of A3 High: `nodes` in all.
Fleet MakeFleet(int nodes) {
  Fleet f;
  f.epoch = kT0;
  const char* zones[] = {"us-central1-a", "us-central1-b", "us-central1-c"};
  int per_pool = std::max(1, nodes / 15);
  for (const char* zone : zones) {
    auto add = [&](const char* machine, ConsumptionModel model, const char* reservation) {
      CapacityPool p;
      p.zone = zone;
      p.region = "us-central1";
      p.machine_type = machine;
      p.model = model;
      p.reservation = reservation;
      p.units = per_pool;
      p.id = std::string(zone) + machine + std::string(ConsumptionModelName(model));
      f.pools.push_back(p);
    };
    add("a3-megagpu-8g", ConsumptionModel::kReservation, "r");
    add("a3-megagpu-8g", ConsumptionModel::kOnDemand, "");
    add("a3-megagpu-8g", ConsumptionModel::kSpot, "");
    add("a3-megagpu-8g", ConsumptionModel::kFlexStart, "");
    add("a3-highgpu-8g", ConsumptionModel::kOnDemand, "");
  }
  return f;
}

// A mix of shapes: 1-node fine-tunes, 2-16 node gangs, a few spot and DWS jobs, three priorities.
std::vector<SchedulerJob> MakeJobs(int count, int queues, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<SchedulerJob> jobs;
  jobs.reserve(count);
  for (int i = 0; i < count; ++i) {
    SchedulerJob j;
    j.id = i + 1;
    j.version = 1;
    j.project_id = "p" + std::to_string(rng() % queues);
    j.region = "us-central1";
    j.priority = std::array{100, 500, 500, 1000}[rng() % 4];
    j.queue_time = kT0 + std::chrono::microseconds(i);
    int kind = static_cast<int>(rng() % 10);
    j.strategy = kind == 0   ? SchedulingStrategy::kSpot
                 : kind == 1 ? SchedulingStrategy::kFlexStart
                             : SchedulingStrategy::kStandard;
    int64_t nodes = kind < 5 ? 1 : (int64_t{1} << (1 + rng() % 4));
    GangPool gp;
    gp.machine_type = rng() % 3 == 0 ? "a3-highgpu-8g" : "a3-megagpu-8g";
    gp.units = nodes;
    gp.quota_metric = "NVIDIA_H100_80GB";
    gp.quota_amount = nodes * 8;
    j.pools.push_back(gp);
    j.quota.push_back({gp.quota_metric, gp.quota_amount});
    j.shape = j.project_id + "|" + std::to_string(j.priority) + "|" + gp.machine_type + "|" +
              std::to_string(nodes) + "|" + std::to_string(static_cast<int>(j.strategy));
    jobs.push_back(std::move(j));
  }
  return jobs;
}

void BM_FullCycle(benchmark::State& state) {
  const int pending = static_cast<int>(state.range(0));
  const int nodes = static_cast<int>(state.range(1));
  const int queues = static_cast<int>(state.range(2));
  Fleet fleet = MakeFleet(nodes);
  std::vector<SchedulerJob> jobs = MakeJobs(pending, queues, 42);
  SchedulerConfig config;
  config.evaluation_budget = 1e12;
  config.lookback = 1 << 30;
  int64_t verdicts = 0, admitted = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Scheduler s(fleet, config);
    for (const SchedulerJob& j : jobs) s.UpsertPending(j);
    state.ResumeTiming();
    CycleResult r = s.RunCycle(kT0 + 1s);
    verdicts += r.evaluations + r.reused;
    admitted += static_cast<int64_t>(r.admissions.size());
    benchmark::DoNotOptimize(r);
  }
  state.counters["verdicts_per_s"] =
      benchmark::Counter(static_cast<double>(verdicts), benchmark::Counter::kIsRate);
  state.counters["admitted"] =
      benchmark::Counter(static_cast<double>(admitted), benchmark::Counter::kAvgIterations);
}

// One cycle a second after `now`, per iteration, over the state `s` has.
void MeasureSteadyCycles(benchmark::State& state, Scheduler& s, Timestamp now) {
  int64_t verdicts = 0, evaluations = 0, updates = 0, admissions = 0;
  for (auto _ : state) {
    now += 1s;
    CycleResult r = s.RunCycle(now);
    verdicts += r.evaluations + r.reused;
    evaluations += r.evaluations;
    updates += static_cast<int64_t>(r.verdicts.size());
    admissions += static_cast<int64_t>(r.admissions.size());
    benchmark::DoNotOptimize(r);
  }
  state.counters["verdicts_per_s"] =
      benchmark::Counter(static_cast<double>(verdicts), benchmark::Counter::kIsRate);
  // Of the verdicts, those decided afresh rather than reused from a job of the same shape.
  state.counters["evaluated"] =
      benchmark::Counter(static_cast<double>(evaluations), benchmark::Counter::kAvgIterations);
  state.counters["running"] = static_cast<double>(s.running_count());
  state.counters["updates"] =
      benchmark::Counter(static_cast<double>(updates), benchmark::Counter::kAvgIterations);
  state.counters["admitted"] =
      benchmark::Counter(static_cast<double>(admissions), benchmark::Counter::kAvgIterations);
}

// The steady state: a full queue, nothing fits, each cycle re-evaluates with the default budget.
void BM_SteadyCycle(benchmark::State& state) {
  const int pending = static_cast<int>(state.range(0));
  const int nodes = static_cast<int>(state.range(1));
  Fleet fleet = MakeFleet(nodes);
  Scheduler s(fleet);
  for (const SchedulerJob& j : MakeJobs(pending, 200, 7)) s.UpsertPending(j);
  Timestamp now = kT0;
  s.RunCycle(now);  // fills the fleet
  MeasureSteadyCycles(state, s, now);
}

// Issue 17: `pending` jobs of which 90% can never fit (n1-standard-4, which this fleet has none
// of), spread through every queue, against a state of only the 10% that can (with_parked = 0). A
// parked job is looked at once, then costs nothing per cycle.
std::vector<SchedulerJob> MostlyParked(int count, int queues, bool with_parked) {
  std::vector<SchedulerJob> out;
  for (SchedulerJob& j : MakeJobs(count, queues, 42)) {
    if (j.id % 10 != 0) {
      if (!with_parked) continue;
      j.pools[0].machine_type = "n1-standard-4";
      j.pools[0].quota_metric = "CPUS";
      j.pools[0].quota_amount = 4;
      j.quota = {{"CPUS", 4}};
      j.shape = j.project_id + "|" + std::to_string(j.priority) + "|n1";
    }
    out.push_back(std::move(j));
  }
  return out;
}

// One cycle that finds the parked jobs (a reused verdict each) and fills the fleet, then the full
// pass that is measured: no budget, no lookback, as BM_FullCycle.
void BM_FullCycleMostlyParked(benchmark::State& state) {
  Fleet fleet = MakeFleet(static_cast<int>(state.range(1)));
  std::vector<SchedulerJob> jobs =
      MostlyParked(static_cast<int>(state.range(0)), 200, state.range(2) != 0);
  SchedulerConfig config;
  config.evaluation_budget = 1e12;
  config.lookback = 1 << 30;
  int64_t verdicts = 0, evaluations = 0, updates = 0;
  std::unique_ptr<Scheduler> s;
  for (auto _ : state) {
    state.PauseTiming();
    s.reset();  // freeing 100k jobs is not the cycle's cost
    s = std::make_unique<Scheduler>(fleet, config);
    for (const SchedulerJob& j : jobs) s->UpsertPending(j);
    s->RunCycle(kT0 + 1s);
    state.ResumeTiming();
    CycleResult r = s->RunCycle(kT0 + 2s);
    verdicts += r.evaluations + r.reused;
    evaluations += r.evaluations;
    updates += static_cast<int64_t>(r.verdicts.size());
    benchmark::DoNotOptimize(r);
  }
  state.counters["evaluated"] =
      benchmark::Counter(static_cast<double>(evaluations), benchmark::Counter::kAvgIterations);
  state.counters["updates"] =
      benchmark::Counter(static_cast<double>(updates), benchmark::Counter::kAvgIterations);
  state.counters["verdicts_per_s"] =
      benchmark::Counter(static_cast<double>(verdicts), benchmark::Counter::kIsRate);
}

void BM_SteadyCycleMostlyParked(benchmark::State& state) {
  Fleet fleet = MakeFleet(static_cast<int>(state.range(1)));
  Scheduler s(fleet);
  for (const SchedulerJob& j :
       MostlyParked(static_cast<int>(state.range(0)), 200, state.range(2) != 0)) {
    s.UpsertPending(j);
  }
  Timestamp now = kT0;
  for (int i = 0; i < 100; ++i) s.RunCycle(now += 1s);  // fills the fleet and parks what it can
  MeasureSteadyCycles(state, s, now);
}

BENCHMARK(BM_FullCycleMostlyParked)
    ->Args({100000, 10000, 0})
    ->Args({100000, 10000, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);
BENCHMARK(BM_SteadyCycleMostlyParked)
    ->Args({100000, 10000, 0})
    ->Args({100000, 10000, 1})
    ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_FullCycle)
    ->ArgsProduct({{1000, 10000, 100000}, {100, 1000, 10000}, {10, 200}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK(BM_SteadyCycle)
    ->ArgsProduct({{10000, 100000}, {1000, 10000}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainyard
