#include "services/cost/price.h"

#include <gtest/gtest.h>

namespace trainyard::cost {
namespace {

using AT = AcceleratorType;
using CM = ConsumptionModel;

// An a3-megagpu-8g: 8 H100 Mega GPUs.
PricedNode A3Mega() {
  PricedNode node;
  node.gpu = AT::kNvidiaH100Mega80gb;
  node.gpus = 8;
  node.vcpus = 208;
  return node;
}

// A TPU v5p host: 4 chips.
PricedNode V5pHost() {
  PricedNode node;
  node.tpu = true;
  node.tpu_family = "v5p";
  node.tpu_chips = 4;
  return node;
}

PricedNode Vcpus(int n) {
  PricedNode node;
  node.vcpus = n;
  return node;
}

TEST(PriceTest, ANodeListsAtItsAcceleratorsOrItsVcpus) {
  EXPECT_DOUBLE_EQ(NodeHourPrice(A3Mega(), CM::kOnDemand, ""), 92.0) << "8 × $11.50";
  EXPECT_DOUBLE_EQ(NodeHourPrice(V5pHost(), CM::kOnDemand, ""), 16.8) << "4 chips × $4.20";
  EXPECT_DOUBLE_EQ(NodeHourPrice(Vcpus(4), CM::kOnDemand, ""), 0.19)
      << "no accelerators: 4 vCPUs × $0.0475";
  EXPECT_DOUBLE_EQ(GpuHourPrice(AT::kNvidiaTeslaT4), 0.35);
  EXPECT_DOUBLE_EQ(TpuChipHourPrice("7x"), 12.0) << "a planning value: no public list price";
}

TEST(PriceTest, SpotIsPricedAtTheSpotRate) {
  EXPECT_DOUBLE_EQ(NodeHourPrice(A3Mega(), CM::kSpot, ""), 92.0 * 0.4) << "60% off GPUs";
  EXPECT_DOUBLE_EQ(NodeHourPrice(V5pHost(), CM::kSpot, ""), 16.8 * 0.35) << "65% off TPUs";
}

TEST(PriceTest, ReservationsAndDwsAreDiscountedByTheirTerms) {
  EXPECT_DOUBLE_EQ(NodeHourPrice(A3Mega(), CM::kReservation, "1y"), 92.0 * 0.63);
  EXPECT_DOUBLE_EQ(NodeHourPrice(A3Mega(), CM::kReservation, "3y"), 92.0 * 0.45);
  EXPECT_DOUBLE_EQ(NodeHourPrice(A3Mega(), CM::kReservation, "calendar"), 92.0 * 0.5);
  EXPECT_DOUBLE_EQ(NodeHourPrice(A3Mega(), CM::kFlexStart, ""), 92.0 * 0.5);
  EXPECT_DOUBLE_EQ(NodeHourPrice(A3Mega(), CM::kOnDemand, "3y"), 92.0) << "term: reservations only";
}

TEST(PriceTest, AttachedGpusAddToTheirVmAndCloudTpuHostsArePricedByChip) {
  const PricedNode n1_standard_8 = Vcpus(8);
  EXPECT_DOUBLE_EQ(AttachedNodeHourPrice(n1_standard_8, AT::kNvidiaTeslaT4, 1, CM::kOnDemand),
                   8 * 0.0475 + 0.35);
  EXPECT_DOUBLE_EQ(AttachedNodeHourPrice(n1_standard_8, AT::kNvidiaTeslaT4, 2, CM::kSpot),
                   8 * 0.0475 * 0.4 + 2 * 0.35 * 0.4);
  EXPECT_DOUBLE_EQ(AttachedNodeHourPrice(std::nullopt, AT::kNvidiaTeslaT4, 1, CM::kOnDemand), 0.35)
      << "a VM shape the catalog lacks adds nothing";
  EXPECT_DOUBLE_EQ(AttachedNodeHourPrice(std::nullopt, AT::kTpuV3, 8, CM::kOnDemand), 8.0)
      << "a v3-8 host lists at $8.00";
  EXPECT_DOUBLE_EQ(AttachedNodeHourPrice(std::nullopt, AT::kTpuV2, 8, CM::kOnDemand), 4.5);
  EXPECT_DOUBLE_EQ(AttachedNodeHourPrice(std::nullopt, AT::kTpuV2, 8, CM::kSpot), 4.5 * 0.35);
}

TEST(PriceTest, APlacementsHourlyPriceCutsTheNodePriceToWholeMicroDollarsFirst) {
  EXPECT_EQ(NodesHourlyMicros(50, 2), 100'000'000);
  EXPECT_EQ(NodesHourlyMicros(0.1234567, 3), 3 * 123'456) << "not 370,370";
  EXPECT_EQ(NodesHourlyMicros(92.0 * 0.4, 2), 73'600'000);
  EXPECT_EQ(NodesHourlyMicros(92.0, 0), 0);
}

}  // namespace
}  // namespace trainyard::cost
