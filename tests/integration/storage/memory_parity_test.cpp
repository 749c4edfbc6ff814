// The control plane on memory (what `simulate` runs) against the same plane on PostgreSQL (what
// `serve` runs): one workload, one fleet with reservations, on-demand, spot that is reclaimed and
// nodes that fail, the same clock steps and the same job ids. Every job must end the same way:
// state, times, where it ran, what it cost, where its time went. A rule of a transition or a node
// move that one store applies and the other does not shows up here.
#include <gtest/gtest.h>

#include "api/wire/fleet_codec.h"
#include "cmd/app/memory_adapters.h"
#include "services/job_state_names.h"
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
  auto fleet = ParseFleet(kFleet, "test");
  ASSERT_TRUE(fleet.ok());
  Fleet memory_fleet = std::move(fleet).value();
  ManualClock memory_clock{clock_.Now()};
  SeededIds memory_ids{7};
  app::MemoryAdapters memory;
  sim::SimRuntime memory_runtime;
  app::ControlPlaneOptions options;
  options.executor.owner = "exec";
  options.ids = &memory_ids;
  auto plane =
      app::ControlPlane::Build(memory.ports(), memory_fleet, memory_clock, memory_runtime, options);
  ASSERT_TRUE(plane.ok()) << plane.status().message();

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

}  // namespace
}  // namespace trainyard
