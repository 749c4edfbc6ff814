// The control plane on PostgreSQL (what `serve` runs) against the same plane on memory (what
// `simulate` runs), as a property: for many seeds, a random fleet and a random workload (gangs and
// single nodes, TPU slices, reservations, spot, DWS, priorities that preempt with a grace, jobs
// that fail and retry, cancels and deletes, injected node failures and spot preemptions, persistent
// resources created, resized, rebooted and deleted) go through both planes under one manual
// clock, and after every client call, every scheduler pass and every runtime pass each job, node,
// resource, operation and call result is read from both stores. The two histories (each entity's
// points, as they changed, with the step and pass they changed at) must be equal: not only how
// things end, but every state, time, reason, cost and goodput bucket on the way. What is read is
// each store's rows (memory keeps no job events), so a state entered and left within one pass
// shows through what it left behind (the version, goodput buckets, cost), not as an entry of its
// own. Fault injections on memory go through a test-only queue (`simulate` takes none).
//
// TRAINYARD_PROPERTY_SEEDS=N runs N seeds (make test runs kDefaultSeeds; make soak runs more),
// TRAINYARD_PROPERTY_FIRST_SEED=S starts at S, TRAINYARD_PROPERTY_SEED=S runs that seed alone,
// TRAINYARD_PROPERTY_KEEP_GOING=1 runs every seed after a divergence too.
// A divergence prints the seed, the first diverging entity with both histories, and the workload
// shrunk to the fewest operations that still diverge (TRAINYARD_PROPERTY_SHRINK_SECONDS, 60 by
// default; 0 turns shrinking off).
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "api/wire/custom_job_codec.h"
#include "api/wire/fleet_codec.h"
#include "api/wire/operation_codec.h"
#include "api/wire/persistent_resource_codec.h"
#include "cmd/app/control_plane.h"
#include "cmd/app/memory_adapters.h"
#include "cmd/app/pg_adapters.h"
#include "services/fleet/node_state.h"
#include "services/jobs/job_state_names.h"
#include "storage/pg.h"
#include "tests/integration/resource_jobs.h"
#include "tests/integration/test_database.h"
#include "workers/sim/sim_runtime.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// Seeds `make test` runs (about 1.5 s each on a two-core machine).
constexpr int kDefaultSeeds = 28;
constexpr int64_t kStartMicros = 1'800'000'000'000'000;
const ParentRef kDemo{"demo", "us-central1"};

// ---------------------------------------------------------------------------------------------
// What is compared. A point is what one read of an entity shows, as named fields; a history is
// the points an entity went through, each with the step and pass it was first seen at.

struct Point {
  std::vector<std::pair<std::string, std::string>> fields;
  bool operator==(const Point&) const = default;
  void Add(std::string name, std::string value) {
    fields.emplace_back(std::move(name), std::move(value));
  }
};

// When a point was read: after the clients' calls of a step, after its scheduler pass, after its
// runtime pass.
enum Phase : int { kCalls = 0, kScheduler = 1, kRuntime = 2 };
const char* PhaseName(int phase) {
  return phase == kCalls ? "calls" : phase == kScheduler ? "scheduler pass" : "runtime pass";
}

struct Entry {
  int step = 0;
  int phase = kCalls;
  int64_t at_micros = 0;  // the clock when read
  Point point;
  bool operator==(const Entry&) const = default;
};
using History = std::vector<Entry>;
// Entity ("job 3", "node us-central1-a-…-0002", "resource pr0", "operation 42", "call 17 …") →
// its history.
using Histories = std::map<std::string, History>;
// One read of every entity.
using Snapshot = std::map<std::string, Point>;

void Record(Histories& histories, const Snapshot& snapshot, int step, int phase,
            int64_t at_micros) {
  for (const auto& [key, point] : snapshot) {
    History& history = histories[key];
    if (!history.empty() && history.back().point == point) continue;
    history.push_back(Entry{step, phase, at_micros, point});
  }
}

struct Divergence {
  std::string key;
  size_t index = 0;  // the first entry of the key's histories that differs
  int step = 0;
  int phase = 0;
};

// The entity whose histories part first (by the step and pass of the first differing entry),
// or nullopt when every history is the same in both.
std::optional<Divergence> FirstDivergence(const Histories& a, const Histories& b) {
  std::set<std::string> keys;
  for (const auto& [key, h] : a) keys.insert(key);
  for (const auto& [key, h] : b) keys.insert(key);
  static const History kNone;
  std::optional<Divergence> first;
  for (const std::string& key : keys) {
    auto ia = a.find(key);
    auto ib = b.find(key);
    const History& x = ia == a.end() ? kNone : ia->second;
    const History& y = ib == b.end() ? kNone : ib->second;
    size_t i = 0;
    while (i < x.size() && i < y.size() && x[i] == y[i]) ++i;
    if (i == x.size() && i == y.size()) continue;
    std::pair<int, int> when{INT_MAX, INT_MAX};
    if (i < x.size()) when = std::min(when, std::make_pair(x[i].step, x[i].phase));
    if (i < y.size()) when = std::min(when, std::make_pair(y[i].step, y[i].phase));
    if (!first || when < std::make_pair(first->step, first->phase)) {
      first = Divergence{key, i, when.first, when.second};
    }
  }
  return first;
}

std::string Micros(std::optional<Timestamp> t) {
  return t ? std::to_string(ToUnixMicros(*t) - kStartMicros) : std::string("-");
}

// Each entry's fields, the first in full and then those that changed; at `mark` the fields that
// differ from `other` are flagged.
void PrintHistory(std::ostream& out, const char* store, const History& history, size_t mark,
                  const Entry* other) {
  out << "  " << store << " (" << history.size() << " entries):\n";
  const Point* last = nullptr;
  for (size_t i = 0; i < history.size() && i <= mark + 2; ++i) {
    const Entry& e = history[i];
    out << (i == mark ? "  >>" : "    ") << " step " << e.step << " " << PhaseName(e.phase)
        << " t=+" << (e.at_micros - kStartMicros) / 1'000'000 << "s:";
    for (size_t f = 0; f < e.point.fields.size(); ++f) {
      const auto& [name, value] = e.point.fields[f];
      bool differs =
          i == mark && other != nullptr &&
          (f >= other->point.fields.size() || other->point.fields[f] != e.point.fields[f]);
      bool changed =
          last == nullptr || f >= last->fields.size() || last->fields[f] != e.point.fields[f];
      if (!changed && !differs) continue;
      out << (differs ? " **" : " ") << name << "=" << value;
    }
    out << "\n";
    last = &e.point;
  }
  if (history.size() > mark + 3) out << "     … " << history.size() - mark - 3 << " more\n";
}

// The point `history` showed at the read of `step` and `phase` (nullptr: none yet).
const Point* PointAt(const History& history, int step, int phase) {
  const Point* last = nullptr;
  for (const Entry& e : history) {
    if (std::make_pair(e.step, e.phase) > std::make_pair(step, phase)) break;
    last = &e.point;
  }
  return last;
}

std::string DescribeDivergence(const Divergence& d, const Histories& pg, const Histories& mem) {
  static const History kNone;
  auto ip = pg.find(d.key);
  auto im = mem.find(d.key);
  const History& x = ip == pg.end() ? kNone : ip->second;
  const History& y = im == mem.end() ? kNone : im->second;
  std::ostringstream out;
  out << "first divergence: " << d.key << " at step " << d.step << " (" << PhaseName(d.phase)
      << "), entry " << d.index << "; fields marked ** differ\n";
  PrintHistory(out, "PostgreSQL", x, d.index, d.index < y.size() ? &y[d.index] : nullptr);
  PrintHistory(out, "memory", y, d.index, d.index < x.size() ? &x[d.index] : nullptr);
  // What else parted at the same read, each with the fields that differ there.
  for (const auto& [key, history] : pg) {
    if (key == d.key) continue;
    auto other = mem.find(key);
    if (other == mem.end()) continue;
    const Point* a = PointAt(history, d.step, d.phase);
    const Point* b = PointAt(other->second, d.step, d.phase);
    if (a == nullptr || b == nullptr || *a == *b) continue;
    out << "  also differs then: " << key << ":";
    for (size_t f = 0; f < a->fields.size() && f < b->fields.size(); ++f) {
      if (a->fields[f] == b->fields[f]) continue;
      out << " " << a->fields[f].first << " " << a->fields[f].second.substr(0, 160) << " | "
          << b->fields[f].second.substr(0, 160);
    }
    out << "\n";
  }
  return out.str();
}

// ---------------------------------------------------------------------------------------------
// The workload: a random fleet and a program of client operations and clock steps.

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  int64_t Int(int64_t lo, int64_t hi) {  // [lo, hi]
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  double Real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  template <typename T>
  const T& Pick(const std::vector<T>& from) {
    return from[static_cast<size_t>(Int(0, static_cast<int64_t>(from.size()) - 1))];
  }
  std::string Seconds(int64_t lo, int64_t hi) { return std::to_string(Int(lo, hi)) + "s"; }

 private:
  std::mt19937_64 rng_;
};

struct Op {
  enum class Kind {
    kCreateJob,
    kCancelJob,
    kDeleteJob,
    kInjectFailure,
    kInjectSpot,
    kCreateResource,
    kResizeResource,
    kRebootResource,
    kDeleteResource,
    kStep,
  };
  Kind kind = Kind::kStep;
  std::string project;
  CustomJob job;        // kCreateJob
  std::string summary;  // kCreateJob: the job in a few words
  size_t target = 0;    // kCancelJob, kDeleteJob: which created job (modulo how many there are)
  std::string node;     // kInjectFailure, kInjectSpot: a node by name, or
  std::string pool;     // kInjectSpot: a pool, with
  std::optional<int64_t> count;
  std::string resource;  // the k…Resource kinds
  int64_t replicas = 0;
  std::optional<ResourceAutoscaling> autoscaling;
  Duration advance{};  // kStep: how far the clock moves after the step's passes
};

std::string Describe(const Op& op) {
  switch (op.kind) {
    case Op::Kind::kCreateJob:
      return "create job in " + op.project + ": " + op.summary;
    case Op::Kind::kCancelJob:
      return "cancel created job #" + std::to_string(op.target);
    case Op::Kind::kDeleteJob:
      return "delete created job #" + std::to_string(op.target);
    case Op::Kind::kInjectFailure:
      return "inject NODE_FAILURE of " + op.node;
    case Op::Kind::kInjectSpot:
      return "inject SPOT_PREEMPTION of " + (op.node.empty() ? op.pool : op.node) +
             (op.count ? " count " + std::to_string(*op.count) : "");
    case Op::Kind::kCreateResource:
      return "create resource " + op.resource + " with " + std::to_string(op.replicas) +
             " replicas" +
             (op.autoscaling ? " autoscaling " + std::to_string(op.autoscaling->min_replica_count) +
                                   ".." + std::to_string(op.autoscaling->max_replica_count)
                             : "");
    case Op::Kind::kResizeResource:
      return "resize resource " + op.resource + " to " + std::to_string(op.replicas);
    case Op::Kind::kRebootResource:
      return "reboot resource " + op.resource;
    case Op::Kind::kDeleteResource:
      return "delete resource " + op.resource;
    case Op::Kind::kStep:
      return "step, then advance " +
             std::to_string(std::chrono::duration_cast<std::chrono::seconds>(op.advance).count()) +
             "s";
  }
  return "?";
}

struct Workload {
  std::string fleet_json;
  std::vector<Op> program;
};

// Pools the workload refers to by role.
struct FleetShape {
  std::string mega_spot_pool;
  std::string tpu_topology;
  std::vector<std::string> spot_pools;
  std::vector<std::string> nodes;  // every node of every pool, by name
  bool flex = false;
  bool calendar = false;
};

json Pool(const std::string& machine, const std::string& model, int nodes) {
  return json{{"machineType", machine}, {"model", model}, {"nodes", nodes}};
}

json GenerateFleet(Gen& g, FleetShape& shape) {
  json zone_a = json::array();
  json reservation = Pool("a3-megagpu-8g", "RESERVATION", static_cast<int>(g.Int(1, 4)));
  reservation["reservation"] = "r1";
  reservation["term"] = "1y";
  reservation["projects"] = {"demo"};
  reservation["pricePerNodeHour"] = 36;
  if (g.Chance(0.5)) reservation["failuresPerNodeHour"] = g.Real(0.05, 0.4);
  if (g.Chance(0.25)) reservation["keepBooted"] = true;
  zone_a.push_back(reservation);

  json on_demand = Pool("a3-megagpu-8g", "ON_DEMAND", static_cast<int>(g.Int(1, 4)));
  on_demand["pricePerNodeHour"] = 90;
  if (g.Chance(0.3)) on_demand["blockSize"] = 2;
  if (g.Chance(0.3)) {
    on_demand["availability"] = {{"meanAvailable", g.Seconds(1800, 7200)},
                                 {"meanConstrained", g.Seconds(600, 3600)},
                                 {"minShareLeft", 0.25},
                                 {"maxShareLeft", 0.75}};
  }
  if (g.Chance(0.3)) on_demand["failuresPerNodeHour"] = g.Real(0.05, 0.3);
  zone_a.push_back(on_demand);

  json spot = Pool("a3-megagpu-8g", "SPOT", static_cast<int>(g.Int(2, 6)));
  spot["pricePerNodeHour"] = 18;
  spot["preemptionsPerNodeHour"] = g.Real(0, 1.2);
  if (g.Chance(0.4)) {
    spot["availability"] = {{"meanAvailable", g.Seconds(1800, 7200)},
                            {"meanConstrained", g.Seconds(600, 3600)},
                            {"minShareLeft", 0},
                            {"maxShareLeft", 0.5}};
  }
  zone_a.push_back(spot);
  shape.mega_spot_pool = "us-central1-a/a3-megagpu-8g/SPOT";
  shape.spot_pools.push_back(shape.mega_spot_pool);

  if (g.Chance(0.5)) {
    json flex = Pool("a3-megagpu-8g", "FLEX_START", 4);
    // The DWS queue: grants drawn per request, counting the requests ahead of each.
    flex["queue"] = {{"baseWait", g.Seconds(0, 1800)},
                     {"waitPerNode", g.Seconds(0, 900)},
                     {"p95Ratio", g.Real(1, 3)},
                     {"outsideNodesAhead", g.Real(0, 8)}};
    zone_a.push_back(flex);
    shape.flex = true;
  }
  // Where persistent resources and the jobs on them go.
  json high = Pool("a3-highgpu-8g", "ON_DEMAND", static_cast<int>(g.Int(3, 8)));
  high["pricePerNodeHour"] = 88;
  if (g.Chance(0.5)) high["failuresPerNodeHour"] = g.Real(0.05, 0.3);
  zone_a.push_back(high);

  shape.tpu_topology = g.Chance(0.5) ? "4x4" : "2x2";
  json tpu = {{"machineType", "ct5lp-hightpu-4t"},
              {"model", "ON_DEMAND"},
              {"tpuTopology", shape.tpu_topology},
              {"slices", g.Int(1, 2)}};
  json tpu_spot = {{"machineType", "ct5lp-hightpu-4t"},
                   {"model", "SPOT"},
                   {"tpuTopology", shape.tpu_topology},
                   {"slices", g.Int(1, 3)},
                   {"preemptionsPerNodeHour", g.Real(0, 0.8)}};
  json zone_b = json::array({tpu, tpu_spot});
  shape.spot_pools.push_back("us-central1-b/ct5lp-hightpu-4t/SPOT");
  if (g.Chance(0.5)) {
    json high_reserved = Pool("a3-highgpu-8g", "RESERVATION", static_cast<int>(g.Int(1, 3)));
    high_reserved["reservation"] = "r-high";
    high_reserved["term"] = "3y";
    high_reserved["keepBooted"] = true;
    zone_b.push_back(high_reserved);
  }
  if (g.Chance(0.4)) {
    json calendar = Pool("a3-megagpu-8g", "RESERVATION", 2);
    calendar["reservation"] = "cal-b";
    calendar["term"] = "calendar";
    calendar["projects"] = {"demo", "other"};
    calendar["window"] = {{"after", g.Seconds(600, 5400)}, {"length", "86400s"}};
    zone_b.push_back(calendar);
    shape.calendar = true;
  }
  zone_b.push_back(Pool("a3-megagpu-8g", "ON_DEMAND", static_cast<int>(g.Int(0, 2))));
  if (zone_b.back()["nodes"] == 0) zone_b.erase(zone_b.size() - 1);

  json fleet = {
      {"seed", g.Int(1, 1'000'000)},
      {"bootTime", {{"default", g.Seconds(60, 360)}}},
      {"imagePullGbps", 10},
      {"imageSizeGb", {{"default", g.Int(5, 30)}}},
      {"repairTime", g.Seconds(300, 900)},
      // Fixed, so the generator's sequence (and every seed's workload) stays as it was.
      {"programStartup", {{"base", "45s"}, {"perDoubling", "10s"}}},
      {"terminationGracePeriod", g.Pick(std::vector<std::string>{"0s", "30s", "30s", "120s"})},
      {"neverFitsTimeout", g.Pick(std::vector<std::string>{"1800s", "3600s", "0s"})},
      {"resourceIdleTimeout", g.Seconds(300, 900)},
      {"quotas",
       {{"default",
         {{"NVIDIA_H100_MEGA_80GB", 512},
          {"PREEMPTIBLE_NVIDIA_H100_MEGA_80GB", 512},
          {"NVIDIA_H100_80GB", 512},
          {"PREEMPTIBLE_NVIDIA_H100_80GB", 512},
          {"TPU_V5E", 512},
          {"PREEMPTIBLE_TPU_V5E", 512}}},
        {"projects", {{"small", {{"NVIDIA_H100_MEGA_80GB", 16}}}}}}},
      {"zones", json::array({{{"zone", "us-central1-a"}, {"pools", zone_a}},
                             {{"zone", "us-central1-b"}, {"pools", zone_b}}})},
  };
  if (!on_demand.contains("availability") && !spot.contains("availability") && g.Chance(0.4)) {
    // Zone a's on-demand and spot share one capacity: on-demand admissions reclaim spot nodes.
    fleet["zones"][0]["capacity"] = json::array({{{"machineType", "a3-megagpu-8g"},
                                                  {"nodes", g.Int(2, 8)},
                                                  {"outsideOnDemand",
                                                   {{"meanAvailable", g.Seconds(1800, 7200)},
                                                    {"meanConstrained", g.Seconds(600, 3600)},
                                                    {"minShareLeft", 0.25},
                                                    {"maxShareLeft", 0.75}}}}});
    fleet["zoneCorrelation"] = g.Real(0, 1);
  }
  if (g.Chance(0.3)) {
    // demo and other share the spot pool: reclaim and fair-sharing preemption.
    fleet["cohorts"] = json::array(
        {{{"name", "research"},
          {"pools", {shape.mega_spot_pool}},
          {"members", json::array({{{"project", "demo"},
                                    {"weight", 1},
                                    {"nominal", {{"a3-megagpu-8g/SPOT", g.Int(1, 2)}}}},
                                   {{"project", "other"}, {"weight", g.Int(1, 3)}}})}}});
  }
  return fleet;
}

MachineSpec Mega() {
  MachineSpec m;
  m.machine_type = "a3-megagpu-8g";
  m.accelerator_type = AcceleratorType::kNvidiaH100Mega80gb;
  m.accelerator_count = 8;
  return m;
}

WorkerPoolSpec Replicas(const MachineSpec& machine, int64_t count, const std::string& run) {
  WorkerPoolSpec pool;
  pool.machine_spec = machine;
  pool.replica_count = count;
  pool.container_spec = ContainerSpec{};
  pool.container_spec->image_uri = "train:1";
  pool.container_spec->env.push_back({"TRAINYARD_SIM_DURATION", run});
  return pool;
}

Op GenerateJob(Gen& g, const FleetShape& shape, int resources_made) {
  Op op;
  op.kind = Op::Kind::kCreateJob;
  op.project = g.Pick(std::vector<std::string>{"demo", "demo", "demo", "other", "small"});
  const std::string run = g.Seconds(120, 5400);
  std::ostringstream summary;
  const int64_t kind = g.Int(0, 9);
  CustomJob& job = op.job;
  job.display_name = "property";
  if (kind <= 1 && resources_made > 0) {
    // On a persistent resource (it may not exist, or be going away: the call's answer is
    // compared too).
    op.project = "demo";
    const std::string resource = g.Chance(0.7) ? "pr0" : "pr1";
    const int64_t replicas = g.Int(1, 3);
    job = testing::H100Gang(resource, replicas, run);
    summary << replicas << "-node gang on " << resource;
  } else if (kind == 2) {
    MachineSpec tpu;
    tpu.machine_type = "ct5lp-hightpu-4t";
    tpu.tpu_topology = shape.tpu_topology;
    job.job_spec.worker_pool_specs.push_back(Replicas(tpu, 1, run));
    summary << "TPU v5e " << shape.tpu_topology << " slice";
  } else {
    const int64_t workers = g.Pick(std::vector<int64_t>{0, 0, 0, 1, 1, 2, 3});
    job.job_spec.worker_pool_specs.push_back(Replicas(Mega(), 1, run));
    if (workers > 0) job.job_spec.worker_pool_specs.push_back(Replicas(Mega(), workers, run));
    summary << (workers + 1) << "-node A3 Mega gang";
  }
  summary << ", run " << run;
  if (job.job_spec.persistent_resource_id.empty()) {
    Scheduling scheduling;
    const int64_t model = g.Int(0, 9);
    if (model <= 3) {
      scheduling.strategy = SchedulingStrategy::kStandard;
    } else if (model <= 6) {
      scheduling.strategy = SchedulingStrategy::kSpot;
    } else if (model == 7 && shape.flex) {
      scheduling.strategy = SchedulingStrategy::kFlexStart;
      scheduling.max_wait_duration = std::chrono::seconds(g.Int(600, 7200));
    } else if (model == 8) {
      scheduling.strategy = SchedulingStrategy::kLowCost;
    }
    summary << ", " << static_cast<int>(scheduling.strategy) << " strategy";
    if (g.Chance(0.15)) {
      scheduling.timeout = std::chrono::seconds(g.Int(600, 7200));
      summary << ", timeout";
    }
    if (g.Chance(0.1)) {
      scheduling.disable_retries = true;
      summary << ", no retries";
    }
    job.job_spec.scheduling = scheduling;
    // Reservation affinity on the primary pool (some name a reservation the fleet lacks).
    if (job.job_spec.worker_pool_specs[0].machine_spec->machine_type == "a3-megagpu-8g" &&
        g.Chance(0.3)) {
      ReservationAffinity affinity;
      const int64_t which = g.Int(0, 3);
      if (which == 0) {
        affinity.type = ReservationAffinityType::kNoReservation;
      } else if (which == 1) {
        affinity.type = ReservationAffinityType::kAnyReservation;
      } else {
        affinity.type = ReservationAffinityType::kSpecificReservation;
        affinity.key = "compute.googleapis.com/reservation-name";
        const std::string name =
            g.Chance(0.2) ? "r-missing" : (shape.calendar && g.Chance(0.5) ? "cal-b" : "r1");
        affinity.values.push_back("projects/" + op.project + "/zones/us-central1-a/reservations/" +
                                  name);
      }
      for (WorkerPoolSpec& pool : job.job_spec.worker_pool_specs) {
        pool.machine_spec->reservation_affinity = affinity;
      }
      summary << ", reservation affinity " << static_cast<int>(affinity.type);
    }
  }
  if (g.Chance(0.35)) {
    const std::string priority =
        g.Pick(std::vector<std::string>{"low", "high", "medium", "2000", "300", "1000"});
    job.labels["trainyard-priority"] = priority;
    summary << ", priority " << priority;
  }
  if (g.Chance(0.2)) {
    job.labels["trainyard-expected-runtime"] = run;
    summary << ", expected runtime";
  }
  std::vector<EnvVar>& env = job.job_spec.worker_pool_specs[0].container_spec->env;
  const int64_t checkpoints = g.Int(0, 3);
  if (checkpoints > 0) {
    const std::string interval = checkpoints == 1 ? "0s" : g.Seconds(300, 900);
    for (WorkerPoolSpec& pool : job.job_spec.worker_pool_specs) {
      pool.container_spec->env.push_back({"TRAINYARD_CHECKPOINT_INTERVAL", interval});
    }
    if (checkpoints == 3) {
      env.push_back({"TRAINYARD_CHECKPOINT_SAVE_TIME", g.Seconds(5, 60)});
      env.push_back({"TRAINYARD_CHECKPOINT_RESTORE_TIME", g.Seconds(5, 120)});
    }
    summary << ", checkpoints every " << interval;
  }
  if (g.Chance(0.15)) {
    env.push_back({"TRAINYARD_EMERGENCY_CHECKPOINT_TIME", g.Seconds(5, 40)});
    summary << ", emergency checkpoint";
  }
  if (g.Chance(0.1)) {
    env.push_back({"TRAINYARD_SIM_EXIT_CODE", "1"});
    summary << ", fails";
  }
  op.summary = summary.str();
  return op;
}

Workload Generate(uint64_t seed) {
  Gen g(seed);
  FleetShape shape;
  json fleet = GenerateFleet(g, shape);
  Workload w;
  w.fleet_json = fleet.dump();
  auto parsed = ParseFleet(w.fleet_json, "property");
  if (parsed.ok()) {
    for (const CapacityPool& pool : parsed->pools) {
      for (int i = 0; i < pool.nodes(); ++i) shape.nodes.push_back(NodeName(pool.id, i));
    }
  }

  const int64_t steps = g.Int(120, 220);
  const int64_t pr0_at = g.Chance(0.85) ? g.Int(0, 5) : -1;
  const int64_t pr1_at = g.Chance(0.6) ? g.Int(0, 30) : -1;
  int resources_made = 0;
  std::set<std::string> resources;
  size_t jobs = 0;
  for (int64_t step = 0; step < steps; ++step) {
    const bool early = step < steps * 2 / 3;
    const int creates = g.Chance(early ? 0.35 : 0.08) ? (g.Chance(0.2) ? 2 : 1) : 0;
    for (int i = 0; i < creates; ++i) {
      w.program.push_back(GenerateJob(g, shape, resources_made));
      ++jobs;
    }
    if (jobs > 0 && g.Chance(0.04)) {
      Op cancel;
      cancel.kind = Op::Kind::kCancelJob;
      cancel.target = static_cast<size_t>(g.Int(0, static_cast<int64_t>(jobs) - 1));
      w.program.push_back(cancel);
    }
    if (jobs > 0 && g.Chance(0.02)) {
      Op del;
      del.kind = Op::Kind::kDeleteJob;
      del.target = static_cast<size_t>(g.Int(0, static_cast<int64_t>(jobs) - 1));
      w.program.push_back(del);
    }
    if (!shape.nodes.empty() && g.Chance(0.03)) {
      Op fail;
      fail.kind = Op::Kind::kInjectFailure;
      fail.node = g.Pick(shape.nodes);
      w.program.push_back(fail);
    }
    if (g.Chance(0.025)) {
      Op spot;
      spot.kind = Op::Kind::kInjectSpot;
      if (g.Chance(0.3) && !shape.nodes.empty()) {
        spot.node = g.Pick(shape.nodes);  // not necessarily a spot node: then it is refused
      } else {
        spot.pool = g.Pick(shape.spot_pools);
        spot.count = g.Int(1, 2);
      }
      w.program.push_back(spot);
    }
    // Persistent resources: made early (pr0 in most workloads, pr1 in many), then resized,
    // rebooted, sometimes deleted and made again.
    for (const std::string id : {"pr0", "pr1"}) {
      const bool exists = resources.count(id) > 0;
      const int64_t made_at = id == std::string("pr0") ? pr0_at : pr1_at;
      Op r;
      r.resource = id;
      if (!exists && (step == made_at || g.Chance(0.003))) {
        r.kind = Op::Kind::kCreateResource;
        r.replicas = g.Int(1, 3);
        if (id == std::string("pr1") && g.Chance(0.6)) {
          r.autoscaling = ResourceAutoscaling{1, g.Int(2, 4)};
          r.replicas = 1;
        }
        resources.insert(id);
        ++resources_made;
      } else if (exists && g.Chance(0.02)) {
        r.kind = Op::Kind::kResizeResource;
        r.replicas = g.Int(1, 4);
      } else if (exists && g.Chance(0.01)) {
        r.kind = Op::Kind::kRebootResource;
      } else if (exists && g.Chance(step > steps / 2 ? 0.01 : 0.002)) {
        r.kind = Op::Kind::kDeleteResource;
        resources.erase(id);
      } else {
        continue;
      }
      w.program.push_back(r);
    }
    Op advance;
    advance.kind = Op::Kind::kStep;
    advance.advance =
        std::chrono::seconds(g.Pick(std::vector<int64_t>{30, 60, 60, 60, 60, 90, 120, 300, 600}));
    w.program.push_back(advance);
  }
  return w;
}

// ---------------------------------------------------------------------------------------------
// The two planes.

// Fault injections in memory, for the test only: `simulate` takes none (storage/memory keeps
// none), but the failure simulator's rules for them must be the same on both stores. Ids count
// from 1, as the table's sequence does, since which nodes an injection hits is drawn from its id.
class MemoryInjections final : public FaultInjectionRepository {
 public:
  StatusOr<FaultInjection> Insert(const FaultInjection& request) override {
    std::lock_guard lock(mu_);
    FaultInjection stored = request;
    stored.id = next_id_++;
    kept_[stored.id] = stored;
    return stored;
  }
  StatusOr<FaultInjection> Get(int64_t id) override {
    std::lock_guard lock(mu_);
    auto it = kept_.find(id);
    if (it == kept_.end()) return NotFound("fault injection " + std::to_string(id) + " not found");
    return it->second;
  }
  std::vector<FaultInjection> Pending(int limit) {
    std::lock_guard lock(mu_);
    std::vector<FaultInjection> out;
    for (const auto& [id, f] : kept_) {
      if (static_cast<int>(out.size()) >= limit) break;
      if (!f.apply_time) out.push_back(f);
    }
    return out;
  }
  void Finish(const InjectionDone& done, Timestamp at) {
    std::lock_guard lock(mu_);
    auto it = kept_.find(done.id);
    if (it == kept_.end() || it->second.apply_time) return;
    it->second.apply_time = at;
    it->second.outcome = done.outcome;
  }

 private:
  std::mutex mu_;
  std::map<int64_t, FaultInjection> kept_;
  int64_t next_id_ = 1;
};

// The memory failure store with the injections above: each is finished with the change it
// caused, as PgFailureStore finishes it in the same transaction.
class InjectingFailureStore final : public FailureStore {
 public:
  InjectingFailureStore(FailureStore& inner, MemoryInjections& injections)
      : inner_(inner), injections_(injections) {}
  StatusOr<std::vector<FaultInjection>> PendingInjections(int limit) override {
    return injections_.Pending(limit);
  }
  Status FinishInjection(const InjectionDone& done, Timestamp now) override {
    injections_.Finish(done, now);
    return Status::Ok();
  }
  StatusOr<std::vector<NodeStatus>> LiveNodes(const std::vector<std::string>& pool_ids) override {
    return inner_.LiveNodes(pool_ids);
  }
  StatusOr<NodeStatus> Node(const NodeRef& node) override { return inner_.Node(node); }
  StatusOr<std::vector<NodeStatus>> NoticesDue(Timestamp now) override {
    return inner_.NoticesDue(now);
  }
  StatusOr<std::vector<NodeStatus>> RepairsDue(Timestamp now) override {
    return inner_.RepairsDue(now);
  }
  StatusOr<std::map<int64_t, JobRecord>> Jobs(const std::vector<int64_t>& ids) override {
    return inner_.Jobs(ids);
  }
  StatusOr<std::optional<int64_t>> HazardTick() override { return inner_.HazardTick(); }
  Status GiveNotices(const std::vector<SpotNotice>& notices, Timestamp now,
                     std::optional<int64_t> hazard_tick,
                     const std::optional<InjectionDone>& injection) override {
    Status given = inner_.GiveNotices(notices, now, hazard_tick, injection);
    if (given.ok() && injection) injections_.Finish(*injection, now);
    return given;
  }
  StatusOr<bool> ReclaimNode(const Reclaim& reclaim) override {
    return inner_.ReclaimNode(reclaim);
  }
  StatusOr<bool> FailNode(const NodeFailure& failure) override {
    StatusOr<bool> failed = inner_.FailNode(failure);
    if (failed.ok() && *failed && failure.injection) {
      injections_.Finish(*failure.injection, failure.at);
    }
    return failed;
  }
  Status StartRepairs(Timestamp now) override { return inner_.StartRepairs(now); }
  StatusOr<bool> FinishRepair(const Repair& repair) override { return inner_.FinishRepair(repair); }
  Status GiveBackPreempted(Timestamp now) override { return inner_.GiveBackPreempted(now); }

 private:
  FailureStore& inner_;
  MemoryInjections& injections_;
};

// A planted divergence: the runtime's job writes pass through unchanged, except that after the
// first transition to `when` applies, `tamper` changes that job's row (or its nodes) behind the
// control plane's back, in one store only. The property must then fail.
struct Tamper {
  enum class Store { kPostgres, kMemory } store = Store::kMemory;
  JobState when = JobState::kSucceeded;
};

class TamperingJobs final : public JobRepository {
 public:
  TamperingJobs(JobRepository& inner, JobState when, std::function<void(int64_t)> tamper)
      : inner_(inner), when_(when), tamper_(std::move(tamper)) {}
  Status Insert(const JobRecord& record, const std::string& request_id) override {
    return inner_.Insert(record, request_id);
  }
  StatusOr<JobRecord> Get(int64_t project_number, const std::string& location,
                          int64_t id) override {
    return inner_.Get(project_number, location, id);
  }
  StatusOr<std::vector<JobRecord>> List(const ListJobsQuery& query) override {
    return inner_.List(query);
  }
  StatusOr<std::vector<JobVersion>> ListVersions(const ListJobsQuery& query) override {
    return inner_.ListVersions(query);
  }
  StatusOr<std::vector<JobRecord>> ByIds(const std::vector<int64_t>& ids) override {
    return inner_.ByIds(ids);
  }
  StatusOr<bool> ApplyTransition(const StateUpdate& update) override {
    StatusOr<bool> applied = inner_.ApplyTransition(update);
    if (applied.ok() && *applied) Applied(update);
    return applied;
  }
  StatusOr<std::vector<bool>> ApplyTransitions(const std::vector<StateUpdate>& updates) override {
    StatusOr<std::vector<bool>> applied = inner_.ApplyTransitions(updates);
    if (!applied.ok()) return applied;
    for (size_t i = 0; i < updates.size() && i < applied->size(); ++i) {
      if ((*applied)[i]) Applied(updates[i]);
    }
    return applied;
  }
  Status DeleteWithOperation(int64_t project_number, const std::string& location, int64_t id,
                             int64_t expected_version, const Operation& operation) override {
    return inner_.DeleteWithOperation(project_number, location, id, expected_version, operation);
  }
  bool tampered() const { return tampered_; }

 private:
  void Applied(const StateUpdate& update) {
    if (tampered_ || update.transition.to() != when_) return;
    tampered_ = true;
    tamper_(update.id);
  }
  JobRepository& inner_;
  JobState when_;
  std::function<void(int64_t)> tamper_;
  bool tampered_ = false;
};

struct CallResult {
  Point point;
  std::optional<int64_t> operation_id;
};

Point StatusPoint(const Status& status) {
  Point p;
  p.Add("result", std::string(CodeName(status.code())) + ": " + status.message());
  return p;
}

class Plane {
 public:
  virtual ~Plane() = default;
  app::ControlPlane& plane() { return *plane_; }
  const Fleet& fleet() const { return fleet_; }

  // Applies one client operation and says what the client got back.
  CallResult Call(const Op& op) {
    CallResult out;
    auto job_ref = [&](size_t target) -> std::optional<JobRef> {
      if (created_.empty()) return std::nullopt;
      const auto& [project, name] = created_[target % created_.size()];
      return JobRef{ParentRef{project, "us-central1"}, name.substr(name.rfind('/') + 1)};
    };
    auto operation = [&](const StatusOr<Operation>& op) {
      if (!op.ok()) return StatusPoint(op.status());
      out.operation_id = op->id;
      Point p;
      p.Add("result", "OK");
      p.Add("operation", EncodeOperation(*op).dump());
      return p;
    };
    switch (op.kind) {
      case Op::Kind::kCreateJob: {
        auto created = plane_->jobs().Create(ParentRef{op.project, "us-central1"}, op.job, "");
        if (!created.ok()) {
          out.point = StatusPoint(created.status());
          break;
        }
        created_.emplace_back(op.project, created->name);
        out.point.Add("result", "OK");
        out.point.Add("name", created->name);
        break;
      }
      case Op::Kind::kCancelJob: {
        auto ref = job_ref(op.target);
        out.point = ref ? StatusPoint(plane_->jobs().Cancel(*ref)) : Point{};
        break;
      }
      case Op::Kind::kDeleteJob: {
        auto ref = job_ref(op.target);
        if (ref) out.point = operation(plane_->jobs().Delete(*ref));
        break;
      }
      case Op::Kind::kInjectFailure:
      case Op::Kind::kInjectSpot: {
        FaultInjection request;
        request.kind = op.kind == Op::Kind::kInjectFailure ? FaultKind::kNodeFailure
                                                           : FaultKind::kSpotPreemption;
        request.node = op.node;
        request.pool_id = op.pool;
        request.count = op.count;
        auto injected = plane_->injector().Inject(request);
        if (!injected.ok()) {
          out.point = StatusPoint(injected.status());
          break;
        }
        out.point.Add("result", "OK");
        out.point.Add("id", std::to_string(injected->id));
        out.point.Add("requested", Micros(injected->request_time));
        injections_.push_back(injected->id);
        break;
      }
      case Op::Kind::kCreateResource: {
        PersistentResource r;
        ResourcePool pool;
        pool.machine_spec = testing::H100();
        pool.replica_count = op.replicas;
        pool.autoscaling_spec = op.autoscaling;
        r.resource_pools.push_back(pool);
        out.point = operation(plane_->resources().Create(kDemo, op.resource, r));
        break;
      }
      case Op::Kind::kResizeResource: {
        PersistentResource update;
        update.resource_pools.push_back(ResourcePool{"", testing::H100(), op.replicas, {}, {}, 0});
        out.point = operation(plane_->resources().Patch(ResourceRef{kDemo, op.resource}, update,
                                                        {"resourcePools.replicaCount"}));
        break;
      }
      case Op::Kind::kRebootResource:
        out.point = operation(plane_->resources().Reboot(ResourceRef{kDemo, op.resource}));
        break;
      case Op::Kind::kDeleteResource:
        out.point = operation(plane_->resources().Delete(ResourceRef{kDemo, op.resource}));
        break;
      case Op::Kind::kStep:
        break;
    }
    if (out.operation_id) operations_.push_back(*out.operation_id);
    if (!op.resource.empty()) resources_.insert(op.resource);
    return out;
  }

  // One scheduler pass (with the fleet's failures and the resources' reconciler) or one runtime
  // pass; what it returned is a point too.
  Point Pass(int phase) {
    if (phase == kScheduler) {
      if (std::string lag = AwaitChangeFeed(); !lag.empty()) {
        Point p;
        p.Add("result", lag);
        return p;
      }
      auto pass = plane_->scheduler().RunOnce();
      if (!pass.ok()) return StatusPoint(pass.status());
      const CommitOutcome& c = pass->committed;
      Point p;
      p.Add("result", "OK");
      p.Add("committed", "admitted " + std::to_string(c.admitted) + " skipped " +
                             std::to_string(c.skipped) + " preempted " +
                             std::to_string(c.preempted) + " failed " + std::to_string(c.failed) +
                             " verdicts " + std::to_string(c.verdicts));
      p.Add("evaluations", std::to_string(pass->evaluations));
      return p;
    }
    auto pass = plane_->executor().RunOnce();
    if (!pass.ok()) return StatusPoint(pass.status());
    Point p;
    p.Add("result", "OK");
    p.Add("transitions", std::to_string(*pass));
    return p;
  }

  // Every job created, node, resource and operation, as this store holds it now.
  Snapshot Read() {
    Snapshot out;
    std::vector<int64_t> ids;
    for (const auto& [project, name] : created_) {
      ids.push_back(std::stoll(name.substr(name.rfind('/') + 1)));
    }
    std::map<int64_t, JobRecord> by_id;
    auto jobs = ReadJobs(ids);
    if (!jobs.ok()) {
      out["read jobs"] = StatusPoint(jobs.status());
    } else {
      for (JobRecord& r : *jobs) by_id[r.id] = std::move(r);
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      auto it = by_id.find(ids[i]);
      Point p;
      if (it == by_id.end()) {
        p.Add("state", "(gone)");
      } else {
        p = JobPoint(it->second);
      }
      out["job " + std::to_string(i) + " (" + std::to_string(ids[i]) + ")"] = std::move(p);
    }
    ReadNodes(out);
    for (const std::string& id : resources_) {
      auto r = plane_->resources().Get(ResourceRef{kDemo, id});
      Point p;
      if (r.ok()) {
        p.Add("state", EncodePersistentResource(*r).dump());
      } else {
        p = StatusPoint(r.status());
      }
      out["resource " + std::string(id)] = std::move(p);
    }
    // Operations and injections never change once done: those are read no more.
    for (int64_t id : operations_) {
      const std::string key = "operation " + std::to_string(id);
      if (auto done = finished_.find(key); done != finished_.end()) {
        out[key] = done->second;
        continue;
      }
      auto got = plane_->operations().Get(OperationRef{kDemo, "", "", std::to_string(id)});
      Point p;
      if (got.ok()) {
        p.Add("state", EncodeOperation(*got).dump());
        if (got->done) finished_[key] = p;
      } else {
        p = StatusPoint(got.status());
      }
      out[key] = std::move(p);
    }
    for (int64_t id : injections_) {
      const std::string key = "injection " + std::to_string(id);
      if (auto done = finished_.find(key); done != finished_.end()) {
        out[key] = done->second;
        continue;
      }
      auto got = plane_->injector().Get(id);
      Point p;
      if (got.ok()) {
        p.Add("applied", Micros(got->apply_time));
        p.Add("outcome", got->outcome);
        if (got->apply_time) finished_[key] = p;
      } else {
        p = StatusPoint(got.status());
      }
      out[key] = std::move(p);
    }
    return out;
  }

  static Point JobPoint(const JobRecord& r) {
    const CustomJob& j = r.job;
    const SchedulingStatus s = j.trainyard.value_or(SchedulingStatus{});
    Point p;
    p.Add("state", std::string(StateNameForMessage(j.state)));
    p.Add("since", Micros(r.state_since));
    p.Add("reason", s.reason_code);
    p.Add("message", s.reason_message);
    p.Add("position", s.queue_position ? std::to_string(*s.queue_position) : "-");
    p.Add("cost_micros", std::to_string(r.cost_micros));
    p.Add("hourly_micros", std::to_string(r.hourly_price_micros));
    p.Add("cost_usd", json(s.cost_usd).dump());
    const JobGoodput& g = s.goodput;
    std::ostringstream goodput;
    goodput << "waiting " << g.waiting.count() << " starting " << g.starting.count()
            << " restarting " << g.restarting.count() << " running " << g.running.count()
            << " redone " << g.redone.count() << " save " << g.checkpoint_save.count()
            << " restore " << g.checkpoint_restore.count() << " program "
            << g.program_startup.count();
    p.Add("goodput", goodput.str());
    p.Add("attempt", std::to_string(r.attempt));
    p.Add("spot_restarts", std::to_string(r.spot_restarts));
    p.Add("checkpointed", std::to_string(r.checkpointed.count()));
    p.Add("start", Micros(j.start_time));
    p.Add("end", Micros(j.end_time));
    p.Add("updated", Micros(j.update_time));
    p.Add("error", j.error ? std::to_string(j.error->code) + " " + j.error->message : "-");
    p.Add("next_action", Micros(r.next_action_at));
    p.Add("version", std::to_string(r.version));
    p.Add("run", r.run ? "launched" : "-");
    p.Add("status", EncodeSchedulingStatus(s).dump());
    return p;
  }

 protected:
  // Returns once every write committed so far is visible to the scheduler's change feed (empty),
  // or what kept it from being so.
  virtual std::string AwaitChangeFeed() { return {}; }
  virtual StatusOr<std::vector<JobRecord>> ReadJobs(const std::vector<int64_t>& ids) = 0;
  virtual void ReadNodes(Snapshot& out) = 0;

  static Point NodePoint(NodeState state, std::optional<int64_t> job, int64_t since,
                         std::optional<int64_t> preempt_at, std::optional<int64_t> ready_at,
                         std::optional<int64_t> resource, bool warm, const std::string& cache) {
    auto t = [](std::optional<int64_t> us) {
      return us ? std::to_string(*us - kStartMicros) : std::string("-");
    };
    Point p;
    p.Add("state", std::string(NodeStateName(state)));
    p.Add("job", job ? std::to_string(*job) : "-");
    p.Add("since", t(since));
    p.Add("preempt_at", t(preempt_at));
    p.Add("ready_at", t(ready_at));
    p.Add("resource", resource ? std::to_string(*resource) : "-");
    p.Add("keep_warm", warm ? "yes" : "no");
    p.Add("image_cache", cache);
    return p;
  }

  void Build(const std::string& fleet_json, const app::ControlPlanePorts& ports, ManualClock& clock,
             uint64_t id_seed) {
    auto fleet = ParseFleet(fleet_json, "property");
    if (!fleet.ok()) {
      error_ = "fleet: " + fleet.status().message();
      return;
    }
    fleet_ = std::move(fleet).value();
    ids_ = std::make_unique<SeededIds>(id_seed);
    app::ControlPlaneOptions options;
    options.operation_waiters = 8;
    options.executor.owner = "exec";
    // Runs shorter than ten minutes (of 2 to 90) succeed within the executor's tick, so their
    // starts wait for their ends (JobTransition::via) amid preemptions, failures and cancels.
    options.executor.idle_tick = std::chrono::minutes(10);
    options.ids = ids_.get();
    auto plane = app::ControlPlane::Build(ports, fleet_, clock, runtime_, options);
    if (!plane.ok()) {
      error_ = "control plane: " + plane.status().message();
      return;
    }
    plane_ = std::move(plane).value();
  }

 public:
  std::string error_;  // set when the plane could not be built

 protected:
  Fleet fleet_;
  std::unique_ptr<SeededIds> ids_;
  sim::SimRuntime runtime_;
  std::unique_ptr<app::ControlPlane> plane_;
  std::vector<std::pair<std::string, std::string>> created_;  // (project, name) in order
  std::vector<int64_t> operations_;
  std::vector<int64_t> injections_;
  std::map<std::string, Point> finished_;  // operations and injections that are done
  std::set<std::string> resources_;        // the resources a call named
};

class PgPlane final : public Plane {
 public:
  PgPlane(const std::string& fleet_json, ManualClock& clock, uint64_t id_seed,
          const std::optional<Tamper>& tamper) {
    conninfo_ = testing::FreshDatabase();
    auto pool = pg::Pool::Create(conninfo_, 4, std::chrono::milliseconds(2000));
    if (!pool.ok()) {
      error_ = "pool: " + pool.status().message();
      return;
    }
    pool_ = std::move(pool).value();
    adapters_ = std::make_unique<app::PgAdapters>(*pool_, conninfo_, JobLogRetention{});
    app::ControlPlanePorts ports = adapters_->ports();
    if (tamper && tamper->store == Tamper::Store::kPostgres) {
      // One node of the job comes back a second later than the store wrote it.
      tampering_ = std::make_unique<TamperingJobs>(
          ports.runtime_jobs ? *ports.runtime_jobs : *ports.jobs, tamper->when,
          [this](int64_t job) {
            auto conn = pool_->Acquire();
            if (!conn.ok()) return;
            (void)(*conn)->Exec(
                "UPDATE nodes SET state_since = state_since + interval '1 second' "
                "WHERE (pool_id, ordinal) = (SELECT pool_id, ordinal FROM nodes "
                "WHERE job_id = $1::bigint ORDER BY pool_id, ordinal LIMIT 1)",
                {std::to_string(job)});
          });
      ports.runtime_jobs = tampering_.get();
    }
    Build(fleet_json, ports, clock, id_seed);
  }
  ~PgPlane() override {
    plane_.reset();
    tampering_.reset();
    adapters_.reset();
    pool_.reset();
    // Each seed had a database of its own: drop it, or a long run fills the disk.
    const std::string marker = "dbname=";
    size_t at = conninfo_.find(marker);
    if (at == std::string::npos) return;
    std::string name = conninfo_.substr(at + marker.size());
    name = name.substr(0, name.find(' '));
    name.erase(std::remove(name.begin(), name.end(), '\''), name.end());
    auto admin = pg::Connection::Connect(testing::AdminConninfo());
    if (admin.ok()) {
      (void)(*admin)->ExecScript("DROP DATABASE IF EXISTS " + pg::QuoteIdentifier(name) +
                                 " WITH (FORCE)");
    }
  }

 protected:
  // The comparison is of the decisions both stores take on the same writes (AwaitChangeFeed).
  std::string AwaitChangeFeed() override { return testing::AwaitChangeFeed(conninfo_); }
  StatusOr<std::vector<JobRecord>> ReadJobs(const std::vector<int64_t>& ids) override {
    return adapters_->jobs().ByIds(ids);
  }
  void ReadNodes(Snapshot& out) override {
    auto conn = pool_->Acquire();
    if (!conn.ok()) {
      out["read nodes"] = StatusPoint(conn.status());
      return;
    }
    auto r = (*conn)->Exec(
        "SELECT pool_id, ordinal, state, job_id, "
        "(extract(epoch FROM state_since) * 1000000)::bigint, "
        "(extract(epoch FROM preempt_at) * 1000000)::bigint, "
        "(extract(epoch FROM ready_at) * 1000000)::bigint, resource_uid, keep_warm, "
        "array_to_string(image_cache, ',') FROM nodes ORDER BY pool_id, ordinal");
    if (!r.ok()) {
      out["read nodes"] = StatusPoint(r.status());
      return;
    }
    auto opt = [&](int row, int col) {
      return r->IsNull(row, col) ? std::nullopt : std::optional<int64_t>(r->GetInt64(row, col));
    };
    for (int i = 0; i < r->rows(); ++i) {
      out["node " + NodeName(std::string(r->Get(i, 0)), r->GetInt64(i, 1))] =
          NodePoint(static_cast<NodeState>(r->GetInt64(i, 2)), opt(i, 3), r->GetInt64(i, 4),
                    opt(i, 5), opt(i, 6), opt(i, 7), r->GetBool(i, 8), std::string(r->Get(i, 9)));
    }
  }

 private:
  std::string conninfo_;
  std::unique_ptr<pg::Pool> pool_;
  std::unique_ptr<app::PgAdapters> adapters_;
  std::unique_ptr<TamperingJobs> tampering_;
};

class MemoryPlane final : public Plane {
 public:
  MemoryPlane(const std::string& fleet_json, ManualClock& clock, uint64_t id_seed,
              const std::optional<Tamper>& tamper)
      : failures_(memory_failures_, injections_) {
    app::ControlPlanePorts ports = memory_.ports();
    ports.failures = &failures_;
    ports.injections = &injections_;
    if (tamper && tamper->store == Tamper::Store::kMemory) {
      // The job is billed a micro-dollar more than the store wrote.
      tampering_ =
          std::make_unique<TamperingJobs>(ports.runtime_jobs ? *ports.runtime_jobs : *ports.jobs,
                                          tamper->when, [this](int64_t job) {
                                            std::lock_guard lock(memory_.db().mu);
                                            if (auto* j = memory_.db().FindJobLocked(job))
                                              j->record.cost_micros += 1;
                                          });
      ports.runtime_jobs = tampering_.get();
    }
    Build(fleet_json, ports, clock, id_seed);
  }
  ~MemoryPlane() override {
    plane_.reset();
    tampering_.reset();
  }

 protected:
  StatusOr<std::vector<JobRecord>> ReadJobs(const std::vector<int64_t>& ids) override {
    return memory_.jobs().ByIds(ids);
  }
  void ReadNodes(Snapshot& out) override {
    storage::memory::MemoryDatabase& db = memory_.db();
    std::lock_guard lock(db.mu);
    auto us = [](std::optional<Timestamp> t) {
      return t ? std::optional<int64_t>(ToUnixMicros(*t)) : std::nullopt;
    };
    for (const auto& [pool_id, slots] : db.nodes) {
      for (size_t i = 0; i < slots.size(); ++i) {
        const storage::memory::MemoryNode& n = slots[i];
        std::string cache;
        for (const std::string& image : n.image_cache) cache += (cache.empty() ? "" : ",") + image;
        out["node " + NodeName(pool_id, static_cast<int64_t>(i))] =
            NodePoint(n.state, n.job_id, ToUnixMicros(n.since), us(n.preempt_at), us(n.ready_at),
                      n.resource_uid, n.keep_warm, cache);
      }
    }
  }

 private:
  app::MemoryAdapters memory_;
  MemoryInjections injections_;
  FailureStore& memory_failures_ = *memory_.ports().failures;
  InjectingFailureStore failures_;
  std::unique_ptr<TamperingJobs> tampering_;
};

// ---------------------------------------------------------------------------------------------
// Running a workload through both planes.

struct RunResult {
  Histories pg, mem;
  std::optional<Divergence> divergence;
  std::string setup_error;  // a plane did not come up: no comparison was made
  int steps = 0;
  int64_t jobs = 0, ended = 0, interrupted = 0, preempted = 0, node_failures = 0;
  int64_t through_start = 0;  // jobs seen PENDING, then SUCCEEDED
  // Where the time went: reading PostgreSQL, reading memory, PostgreSQL's passes, memory's.
  double seconds[4] = {0, 0, 0, 0};
};

RunResult RunBoth(uint64_t seed, const Workload& workload,
                  const std::optional<Tamper>& tamper = {}) {
  RunResult result;
  ManualClock clock(FromUnixMicros(kStartMicros));
  // Job and operation ids from the same seed on both planes, so both name everything alike.
  const uint64_t id_seed = seed * 7919 + 7;
  PgPlane pg(workload.fleet_json, clock, id_seed, tamper);
  MemoryPlane mem(workload.fleet_json, clock, id_seed, tamper);
  if (!pg.error_.empty() || !mem.error_.empty()) {
    result.setup_error = pg.error_.empty() ? "memory: " + mem.error_ : "PostgreSQL: " + pg.error_;
    return result;
  }
  int step = 0, call = 0, calls_in_step = 0;
  auto timed = [](double& total, auto&& f) {
    const auto start = std::chrono::steady_clock::now();
    auto out = f();
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  };
  auto record = [&](int phase) {
    Snapshot a = timed(result.seconds[0], [&] { return pg.Read(); });
    Snapshot b = timed(result.seconds[1], [&] { return mem.Read(); });
    const int64_t now = ToUnixMicros(clock.Now());
    Record(result.pg, a, step, phase, now);
    Record(result.mem, b, step, phase, now);
    return a == b;
  };
  for (size_t i = 0; i < workload.program.size(); ++i) {
    const Op& op = workload.program[i];
    if (op.kind != Op::Kind::kStep) {
      CallResult a = pg.Call(op);
      CallResult b = mem.Call(op);
      ++calls_in_step;
      const std::string key = "call " + std::to_string(call++) + ": " + Describe(op);
      const int64_t now = ToUnixMicros(clock.Now());
      Record(result.pg, {{key, a.point}}, step, kCalls, now);
      Record(result.mem, {{key, b.point}}, step, kCalls, now);
      continue;
    }
    // Nothing a store holds changes between a runtime pass and the next step's calls: the read
    // after the calls is made only when there were any.
    bool same = calls_in_step == 0 || record(kCalls);
    calls_in_step = 0;
    for (int phase : {kScheduler, kRuntime}) {
      if (!same) break;
      const std::string key = std::string(PhaseName(phase)) + " " + std::to_string(step);
      const int64_t now = ToUnixMicros(clock.Now());
      Point a = timed(result.seconds[2], [&] { return pg.Pass(phase); });
      Point b = timed(result.seconds[3], [&] { return mem.Pass(phase); });
      Record(result.pg, {{key, a}}, step, phase, now);
      Record(result.mem, {{key, b}}, step, phase, now);
      same = record(phase);
    }
    ++step;
    // Stop at the first difference: the histories up to it are what the report shows.
    if (!same) break;
    clock.Advance(std::chrono::duration_cast<std::chrono::microseconds>(op.advance));
  }
  result.steps = step;
  result.divergence = FirstDivergence(result.pg, result.mem);
  // What the workload exercised (on PostgreSQL's side), so a generator that stopped producing
  // interesting stories shows up.
  for (const auto& [key, history] : result.pg) {
    if (key.rfind("job ", 0) == 0) {
      ++result.jobs;
      bool ended = false, interrupted = false, preempted = false;
      std::string state;  // the entry before's
      for (const Entry& e : history) {
        for (const auto& [name, value] : e.point.fields) {
          if (name == "state" && value == "JOB_STATE_SUCCEEDED" && state == "JOB_STATE_PENDING") {
            ++result.through_start;  // its start and end in one write
          }
          if (name == "state") state = value;
          if (name == "state" && (value == "JOB_STATE_SUCCEEDED" || value == "JOB_STATE_FAILED" ||
                                  value == "JOB_STATE_CANCELLED" || value == "JOB_STATE_EXPIRED")) {
            ended = true;
          }
          if (name == "reason" && (value == "PREEMPTED" || value == "PREEMPTION_NOTICE")) {
            preempted = true;
          }
          if (name == "spot_restarts" && value != "0") interrupted = true;
          if (name == "reason" && value == "NODE_REPAIR") interrupted = true;
        }
      }
      result.ended += ended;
      result.interrupted += interrupted;
      result.preempted += preempted;
    }
    if (key.rfind("node ", 0) == 0) {
      for (const Entry& e : history) {
        if (e.point.fields[0].second == "FAILED") ++result.node_failures;
      }
    }
  }
  return result;
}

std::string ProgramText(const Workload& w) {
  std::ostringstream out;
  int step = 0;
  for (const Op& op : w.program) {
    if (op.kind == Op::Kind::kStep) {
      ++step;
      continue;
    }
    out << "    before step " << step << ": " << Describe(op) << "\n";
  }
  out << "    (" << step << " steps)\n";
  return out.str();
}

// The workload cut to fewer operations that still diverge: the steps after the divergence go,
// then chunks of client operations (halves, quarters, … single ones) while the divergence stays.
Workload Shrink(uint64_t seed, Workload w, const RunResult& failing, double budget_seconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(budget_seconds * 1000));
  auto diverges = [&](const Workload& candidate) {
    RunResult r = RunBoth(seed, candidate);
    return r.setup_error.empty() && r.divergence.has_value();
  };
  // Only the steps up to the divergence.
  int steps = 0;
  for (size_t i = 0; i < w.program.size(); ++i) {
    if (w.program[i].kind != Op::Kind::kStep) continue;
    if (steps++ == failing.divergence->step) {
      w.program.resize(i + 1);
      break;
    }
  }
  for (size_t chunk = w.program.size() / 2; chunk >= 1; chunk /= 2) {
    for (size_t start = 0; start < w.program.size();) {
      if (std::chrono::steady_clock::now() > deadline) return w;
      Workload candidate = w;
      size_t removed = 0;
      std::vector<Op> kept;
      for (size_t i = 0; i < candidate.program.size(); ++i) {
        const bool in_chunk = i >= start && i < start + chunk;
        if (in_chunk && candidate.program[i].kind != Op::Kind::kStep) {
          ++removed;
          continue;
        }
        kept.push_back(candidate.program[i]);
      }
      if (removed == 0) {
        start += chunk;
        continue;
      }
      candidate.program = std::move(kept);
      if (diverges(candidate)) {
        w = std::move(candidate);
      } else {
        start += chunk;
      }
    }
    if (chunk == 1) break;
  }
  return w;
}

// Thousands of passes log their info lines; a run shows warnings and errors only.
class QuietLogs {
 public:
  QuietLogs() : level_(spdlog::get_level()) { spdlog::set_level(spdlog::level::warn); }
  ~QuietLogs() { spdlog::set_level(level_); }

 private:
  spdlog::level::level_enum level_;
};

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoll(v, nullptr, 10);
}

std::string Report(uint64_t seed, const Workload& w, const RunResult& r) {
  std::ostringstream out;
  out << "seed " << seed << " diverges (rerun alone: TRAINYARD_PROPERTY_SEED=" << seed
      << " integration_tests --gtest_filter='StorePropertyTest.*')\n"
      << DescribeDivergence(*r.divergence, r.pg, r.mem);
  const double budget = static_cast<double>(EnvInt("TRAINYARD_PROPERTY_SHRINK_SECONDS", 60));
  if (budget > 0) {
    Workload small = Shrink(seed, w, r, budget);
    RunResult again = RunBoth(seed, small);
    out << "shrunk workload (" << small.program.size() << " of " << w.program.size()
        << " operations and steps):\n"
        << ProgramText(small);
    if (again.divergence) out << DescribeDivergence(*again.divergence, again.pg, again.mem);
  }
  out << "fleet: " << w.fleet_json << "\n";
  return out.str();
}

// ---------------------------------------------------------------------------------------------

TEST(StorePropertyTest, EveryHistoryIsTheSameOnPostgresAndOnMemory) {
  QuietLogs quiet;
  std::vector<uint64_t> seeds;
  if (int64_t only = EnvInt("TRAINYARD_PROPERTY_SEED", 0); only > 0) {
    seeds.push_back(static_cast<uint64_t>(only));
  } else {
    const int64_t first = EnvInt("TRAINYARD_PROPERTY_FIRST_SEED", 1);
    const int64_t count = EnvInt("TRAINYARD_PROPERTY_SEEDS", kDefaultSeeds);
    for (int64_t s = first; s < first + count; ++s) seeds.push_back(static_cast<uint64_t>(s));
  }
  const bool keep_going = EnvInt("TRAINYARD_PROPERTY_KEEP_GOING", 0) != 0;
  int diverged = 0;
  const auto started = std::chrono::steady_clock::now();
  int64_t jobs = 0, ended = 0, interrupted = 0, preempted = 0, failures = 0, steps = 0, runs = 0;
  int64_t through_start = 0;
  double spent[4] = {0, 0, 0, 0};
  for (uint64_t seed : seeds) {
    Workload w = Generate(seed);
    RunResult r = RunBoth(seed, w);
    ASSERT_TRUE(r.setup_error.empty()) << "seed " << seed << ": " << r.setup_error << "\n"
                                       << w.fleet_json;
    if (r.divergence) {
      // The first in full; with TRAINYARD_PROPERTY_KEEP_GOING=1 (make soak) the rest run too,
      // each named in a line.
      if (diverged++ == 0) {
        ADD_FAILURE() << Report(seed, w, r);
      } else {
        ADD_FAILURE() << "seed " << seed << " diverges too: " << r.divergence->key << " at step "
                      << r.divergence->step << " (" << PhaseName(r.divergence->phase) << ")";
      }
      if (!keep_going) break;
      continue;
    }
    ++runs;
    jobs += r.jobs;
    ended += r.ended;
    interrupted += r.interrupted;
    preempted += r.preempted;
    failures += r.node_failures;
    through_start += r.through_start;
    steps += r.steps;
    for (int i = 0; i < 4; ++i) spent[i] += r.seconds[i];
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf(
      "[ property ] %lld seeds in %.1f s (reads %.1f + %.1f s, passes %.1f + %.1f s on "
      "PostgreSQL + memory): %lld steps, %lld jobs (%lld ended, %lld restarted after a reclaim or "
      "repair, %lld preempted, %lld started and ended in one write), %lld node failures\n",
      static_cast<long long>(runs), seconds, spent[0], spent[1], spent[2], spent[3],
      static_cast<long long>(steps), static_cast<long long>(jobs), static_cast<long long>(ended),
      static_cast<long long>(interrupted), static_cast<long long>(preempted),
      static_cast<long long>(through_start), static_cast<long long>(failures));
  // The workloads are worth comparing: most jobs end, and some are interrupted on the way.
  if (runs >= 10) {
    EXPECT_GE(ended * 2, jobs);
    EXPECT_GE(interrupted, runs);
    EXPECT_GE(preempted, 1);
    EXPECT_GE(failures, runs);
    EXPECT_GE(through_start, runs);
  }
}

// The comparison is not a no-op: a tampered copy of one field of one entry of a real run's
// histories is reported, at that entity and entry, for each kind of field the property is about.
TEST(StorePropertyTest, TheComparisonSeesEveryKindOfChange) {
  const uint64_t seed = 3;
  RunResult r = RunBoth(seed, Generate(seed));
  ASSERT_TRUE(r.setup_error.empty()) << r.setup_error;
  ASSERT_FALSE(r.divergence.has_value()) << DescribeDivergence(*r.divergence, r.pg, r.mem);
  EXPECT_FALSE(FirstDivergence(r.pg, r.mem).has_value());

  // Each (entity kind, field): tamper with the last entry of the first history that has one.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"job ", "state"},   {"job ", "since"},      {"job ", "reason"},  {"job ", "cost_micros"},
      {"job ", "goodput"}, {"job ", "status"},     {"node ", "state"},  {"node ", "since"},
      {"node ", "job"},    {"resource ", "state"}, {"call ", "result"},
  };
  for (const auto& [prefix, field] : cases) {
    Histories tampered = r.mem;
    std::string key;
    size_t index = 0;
    for (auto& [k, history] : tampered) {
      if (k.rfind(prefix, 0) != 0 || history.empty()) continue;
      index = history.size() - 1;
      for (auto& [name, value] : history[index].point.fields) {
        if (name == field) {
          value += "~";
          key = k;
        }
      }
      if (!key.empty()) break;
    }
    ASSERT_FALSE(key.empty()) << "no " << prefix << "history with a " << field << " to tamper with";
    auto d = FirstDivergence(r.pg, tampered);
    ASSERT_TRUE(d.has_value()) << prefix << field;
    EXPECT_EQ(d->key, key) << prefix << field;
    EXPECT_EQ(d->index, index) << prefix << field;
  }
  // An entry that came a pass later, and one that is missing, are divergences too.
  for (auto& [k, history] : r.mem) {
    if (k.rfind("job ", 0) != 0 || history.size() < 2) continue;
    Histories later = r.mem;
    later[k].back().phase += 1;
    EXPECT_TRUE(FirstDivergence(r.pg, later).has_value());
    Histories missing = r.mem;
    missing[k].pop_back();
    auto d = FirstDivergence(r.pg, missing);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->key, k);
    break;
  }
}

// A planted divergence in either store fails the property: one write of the runtime's, changed
// behind the control plane's back in one store only.
TEST(StorePropertyTest, APlantedDivergenceInMemoryIsFound) {
  const uint64_t seed = 3;
  RunResult r = RunBoth(seed, Generate(seed), Tamper{Tamper::Store::kMemory, JobState::kSucceeded});
  ASSERT_TRUE(r.setup_error.empty()) << r.setup_error;
  ASSERT_TRUE(r.divergence.has_value());
  EXPECT_EQ(r.divergence->key.rfind("job ", 0), 0u) << r.divergence->key;
  EXPECT_EQ(r.divergence->phase, kRuntime);
  std::string text = DescribeDivergence(*r.divergence, r.pg, r.mem);
  EXPECT_NE(text.find("**cost_micros="), std::string::npos) << text;
}

TEST(StorePropertyTest, APlantedDivergenceInPostgresIsFound) {
  const uint64_t seed = 3;
  RunResult r = RunBoth(seed, Generate(seed), Tamper{Tamper::Store::kPostgres, JobState::kRunning});
  ASSERT_TRUE(r.setup_error.empty()) << r.setup_error;
  ASSERT_TRUE(r.divergence.has_value());
  EXPECT_EQ(r.divergence->key.rfind("node ", 0), 0u) << r.divergence->key;
  std::string text = DescribeDivergence(*r.divergence, r.pg, r.mem);
  EXPECT_NE(text.find("**since="), std::string::npos) << text;
}

}  // namespace
}  // namespace trainyard
