#include "services/jobs/custom_job_validator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "services/jobs/catalog.h"

namespace trainyard {
namespace {

using std::chrono::hours;
using std::chrono::seconds;
using AT = AcceleratorType;

const char* const kPool0 = "jobSpec.workerPoolSpecs[0]";
const char* const kPool1 = "jobSpec.workerPoolSpecs[1]";

// OK, with the message on failure.
::testing::AssertionResult IsValid(const CustomJob& job) {
  const Status s = ValidateCustomJob(job);
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "expected OK, got " << CodeName(s.code()) << ": " << s.message();
}

// INVALID_ARGUMENT with exactly one violation at `field`.
::testing::AssertionResult FailsAt(const CustomJob& job, const std::string& field) {
  const Status s = ValidateCustomJob(job);
  if (s.ok()) return ::testing::AssertionFailure() << "expected a violation at " << field;
  if (s.code() != Code::kInvalidArgument) {
    return ::testing::AssertionFailure() << "code " << CodeName(s.code()) << ": " << s.message();
  }
  if (s.violations().size() != 1) {
    return ::testing::AssertionFailure() << s.violations().size() << " violations: " << s.message();
  }
  if (s.violations()[0].field != field) {
    return ::testing::AssertionFailure() << "violation at " << s.violations()[0].field << ", want "
                                         << field << ": " << s.message();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult MessageHas(const CustomJob& job, const std::string& part) {
  const Status s = ValidateCustomJob(job);
  if (s.message().find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << s.message() << "\" lacks \"" << part << "\"";
}

MachineSpec Machine(std::string type, AT accelerator = AT::kUnspecified, int32_t count = 0,
                    std::string topology = "") {
  MachineSpec m;
  m.machine_type = std::move(type);
  m.accelerator_type = accelerator;
  m.accelerator_count = count;
  m.tpu_topology = std::move(topology);
  return m;
}

WorkerPoolSpec ContainerPool(MachineSpec machine, int64_t replicas = 1) {
  WorkerPoolSpec pool;
  ContainerSpec c;
  c.image_uri = "us-docker.pkg.dev/my-project/trainers/resnet:1.0";
  c.command = {"python", "-m", "trainer.task"};
  c.args = {"--epochs=3"};
  c.env = {{"LOG_LEVEL", "info"}, {"_PRIVATE1", "x"}};
  pool.container_spec = std::move(c);
  pool.machine_spec = std::move(machine);
  pool.replica_count = replicas;
  return pool;
}

// A fully valid 8×H100 job exercising most optional fields; each test breaks one thing.
CustomJob Baseline() {
  CustomJob job;
  job.display_name = "resnet-train";
  job.labels = {{"team", "vision"}, {"cost-center", "ml_42"}, {"empty", ""}};
  WorkerPoolSpec pool = ContainerPool(Machine("a3-highgpu-8g", AT::kNvidiaH100_80gb, 8));
  pool.disk_spec = DiskSpec{"pd-ssd", 200};
  pool.nfs_mounts = {{"10.0.0.2", "/exports/data", "data"}};
  job.job_spec.worker_pool_specs = {pool};
  Scheduling scheduling;
  scheduling.timeout = hours(24);
  scheduling.strategy = SchedulingStrategy::kStandard;
  job.job_spec.scheduling = scheduling;
  job.job_spec.service_account = "trainer@my-project.iam.gserviceaccount.com";
  job.job_spec.network = "projects/123456789012/global/networks/default";
  job.job_spec.base_output_directory = "gs://my-bucket/runs/1";
  job.job_spec.persistent_resource_id = "my-cluster-1";
  return job;
}

CustomJob TpuJob(std::string machine, std::string topology) {
  CustomJob job = Baseline();
  job.job_spec.worker_pool_specs = {
      ContainerPool(Machine(std::move(machine), AT::kUnspecified, 0, std::move(topology)))};
  return job;
}

WorkerPoolSpec& Pool0(CustomJob& job) { return job.job_spec.worker_pool_specs[0]; }
ContainerSpec& Container0(CustomJob& job) { return *Pool0(job).container_spec; }
MachineSpec& Machine0(CustomJob& job) { return *Pool0(job).machine_spec; }
Scheduling& Sched(CustomJob& job) { return *job.job_spec.scheduling; }

PythonPackageSpec ValidPython() {
  PythonPackageSpec p;
  p.executor_image_uri = "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-1:latest";
  p.package_uris = {"gs://my-bucket/trainer-0.1.tar.gz"};
  p.python_module = "trainer.task";
  return p;
}

// ---- Valid shapes ----

TEST(CustomJobValidatorTest, BaselineIsValid) { EXPECT_TRUE(IsValid(Baseline())); }

TEST(CustomJobValidatorTest, MinimalJobIsValid) {
  CustomJob job;
  job.display_name = "x";
  WorkerPoolSpec pool;
  pool.container_spec = ContainerSpec{"gcr.io/p/i", {}, {}, {}};
  pool.machine_spec = Machine("n1-standard-4");
  job.job_spec.worker_pool_specs = {pool};  // replicaCount unset means 1
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, PythonPackageSpecIsValid) {
  CustomJob job = Baseline();
  Pool0(job).container_spec.reset();
  Pool0(job).python_package_spec = ValidPython();
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, PlaceholdersKeepPositions) {
  CustomJob job = Baseline();
  job.job_spec.worker_pool_specs.push_back(
      ContainerPool(Machine("a3-highgpu-8g", AT::kNvidiaH100_80gb, 8), 3));
  job.job_spec.worker_pool_specs.push_back(WorkerPoolSpec{});  // no parameter servers
  job.job_spec.worker_pool_specs.push_back(ContainerPool(Machine("n1-standard-8"), 1));
  EXPECT_TRUE(IsValid(job));
  // A broken evaluator is reported at its own index, not at a compacted one.
  job.job_spec.worker_pool_specs[3].container_spec->image_uri.clear();
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[3].containerSpec.imageUri"));
}

TEST(CustomJobValidatorTest, TpuJobsAreValid) {
  EXPECT_TRUE(IsValid(TpuJob("ct5lp-hightpu-4t", "4x4")));
  EXPECT_TRUE(IsValid(TpuJob("ct5lp-hightpu-4t", "")));  // one host, 2x2
  EXPECT_TRUE(IsValid(TpuJob("ct5lp-hightpu-1t", "")));
  EXPECT_TRUE(IsValid(TpuJob("ct5lp-hightpu-8t", "2x4")));
  EXPECT_TRUE(IsValid(TpuJob("ct5p-hightpu-4t", "4x4x4")));
  EXPECT_TRUE(IsValid(TpuJob("ct4p-hightpu-4t", "2x2x2")));
  EXPECT_TRUE(IsValid(TpuJob("ct6e-standard-4t", "")));   // one host, 2x2
  EXPECT_TRUE(IsValid(TpuJob("tpu7x-standard-4t", "")));  // one host, 2x2x1
  CustomJob legacy = TpuJob("cloud-tpu", "");
  Machine0(legacy).accelerator_type = AT::kTpuV3;
  Machine0(legacy).accelerator_count = 32;
  EXPECT_TRUE(IsValid(legacy));
}

// ---- displayName ----

TEST(CustomJobValidatorTest, DisplayNameRequired) {
  CustomJob job = Baseline();
  job.display_name.clear();
  EXPECT_TRUE(FailsAt(job, "displayName"));
}

TEST(CustomJobValidatorTest, DisplayNameAtMost128Characters) {
  CustomJob job = Baseline();
  job.display_name = std::string(128, 'a');
  EXPECT_TRUE(IsValid(job));
  job.display_name = std::string(129, 'a');
  EXPECT_TRUE(FailsAt(job, "displayName"));
}

TEST(CustomJobValidatorTest, DisplayNameCountsCodePointsNotBytes) {
  CustomJob job = Baseline();
  job.display_name.clear();
  for (int i = 0; i < 128; ++i) job.display_name += "\xC3\xA9";  // é: 2 bytes, 1 character
  EXPECT_TRUE(IsValid(job));
  job.display_name += "\xF0\x9F\x9A\x82";  // 🚂: 4 bytes, 1 character
  EXPECT_TRUE(FailsAt(job, "displayName"));
}

// ---- labels ----

TEST(CustomJobValidatorTest, AtMost64Labels) {
  CustomJob job = Baseline();
  job.labels.clear();
  for (int i = 0; i < 64; ++i) job.labels["k" + std::to_string(i)] = "v";
  EXPECT_TRUE(IsValid(job));
  job.labels["k64"] = "v";
  EXPECT_TRUE(FailsAt(job, "labels"));
}

TEST(CustomJobValidatorTest, LabelKeyRules) {
  for (const std::string key : {"Team", "1team", "_team", "-team", "te.am", "te am"}) {
    CustomJob job = Baseline();
    job.labels = {{key, "v"}};
    EXPECT_TRUE(FailsAt(job, "labels." + key)) << key;
  }
  CustomJob job = Baseline();
  job.labels = {{"a" + std::string(62, 'b'), "v"}};  // 63 characters
  EXPECT_TRUE(IsValid(job));
  job.labels = {{"a" + std::string(63, 'b'), "v"}};  // 64 characters
  EXPECT_TRUE(FailsAt(job, "labels.a" + std::string(63, 'b')));
}

TEST(CustomJobValidatorTest, LabelKeyMustNotBeEmpty) {
  CustomJob job = Baseline();
  job.labels = {{"", "v"}};
  EXPECT_TRUE(FailsAt(job, "labels"));
}

TEST(CustomJobValidatorTest, LabelsAreAsciiOnly) {
  CustomJob job = Baseline();
  job.labels = {{"\xC3\xA9quipe", "v"}};  // équipe: lowercase, but not ASCII
  EXPECT_TRUE(FailsAt(job, "labels.\xC3\xA9quipe"));
  EXPECT_TRUE(MessageHas(job, "ASCII only"));
  job.labels = {{"team", "\xC3\xA9quipe"}};
  EXPECT_TRUE(FailsAt(job, "labels.team"));
}

TEST(CustomJobValidatorTest, LabelValueRules) {
  for (const std::string& value :
       std::vector<std::string>{"Vision", "a.b", "a b", std::string(64, 'v')}) {
    CustomJob job = Baseline();
    job.labels = {{"team", value}};
    EXPECT_TRUE(FailsAt(job, "labels.team")) << value;
  }
  CustomJob job = Baseline();
  job.labels = {{"team", std::string(63, 'v')}, {"none", ""}, {"n", "0-_x"}};
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, GoogLabelKeysAreReserved) {
  CustomJob job = Baseline();
  job.labels = {{"goog-dataproc", "x"}};
  EXPECT_TRUE(FailsAt(job, "labels.goog-dataproc"));
  job.labels = {{"google", "x"}};  // only the goog- prefix is reserved
  EXPECT_TRUE(IsValid(job));
}

// ---- workerPoolSpecs ----

TEST(CustomJobValidatorTest, WorkerPoolsRequired) {
  CustomJob job = Baseline();
  job.job_spec.worker_pool_specs.clear();
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs"));
}

TEST(CustomJobValidatorTest, AtMostFourWorkerPools) {
  CustomJob job = Baseline();
  const WorkerPoolSpec worker = ContainerPool(Machine("n1-standard-4"), 2);
  job.job_spec.worker_pool_specs = {Pool0(job), worker, worker, worker};
  EXPECT_TRUE(IsValid(job));
  job.job_spec.worker_pool_specs.push_back(worker);
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs"));
}

TEST(CustomJobValidatorTest, PrimaryPoolMustNotBePlaceholder) {
  CustomJob job = Baseline();
  job.job_spec.worker_pool_specs = {WorkerPoolSpec{}, ContainerPool(Machine("n1-standard-4"))};
  EXPECT_TRUE(FailsAt(job, kPool0));
}

TEST(CustomJobValidatorTest, PrimaryPoolHasOneReplica) {
  CustomJob job = Baseline();
  Pool0(job).replica_count = 2;
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].replicaCount"));
  Pool0(job).replica_count = -1;
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].replicaCount"));
  Pool0(job).replica_count = 0;  // unset
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, OtherPoolsReplicaCountBounds) {
  CustomJob job = Baseline();
  job.job_spec.worker_pool_specs.push_back(ContainerPool(Machine("n1-standard-4"), 1000));
  EXPECT_TRUE(IsValid(job));
  job.job_spec.worker_pool_specs[1].replica_count = 1001;
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[1].replicaCount"));
  job.job_spec.worker_pool_specs[1].replica_count = -3;
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[1].replicaCount"));
  job.job_spec.worker_pool_specs[1].replica_count = 0;  // unset: 1
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, PoolNeedsExactlyOneTaskSpec) {
  CustomJob job = Baseline();
  Pool0(job).python_package_spec = ValidPython();
  EXPECT_TRUE(FailsAt(job, kPool0));
  job = Baseline();
  WorkerPoolSpec only_replicas;
  only_replicas.replica_count = 2;  // not a placeholder, but no task
  job.job_spec.worker_pool_specs.push_back(only_replicas);
  EXPECT_TRUE(FailsAt(job, kPool1));
}

TEST(CustomJobValidatorTest, ContainerImageUriRequired) {
  CustomJob job = Baseline();
  Container0(job).image_uri.clear();
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].containerSpec.imageUri"));
}

TEST(CustomJobValidatorTest, PythonPackageSpecFields) {
  const std::string p = "jobSpec.workerPoolSpecs[0].pythonPackageSpec";
  auto with = [](PythonPackageSpec spec) {
    CustomJob job = Baseline();
    Pool0(job).container_spec.reset();
    Pool0(job).python_package_spec = std::move(spec);
    return job;
  };
  PythonPackageSpec spec = ValidPython();
  spec.executor_image_uri.clear();
  EXPECT_TRUE(FailsAt(with(spec), p + ".executorImageUri"));

  spec = ValidPython();
  spec.package_uris.clear();
  EXPECT_TRUE(FailsAt(with(spec), p + ".packageUris"));

  spec = ValidPython();
  spec.package_uris.assign(100, "gs://b/p.tar.gz");
  EXPECT_TRUE(IsValid(with(spec)));
  spec.package_uris.push_back("gs://b/p.tar.gz");
  EXPECT_TRUE(FailsAt(with(spec), p + ".packageUris"));

  spec = ValidPython();
  spec.package_uris.push_back("");
  EXPECT_TRUE(FailsAt(with(spec), p + ".packageUris[1]"));

  spec = ValidPython();
  spec.python_module.clear();
  EXPECT_TRUE(FailsAt(with(spec), p + ".pythonModule"));

  spec = ValidPython();
  spec.args.assign(1001, "x");
  EXPECT_TRUE(FailsAt(with(spec), p + ".args"));

  spec = ValidPython();
  spec.env = {{"A", "1"}, {"A", "2"}};
  EXPECT_TRUE(FailsAt(with(spec), p + ".env[1].name"));
}

// ---- env, args, command ----

TEST(CustomJobValidatorTest, AtMost100EnvVars) {
  CustomJob job = Baseline();
  Container0(job).env.clear();
  for (int i = 0; i < 100; ++i) Container0(job).env.push_back({"V" + std::to_string(i), ""});
  EXPECT_TRUE(IsValid(job));
  Container0(job).env.push_back({"V100", ""});
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].containerSpec.env"));
}

TEST(CustomJobValidatorTest, EnvVarNamesAreIdentifiers) {
  for (const std::string name : {"", "1ABC", "A-B", "A B", "A=B", "\xC3\xA9"}) {
    CustomJob job = Baseline();
    Container0(job).env = {{"OK", "1"}, {name, "v"}};
    EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].containerSpec.env[1].name")) << name;
  }
  CustomJob job = Baseline();
  Container0(job).env = {{"_", ""}, {"a1_B2", ""}, {"PATH", "/bin"}};
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, EnvVarNamesAreUnique) {
  CustomJob job = Baseline();
  Container0(job).env = {{"A", "1"}, {"B", "2"}, {"A", "3"}};
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].containerSpec.env[2].name"));
  Container0(job).env = {{"A", "1"}, {"a", "2"}};  // names are case-sensitive
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, AtMost1000ArgsAndCommandEntries) {
  CustomJob job = Baseline();
  Container0(job).args.assign(1000, "x");
  Container0(job).command.assign(1000, "x");
  EXPECT_TRUE(IsValid(job));
  Container0(job).args.push_back("x");
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].containerSpec.args"));
  Container0(job).args.pop_back();
  Container0(job).command.push_back("x");
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].containerSpec.command"));
}

// ---- machineSpec ----

TEST(CustomJobValidatorTest, MachineSpecRequired) {
  CustomJob job = Baseline();
  Pool0(job).machine_spec.reset();
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].machineSpec"));
}

TEST(CustomJobValidatorTest, MachineTypeRequired) {
  CustomJob job = Baseline();
  Machine0(job) = Machine("");
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].machineSpec.machineType"));
}

TEST(CustomJobValidatorTest, MachineTypeMustBeKnown) {
  CustomJob job = Baseline();
  Machine0(job) = Machine("a9-hypergpu-64g");
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].machineSpec.machineType"));
  EXPECT_TRUE(MessageHas(job, "a3-megagpu"));
}

TEST(CustomJobValidatorTest, AcceleratorCountMustMatchMachine) {
  CustomJob job = Baseline();
  Machine0(job).accelerator_count = 4;
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"));
  EXPECT_TRUE(MessageHas(job,
                         "a3-highgpu-8g takes acceleratorType NVIDIA_H100_80GB with "
                         "acceleratorCount 8"));
}

TEST(CustomJobValidatorTest, AcceleratorTypeMustMatchMachine) {
  CustomJob job = Baseline();
  Machine0(job) = Machine("a3-highgpu-8g");  // A3 needs both fields set
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType"));
  Machine0(job) = Machine("n2-standard-8", AT::kNvidiaTeslaT4, 1);
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType"));
  Machine0(job) = Machine("n1-standard-8", AT::kNvidiaTeslaT4, 3);
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"));
  Machine0(job) = Machine("n1-standard-8", AT::kNvidiaTeslaV100, 8);
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, AcceleratorErrorInLaterPoolNamesThatPool) {
  CustomJob job = Baseline();
  job.job_spec.worker_pool_specs.push_back(
      ContainerPool(Machine("g2-standard-24", AT::kNvidiaL4, 1), 2));
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[1].machineSpec.acceleratorCount"));
}

// ---- TPU ----

TEST(CustomJobValidatorTest, TopologyOnGpuMachineIsRejected) {
  CustomJob job = Baseline();
  Machine0(job).tpu_topology = "2x2";
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].machineSpec.tpuTopology"));
}

TEST(CustomJobValidatorTest, TopologyMustSuitMachineType) {
  EXPECT_TRUE(FailsAt(TpuJob("ct5lp-hightpu-4t", "3x3"),
                      "jobSpec.workerPoolSpecs[0].machineSpec.tpuTopology"));
  EXPECT_TRUE(FailsAt(TpuJob("ct5lp-hightpu-8t", "4x4"),
                      "jobSpec.workerPoolSpecs[0].machineSpec.tpuTopology"));
  EXPECT_TRUE(FailsAt(TpuJob("ct5p-hightpu-4t", "4x4"),
                      "jobSpec.workerPoolSpecs[0].machineSpec.tpuTopology"));
  EXPECT_TRUE(
      MessageHas(TpuJob("ct5lp-hightpu-8t", "4x4"), "ct5lp-hightpu-8t takes tpuTopology 2x4"));
  CustomJob legacy = TpuJob("cloud-tpu", "2x2");
  Machine0(legacy).accelerator_type = AT::kTpuV2;
  Machine0(legacy).accelerator_count = 8;
  EXPECT_TRUE(FailsAt(legacy, "jobSpec.workerPoolSpecs[0].machineSpec.tpuTopology"));
}

TEST(CustomJobValidatorTest, TpuAcceleratorFields) {
  CustomJob job = TpuJob("ct5lp-hightpu-4t", "4x4");
  Machine0(job).accelerator_type = AT::kTpuV5Litepod;
  Machine0(job).accelerator_count = 4;
  EXPECT_TRUE(IsValid(job));
  Machine0(job).accelerator_count = 16;  // chips per host, not per slice
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"));
}

TEST(CustomJobValidatorTest, TpuJobHasExactlyOnePool) {
  CustomJob job = TpuJob("ct5lp-hightpu-4t", "4x4");
  job.job_spec.worker_pool_specs.push_back(WorkerPoolSpec{});
  EXPECT_TRUE(IsValid(job));  // placeholders do not count
  job.job_spec.worker_pool_specs.push_back(ContainerPool(Machine("n1-standard-4"), 1));
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[2]"));
}

TEST(CustomJobValidatorTest, TpuPoolAfterCpuPrimaryIsRejected) {
  CustomJob job = Baseline();
  job.job_spec.worker_pool_specs = {
      ContainerPool(Machine("n1-standard-4")),
      ContainerPool(Machine("ct5lp-hightpu-4t", AT::kUnspecified, 0, "2x2"), 1)};
  EXPECT_TRUE(FailsAt(job, kPool1));
  EXPECT_TRUE(MessageHas(job, "a TPU job runs one slice in workerPoolSpecs[0]"));
}

// Multislice: workerPoolSpecs[1] of the same machine type and topology adds slices; another
// topology, another type or a third pool does not, and cloud-tpu has no Multislice.
TEST(CustomJobValidatorTest, MultisliceAddsSlicesOfTheSameShapeInPool1) {
  CustomJob job = TpuJob("ct5lp-hightpu-4t", "4x4");
  job.job_spec.worker_pool_specs.push_back(
      ContainerPool(Machine("ct5lp-hightpu-4t", AT::kUnspecified, 0, "4x4"), 3));
  EXPECT_TRUE(IsValid(job)) << "4 slices of v5e 4x4";
  job.job_spec.worker_pool_specs[1].machine_spec->tpu_topology = "4x8";
  EXPECT_TRUE(FailsAt(job, kPool1));
  EXPECT_TRUE(MessageHas(job, "same machineType and tpuTopology"));
  job.job_spec.worker_pool_specs[1].machine_spec->tpu_topology = "4x4";
  job.job_spec.worker_pool_specs.push_back(
      ContainerPool(Machine("ct5lp-hightpu-4t", AT::kUnspecified, 0, "4x4"), 1));
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[2]"));
}

// ---- diskSpec, nfsMounts ----

TEST(CustomJobValidatorTest, BootDiskSizeRange) {
  CustomJob job = Baseline();
  for (int32_t ok : {0, 100, 64000}) {
    Pool0(job).disk_spec->boot_disk_size_gb = ok;
    EXPECT_TRUE(IsValid(job)) << ok;
  }
  for (int32_t bad : {-1, 1, 99, 64001}) {
    Pool0(job).disk_spec->boot_disk_size_gb = bad;
    EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].diskSpec.bootDiskSizeGb")) << bad;
  }
}

TEST(CustomJobValidatorTest, BootDiskType) {
  CustomJob job = Baseline();
  for (const char* ok : {"", "pd-ssd", "pd-standard", "hyperdisk-balanced"}) {
    Pool0(job).disk_spec->boot_disk_type = ok;
    EXPECT_TRUE(IsValid(job)) << ok;
  }
  for (const char* bad : {"pd-balanced", "PD-SSD", "local-ssd"}) {
    Pool0(job).disk_spec->boot_disk_type = bad;
    EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].diskSpec.bootDiskType")) << bad;
  }
}

TEST(CustomJobValidatorTest, NfsMountFieldsRequired) {
  const std::string p = "jobSpec.workerPoolSpecs[0].nfsMounts[1]";
  CustomJob job = Baseline();
  Pool0(job).nfs_mounts.push_back({"", "/exports", "m"});
  EXPECT_TRUE(FailsAt(job, p + ".server"));
  Pool0(job).nfs_mounts[1] = {"10.0.0.3", "", "m"};
  EXPECT_TRUE(FailsAt(job, p + ".path"));
  Pool0(job).nfs_mounts[1] = {"10.0.0.3", "/exports", ""};
  EXPECT_TRUE(FailsAt(job, p + ".mountPoint"));
}

TEST(CustomJobValidatorTest, LustreMountsAreValid) {
  CustomJob job = Baseline();
  Pool0(job).lustre_mounts = {{"10.90.1.4", "my-project/us-central1-a/lustre1", "lfs", "scratch"}};
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, LustreMountFieldsRequired) {
  const std::string p = "jobSpec.workerPoolSpecs[0].lustreMounts[1]";
  const LustreMount ok{"10.90.1.4", "vol-1", "lfs", "scratch"};
  CustomJob job = Baseline();
  Pool0(job).lustre_mounts = {ok, ok};
  EXPECT_TRUE(IsValid(job));
  Pool0(job).lustre_mounts[1].instance_ip.clear();
  EXPECT_TRUE(FailsAt(job, p + ".instanceIp"));
  Pool0(job).lustre_mounts[1] = ok;
  Pool0(job).lustre_mounts[1].volume_handle.clear();
  EXPECT_TRUE(FailsAt(job, p + ".volumeHandle"));
  Pool0(job).lustre_mounts[1] = ok;
  Pool0(job).lustre_mounts[1].filesystem.clear();
  EXPECT_TRUE(FailsAt(job, p + ".filesystem"));
  Pool0(job).lustre_mounts[1] = ok;
  Pool0(job).lustre_mounts[1].mount_point.clear();
  EXPECT_TRUE(FailsAt(job, p + ".mountPoint"));
}

TEST(CustomJobValidatorTest, LustreInstanceIpIsIpv4) {
  CustomJob job = Baseline();
  for (const char* bad :
       {"lustre.local", "10.0.0", "10.0.0.256", "10.0.0.01", "1.2.3.4.5", "10..0.1", "10.0.0.1 "}) {
    Pool0(job).lustre_mounts = {{bad, "vol-1", "lfs", "scratch"}};
    EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].lustreMounts[0].instanceIp")) << bad;
  }
  Pool0(job).lustre_mounts = {{"255.0.0.0", "vol-1", "lfs", "scratch"}};
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, LustreMountsInLaterPoolNameThatPool) {
  CustomJob job = Baseline();
  job.job_spec.worker_pool_specs.push_back({});
  job.job_spec.worker_pool_specs.push_back(
      ContainerPool(Machine("a3-highgpu-8g", AT::kNvidiaH100_80gb, 8), 2));
  job.job_spec.worker_pool_specs[2].lustre_mounts = {{"10.0.0.9", "v", "lfs", ""}};
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[2].lustreMounts[0].mountPoint"));
}

// ---- pscInterfaceConfig ----

PscInterfaceConfig ValidPsc() {
  PscInterfaceConfig psc;
  psc.network_attachment = "projects/my-project/regions/us-central1/networkAttachments/na-1";
  psc.dns_peering_configs = {{"corp.example.com.", "host-project", "shared-vpc"}};
  return psc;
}

TEST(CustomJobValidatorTest, PscInterfaceConfigIsValid) {
  CustomJob job = Baseline();
  job.job_spec.psc_interface_config = ValidPsc();
  EXPECT_TRUE(IsValid(job));
  job.job_spec.psc_interface_config->network_attachment = "na-1";  // a bare name
  EXPECT_TRUE(IsValid(job));
  job.job_spec.psc_interface_config = PscInterfaceConfig{};  // every field is optional
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, PscNetworkAttachmentFormat) {
  CustomJob job = Baseline();
  job.job_spec.psc_interface_config = ValidPsc();
  for (const char* bad :
       {"NA_1", "projects/p/regions/r/networkAttachments/", "projects/p/networkAttachments/na",
        "projects//regions/r/"
        "networkAttachments/na",
        "projects/p/regions/r/networkAttachments/na/extra"}) {
    job.job_spec.psc_interface_config->network_attachment = bad;
    EXPECT_TRUE(FailsAt(job, "jobSpec.pscInterfaceConfig.networkAttachment")) << bad;
  }
}

TEST(CustomJobValidatorTest, DnsPeeringConfigFieldsRequired) {
  const std::string p = "jobSpec.pscInterfaceConfig.dnsPeeringConfigs[1]";
  const DnsPeeringConfig ok{"corp.example.com.", "host-project", "shared-vpc"};
  CustomJob job = Baseline();
  job.job_spec.psc_interface_config = ValidPsc();
  auto& dns = job.job_spec.psc_interface_config->dns_peering_configs;
  dns = {ok, ok};
  EXPECT_TRUE(IsValid(job));
  dns[1].domain.clear();
  EXPECT_TRUE(FailsAt(job, p + ".domain"));
  dns[1].domain = "corp.example.com";  // no trailing dot
  EXPECT_TRUE(FailsAt(job, p + ".domain"));
  EXPECT_TRUE(MessageHas(job, "must end with a dot"));
  dns[1] = ok;
  dns[1].target_project.clear();
  EXPECT_TRUE(FailsAt(job, p + ".targetProject"));
  dns[1] = ok;
  dns[1].target_network.clear();
  EXPECT_TRUE(FailsAt(job, p + ".targetNetwork"));
}

// ---- v1beta1 MachineSpec fields ----

CustomJob A4xJob(int32_t nodes) {
  CustomJob job = Baseline();
  job.job_spec.persistent_resource_id.clear();
  Pool0(job).machine_spec = Machine("a4x-highgpu-4g", AT::kNvidiaGb200, 4);
  Machine0(job).multihost_gpu_node_count = nodes;
  return job;
}

TEST(CustomJobValidatorTest, MultihostGpuNodeCountOnA4x) {
  EXPECT_TRUE(IsValid(A4xJob(0)));
  EXPECT_TRUE(IsValid(A4xJob(1)));
  EXPECT_TRUE(IsValid(A4xJob(18)));  // a whole NVL72 rack
  const std::string field = "jobSpec.workerPoolSpecs[0].machineSpec.multihostGpuNodeCount";
  EXPECT_TRUE(FailsAt(A4xJob(19), field));
  EXPECT_TRUE(FailsAt(A4xJob(-1), field));
}

TEST(CustomJobValidatorTest, MultihostGpuNodeCountOnlyOnA4x) {
  CustomJob job = Baseline();
  Machine0(job).multihost_gpu_node_count = 2;
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].machineSpec.multihostGpuNodeCount"));
  EXPECT_TRUE(MessageHas(job, "a3-highgpu-8g is one host per replica"));
}

TEST(CustomJobValidatorTest, MinGpuDriverVersion) {
  const std::string field = "jobSpec.workerPoolSpecs[0].machineSpec.minGpuDriverVersion";
  CustomJob job = Baseline();
  Machine0(job).min_gpu_driver_version = "535.104.06";
  EXPECT_TRUE(IsValid(job));
  for (const char* bad : {"latest", "535..104", ".535", "535.", "r535"}) {
    Machine0(job).min_gpu_driver_version = bad;
    EXPECT_TRUE(FailsAt(job, field)) << bad;
  }
  // Attached N1 GPUs count; CPU-only and TPU machines have no GPU driver.
  CustomJob n1 = Baseline();
  Pool0(n1).machine_spec = Machine("n1-standard-8", AT::kNvidiaTeslaT4, 1);
  Machine0(n1).min_gpu_driver_version = "550";
  EXPECT_TRUE(IsValid(n1));
  Pool0(n1).machine_spec = Machine("n1-standard-8");
  Machine0(n1).min_gpu_driver_version = "550";
  EXPECT_TRUE(FailsAt(n1, field));
  CustomJob tpu = TpuJob("ct6e-standard-4t", "4x4");
  Machine0(tpu).min_gpu_driver_version = "550";
  EXPECT_TRUE(FailsAt(tpu, field));
}

// ---- every accelerator and TPU family ----

// The machine that carries (or takes) each AcceleratorType in a valid create.
struct AcceleratorUse {
  AT type;
  const char* machine;
  int32_t count;
};

TEST(CustomJobValidatorTest, EveryAcceleratorTypeHasAValidCreate) {
  const AcceleratorUse uses[] = {
      {AT::kNvidiaTeslaP100, "n1-standard-8", 1},
      {AT::kNvidiaTeslaV100, "n1-standard-8", 1},
      {AT::kNvidiaTeslaP4, "n1-standard-8", 1},
      {AT::kNvidiaTeslaT4, "n1-standard-8", 1},
      {AT::kTpuV2, "cloud-tpu", 8},
      {AT::kTpuV3, "cloud-tpu", 8},
      {AT::kNvidiaTeslaA100, "a2-highgpu-1g", 1},
      {AT::kNvidiaA100_80gb, "a2-ultragpu-1g", 1},
      {AT::kTpuV4Pod, "ct4p-hightpu-4t", 4},
      {AT::kNvidiaL4, "g2-standard-4", 1},
      {AT::kTpuV5Litepod, "ct5lp-hightpu-4t", 4},
      {AT::kNvidiaH100_80gb, "a3-highgpu-1g", 1},
      {AT::kNvidiaH100Mega80gb, "a3-megagpu-8g", 8},
      {AT::kNvidiaH200_141gb, "a3-ultragpu-8g", 8},
      {AT::kNvidiaB200, "a4-highgpu-8g", 8},
      {AT::kNvidiaGb200, "a4x-highgpu-4g", 4},
      {AT::kNvidiaRtxPro6000, "g4-standard-48", 1},
  };
  // Every enum value but UNSPECIFIED and the retired K80 (Compute Engine has no K80 left).
  EXPECT_EQ(std::size(uses), static_cast<size_t>(AT::kNvidiaRtxPro6000) - 1);
  for (const AcceleratorUse& use : uses) {
    CustomJob job = Baseline();
    job.job_spec.persistent_resource_id.clear();
    Pool0(job).machine_spec = Machine(use.machine, use.type, use.count);
    EXPECT_TRUE(IsValid(job)) << AcceleratorName(use.type);
  }
  CustomJob k80 = Baseline();
  Pool0(k80).machine_spec = Machine("n1-standard-8", AT::kNvidiaTeslaK80, 1);
  EXPECT_TRUE(MessageHas(k80, "NVIDIA_TESLA_K80 is retired"));
}

TEST(CustomJobValidatorTest, EveryTpuTopologyOfNewFamiliesValidates) {
  for (const char* machine :
       {"ct6e-standard-1t", "ct6e-standard-4t", "ct6e-standard-8t", "tpu7x-standard-4t"}) {
    for (std::string_view topology : TpuTopologies(*FindMachineType(machine))) {
      EXPECT_TRUE(IsValid(TpuJob(machine, std::string(topology)))) << machine << " " << topology;
    }
  }
  EXPECT_TRUE(FailsAt(TpuJob("ct6e-standard-4t", "2x2x1"),
                      "jobSpec.workerPoolSpecs[0].machineSpec.tpuTopology"));
  EXPECT_TRUE(FailsAt(TpuJob("tpu7x-standard-4t", "4x4"),
                      "jobSpec.workerPoolSpecs[0].machineSpec.tpuTopology"));
}

// ---- scheduling ----

TEST(CustomJobValidatorTest, TimeoutMustBePositive) {
  CustomJob job = Baseline();
  Sched(job).timeout = seconds(0);
  EXPECT_TRUE(FailsAt(job, "jobSpec.scheduling.timeout"));
  Sched(job).timeout = seconds(-5);
  EXPECT_TRUE(FailsAt(job, "jobSpec.scheduling.timeout"));
  Sched(job).timeout = std::chrono::nanoseconds(1);
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, TimeoutAtMostSevenDays) {
  CustomJob job = Baseline();
  Sched(job).timeout = hours(24 * 7);
  EXPECT_TRUE(IsValid(job));
  Sched(job).timeout = hours(24 * 7) + std::chrono::nanoseconds(1);
  EXPECT_TRUE(FailsAt(job, "jobSpec.scheduling.timeout"));
  EXPECT_TRUE(MessageHas(job, "7 days"));
}

TEST(CustomJobValidatorTest, StrategyMustBeKnown) {
  CustomJob job = Baseline();
  for (int bad : {5, 7, -1, 99}) {
    Sched(job).strategy = static_cast<SchedulingStrategy>(bad);
    EXPECT_TRUE(FailsAt(job, "jobSpec.scheduling.strategy")) << bad;
  }
  for (SchedulingStrategy ok : {SchedulingStrategy::kUnspecified, SchedulingStrategy::kOnDemand,
                                SchedulingStrategy::kLowCost, SchedulingStrategy::kSpot}) {
    Sched(job).strategy = ok;
    EXPECT_TRUE(IsValid(job));
  }
}

TEST(CustomJobValidatorTest, MaxWaitDurationOnlyWithFlexStart) {
  CustomJob job = Baseline();
  Sched(job).max_wait_duration = hours(1);
  EXPECT_TRUE(FailsAt(job, "jobSpec.scheduling.maxWaitDuration"));
  Sched(job).strategy = SchedulingStrategy::kFlexStart;
  EXPECT_TRUE(IsValid(job));
  Sched(job).max_wait_duration = seconds(0);  // wait forever
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, MaxWaitDurationNotNegative) {
  CustomJob job = Baseline();
  Sched(job).strategy = SchedulingStrategy::kFlexStart;
  Sched(job).max_wait_duration = seconds(-1);
  EXPECT_TRUE(FailsAt(job, "jobSpec.scheduling.maxWaitDuration"));
}

TEST(CustomJobValidatorTest, FlexStartNeedsSupportedGpu) {
  CustomJob job = Baseline();
  Sched(job).strategy = SchedulingStrategy::kFlexStart;
  for (const MachineSpec& ok : {Machine("g2-standard-8", AT::kNvidiaL4, 1),
                                Machine("a2-highgpu-1g", AT::kNvidiaTeslaA100, 1),
                                Machine("a2-ultragpu-8g", AT::kNvidiaA100_80gb, 8),
                                Machine("a3-megagpu-8g", AT::kNvidiaH100Mega80gb, 8),
                                Machine("a3-ultragpu-8g", AT::kNvidiaH200_141gb, 8),
                                Machine("a4-highgpu-8g", AT::kNvidiaB200, 8)}) {
    Machine0(job) = ok;
    EXPECT_TRUE(IsValid(job)) << ok.machine_type;
  }
  for (const MachineSpec& bad :
       {Machine("n1-standard-8", AT::kNvidiaTeslaT4, 1), Machine("n2-standard-8"),
        Machine("ct5lp-hightpu-4t", AT::kUnspecified, 0, "2x2")}) {
    Machine0(job) = bad;
    EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType"))
        << bad.machine_type;
  }
}

TEST(CustomJobValidatorTest, FlexStartNeedsOneMachineConfiguration) {
  CustomJob job = Baseline();
  Sched(job).strategy = SchedulingStrategy::kFlexStart;
  job.job_spec.worker_pool_specs.push_back(
      ContainerPool(Machine("a3-highgpu-8g", AT::kNvidiaH100_80gb, 8), 3));
  EXPECT_TRUE(IsValid(job));
  job.job_spec.worker_pool_specs.push_back(WorkerPoolSpec{});
  job.job_spec.worker_pool_specs.push_back(
      ContainerPool(Machine("a3-highgpu-4g", AT::kNvidiaH100_80gb, 4), 1));
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[3].machineSpec"));
}

TEST(CustomJobValidatorTest, SpotNotForMultiHostTpu) {
  CustomJob job = TpuJob("ct5lp-hightpu-4t", "4x4");
  Sched(job).strategy = SchedulingStrategy::kSpot;
  EXPECT_TRUE(FailsAt(job, "jobSpec.scheduling.strategy"));
  EXPECT_TRUE(MessageHas(job, "TPU Pods"));
  job = TpuJob("ct5p-hightpu-4t", "2x2x2");  // 2 hosts
  Sched(job).strategy = SchedulingStrategy::kSpot;
  EXPECT_TRUE(FailsAt(job, "jobSpec.scheduling.strategy"));
  job = TpuJob("cloud-tpu", "");
  Machine0(job).accelerator_type = AT::kTpuV2;
  Machine0(job).accelerator_count = 32;
  Sched(job).strategy = SchedulingStrategy::kSpot;
  EXPECT_TRUE(FailsAt(job, "jobSpec.scheduling.strategy"));
}

TEST(CustomJobValidatorTest, SpotSingleHostTpuIsValid) {
  for (const char* topology : {"2x2", ""}) {
    CustomJob job = TpuJob("ct5lp-hightpu-4t", topology);
    Sched(job).strategy = SchedulingStrategy::kSpot;
    EXPECT_TRUE(IsValid(job)) << topology;
  }
  CustomJob job = TpuJob("ct5p-hightpu-4t", "2x2x1");
  Sched(job).strategy = SchedulingStrategy::kSpot;
  EXPECT_TRUE(IsValid(job));
  job = TpuJob("cloud-tpu", "");
  Machine0(job).accelerator_type = AT::kTpuV3;
  Machine0(job).accelerator_count = 8;
  Sched(job).strategy = SchedulingStrategy::kSpot;
  EXPECT_TRUE(IsValid(job));
}

// ---- reservationAffinity ----

ReservationAffinity Affinity(ReservationAffinityType type, std::string key = "",
                             std::vector<std::string> values = {}) {
  return ReservationAffinity{type, std::move(key), std::move(values)};
}

TEST(CustomJobValidatorTest, SpecificReservationNeedsKeyAndValues) {
  const std::string p = "jobSpec.workerPoolSpecs[0].machineSpec.reservationAffinity";
  const std::string key = "compute.googleapis.com/reservation-name";
  const std::string name = "projects/my-project/zones/us-central1-a/reservations/h100-pool";
  CustomJob job = Baseline();
  Machine0(job).reservation_affinity =
      Affinity(ReservationAffinityType::kSpecificReservation, key, {name});
  EXPECT_TRUE(IsValid(job));
  Machine0(job).reservation_affinity =
      Affinity(ReservationAffinityType::kSpecificReservation, "", {name});
  EXPECT_TRUE(FailsAt(job, p + ".key"));
  Machine0(job).reservation_affinity =
      Affinity(ReservationAffinityType::kSpecificReservation, "reservation-name", {name});
  EXPECT_TRUE(FailsAt(job, p + ".key"));
  Machine0(job).reservation_affinity =
      Affinity(ReservationAffinityType::kSpecificReservation, key, {});
  EXPECT_TRUE(FailsAt(job, p + ".values"));
  Machine0(job).reservation_affinity =
      Affinity(ReservationAffinityType::kSpecificReservation, key, {name, ""});
  EXPECT_TRUE(FailsAt(job, p + ".values[1]"));
}

TEST(CustomJobValidatorTest, OtherReservationTypesTakeNoKeyOrValues) {
  const std::string p = "jobSpec.workerPoolSpecs[0].machineSpec.reservationAffinity";
  CustomJob job = Baseline();
  for (ReservationAffinityType t :
       {ReservationAffinityType::kUnspecified, ReservationAffinityType::kNoReservation,
        ReservationAffinityType::kAnyReservation}) {
    Machine0(job).reservation_affinity = Affinity(t);
    EXPECT_TRUE(IsValid(job));
    Machine0(job).reservation_affinity = Affinity(t, "compute.googleapis.com/reservation-name");
    EXPECT_TRUE(FailsAt(job, p + ".key"));
    Machine0(job).reservation_affinity = Affinity(t, "", {"r"});
    EXPECT_TRUE(FailsAt(job, p + ".values"));
  }
  Machine0(job).reservation_affinity = Affinity(static_cast<ReservationAffinityType>(9));
  EXPECT_TRUE(FailsAt(job, p + ".reservationAffinityType"));
}

// ---- other jobSpec fields ----

TEST(CustomJobValidatorTest, PersistentResourceIdFormat) {
  CustomJob job = Baseline();
  for (const std::string& ok :
       std::vector<std::string>{"a", "my-pr-1", "a" + std::string(62, '0')}) {
    job.job_spec.persistent_resource_id = ok;
    EXPECT_TRUE(IsValid(job)) << ok;
  }
  for (const std::string& bad :
       std::vector<std::string>{"My-PR", "1pr", "pr-", "-pr", "pr_1", "a" + std::string(63, '0'),
                                "projects/1/locations/us-central1/persistentResources/pr"}) {
    job.job_spec.persistent_resource_id = bad;
    EXPECT_TRUE(FailsAt(job, "jobSpec.persistentResourceId")) << bad;
  }
}

TEST(CustomJobValidatorTest, NetworkFormat) {
  CustomJob job = Baseline();
  job.job_spec.network = "projects/42/global/networks/vpc-1";
  EXPECT_TRUE(IsValid(job));
  for (const char* bad :
       {"default", "projects/my-project/global/networks/default", "projects//global/networks/x",
        "projects/42/global/networks/", "projects/42/networks/default",
        "projects/42/global/networks/Default", "projects/42/global/networks/a/b"}) {
    job.job_spec.network = bad;
    EXPECT_TRUE(FailsAt(job, "jobSpec.network")) << bad;
  }
}

TEST(CustomJobValidatorTest, ServiceAccountLooksLikeEmail) {
  CustomJob job = Baseline();
  for (const char* bad :
       {"trainer", "@x.com", "a@b", "a@@b.com", "a b@x.com", "a@x.com.", "a@.com"}) {
    job.job_spec.service_account = bad;
    EXPECT_TRUE(FailsAt(job, "jobSpec.serviceAccount")) << bad;
  }
  job.job_spec.service_account = "123-compute@developer.gserviceaccount.com";
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, BaseOutputDirectoryIsGcs) {
  CustomJob job = Baseline();
  for (const char* bad : {"", "/tmp/out", "s3://bucket/x", "gs://", "GS://bucket"}) {
    job.job_spec.base_output_directory = bad;
    EXPECT_TRUE(FailsAt(job, "jobSpec.baseOutputDirectory.outputUriPrefix")) << bad;
  }
  job.job_spec.base_output_directory.reset();
  EXPECT_TRUE(IsValid(job));
}

TEST(CustomJobValidatorTest, ReportsTheFirstViolationOnly) {
  CustomJob job = Baseline();
  job.display_name.clear();
  job.labels = {{"Bad", ""}};
  Container0(job).image_uri.clear();
  job.job_spec.network = "nope";
  EXPECT_TRUE(FailsAt(job, "displayName"));
  job.display_name = "ok";
  EXPECT_TRUE(FailsAt(job, "labels.Bad"));
  job.labels.clear();
  EXPECT_TRUE(FailsAt(job, "jobSpec.workerPoolSpecs[0].containerSpec.imageUri"));
}

}  // namespace
}  // namespace trainyard
