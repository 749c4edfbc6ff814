// The simulated accelerator telemetry a dashboard reads: warm-up, training, checkpoint saves,
// memory from the model's size, gradient traffic between hosts, and a straggler its peers wait for.
#include "services/telemetry/accelerator_model.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

HostShape H100Host() {
  HostShape s;
  s.accelerator = "NVIDIA_H100_MEGA_80GB";
  s.chips = 8;
  s.chip_memory_bytes = 80 * kGib;
  s.nic_bytes_per_second = 1800e9 / 8;
  return s;
}

GangRun Gang(int hosts, Duration running_for) {
  GangRun run;
  run.hosts = hosts;
  run.total_chips = 8 * hosts;
  run.running_for = running_for;
  run.checkpoint_interval = minutes(10);
  run.seed = 42;
  return run;
}

const Timestamp kNow = Timestamp{} + std::chrono::hours(24 * 365 * 56);

TEST(AcceleratorModelTest, AWarmUpThenTrainingThenACheckpointSave) {
  const UtilizationKnobs knobs;
  HostSample warm = SimulateHost(H100Host(), knobs, Gang(1, seconds(30)), 0, kNow);
  EXPECT_LT(warm.duty_cycle, 0.3);
  HostSample training = SimulateHost(H100Host(), knobs, Gang(1, minutes(5)), 0, kNow);
  EXPECT_GT(training.duty_cycle, 0.95);
  EXPECT_NEAR(training.tensor_core_utilization, 0.46, 0.03) << "tracks MFU 0.4";
  HostSample saving = SimulateHost(H100Host(), knobs, Gang(1, minutes(20) + seconds(5)), 0, kNow);
  EXPECT_LT(saving.duty_cycle, 0.1);
  EXPECT_GT(saving.network_bytes_per_second, 10 * training.network_bytes_per_second);
  EXPECT_GT(warm.memory_used_bytes, 0);
  EXPECT_LT(warm.memory_used_bytes, training.memory_used_bytes) << "memory fills during warm-up";
}

TEST(AcceleratorModelTest, MemoryHoldsTheShardedOptimizerStateAndActivations) {
  UtilizationKnobs knobs;
  knobs.params = 70e9;  // 16 B a parameter over 64 chips: 17.5 GB a chip
  HostSample s = SimulateHost(H100Host(), knobs, Gang(8, minutes(5)), 0, kNow);
  EXPECT_DOUBLE_EQ(s.memory_total_bytes, 8 * 80 * kGib);
  EXPECT_NEAR(s.memory_used_bytes / s.memory_total_bytes, 17.5e9 / (80 * kGib) + 0.25, 0.011);
  knobs.params = 1e12;
  HostSample full = SimulateHost(H100Host(), knobs, Gang(8, minutes(5)), 0, kNow);
  EXPECT_LE(full.memory_used_bytes, 0.95 * full.memory_total_bytes) << "capped below the total";
}

TEST(AcceleratorModelTest, HostsExchangeGradientsEveryStep) {
  UtilizationKnobs knobs;
  knobs.params = 1e9;
  knobs.step_time = seconds(2);
  HostSample single = SimulateHost(H100Host(), knobs, Gang(1, minutes(5)), 0, kNow);
  HostSample multi = SimulateHost(H100Host(), knobs, Gang(4, minutes(5)), 0, kNow);
  // Ring all-reduce of 2 GB of bf16 gradients over 4 hosts: 2 × 2 × 2e9 × 3/4 bytes a step, on
  // top of the 200 MB/s of input every host reads.
  EXPECT_NEAR(single.network_bytes_per_second, 200e6, 0.031 * 200e6);
  EXPECT_NEAR(multi.network_bytes_per_second, 2 * 2 * 2e9 * 0.75 / 2 + 200e6, 0.031 * 3.2e9);
  EXPECT_LT(single.network_bytes_per_second, multi.network_bytes_per_second / 10);
}

TEST(AcceleratorModelTest, PeersWaitForTheStragglerSoItsDutyCycleStandsOut) {
  UtilizationKnobs knobs;
  knobs.slow_host = 3;
  knobs.slow_factor = 0.6;
  const GangRun run = Gang(8, minutes(5));
  for (int host = 0; host < 8; ++host) {
    HostSample s = SimulateHost(H100Host(), knobs, run, host, kNow);
    if (host == 3) {
      EXPECT_GT(s.duty_cycle, 0.97) << "the straggler never waits";
    } else {
      EXPECT_NEAR(s.duty_cycle, 0.97 * 0.6, 0.011) << "host " << host << " waits for it";
    }
    EXPECT_NEAR(s.tensor_core_utilization, 0.46 * 0.6, 0.021) << "everyone runs at its pace";
  }
}

TEST(AcceleratorModelTest, TheSameMinuteReadsTheSameAndHostsDifferALittle) {
  const UtilizationKnobs knobs;
  const GangRun run = Gang(2, minutes(5));
  HostSample a = SimulateHost(H100Host(), knobs, run, 0, kNow);
  HostSample again = SimulateHost(H100Host(), knobs, run, 0, kNow + seconds(1));
  HostSample b = SimulateHost(H100Host(), knobs, run, 1, kNow);
  EXPECT_EQ(a.duty_cycle, again.duty_cycle);
  EXPECT_NE(a.duty_cycle, b.duty_cycle);
  EXPECT_NEAR(a.duty_cycle, b.duty_cycle, 0.021);
}

TEST(AcceleratorModelTest, ACpuOnlyHostHasNoAcceleratorFigures) {
  HostShape cpu;
  cpu.nic_bytes_per_second = 32e9 / 8;
  HostSample s = SimulateHost(cpu, UtilizationKnobs{}, Gang(1, minutes(5)), 0, kNow);
  EXPECT_EQ(s.duty_cycle, 0);
  EXPECT_EQ(s.memory_total_bytes, 0);
  EXPECT_GT(s.host_cpu_utilization, 0);
}

}  // namespace
}  // namespace trainyard
