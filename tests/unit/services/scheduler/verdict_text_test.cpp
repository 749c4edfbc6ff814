#include "services/scheduler/verdict_text.h"

#include <gtest/gtest.h>

#include <ctime>
#include <random>
#include <string>
#include <vector>

namespace trainyard {
namespace {

std::string Strftime(int64_t secs, bool seconds) {
  const std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), seconds ? "%Y-%m-%d %H:%M:%S UTC" : "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

// ClockText writes dates by hand: every one as strftime writes it, leap days and centuries too.
TEST(VerdictTextTest, ClockTextIsStrftimes) {
  std::mt19937_64 rng(51);
  std::uniform_int_distribution<int64_t> any(0, 253402300799);  // to 9999-12-31 23:59:59
  std::vector<int64_t> times = {0,          59,           86399,       951782400,
                                951868800,  4107542399,   4107542400,  1767225600,
                                1709164800, 253402300799, 253402300800};
  for (int i = 0; i < 20000; ++i) times.push_back(any(rng));
  for (int64_t secs : times) {
    const Timestamp t = FromUnixMicros(secs * 1'000'000 + 999'999);
    EXPECT_EQ(ClockText(t), Strftime(secs, false)) << secs;
    EXPECT_EQ(ClockText(t, /*seconds=*/true), Strftime(secs, true)) << secs;
  }
}

// A verdict keeps the text last reported while its key is equal (Scheduler::SetVerdict): equal
// keys must mean equal texts, and every value a text shows must be in its key. Random reasons of
// one job (its worker pools, region and project fixed; everything else drawn from small ranges so
// that equal and unequal pairs both occur), with and without a hold of the job's own.
TEST(VerdictTextTest, EqualKeysMeanEqualTextsAndEveryShownValueIsInTheKey) {
  const std::vector<std::string> zones = {"us-central1-a", "us-central1-b", "us-central1-c"};
  const std::vector<GangText> pools = {
      {"a3-megagpu-8g", 0, 4, "us-central1", {}, 0},
      {"ct5p-hightpu-4t", 8, 2, "us-central1", {}, 1},
  };
  const std::vector<std::vector<ConsumptionModel>> flavors = {
      {ConsumptionModel::kOnDemand},
      {ConsumptionModel::kSpot, ConsumptionModel::kOnDemand},
      {ConsumptionModel::kReservation, ConsumptionModel::kOnDemand}};
  const Timestamp t0 = FromUnixMicros(int64_t{1'767'225'600} * 1'000'000);
  std::mt19937_64 rng(51);
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  struct Drawn {
    VerdictKey key;
    std::string text;
  };
  auto draw = [&]() {
    FitReason reason;
    if (pick(3) == 0) {
      reason = fit_reason::HeldForReservation{100 + pick(2), 1000 * pick(2),
                                              t0 + std::chrono::minutes(pick(3))};
    } else {
      fit_reason::NoCapacity r;
      r.gang = pools[static_cast<size_t>(pick(2))];
      r.gang.models = flavors[static_cast<size_t>(pick(3))];
      r.split_over_zones = pick(2) == 0;
      r.best_zone_index = pick(3);
      r.best_zone = zones[static_cast<size_t>(r.best_zone_index)];
      r.best_free = pick(3);
      reason = r;
    }
    Drawn d{WhyNotKey(reason), WhyNotText(reason)};
    if (pick(2) == 0) {
      const int zone = pick(3);
      const Timestamp start = t0 + std::chrono::minutes(pick(3));
      d.key = WithReserved(d.key, zone, start);
      d.text += ReservedSuffix(zones[static_cast<size_t>(zone)], start);
    }
    return d;
  };
  std::vector<Drawn> drawn;
  for (int i = 0; i < 400; ++i) drawn.push_back(draw());
  int equal_keys = 0;
  for (const Drawn& a : drawn) {
    ASSERT_NE(a.key.kind, VerdictKey::Kind::kNone) << a.text;
    for (const Drawn& b : drawn) {
      EXPECT_EQ(a.key == b.key, a.text == b.text) << a.text << "\n" << b.text;
      equal_keys += a.key == b.key ? 1 : 0;
    }
  }
  EXPECT_GT(equal_keys, static_cast<int>(drawn.size()) * 2);  // pairs beyond each with itself
}

// The texts a key does not cover are built every time: a stockout, a full cohort, another reason.
TEST(VerdictTextTest, ReasonsWithWordsOfTheirOwnHaveNoKey) {
  fit_reason::NoCapacity stockout;
  stockout.best_zone_index = 0;
  CapacityPool pool;
  stockout.short_now.push_back({&pool, 1});
  EXPECT_EQ(WhyNotKey(stockout).kind, VerdictKey::Kind::kNone);
  fit_reason::NoCapacity cohort;
  cohort.best_zone_index = 0;
  cohort.cohort_full.emplace();
  EXPECT_EQ(WhyNotKey(cohort).kind, VerdictKey::Kind::kNone);
  EXPECT_EQ(WhyNotKey(fit_reason::NoRegion{"us-east1"}).kind, VerdictKey::Kind::kNone);
  EXPECT_EQ(WithReserved(WhyNotKey(fit_reason::HeldForReservation{}), -1, Timestamp{}).kind,
            VerdictKey::Kind::kNone);
}

// The admission's words name what the job runs on: on a pool of many shapes (elastic CPU VMs, GPUs
// attached to any N1 shape) that is the job's machine type, not the pool's.
TEST(VerdictTextTest, AdmittedMessageNamesTheJobsMachineOnPoolsOfManyShapes) {
  Fleet fleet;
  CapacityPool reserved;
  reserved.machine_type = "a3-highgpu-8g";
  reserved.model = ConsumptionModel::kReservation;
  reserved.reservation = "r1";
  fleet.pools.push_back(reserved);
  CapacityPool elastic;
  elastic.model = ConsumptionModel::kOnDemand;
  elastic.elastic = true;
  fleet.pools.push_back(elastic);
  CapacityPool attached;
  attached.machine_type = AttachedPoolType("n1-standard-8", AcceleratorType::kNvidiaTeslaT4);
  attached.attached = AcceleratorType::kNvidiaTeslaT4;
  attached.model = ConsumptionModel::kSpot;
  fleet.pools.push_back(attached);
  Placement placement;
  placement.zone = "us-central1-a";
  placement.pools.push_back({0, 1, "a3-highgpu-8g", 0});
  placement.pools.push_back({1, 2, "n1-standard-4", 0});
  placement.pools.push_back({2, 1, "n1-standard-8", 2});
  EXPECT_EQ(AdmittedMessage(fleet, placement),
            "admitted to us-central1-a: 1 a3-highgpu-8g RESERVATION (r1), 2 n1-standard-4 "
            "ON_DEMAND, 1 n1-standard-8 with 2 NVIDIA_TESLA_T4 SPOT");
}

}  // namespace
}  // namespace trainyard
