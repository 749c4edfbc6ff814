#include "api/wire/admin_codec.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

CapacityPool Pool(const std::string& zone, const std::string& id, ConsumptionModel model) {
  CapacityPool p;
  p.id = id;
  p.region = "us-central1";
  p.zone = zone;
  p.machine_type = "a3-megagpu-8g";
  p.model = model;
  p.units = 2;
  p.price_per_node_hour = 36;
  return p;
}

TEST(AdminCodecTest, FleetGroupsPoolsByRegionAndZoneWithEveryNodeState) {
  std::vector<CapacityPool> pools = {
      Pool("us-central1-a", "a/res", ConsumptionModel::kReservation),
      Pool("us-central1-a", "a/spot", ConsumptionModel::kSpot),
      Pool("us-central1-b", "b/flex", ConsumptionModel::kFlexStart),
  };
  pools[0].reservation = "r1";
  pools[0].projects = {"demo"};
  pools[0].term = "calendar";
  pools[0].window_start = FromUnixMicros(0);
  pools[0].window_end = FromUnixMicros(86'400'000'000);
  pools[2].dws_queue.base_wait = std::chrono::seconds(600);
  FleetView view;
  view.name = "f";
  for (const CapacityPool& p : pools) view.pools.push_back(PoolView{&p, {}, 2});
  view.pools[0].nodes.by_state[NodeState::kBusy] = 1;
  view.pools[0].nodes.by_state[NodeState::kReady] = 1;
  view.pools[0].nodes.with_job = 1;

  nlohmann::json out = EncodeFleetView(view);
  ASSERT_EQ(out["regions"].size(), 1u);
  const auto& zones = out["regions"][0]["zones"];
  ASSERT_EQ(zones.size(), 2u);
  EXPECT_EQ(zones[0]["zone"], "us-central1-a");
  ASSERT_EQ(zones[0]["pools"].size(), 2u);
  EXPECT_EQ(zones[1]["pools"][0]["id"], "b/flex");
  const auto& res = zones[0]["pools"][0];
  EXPECT_EQ(res["nodesByState"].size(), 7u) << "every state, zeros included";
  EXPECT_EQ(res["nodesByState"]["BUSY"], 1);
  EXPECT_EQ(res["nodesByState"]["DELETED"], 0);
  EXPECT_EQ(res["nodesHeld"], 1);
  EXPECT_EQ(res["reservation"]["name"], "r1");
  EXPECT_EQ(res["reservation"]["projects"], nlohmann::json::array({"demo"}));
  EXPECT_EQ(res["reservation"]["windowEnd"], "1970-01-02T00:00:00Z");
  EXPECT_FALSE(zones[0]["pools"][1].contains("reservation"));
  EXPECT_TRUE(zones[0]["pools"][1].contains("preemptionsPerNodeHour"));
  EXPECT_EQ(zones[1]["pools"][0]["queue"]["baseWait"], "600s");
}

TEST(AdminCodecTest, CostsAreDollarsWithTotalsAndNamedModels) {
  ProjectCostView costs;
  costs.project = {100000000001, "demo"};
  costs.accrued_micros = 2'500'000;
  costs.running_micros = 500'000;
  // The spot jobs trained one productive accelerator-hour (3.6e9 accelerator-µs).
  costs.by_model = {{"", 1, 2'000'000, 0, 0}, {"SPOT", 1, 500'000, 500'000, 3'600'000'000}};
  costs.productive_accelerator_micros = 3'600'000'000;
  nlohmann::json out = EncodeProjectCosts(costs);
  EXPECT_EQ(out["projectNumber"], "100000000001");
  EXPECT_DOUBLE_EQ(out["totalUsd"].get<double>(), 3.0);
  EXPECT_EQ(out["byConsumptionModel"][0]["consumptionModel"], "NOT_PLACED");
  EXPECT_FALSE(out["byConsumptionModel"][0].contains("costPerProductiveAcceleratorHourUsd"));
  EXPECT_DOUBLE_EQ(out["byConsumptionModel"][1]["totalUsd"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(
      out["byConsumptionModel"][1]["costPerProductiveAcceleratorHourUsd"].get<double>(), 0.5)
      << "what ended: 0.50 $ over 1 accelerator-hour";
  EXPECT_DOUBLE_EQ(out["costPerProductiveAcceleratorHourUsd"].get<double>(), 2.5);
}

TEST(AdminCodecTest, NodesAndEventsUseWireNames) {
  NodeRecord node;
  node.pool_id = "us-central1-a/a3-megagpu-8g/SPOT";
  node.ordinal = 3;
  node.state = NodeState::kBusy;
  node.job_id = 1234567890123456789;
  nlohmann::json n = EncodeNodeRecord(node);
  EXPECT_EQ(n["name"], "us-central1-a-a3-megagpu-8g-SPOT-0003");
  EXPECT_EQ(n["state"], "BUSY");
  EXPECT_EQ(n["jobId"], "1234567890123456789") << "int64 as a string";

  nlohmann::json e =
      EncodeJobEvents({{FromUnixMicros(0), JobState::kQueued, JobState::kPending, "admitted"}});
  EXPECT_EQ(e["events"][0]["fromState"], "JOB_STATE_QUEUED");
  EXPECT_EQ(e["events"][0]["toState"], "JOB_STATE_PENDING");
  EXPECT_EQ(e["events"][0]["time"], "1970-01-01T00:00:00Z");
}

}  // namespace
}  // namespace trainyard
