// The control plane on memory (what `simulate` runs) against the same plane on PostgreSQL (what
// `serve` runs): one workload, one fleet with reservations, on-demand, spot that is reclaimed and
// nodes that fail, the same clock steps and the same job ids. Every job must end the same way:
// state, times, where it ran, what it cost, where its time went. A rule of a transition or a node
// move that one store applies and the other does not shows up here.
#include <gtest/gtest.h>

#include <set>

#include "api/wire/fleet_codec.h"
#include "api/wire/operation_codec.h"
#include "api/wire/persistent_resource_codec.h"
#include "cmd/app/memory_adapters.h"
#include "services/jobs/job_state_names.h"
#include "tests/integration/resource_jobs.h"
#include "tests/integration/sim_fixture.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;

constexpr const char* kFleet = R"({"seed": 11,
  "bootTime": {"default": "120s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "repairTime": "900s",
  "quotas": {"default": {"PREEMPTIBLE_NVIDIA_H100_MEGA_80GB": 64}},
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y",
     "projects": ["demo"], "nodes": 3, "pricePerNodeHour": 36, "failuresPerNodeHour": 0.2},
    {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2, "pricePerNodeHour": 90},
    {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 4, "pricePerNodeHour": 18,
     "preemptionsPerNodeHour": 0.8}]}]})";

// What a user can tell about a finished (or still waiting) job.
std::string Outcome(const CustomJob& job) {
  std::ostringstream out;
  auto micros = [](const std::optional<Timestamp>& t) {
    return t ? std::to_string(ToUnixMicros(*t)) : std::string("-");
  };
  const SchedulingStatus& s = *job.trainyard;
  out << job.display_name << " " << StateNameForMessage(job.state)
      << " start=" << micros(job.start_time) << " end=" << micros(job.end_time)
      << " zone=" << s.zone << " cost=" << s.cost_usd << " restarts=" << s.spot_restarts
      << " attempt=" << s.attempt << " waiting=" << s.goodput.waiting.count()
      << " starting=" << s.goodput.starting.count()
      << " restarting=" << s.goodput.restarting.count() << " running=" << s.goodput.running.count()
      << " redone=" << s.goodput.redone.count() << " save=" << s.goodput.checkpoint_save.count()
      << " restore=" << s.goodput.checkpoint_restore.count();
  for (const PlacedPoolStatus& p : s.pools) {
    out << " [" << p.consumption_model << " " << p.units;
    for (const std::string& n : p.nodes) out << " " << n;
    out << "]";
  }
  if (job.error) out << " error=" << job.error->code << ":" << job.error->message;
  return out.str();
}

// The control plane over memory, as `simulate` builds it: its own copy of the fleet, its own
// clock from `start`, and ids from the fixture's seed (7), so both planes name jobs alike.
struct MemoryPlane {
  MemoryPlane(const char* fleet_json, Timestamp start)
      : fleet(ParseFleet(fleet_json, "test").value()), clock(start) {
    app::ControlPlaneOptions options;
    options.executor.owner = "exec";
    options.ids = &ids;
    plane = app::ControlPlane::Build(memory.ports(), fleet, clock, runtime, options);
  }
  Fleet fleet;
  ManualClock clock;
  SeededIds ids{7};
  app::MemoryAdapters memory;
  sim::SimRuntime runtime;
  StatusOr<std::unique_ptr<app::ControlPlane>> plane = Internal("not built");
};

class MemoryParityTest : public testing::SimFixture {
 protected:
  void SetUp() override {
    checkpoint_interval_ = "600s";
    // Checkpoints that cost time: both stores split every run the same way.
    primary_env_ = {{"TRAINYARD_CHECKPOINT_SAVE_TIME", "45s"},
                    {"TRAINYARD_CHECKPOINT_RESTORE_TIME", "90s"}};
    ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet));
  }
};

TEST_F(MemoryParityTest, AWorkloadEndsTheSameOnMemoryAsOnPostgres) {
  // The same plane over memory, with its own fleet copy, clock and ids from the same seed.
  MemoryPlane memory(kFleet, clock_.Now());
  ASSERT_TRUE(memory.plane.ok()) << memory.plane.status().message();
  auto& plane = memory.plane;
  ManualClock& memory_clock = memory.clock;

  // Twelve jobs over two projects: 1- to 3-node gangs, spot and standard, some with priority.
  struct Submit {
    int workers;
    SchedulingStrategy strategy;
    std::string priority, run, project;
  };
  const std::vector<Submit> workload = {
      {0, SchedulingStrategy::kStandard, "", "1800s", "demo"},
      {1, SchedulingStrategy::kSpot, "", "3600s", "demo"},
      {2, SchedulingStrategy::kStandard, "", "2400s", "demo"},
      {0, SchedulingStrategy::kSpot, "", "5400s", "other"},
      {1, SchedulingStrategy::kStandard, "2000", "1200s", "demo"},
      {0, SchedulingStrategy::kStandard, "", "600s", "other"},
      {1, SchedulingStrategy::kSpot, "", "7200s", "other"},
      {0, SchedulingStrategy::kStandard, "", "3000s", "demo"},
      {2, SchedulingStrategy::kSpot, "", "1800s", "demo"},
      {0, SchedulingStrategy::kStandard, "1500", "900s", "other"},
      {1, SchedulingStrategy::kStandard, "", "4000s", "other"},
      {0, SchedulingStrategy::kSpot, "", "2500s", "demo"},
  };
  std::vector<CustomJob> on_pg, on_memory;
  for (size_t minute = 0; minute < 6 * 60; ++minute) {
    if (minute % 5 == 0 && minute / 5 < workload.size()) {
      const Submit& s = workload[minute / 5];
      on_pg.push_back(Create(s.workers, s.strategy, s.priority, s.run, s.project));
      // The same body through the memory plane's own job service.
      CustomJob body = on_pg.back();
      body.name.clear();
      body.trainyard.reset();
      auto created = (*plane)->jobs().Create(ParentRef{s.project, "us-central1"}, body, "");
      ASSERT_TRUE(created.ok()) << created.status().message();
      on_memory.push_back(*created);
    }
    ASSERT_NO_FATAL_FAILURE(Step());
    ASSERT_TRUE((*plane)->scheduler().RunOnce().ok());
    ASSERT_TRUE((*plane)->executor().RunOnce().ok());
    clock_.Advance(60s);
    memory_clock.Advance(60s);
  }
  int ended = 0, restarted = 0, restored = 0;
  for (size_t i = 0; i < on_pg.size(); ++i) {
    const std::string project = workload[i].project;
    CustomJob pg = Get(on_pg[i], project);
    const std::string id = on_memory[i].name.substr(on_memory[i].name.rfind('/') + 1);
    auto mem = (*plane)->jobs().Get(JobRef{ParentRef{project, "us-central1"}, id});
    ASSERT_TRUE(mem.ok()) << mem.status().message();
    EXPECT_EQ(on_pg[i].name, on_memory[i].name) << "the same ids from the same seed";
    EXPECT_EQ(Outcome(pg), Outcome(*mem)) << "job " << i;
    ended += IsTerminal(pg.state) ? 1 : 0;
    restarted += pg.trainyard->spot_restarts > 0 || pg.trainyard->goodput.restarting > 0s ? 1 : 0;
    restored += pg.trainyard->goodput.checkpoint_restore > 0s ? 1 : 0;
  }
  // The workload is worth comparing: most jobs ended, and some were interrupted on the way.
  EXPECT_GE(ended, 8);
  EXPECT_GE(restarted, 1);
  EXPECT_GE(restored, 1) << "a run resumed from a checkpoint and restored it";
}

// Persistent resources: a reservation kept booted and cold on-demand nodes that fail now and then.
constexpr const char* kResourceFleet = R"({"seed": 5,
  "bootTime": {"default": "120s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "repairTime": "600s", "resourceIdleTimeout": "600s",
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-highgpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y",
     "keepBooted": true, "projects": ["demo"], "nodes": 2, "pricePerNodeHour": 30},
    {"machineType": "a3-highgpu-8g", "model": "ON_DEMAND", "nodes": 6, "pricePerNodeHour": 88,
     "failuresPerNodeHour": 0.1}]}]})";

class ResourceParityTest : public testing::SimFixture {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartFleet(kResourceFleet)); }
};

PersistentResource OnePool(int64_t replicas, std::optional<ResourceAutoscaling> autoscaling) {
  PersistentResource r;
  ResourcePool pool;
  pool.machine_spec = testing::H100();
  pool.replica_count = replicas;
  pool.autoscaling_spec = autoscaling;
  r.resource_pools.push_back(pool);
  return r;
}

TEST_F(ResourceParityTest, PersistentResourcesEndTheSameOnMemoryAsOnPostgres) {
  MemoryPlane memory(kResourceFleet, clock_.Now());
  ASSERT_TRUE(memory.plane.ok()) << memory.plane.status().message();
  auto& plane = memory.plane;
  ManualClock& memory_clock = memory.clock;
  const ParentRef parent{"demo", "us-central1"};
  ResourceService& mem_resources = (*plane)->resources();

  // The same request to both planes; both answer alike (an operation, or the same error).
  std::vector<Operation> ops;
  auto both = [&](const std::function<StatusOr<Operation>(ResourceService&)>& call) {
    auto pg = call(*resource_service_);
    auto mem = call(mem_resources);
    ASSERT_EQ(pg.ok(), mem.ok()) << (pg.ok() ? mem.status().message() : pg.status().message());
    if (!pg.ok()) {
      EXPECT_EQ(pg.status().code(), mem.status().code());
      EXPECT_EQ(pg.status().message(), mem.status().message());
      return;
    }
    EXPECT_EQ(EncodeOperation(*pg).dump(), EncodeOperation(*mem).dump());
    ops.push_back(*pg);
  };
  // Each resource and operation as a client reads it, on both planes.
  int64_t auto_most = 0;
  std::set<ResourceState> fixed_states;
  auto compare = [&](const std::string& when) {
    for (const std::string id : {"fixed", "auto"}) {
      auto pg = resource_service_->Get(ResourceRef{parent, id});
      auto mem = mem_resources.Get(ResourceRef{parent, id});
      ASSERT_EQ(pg.ok(), mem.ok()) << when << " " << id;
      if (!pg.ok()) continue;
      if (id == "auto") auto_most = std::max(auto_most, pg->resource_pools[0].replica_count);
      if (id == "fixed") fixed_states.insert(pg->state);
      EXPECT_EQ(EncodePersistentResource(*pg).dump(), EncodePersistentResource(*mem).dump())
          << when << " " << id;
    }
    for (const Operation& op : ops) {
      const OperationRef ref{parent, "", "", std::to_string(op.id)};
      auto pg = operation_service_->Get(ref);
      auto mem = (*plane)->operations().Get(ref);
      ASSERT_TRUE(pg.ok() && mem.ok()) << when << " operation " << op.id;
      EXPECT_EQ(EncodeOperation(*pg).dump(), EncodeOperation(*mem).dump()) << when;
    }
  };

  both([&](ResourceService& s) { return s.Create(parent, "fixed", OnePool(2, std::nullopt)); });
  both([&](ResourceService& s) {
    return s.Create(parent, "auto", OnePool(1, ResourceAutoscaling{1, 3}));
  });
  both([&](ResourceService& s) { return s.Create(parent, "fixed", OnePool(1, std::nullopt)); });

  struct Submit {
    int minute;
    std::string resource;
    int64_t replicas;
    std::string run;
  };
  const std::vector<Submit> workload = {
      {1, "fixed", 2, "1200s"}, {2, "auto", 2, "900s"},  {3, "auto", 1, "600s"},
      {5, "fixed", 1, "600s"},  {6, "", 2, "1800s"},     {8, "auto", 3, "1200s"},
      {20, "fixed", 2, "900s"}, {45, "auto", 1, "300s"}, {70, "fixed", 1, "2400s"},
      {75, "auto", 2, "600s"},
  };
  std::vector<CustomJob> on_pg, on_memory;
  int ended = 0, restarted = 0;
  for (int minute = 0; minute < 4 * 60; ++minute) {
    for (const Submit& s : workload) {
      if (s.minute != minute) continue;
      auto pg = service_->Create(parent, testing::H100Gang(s.resource, s.replicas, s.run), "");
      auto mem =
          (*plane)->jobs().Create(parent, testing::H100Gang(s.resource, s.replicas, s.run), "");
      ASSERT_TRUE(pg.ok() && mem.ok()) << minute;
      on_pg.push_back(*pg);
      on_memory.push_back(*mem);
    }
    PersistentResource resize;
    resize.resource_pools.push_back(ResourcePool{"", testing::H100(), 0, {}, {}, 0});
    // Shrink while its jobs hold the nodes (it waits), grow, shrink when idle (the highest nodes
    // go).
    if (minute == 30 || minute == 50 || minute == 62) {
      resize.resource_pools[0].replica_count = minute == 50 ? 3 : 1;
      both([&](ResourceService& s) {
        return s.Patch(ResourceRef{parent, "fixed"}, resize, {"resourcePools.replicaCount"});
      });
    }
    if (minute == 80)
      both([&](ResourceService& s) { return s.Reboot(ResourceRef{parent, "fixed"}); });
    if (minute == 150)
      both([&](ResourceService& s) { return s.Delete(ResourceRef{parent, "auto"}); });
    ASSERT_NO_FATAL_FAILURE(Step());
    ASSERT_TRUE((*plane)->scheduler().RunOnce().ok());
    ASSERT_TRUE((*plane)->executor().RunOnce().ok());
    if (minute % 10 == 0 || minute % 10 == 1) {
      ASSERT_NO_FATAL_FAILURE(compare("minute " + std::to_string(minute)));
    }
    clock_.Advance(60s);
    memory_clock.Advance(60s);
  }
  ASSERT_NO_FATAL_FAILURE(compare("the end"));
  for (size_t i = 0; i < on_pg.size(); ++i) {
    CustomJob pg = Get(on_pg[i], "demo");
    const std::string id = on_memory[i].name.substr(on_memory[i].name.rfind('/') + 1);
    auto mem = (*plane)->jobs().Get(JobRef{parent, id});
    ASSERT_TRUE(mem.ok()) << mem.status().message();
    EXPECT_EQ(on_pg[i].name, on_memory[i].name) << "the same ids from the same seed";
    EXPECT_EQ(Outcome(pg), Outcome(*mem)) << "job " << i;
    ended += IsTerminal(pg.state) ? 1 : 0;
    restarted += pg.trainyard->goodput.restarting > 0s ? 1 : 0;
  }
  EXPECT_EQ(ended, static_cast<int>(workload.size()));
  EXPECT_GE(restarted, 1) << "the reboot stopped a job, which resumed on the rebooted nodes";
  EXPECT_EQ(auto_most, 3) << "autoscaling grew the pool to its maximum";
  EXPECT_TRUE(fixed_states.count(ResourceState::kUpdating) > 0 &&
              fixed_states.count(ResourceState::kRebooting) > 0);
  // The story is worth comparing: every operation finished, "auto" grew past its minimum and is
  // gone, and the reboot stopped and resumed a job.
  for (const Operation& op : ops) {
    auto read = operation_service_->Get(OperationRef{parent, "", "", std::to_string(op.id)});
    ASSERT_TRUE(read.ok());
    EXPECT_TRUE(read->done) << op.id << " " << op.metadata_type;
  }
  EXPECT_EQ(resource_service_->Get(ResourceRef{parent, "auto"}).status().code(), Code::kNotFound);
  EXPECT_EQ(resource_service_->Get(ResourceRef{parent, "fixed"})->resource_pools[0].replica_count,
            1);
}

}  // namespace
}  // namespace trainyard
