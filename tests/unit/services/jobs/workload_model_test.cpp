#include "services/jobs/workload_model.h"

#include <gtest/gtest.h>

#include "services/jobs/custom_job_validator.h"

namespace trainyard {
namespace {

using std::chrono::seconds;

double Secs(Duration d) { return std::chrono::duration<double>(d).count(); }

WorkerPoolSpec Pool(const std::string& machine, AcceleratorType type, int count, int64_t replicas,
                    std::vector<EnvVar> env = {}) {
  WorkerPoolSpec wp;
  wp.machine_spec = MachineSpec{};
  wp.machine_spec->machine_type = machine;
  wp.machine_spec->accelerator_type = type;
  wp.machine_spec->accelerator_count = count;
  wp.replica_count = replicas;
  wp.container_spec = ContainerSpec{};
  wp.container_spec->image_uri = "trainer:1";
  wp.container_spec->env = std::move(env);
  return wp;
}

// A NeMo-style gang: a chief plus `workers` more a3-megagpu-8g nodes (8 H100 each).
CustomJobSpec H100Gang(int64_t workers, std::vector<EnvVar> env) {
  CustomJobSpec spec;
  spec.worker_pool_specs.push_back(
      Pool("a3-megagpu-8g", AcceleratorType::kNvidiaH100Mega80gb, 8, 1, std::move(env)));
  if (workers > 0) {
    spec.worker_pool_specs.push_back(
        Pool("a3-megagpu-8g", AcceleratorType::kNvidiaH100Mega80gb, 8, workers));
  }
  return spec;
}

const std::vector<EnvVar> k7bOn1bTokens = {{"TRAINYARD_MODEL_PARAMS", "7e9"},
                                           {"TRAINYARD_TRAIN_TOKENS", "1e9"}};

WorkloadEstimate Estimate(const CustomJobSpec& spec) {
  auto e = EstimateWorkload(spec);
  EXPECT_TRUE(e.ok()) << e.status().message();
  EXPECT_TRUE(e.ok() && e->has_value()) << "the knobs determine a run time";
  return e.ok() && e->has_value() ? **e : WorkloadEstimate{};
}

std::string FieldOf(const Status& s) {
  return s.violations().empty() ? "" : s.violations().front().field;
}

TEST(WorkloadModelTest, NoKnobsLeavesTheDefaultToTheRuntime) {
  auto e = EstimateWorkload(H100Gang(1, {{"OTHER", "x"}, {"TRAINYARD_SIM_EXIT_CODE", "1"}}));
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->has_value());
}

TEST(WorkloadModelTest, SixNDOverChipsTimesPeakTimesMfu) {
  // 6 × 7e9 × 1e9 = 4.2e19 FLOPs on 8 H100 at 989 TFLOP/s × 0.4 = 3.1648e15 FLOP/s → 13,271 s.
  WorkloadEstimate e = Estimate(H100Gang(0, k7bOn1bTokens));
  EXPECT_EQ(e.basis, "model");
  EXPECT_DOUBLE_EQ(e.flops, 4.2e19);
  EXPECT_NEAR(Secs(e.run), 4.2e19 / (8 * 989e12 * 0.4), 1e-3);
}

// The fuzzer's find: 7e92 parameters made a run time of more nanoseconds than a Duration holds.
TEST(WorkloadModelTest, AnAbsurdModelRunsForTheLongestRunWeModelNotForAnOverflow) {
  WorkloadEstimate e = Estimate(
      H100Gang(0, {{"TRAINYARD_MODEL_PARAMS", "7e92"}, {"TRAINYARD_TRAIN_TOKENS", "1e300"}}));
  EXPECT_DOUBLE_EQ(Secs(e.run), 1e9);
  EXPECT_EQ(ModelTrainingTime(1, 1, 0), ModelTrainingTime(7e92, 1e300, 1));
  EXPECT_EQ(ModelTrainingTime(0, 0, 1), Duration{});
}

TEST(WorkloadModelTest, RunTimeScalesInverselyWithReplicas) {
  double one = Secs(Estimate(H100Gang(0, k7bOn1bTokens)).run);
  double four = Secs(Estimate(H100Gang(3, k7bOn1bTokens)).run);
  double eight = Secs(Estimate(H100Gang(7, k7bOn1bTokens)).run);
  EXPECT_NEAR(one / four, 4.0, 1e-6);
  EXPECT_NEAR(four / eight, 2.0, 1e-6);
}

TEST(WorkloadModelTest, Fp8RunsAboutTwiceAsFastAsBf16OnH100) {
  auto env = k7bOn1bTokens;
  double bf16 = Secs(Estimate(H100Gang(1, env)).run);
  env.push_back({"TRAINYARD_PRECISION", "fp8"});
  double fp8 = Secs(Estimate(H100Gang(1, env)).run);
  EXPECT_NEAR(bf16 / fp8, 1979.0 / 989.0, 1e-6);
}

TEST(WorkloadModelTest, MfuKnobAndTpuDefaults) {
  auto env = k7bOn1bTokens;
  env.push_back({"TRAINYARD_MFU", "0.8"});
  EXPECT_NEAR(Secs(Estimate(H100Gang(0, env)).run), 4.2e19 / (8 * 989e12 * 0.8), 1e-3);

  // A v5p 4x4x4 slice: 64 chips × 459 TFLOP/s × 0.5 (TPU default MFU).
  CustomJobSpec tpu;
  tpu.worker_pool_specs.push_back(
      Pool("ct5p-hightpu-4t", AcceleratorType::kUnspecified, 0, 1, k7bOn1bTokens));
  tpu.worker_pool_specs[0].machine_spec->tpu_topology = "4x4x4";
  EXPECT_NEAR(Secs(Estimate(tpu).run), 4.2e19 / (64 * 459e12 * 0.5), 1e-3);
}

TEST(WorkloadModelTest, TokensFromStepsBatchAndSequenceLengthWithAStepTime) {
  // 100 steps × 64 sequences × 2048 tokens = 13,107,200 tokens.
  WorkloadEstimate e = Estimate(H100Gang(0, {{"TRAINYARD_MODEL_PARAMS", "7e9"},
                                             {"TRAINYARD_SIM_STEPS", "100"},
                                             {"TRAINYARD_GLOBAL_BATCH_SIZE", "64"},
                                             {"TRAINYARD_SEQ_LEN", "2048"}}));
  double expected = 6 * 7e9 * 13'107'200.0 / (8 * 989e12 * 0.4);
  EXPECT_NEAR(Secs(e.run), expected, 1e-3);
  ASSERT_TRUE(e.step_time);
  EXPECT_NEAR(Secs(*e.step_time), expected / 100, 1e-3);
}

// Multislice: two v5e 4x4 slices compute twice as fast as one, and each step adds the gradients'
// exchange between the slices over DCN: half of the 14 GB of bf16 gradients of a 7B model each
// way, 2 (S-1)/S = 1 of them, over 16 chips × 50 Gb/s = 0.14 s.
TEST(WorkloadModelTest, MultisliceStepsPayTheGradientExchangeOverDcn) {
  const std::vector<EnvVar> env = {{"TRAINYARD_MODEL_PARAMS", "7e9"},
                                   {"TRAINYARD_SIM_STEPS", "100"},
                                   {"TRAINYARD_GLOBAL_BATCH_SIZE", "64"},
                                   {"TRAINYARD_SEQ_LEN", "2048"}};
  WorkerPoolSpec slice = Pool("ct5lp-hightpu-4t", AcceleratorType::kUnspecified, 0, 1, env);
  slice.machine_spec->tpu_topology = "4x4";
  CustomJobSpec one;
  one.worker_pool_specs = {slice};
  CustomJobSpec two = one;
  WorkerPoolSpec more = slice;
  more.container_spec->env.clear();
  two.worker_pool_specs.push_back(more);
  const WorkloadEstimate single = Estimate(one);
  const WorkloadEstimate multi = Estimate(two);
  const double dcn_per_step = 2 * 0.5 * 2 * 7e9 * 8 / (16 * 50e9);
  EXPECT_NEAR(Secs(multi.run), Secs(single.run) / 2 + 100 * dcn_per_step, 1e-3);
  EXPECT_NEAR(Secs(*multi.step_time), Secs(*single.step_time) / 2 + dcn_per_step, 1e-6);
}

TEST(WorkloadModelTest, AnEmergencyCheckpointTakesAPositiveDurationNamedAtItsEnvEntry) {
  auto none = EmergencyCheckpointTime(H100Gang(0, {}));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto save =
      EmergencyCheckpointTime(H100Gang(0, {{"TRAINYARD_EMERGENCY_CHECKPOINT_TIME", "20s"}}));
  ASSERT_TRUE(save.ok());
  EXPECT_EQ(**save, seconds(20));
  for (const char* bad : {"soon", "0s"}) {
    auto refused =
        EmergencyCheckpointTime(H100Gang(0, {{"TRAINYARD_EMERGENCY_CHECKPOINT_TIME", bad}}));
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(FieldOf(refused.status()), "jobSpec.workerPoolSpecs[0].containerSpec.env[0].value");
  }
}

TEST(WorkloadModelTest, ExplicitKnobsWinOverTheModel) {
  auto env = k7bOn1bTokens;
  env.push_back({"TRAINYARD_SIM_STEPS", "50"});
  env.push_back({"TRAINYARD_SIM_STEP_TIME", "2s"});
  WorkloadEstimate steps = Estimate(H100Gang(0, env));
  EXPECT_EQ(steps.basis, "steps");
  EXPECT_EQ(steps.run, seconds(100));

  env.push_back({"TRAINYARD_SIM_DURATION", "7s"});
  WorkloadEstimate fixed = Estimate(H100Gang(0, env));
  EXPECT_EQ(fixed.basis, "TRAINYARD_SIM_DURATION");
  EXPECT_EQ(fixed.run, seconds(7));
}

TEST(WorkloadModelTest, BadValuesAreRefusedNamingTheEnvValue) {
  struct Case {
    std::vector<EnvVar> env;
    std::string field;
    std::string says;
  };
  const std::string env0 = "jobSpec.workerPoolSpecs[0].containerSpec.env";
  const std::vector<Case> cases = {
      {{{"A", "1"}, {"TRAINYARD_SIM_DURATION", "soon"}}, env0 + "[1].value", "duration"},
      {{{"TRAINYARD_SIM_STEPS", "-3"}}, env0 + "[0].value", "positive integer"},
      {{{"TRAINYARD_MODEL_PARAMS", "seven billion"}}, env0 + "[0].value", "positive number"},
      {{{"TRAINYARD_MODEL_PARAMS", "7e9"}, {"TRAINYARD_TRAIN_TOKENS", "inf"}},
       env0 + "[1].value",
       "positive number"},
      {{{"TRAINYARD_MODEL_PARAMS", "7e9"}, {"TRAINYARD_PRECISION", "fp4"}},
       env0 + "[1].value",
       "bf16 or fp8"},
      {{{"TRAINYARD_MODEL_PARAMS", "7e9"}, {"TRAINYARD_MFU", "1.5"}}, env0 + "[1].value", "(0, 1]"},
      // Incomplete sets: nothing determines a run time.
      {{{"TRAINYARD_MODEL_PARAMS", "7e9"}}, env0 + "[0].value", "needs the tokens"},
      {{{"TRAINYARD_SIM_STEP_TIME", "1s"}}, env0 + "[0].value", "needs TRAINYARD_SIM_STEPS"},
      {{{"X", "1"}, {"TRAINYARD_SIM_STEPS", "10"}}, env0 + "[1].value", "SIM_STEP_TIME"},
      {{{"TRAINYARD_TRAIN_TOKENS", "1e9"}}, env0 + "[0].value", "only with TRAINYARD_MODEL_PARAMS"},
  };
  for (const Case& c : cases) {
    Status s = EstimateWorkload(H100Gang(0, c.env)).status();
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << c.says;
    EXPECT_EQ(FieldOf(s), c.field) << s.message();
    EXPECT_NE(s.message().find(c.says), std::string::npos) << s.message();
  }
}

TEST(WorkloadModelTest, TheModelNeedsChipsThatCanRunIt) {
  CustomJobSpec a100;
  auto env = k7bOn1bTokens;
  env.push_back({"TRAINYARD_PRECISION", "fp8"});
  a100.worker_pool_specs.push_back(
      Pool("a2-ultragpu-8g", AcceleratorType::kNvidiaA100_80gb, 8, 1, env));
  Status s = EstimateWorkload(a100).status();
  EXPECT_EQ(FieldOf(s), "jobSpec.workerPoolSpecs[0].containerSpec.env[2].value");
  EXPECT_NE(s.message().find("fp8 is not available on NVIDIA_A100_80GB"), std::string::npos);

  CustomJobSpec cpu;
  cpu.worker_pool_specs.push_back(
      Pool("n2-standard-8", AcceleratorType::kUnspecified, 0, 4, k7bOn1bTokens));
  s = EstimateWorkload(cpu).status();
  EXPECT_EQ(FieldOf(s), "jobSpec.workerPoolSpecs[0].containerSpec.env[0].value");
  EXPECT_NE(s.message().find("needs accelerators"), std::string::npos);
}

TEST(WorkloadModelTest, CreateRefusesABadKnobThroughTheValidator) {
  CustomJob job;
  job.display_name = "knobs";
  job.job_spec = H100Gang(0, {{"TRAINYARD_MFU", "0"}});
  Status s = ValidateCustomJob(job);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(FieldOf(s), "jobSpec.workerPoolSpecs[0].containerSpec.env[0].value");
  job.job_spec = H100Gang(3, k7bOn1bTokens);
  EXPECT_TRUE(ValidateCustomJob(job).ok()) << ValidateCustomJob(job).message();
}

TEST(WorkloadModelTest, TheCheckpointIntervalIsAKnobWithATenMinuteDefault) {
  EXPECT_EQ(*CheckpointInterval(H100Gang(0, {})), std::chrono::minutes(10));
  EXPECT_EQ(*CheckpointInterval(H100Gang(0, {{"TRAINYARD_CHECKPOINT_INTERVAL", "90s"}})),
            seconds(90));
  EXPECT_EQ(*CheckpointInterval(H100Gang(0, {{"TRAINYARD_CHECKPOINT_INTERVAL", "0s"}})), seconds(0))
      << "a job that never checkpoints";
  CustomJob job;
  job.display_name = "knobs";
  job.job_spec =
      H100Gang(0, {{"TRAINYARD_SIM_DURATION", "60s"}, {"TRAINYARD_CHECKPOINT_INTERVAL", "often"}});
  Status s = ValidateCustomJob(job);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(FieldOf(s), "jobSpec.workerPoolSpecs[0].containerSpec.env[1].value");
  EXPECT_NE(s.message().find("TRAINYARD_CHECKPOINT_INTERVAL"), std::string::npos) << s.message();
  job.job_spec = H100Gang(0, {{"TRAINYARD_CHECKPOINT_INTERVAL", "-5s"}});
  EXPECT_EQ(FieldOf(ValidateCustomJob(job)),
            "jobSpec.workerPoolSpecs[0].containerSpec.env[0].value");
}

}  // namespace
}  // namespace trainyard

namespace trainyard {
namespace {

TEST(UtilizationKnobsTest, ASlowHostAndItsFactorAreReadAndChecked) {
  auto knobs = UtilizationKnobsOf(
      H100Gang(7, {{"TRAINYARD_SIM_SLOW_HOST", "3"}, {"TRAINYARD_SIM_SLOW_HOST_FACTOR", "0.5"}}));
  ASSERT_TRUE(knobs.ok()) << knobs.status().message();
  EXPECT_EQ(knobs->slow_host, 3);
  EXPECT_DOUBLE_EQ(knobs->slow_factor, 0.5);

  auto defaulted = UtilizationKnobsOf(H100Gang(7, {{"TRAINYARD_SIM_SLOW_HOST", "0"}}));
  ASSERT_TRUE(defaulted.ok());
  EXPECT_DOUBLE_EQ(defaulted->slow_factor, 0.6);

  auto negative = UtilizationKnobsOf(H100Gang(7, {{"X", "y"}, {"TRAINYARD_SIM_SLOW_HOST", "-1"}}));
  ASSERT_EQ(negative.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(FieldOf(negative.status()), "jobSpec.workerPoolSpecs[0].containerSpec.env[1].value");
  auto whole = UtilizationKnobsOf(
      H100Gang(7, {{"TRAINYARD_SIM_SLOW_HOST", "1"}, {"TRAINYARD_SIM_SLOW_HOST_FACTOR", "1"}}));
  EXPECT_EQ(whole.status().code(), Code::kInvalidArgument) << "a factor of 1 is no straggler";
  auto alone = UtilizationKnobsOf(H100Gang(7, {{"TRAINYARD_SIM_SLOW_HOST_FACTOR", "0.5"}}));
  EXPECT_EQ(alone.status().code(), Code::kInvalidArgument) << "a factor without a host";
}

TEST(UtilizationKnobsTest, TheModelsSizeAndStepTimeComeFromTheRunTimeKnobs) {
  auto knobs = UtilizationKnobsOf(H100Gang(1, {{"TRAINYARD_MODEL_PARAMS", "7e9"},
                                               {"TRAINYARD_SIM_STEPS", "100"},
                                               {"TRAINYARD_GLOBAL_BATCH_SIZE", "64"},
                                               {"TRAINYARD_SEQ_LEN", "4096"}}));
  ASSERT_TRUE(knobs.ok()) << knobs.status().message();
  EXPECT_DOUBLE_EQ(*knobs->params, 7e9);
  ASSERT_TRUE(knobs->step_time.has_value());
  EXPECT_GT(knobs->step_time->count(), 0);
  EXPECT_FALSE(knobs->mfu.has_value());
}

// Checkpoint saves and restores: the knobs, else 12 bytes a parameter over every host's 10 Gb/s.
TEST(WorkloadModelTest, CheckpointCostsComeFromTheKnobsOrTheModelsStateOverTheHosts) {
  auto none = CheckpointCosts(H100Gang(1, {}));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->save, Duration{}) << "no model, no knob: checkpoints are free";

  // 7e9 × 12 bytes = 84 GB; at 10 Gb/s on one host 67.2 s, on two 33.6 s.
  auto one = CheckpointCosts(H100Gang(0, k7bOn1bTokens));
  ASSERT_TRUE(one.ok());
  EXPECT_NEAR(std::chrono::duration<double>(one->save).count(), 67.2, 1e-6);
  EXPECT_EQ(one->restore, one->save);
  auto two = CheckpointCosts(H100Gang(1, k7bOn1bTokens));
  ASSERT_TRUE(two.ok());
  EXPECT_NEAR(std::chrono::duration<double>(two->save).count(), 33.6, 1e-6);

  std::vector<EnvVar> env = k7bOn1bTokens;
  env.push_back({"TRAINYARD_CHECKPOINT_SAVE_TIME", "5s"});
  auto knob = CheckpointCosts(H100Gang(1, env));
  ASSERT_TRUE(knob.ok());
  EXPECT_EQ(knob->save, std::chrono::seconds(5)) << "the knob wins";
  EXPECT_NEAR(std::chrono::duration<double>(knob->restore).count(), 33.6, 1e-6);

  auto bad = CheckpointCosts(H100Gang(0, {{"TRAINYARD_CHECKPOINT_RESTORE_TIME", "soon"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(FieldOf(bad.status()), "jobSpec.workerPoolSpecs[0].containerSpec.env[0].value");
}

}  // namespace
}  // namespace trainyard
