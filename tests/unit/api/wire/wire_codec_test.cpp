// The wire codec is what gcloud, the Node SDK and curl users touch first, so these tests pin the
// exact bodies those clients send and the exact error texts they get back.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "api/wire/custom_job_codec.h"
#include "api/wire/enums.h"
#include "api/wire/json_depth.h"
#include "api/wire/json_reader.h"
#include "services/model/custom_job.h"

namespace trainyard {
namespace {

using nlohmann::json;
using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// `gcloud ai custom-jobs create` with two --worker-pool-spec flags, one of them empty, plus
// --service-account, --network, --enable-web-access, --persistent-resource-id, --labels and
// --kms-key (docs/wire-format.md, "What gcloud sends").
constexpr char kGcloudBody[] = R"({
  "displayName": "train-llm",
  "jobSpec": {
    "workerPoolSpecs": [
      {"machineSpec": {"machineType": "a3-megagpu-8g", "acceleratorType": "NVIDIA_H100_MEGA_80GB",
                       "acceleratorCount": 8},
       "replicaCount": "1",
       "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/train:latest",
                         "command": ["python", "train.py"], "args": ["--epochs=3"]}},
      {},
      {"machineSpec": {"machineType": "n2-standard-8"}, "replicaCount": "2",
       "pythonPackageSpec": {"executorImageUri": "us-docker.pkg.dev/vertex-ai/training/pytorch:2",
                             "packageUris": ["gs://b/trainer.tar.gz"],
                             "pythonModule": "trainer.task", "args": ["--epochs=3"]}}
    ],
    "serviceAccount": "sa@p.iam.gserviceaccount.com",
    "network": "projects/123456789012/global/networks/default",
    "enableWebAccess": true,
    "persistentResourceId": "my-pr"
  },
  "labels": {"team": "ml"},
  "encryptionSpec": {"kmsKeyName": "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"}
})";

// docs/wire-format.md, "What the Node SDK sends": the exact createCustomJob body of
// @google-cloud/aiplatform 7.4.0.
constexpr char kNodeSdkBody[] = R"json(
{"labels":{"team":"ml"},"webAccessUris":{},"displayName":"acc-job",
 "jobSpec":{"workerPoolSpecs":[{"containerSpec":{"command":["python","-c"],"args":["print(\"hello\")"],
   "env":[{"name":"FOO","value":"bar"}],"imageUri":"python:3.11"},
   "machineSpec":{"machineType":"n1-standard-4","acceleratorType":5,"acceleratorCount":1},
   "replicaCount":"1","diskSpec":{"bootDiskType":"pd-ssd","bootDiskSizeGb":100}}],
  "scheduling":{"timeout":"3600s"},"baseOutputDirectory":{"outputUriPrefix":"gs://bucket/out"}}})json";

StatusOr<CustomJob> Decode(const std::string& text,
                           OutputOnlyFields mode = OutputOnlyFields::kIgnore) {
  return DecodeCustomJob(json::parse(text), mode);
}

// A body with one pool whose JSON is `pool`.
StatusOr<CustomJob> DecodePool(const std::string& pool) {
  return Decode(R"({"displayName":"j","jobSpec":{"workerPoolSpecs":[)" + pool + "]}}");
}

void ExpectInvalid(const Status& status, const std::string& message, const std::string& field) {
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message(), message);
  ASSERT_EQ(status.violations().size(), 1u) << status.message();
  EXPECT_EQ(status.violations()[0].field, field);
}

Timestamp Utc(int y, unsigned mo, unsigned d, int h = 0, int mi = 0, int s = 0) {
  return Timestamp(std::chrono::sys_days(std::chrono::year(y) / mo / d)) + hours(h) + minutes(mi) +
         seconds(s);
}

// A job with every field of the model set to a non-default value.
CustomJob FullJob() {
  CustomJob job;
  job.name = "projects/123/locations/us-central1/customJobs/4567890123456789012";
  job.display_name = "full";
  ContainerSpec container{"img:1", {"python", "-m", "t"}, {"--a=1"}, {{"A", "1"}, {"B", ""}}};
  MachineSpec machine;
  machine.machine_type = "a3-highgpu-8g";
  machine.accelerator_type = AcceleratorType::kNvidiaH100_80gb;
  machine.accelerator_count = 8;
  machine.tpu_topology = "2x2";
  machine.reservation_affinity = ReservationAffinity{ReservationAffinityType::kSpecificReservation,
                                                     "compute.googleapis.com/reservation-name",
                                                     {"res-1"}};
  machine.gpu_partition_size = "1g.10gb";
  WorkerPoolSpec chief;
  chief.container_spec = container;
  chief.machine_spec = machine;
  chief.replica_count = 1;
  chief.disk_spec = DiskSpec{"hyperdisk-balanced", 500};
  chief.nfs_mounts = {{"10.0.0.2", "/share", "data"}};
  chief.lustre_mounts = {{"10.90.1.4", "vol-1", "lfs", "scratch"}};
  chief.machine_spec->multihost_gpu_node_count = 2;
  chief.machine_spec->min_gpu_driver_version = "535.104.06";
  WorkerPoolSpec workers;
  workers.python_package_spec =
      PythonPackageSpec{"exec:1", {"gs://b/p.tar.gz"}, "trainer.task", {"--x"}, {{"E", "v"}}};
  workers.machine_spec = MachineSpec{};
  workers.replica_count = 9'000'000'000;  // beyond int32: must survive as an int64 string
  job.job_spec.worker_pool_specs = {chief, WorkerPoolSpec{}, workers};
  job.job_spec.scheduling =
      Scheduling{hours(24), true, SchedulingStrategy::kFlexStart, true, milliseconds(1500)};
  job.job_spec.service_account = "sa@p.iam.gserviceaccount.com";
  job.job_spec.network = "projects/123/global/networks/n";
  job.job_spec.reserved_ip_ranges = {"range-a"};
  job.job_spec.base_output_directory = "gs://b/out";
  job.job_spec.protected_artifact_location_id = "us-central1";
  job.job_spec.tensorboard = "projects/p/locations/l/tensorboards/1";
  job.job_spec.enable_web_access = true;
  job.job_spec.enable_dashboard_access = true;
  job.job_spec.experiment = "exp";
  job.job_spec.experiment_run = "run";
  job.job_spec.models = {"projects/p/locations/l/models/m"};
  job.job_spec.persistent_resource_id = "pr-1";
  job.job_spec.psc_interface_config =
      PscInterfaceConfig{"na-1", {{"corp.example.com.", "host-proj", "vpc-a"}}};
  job.state = JobState::kCancelled;
  job.error = RpcStatus{1, "cancelled by user"};
  job.create_time = Utc(2024, 1, 2, 3, 4, 5) + microseconds(120000);
  job.start_time = Utc(2024, 1, 2, 3, 5, 0);
  job.end_time = Utc(2024, 1, 2, 4, 0, 0) + microseconds(1);
  job.update_time = Utc(2024, 1, 2, 4, 0, 1);
  job.labels = {{"team", "ml"}, {"env", "dev"}};
  job.encryption_spec = EncryptionSpec{"projects/p/locations/l/keyRings/r/cryptoKeys/k"};
  job.web_access_uris = {{"workerpool0-0", "https://abc.notebooks.googleusercontent.com"}};
  return job;
}

// ---- Real client bodies ------------------------------------------------------------------------

TEST(WireCodecTest, DecodesGcloudCreateBody) {
  auto job = Decode(kGcloudBody);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->display_name, "train-llm");
  const auto& pools = job->job_spec.worker_pool_specs;
  ASSERT_EQ(pools.size(), 3u);
  EXPECT_EQ(pools[0].machine_spec->accelerator_type, AcceleratorType::kNvidiaH100Mega80gb);
  EXPECT_EQ(pools[0].machine_spec->accelerator_count, 8);
  EXPECT_EQ(pools[0].replica_count, 1);
  EXPECT_EQ(pools[0].container_spec->command, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_TRUE(pools[1].IsPlaceholder());
  EXPECT_EQ(pools[2].replica_count, 2);
  EXPECT_EQ(pools[2].python_package_spec->python_module, "trainer.task");
  EXPECT_EQ(pools[2].python_package_spec->package_uris[0], "gs://b/trainer.tar.gz");
  EXPECT_TRUE(job->job_spec.enable_web_access);
  EXPECT_EQ(job->job_spec.persistent_resource_id, "my-pr");
  EXPECT_EQ(job->job_spec.network, "projects/123456789012/global/networks/default");
  EXPECT_EQ(job->labels.at("team"), "ml");
  EXPECT_EQ(job->encryption_spec->kms_key_name,
            "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k");
}

TEST(WireCodecTest, DecodesNodeSdkCreateBody) {
  auto job = Decode(kNodeSdkBody);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->display_name, "acc-job");
  EXPECT_EQ(job->labels.at("team"), "ml");
  EXPECT_TRUE(job->web_access_uris.empty());
  const WorkerPoolSpec& pool = job->job_spec.worker_pool_specs.at(0);
  EXPECT_EQ(pool.container_spec->image_uri, "python:3.11");
  EXPECT_EQ(pool.container_spec->args[0], "print(\"hello\")");
  ASSERT_EQ(pool.container_spec->env.size(), 1u);
  EXPECT_EQ(pool.container_spec->env[0].name, "FOO");
  EXPECT_EQ(pool.container_spec->env[0].value, "bar");
  EXPECT_EQ(pool.machine_spec->accelerator_type, AcceleratorType::kNvidiaTeslaT4);  // sent as 5
  EXPECT_EQ(pool.disk_spec->boot_disk_size_gb, 100);
  EXPECT_EQ(pool.disk_spec->boot_disk_type, "pd-ssd");
  EXPECT_EQ(job->job_spec.scheduling->timeout, seconds(3600));
  EXPECT_EQ(job->job_spec.base_output_directory, "gs://bucket/out");
}

TEST(WireCodecTest, NodeSdkEmptyLabelsMapDecodes) {
  auto job = Decode(R"({"labels":{},"webAccessUris":{},"displayName":"x","jobSpec":{}})");
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_TRUE(job->labels.empty());
}

// ---- Spellings ---------------------------------------------------------------------------------

TEST(WireCodecTest, DecodesSnakeCaseBody) {
  auto job = Decode(R"({"display_name":"s","job_spec":{"worker_pool_specs":[
      {"machine_spec":{"machine_type":"n1","accelerator_type":"NVIDIA_L4","accelerator_count":2,
                       "tpu_topology":"2x2","gpu_partition_size":"1g.10gb",
                       "reservation_affinity":{"reservation_affinity_type":"ANY_RESERVATION"}},
       "replica_count":"3","container_spec":{"image_uri":"img"},
       "disk_spec":{"boot_disk_type":"pd-ssd","boot_disk_size_gb":200},
       "nfs_mounts":[{"server":"s","path":"/p","mount_point":"m"}]}],
      "service_account":"sa","reserved_ip_ranges":["r"],"enable_dashboard_access":true,
      "base_output_directory":{"output_uri_prefix":"gs://b"},"experiment_run":"run",
      "protected_artifact_location_id":"loc","persistent_resource_id":"pr",
      "scheduling":{"max_wait_duration":"60s","restart_job_on_worker_restart":true,
                    "disable_retries":true}},
    "encryption_spec":{"kms_key_name":"k"}})");
  ASSERT_TRUE(job.ok()) << job.status().message();
  const WorkerPoolSpec& pool = job->job_spec.worker_pool_specs.at(0);
  EXPECT_EQ(pool.machine_spec->accelerator_type, AcceleratorType::kNvidiaL4);
  EXPECT_EQ(pool.machine_spec->reservation_affinity->type,
            ReservationAffinityType::kAnyReservation);
  EXPECT_EQ(pool.machine_spec->gpu_partition_size, "1g.10gb");
  EXPECT_EQ(pool.replica_count, 3);
  EXPECT_EQ(pool.disk_spec->boot_disk_size_gb, 200);
  EXPECT_EQ(pool.nfs_mounts.at(0).mount_point, "m");
  EXPECT_EQ(job->job_spec.service_account, "sa");
  EXPECT_TRUE(job->job_spec.enable_dashboard_access);
  EXPECT_EQ(job->job_spec.base_output_directory, "gs://b");
  EXPECT_EQ(job->job_spec.experiment_run, "run");
  EXPECT_EQ(job->job_spec.protected_artifact_location_id, "loc");
  EXPECT_EQ(job->job_spec.persistent_resource_id, "pr");
  EXPECT_EQ(job->job_spec.scheduling->max_wait_duration, seconds(60));
  EXPECT_TRUE(job->job_spec.scheduling->restart_job_on_worker_restart);
  EXPECT_TRUE(job->job_spec.scheduling->disable_retries);
  EXPECT_EQ(job->encryption_spec->kms_key_name, "k");
}

TEST(WireCodecTest, MixedSpellingsInOneBody) {
  auto job = Decode(R"({"display_name":"m","jobSpec":{"worker_pool_specs":[
      {"machineSpec":{"machine_type":"n1"},"replicaCount":2}]}})");
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->job_spec.worker_pool_specs.at(0).machine_spec->machine_type, "n1");
}

TEST(WireCodecTest, BothSpellingsAtOnceRejected) {
  auto job = Decode(R"({"displayName":"a","display_name":"b"})");
  ExpectInvalid(job.status(),
                "Invalid JSON payload received. Field \"display_name\" at 'custom_job' is given "
                "twice, as \"displayName\" and \"display_name\".",
                "displayName");
  auto nested = DecodePool(R"({"replicaCount":"1","replica_count":"2"})");
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.status().violations().at(0).field, "jobSpec.workerPoolSpecs[0].replicaCount");
}

// ---- Scalars -----------------------------------------------------------------------------------

TEST(WireCodecTest, Int64AsStringOrNumber) {
  for (const char* value : {"\"7\"", "7", "7.0", "7e0"}) {
    auto job = DecodePool(std::string(R"({"replicaCount":)") + value + "}");
    ASSERT_TRUE(job.ok()) << value << ": " << job.status().message();
    EXPECT_EQ(job->job_spec.worker_pool_specs[0].replica_count, 7) << value;
  }
  auto big = DecodePool(R"({"replicaCount":"9223372036854775807"})");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->job_spec.worker_pool_specs[0].replica_count, INT64_MAX);
  auto negative = DecodePool(R"({"replicaCount":"-1"})");  // validation's job, not the codec's
  ASSERT_TRUE(negative.ok());
  EXPECT_EQ(negative->job_spec.worker_pool_specs[0].replica_count, -1);
}

TEST(WireCodecTest, Int64Rejects) {
  ExpectInvalid(DecodePool(R"({"replicaCount":"abc"})").status(),
                "Invalid value at 'custom_job.job_spec.worker_pool_specs[0].replica_count' "
                "(TYPE_INT64), \"abc\"",
                "jobSpec.workerPoolSpecs[0].replicaCount");
  for (const char* value : {"1.5", "\"1.5\"", "\"9223372036854775808\"", "9223372036854775808",
                            "\" 1\"", "\"\"", "\"+1\"", "true", "{}", "1e30"}) {
    auto job = DecodePool(std::string(R"({"replicaCount":)") + value + "}");
    ASSERT_FALSE(job.ok()) << value;
    EXPECT_EQ(job.status().violations().at(0).field, "jobSpec.workerPoolSpecs[0].replicaCount");
  }
}

TEST(WireCodecTest, Int32AsStringOrNumberRangeChecked) {
  auto job = DecodePool(R"({"machineSpec":{"acceleratorCount":"4"},
                            "diskSpec":{"bootDiskSizeGb":"2147483647"}})");
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->job_spec.worker_pool_specs[0].machine_spec->accelerator_count, 4);
  EXPECT_EQ(job->job_spec.worker_pool_specs[0].disk_spec->boot_disk_size_gb, INT32_MAX);
  ExpectInvalid(DecodePool(R"({"diskSpec":{"bootDiskSizeGb":2147483648}})").status(),
                "Invalid value at 'custom_job.job_spec.worker_pool_specs[0].disk_spec."
                "boot_disk_size_gb' (TYPE_INT32), 2147483648",
                "jobSpec.workerPoolSpecs[0].diskSpec.bootDiskSizeGb");
  EXPECT_FALSE(DecodePool(R"({"machineSpec":{"acceleratorCount":"-2147483649"}})").ok());
  EXPECT_FALSE(DecodePool(R"({"machineSpec":{"acceleratorCount":"x"}})").ok());
}

TEST(WireCodecTest, EnumsAsNamesOrNumbers) {
  auto job = Decode(R"({"jobSpec":{"workerPoolSpecs":[
      {"machineSpec":{"acceleratorType":"TPU_V5_LITEPOD",
                      "reservationAffinity":{"reservationAffinityType":3}}},
      {"machineSpec":{"acceleratorType":14}}],
      "scheduling":{"strategy":6}}, "state":"JOB_STATE_RUNNING"})",
                    OutputOnlyFields::kKeep);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const auto& pools = job->job_spec.worker_pool_specs;
  EXPECT_EQ(pools[0].machine_spec->accelerator_type, AcceleratorType::kTpuV5Litepod);
  EXPECT_EQ(pools[0].machine_spec->reservation_affinity->type,
            ReservationAffinityType::kSpecificReservation);
  EXPECT_EQ(pools[1].machine_spec->accelerator_type, AcceleratorType::kNvidiaH100Mega80gb);
  EXPECT_EQ(job->job_spec.scheduling->strategy, SchedulingStrategy::kFlexStart);
  EXPECT_EQ(job->state, JobState::kRunning);
}

TEST(WireCodecTest, UnknownEnumNameOrNumberListsValidNames) {
  auto job = DecodePool(R"({"machineSpec":{"acceleratorType":"TPU_V5P"}})");
  ASSERT_FALSE(job.ok());
  const std::string& message = job.status().message();
  EXPECT_EQ(message.rfind("Invalid value at 'custom_job.job_spec.worker_pool_specs[0].machine_spec."
                          "accelerator_type' (type.googleapis.com/google.cloud.aiplatform.v1."
                          "AcceleratorType), \"TPU_V5P\": valid values are "
                          "ACCELERATOR_TYPE_UNSPECIFIED, NVIDIA_TESLA_K80,",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("NVIDIA_RTX_PRO_6000"), std::string::npos);
  EXPECT_EQ(job.status().violations().at(0).field,
            "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType");
  EXPECT_FALSE(DecodePool(R"({"machineSpec":{"acceleratorType":99}})").ok());
  EXPECT_FALSE(DecodePool(R"({"machineSpec":{"acceleratorType":"5"}})").ok());
  EXPECT_FALSE(DecodePool(R"({"machineSpec":{"acceleratorType":"nvidia_tesla_t4"}})").ok());
  auto strategy = Decode(R"({"jobSpec":{"scheduling":{"strategy":5}}})");
  ASSERT_FALSE(strategy.ok());
  EXPECT_NE(strategy.status().message().find("FLEX_START"), std::string::npos);
}

TEST(WireCodecTest, DurationsAndTimestampsInBodies) {
  auto job = Decode(R"({"jobSpec":{"scheduling":{"timeout":"1.5s","maxWaitDuration":"0s"}},
                        "createTime":"2024-01-02T03:04:05.120Z"})",
                    OutputOnlyFields::kKeep);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->job_spec.scheduling->timeout, milliseconds(1500));
  EXPECT_EQ(job->job_spec.scheduling->max_wait_duration, seconds(0));
  EXPECT_EQ(job->create_time, Utc(2024, 1, 2, 3, 4, 5) + milliseconds(120));

  auto bad = Decode(R"({"jobSpec":{"scheduling":{"timeout":"1h"}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind(
                "Invalid value at 'custom_job.job_spec.scheduling.timeout' "
                "(type.googleapis.com/google.protobuf.Duration), \"1h\": invalid Duration",
                0),
            0u)
      << bad.status().message();
  EXPECT_EQ(bad.status().violations().at(0).field, "jobSpec.scheduling.timeout");
  EXPECT_FALSE(Decode(R"({"jobSpec":{"scheduling":{"timeout":3600}}})").ok());
  auto bad_time = Decode(R"({"createTime":"yesterday"})");
  ASSERT_FALSE(bad_time.ok());
  EXPECT_EQ(bad_time.status().violations().at(0).field, "createTime");
}

// ---- Unknown fields ----------------------------------------------------------------------------

TEST(WireCodecTest, UnknownFieldAtRoot) {
  ExpectInvalid(Decode(R"({"displayName":"x","fooBar":1})").status(),
                "Invalid JSON payload received. Unknown name \"fooBar\" at 'custom_job': Cannot "
                "find field.",
                "fooBar");
}

TEST(WireCodecTest, UnknownFieldInJobSpec) {
  ExpectInvalid(Decode(R"({"jobSpec":{"workerPoolSpecs":[],"fooBar":{}}})").status(),
                "Invalid JSON payload received. Unknown name \"fooBar\" at 'custom_job.job_spec': "
                "Cannot find field.",
                "jobSpec.fooBar");
}

TEST(WireCodecTest, UnknownFieldInSecondPool) {
  ExpectInvalid(DecodePool(R"({}, {"replicaCount":"1","replicas":2})").status(),
                "Invalid JSON payload received. Unknown name \"replicas\" at "
                "'custom_job.job_spec.worker_pool_specs[1]': Cannot find field.",
                "jobSpec.workerPoolSpecs[1].replicas");
}

TEST(WireCodecTest, UnknownFieldDeepInside) {
  ExpectInvalid(
      DecodePool(R"({"machineSpec":{"reservationAffinity":{"key":"k","value":"v"}}})").status(),
      "Invalid JSON payload received. Unknown name \"value\" at "
      "'custom_job.job_spec.worker_pool_specs[0].machine_spec.reservation_affinity': Cannot find "
      "field.",
      "jobSpec.workerPoolSpecs[0].machineSpec.reservationAffinity.value");
  ExpectInvalid(DecodePool(R"({"containerSpec":{"env":[{"name":"A","valu":"1"}]}})").status(),
                "Invalid JSON payload received. Unknown name \"valu\" at "
                "'custom_job.job_spec.worker_pool_specs[0].container_spec.env[0]': Cannot find "
                "field.",
                "jobSpec.workerPoolSpecs[0].containerSpec.env[0].valu");
}

TEST(WireCodecTest, WholeCustomJobUnderJobSpecRejected) {
  // gcloud --config with a whole CustomJob instead of a CustomJobSpec (docs/wire-format.md, "What
  // gcloud sends").
  auto job = Decode(R"({"displayName":"x","jobSpec":{"displayName":"x","jobSpec":{}}})");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().violations().at(0).field, "jobSpec.displayName");
}

TEST(WireCodecTest, ProtoNameWithWrongCaseIsUnknown) {
  ExpectInvalid(Decode(R"({"DisplayName":"x"})").status(),
                "Invalid JSON payload received. Unknown name \"DisplayName\" at 'custom_job': "
                "Cannot find field.",
                "DisplayName");
}

// ---- Output-only fields ------------------------------------------------------------------------

constexpr char kWithOutputOnly[] = R"({"name":"projects/p/locations/l/customJobs/1",
    "displayName":"x","jobSpec":{},"state":"JOB_STATE_RUNNING","error":{"code":1,"message":"m",
    "details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo"}]},
    "createTime":"2024-01-01T00:00:00Z","startTime":"2024-01-01T00:00:01Z",
    "endTime":"2024-01-01T00:00:02Z","updateTime":"2024-01-01T00:00:03Z",
    "webAccessUris":{"workerpool0-0":"https://x"},"satisfiesPzs":true,"satisfiesPzi":false})";

TEST(WireCodecTest, OutputOnlyFieldsAcceptedAndIgnoredOnCreate) {
  auto job = Decode(kWithOutputOnly);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->display_name, "x");
  EXPECT_TRUE(job->name.empty());
  EXPECT_EQ(job->state, JobState::kUnspecified);
  EXPECT_FALSE(job->error.has_value());
  EXPECT_FALSE(job->create_time || job->start_time || job->end_time || job->update_time);
  EXPECT_TRUE(job->web_access_uris.empty());
}

TEST(WireCodecTest, OutputOnlyFieldsKeptWhenAsked) {
  auto job = Decode(kWithOutputOnly, OutputOnlyFields::kKeep);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->name, "projects/p/locations/l/customJobs/1");
  EXPECT_EQ(job->state, JobState::kRunning);
  EXPECT_EQ(job->error->code, 1);
  EXPECT_EQ(job->error->message, "m");
  EXPECT_EQ(job->update_time, Utc(2024, 1, 1, 0, 0, 3));
  EXPECT_EQ(job->web_access_uris.at("workerpool0-0"), "https://x");
}

TEST(WireCodecTest, OutputOnlyFieldsStillTypeChecked) {
  EXPECT_FALSE(Decode(R"({"state":"BOGUS"})").ok());
  EXPECT_FALSE(Decode(R"({"satisfiesPzs":"yes"})").ok());
  EXPECT_FALSE(Decode(R"({"createTime":5})").ok());
  EXPECT_FALSE(Decode(R"({"error":{"code":1,"reason":"x"}})").ok());
}

// ---- Nulls and wrong types ---------------------------------------------------------------------

TEST(WireCodecTest, NullMeansNotSet) {
  auto job = Decode(R"({"displayName":null,"labels":null,"encryptionSpec":null,
      "jobSpec":{"workerPoolSpecs":[{"machineSpec":null,"replicaCount":null,
                                     "containerSpec":{"args":null,"imageUri":"i"}}],
                 "scheduling":null,"network":null,"enableWebAccess":null,"models":null}})");
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_TRUE(job->display_name.empty());
  EXPECT_FALSE(job->encryption_spec.has_value());
  EXPECT_FALSE(job->job_spec.scheduling.has_value());
  const WorkerPoolSpec& pool = job->job_spec.worker_pool_specs.at(0);
  EXPECT_FALSE(pool.machine_spec.has_value());
  EXPECT_EQ(pool.replica_count, 0);
  EXPECT_TRUE(pool.container_spec->args.empty());
}

TEST(WireCodecTest, NullListElementsRejected) {
  ExpectInvalid(Decode(R"({"jobSpec":{"workerPoolSpecs":[{},null]}})").status(),
                "Invalid value at 'custom_job.job_spec.worker_pool_specs[1]' "
                "(type.googleapis.com/google.cloud.aiplatform.v1.WorkerPoolSpec), null",
                "jobSpec.workerPoolSpecs[1]");
  ExpectInvalid(DecodePool(R"({"containerSpec":{"args":["a",null]}})").status(),
                "Invalid value at 'custom_job.job_spec.worker_pool_specs[0].container_spec."
                "args[1]' (TYPE_STRING), null",
                "jobSpec.workerPoolSpecs[0].containerSpec.args[1]");
}

TEST(WireCodecTest, WrongTypes) {
  ExpectInvalid(Decode(R"({"displayName":5})").status(),
                "Invalid value at 'custom_job.display_name' (TYPE_STRING), 5", "displayName");
  ExpectInvalid(Decode(R"({"displayName":["a"]})").status(),
                "Invalid JSON payload received. Unknown name \"displayName\" at 'custom_job': "
                "Proto field is not repeating, cannot start list.",
                "displayName");
  ExpectInvalid(Decode(R"({"jobSpec":"x"})").status(),
                "Invalid value at 'custom_job.job_spec' "
                "(type.googleapis.com/google.cloud.aiplatform.v1.CustomJobSpec), \"x\"",
                "jobSpec");
  ExpectInvalid(Decode(R"({"jobSpec":{"enableWebAccess":"true"}})").status(),
                "Invalid value at 'custom_job.job_spec.enable_web_access' (TYPE_BOOL), \"true\"",
                "jobSpec.enableWebAccess");
  ExpectInvalid(Decode(R"({"labels":{"team":1}})").status(),
                "Invalid value at 'custom_job.labels.team' (TYPE_STRING), 1", "labels.team");
  ExpectInvalid(Decode(R"({"jobSpec":{"workerPoolSpecs":{}}})").status(),
                "Invalid value at 'custom_job.job_spec.worker_pool_specs' "
                "(type.googleapis.com/google.cloud.aiplatform.v1.WorkerPoolSpec), {...}",
                "jobSpec.workerPoolSpecs");
  EXPECT_FALSE(Decode(R"({"labels":["a"]})").ok());
  EXPECT_FALSE(DecodePool(R"({"containerSpec":{"args":"--x"}})").ok());
  EXPECT_FALSE(DecodePool(R"({"containerSpec":{"env":{"A":"1"}}})").ok());
}

TEST(WireCodecTest, LongValuesAreCutShortInMessages) {
  auto long_value = Decode(R"({"jobSpec":{"enableWebAccess":")" + std::string(5000, 'x') + "\"}}");
  ASSERT_FALSE(long_value.ok());
  EXPECT_LT(long_value.status().message().size(), 200u);
}

TEST(WireCodecTest, BodyMustBeAnObject) {
  for (const char* body : {"[]", "\"x\"", "5", "null"}) {
    auto job = Decode(body);
    ASSERT_FALSE(job.ok()) << body;
    EXPECT_EQ(job.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(job.status().message().rfind(
                  "Invalid JSON payload received. Expected a JSON object at 'custom_job'", 0),
              0u)
        << job.status().message();
  }
}

TEST(WireCodecTest, OneofTaskSetTwiceRejected) {
  ExpectInvalid(
      DecodePool(R"({"containerSpec":{"imageUri":"a"},"pythonPackageSpec":{"pythonModule":"m"}})")
          .status(),
      "Invalid JSON payload received. Oneof field 'task' at "
      "'custom_job.job_spec.worker_pool_specs[0]' is already set by containerSpec; cannot also "
      "set pythonPackageSpec.",
      "jobSpec.workerPoolSpecs[0].pythonPackageSpec");
  EXPECT_TRUE(DecodePool(R"({"containerSpec":{"imageUri":"a"},"pythonPackageSpec":null})").ok());
}

// ---- Placeholders ------------------------------------------------------------------------------

TEST(WireCodecTest, PlaceholderPoolsKeepPositions) {
  auto job = Decode(R"({"jobSpec":{"workerPoolSpecs":[
      {"machineSpec":{"machineType":"n1"}}, {}, {}, {"machineSpec":{"machineType":"e2"}}]}})");
  ASSERT_TRUE(job.ok()) << job.status().message();
  const auto& pools = job->job_spec.worker_pool_specs;
  ASSERT_EQ(pools.size(), 4u);
  EXPECT_FALSE(pools[0].IsPlaceholder());
  EXPECT_TRUE(pools[1].IsPlaceholder());
  EXPECT_TRUE(pools[2].IsPlaceholder());
  EXPECT_EQ(pools[3].machine_spec->machine_type, "e2");
  json pools_json = EncodeCustomJob(*job)["jobSpec"]["workerPoolSpecs"];
  EXPECT_EQ(pools_json, json::parse(R"([
      {"machineSpec":{"machineType":"n1"},"replicaCount":"1"}, {}, {},
      {"machineSpec":{"machineType":"e2"},"replicaCount":"1"}])"));
}

// ---- Encoding ----------------------------------------------------------------------------------

TEST(WireCodecTest, EncodeOmitsDefaults) {
  CustomJob job;
  job.display_name = "x";
  WorkerPoolSpec pool;
  pool.machine_spec = MachineSpec{};
  pool.machine_spec->machine_type = "n1-standard-4";
  pool.container_spec = ContainerSpec{};
  pool.container_spec->image_uri = "img";
  job.job_spec.worker_pool_specs = {pool};
  EXPECT_EQ(EncodeCustomJob(job), json::parse(R"({"displayName":"x","jobSpec":{"workerPoolSpecs":[
      {"machineSpec":{"machineType":"n1-standard-4"},"containerSpec":{"imageUri":"img"},
       "replicaCount":"1"}]}})"));
  EXPECT_EQ(EncodeCustomJob(CustomJob{}), json::parse(R"({"jobSpec":{}})"));
}

TEST(WireCodecTest, EncodeSetButEmptyMessagesAsEmptyObjects) {
  CustomJobSpec spec;
  spec.scheduling = Scheduling{};
  spec.base_output_directory = "";
  WorkerPoolSpec pool;
  pool.disk_spec = DiskSpec{};
  spec.worker_pool_specs = {pool};
  EXPECT_EQ(EncodeCustomJobSpec(spec), json::parse(R"({"scheduling":{},"baseOutputDirectory":{},
      "workerPoolSpecs":[{"diskSpec":{},"replicaCount":"1"}]})"));
}

TEST(WireCodecTest, EncodeFullJob) {
  json out = EncodeCustomJob(FullJob());
  EXPECT_EQ(out["state"], "JOB_STATE_CANCELLED");
  EXPECT_EQ(out["error"], json::parse(R"({"code":1,"message":"cancelled by user"})"));
  EXPECT_EQ(out["createTime"], "2024-01-02T03:04:05.120Z");
  EXPECT_EQ(out["endTime"], "2024-01-02T04:00:00.000001Z");
  EXPECT_EQ(out["startTime"], "2024-01-02T03:05:00Z");
  const json& spec = out["jobSpec"];
  EXPECT_EQ(spec["scheduling"], json::parse(R"({"timeout":"86400s",
      "restartJobOnWorkerRestart":true,"strategy":"FLEX_START","disableRetries":true,
      "maxWaitDuration":"1.500s"})"));
  const json& chief = spec["workerPoolSpecs"][0];
  EXPECT_EQ(chief["replicaCount"], "1");
  EXPECT_EQ(chief["machineSpec"]["acceleratorType"], "NVIDIA_H100_80GB");
  EXPECT_EQ(chief["machineSpec"]["acceleratorCount"], 8);  // int32: a JSON number
  EXPECT_EQ(chief["machineSpec"]["reservationAffinity"]["reservationAffinityType"],
            "SPECIFIC_RESERVATION");
  EXPECT_EQ(chief["diskSpec"], json::parse(R"({"bootDiskType":"hyperdisk-balanced",
                                               "bootDiskSizeGb":500})"));
  EXPECT_EQ(chief["containerSpec"]["env"],
            json::parse(R"([{"name":"A","value":"1"},{"name":"B"}])"));
  EXPECT_EQ(spec["workerPoolSpecs"][1], json::object());
  EXPECT_EQ(spec["workerPoolSpecs"][2]["replicaCount"], "9000000000");
  EXPECT_EQ(spec["workerPoolSpecs"][2]["machineSpec"], json::object());
  EXPECT_EQ(spec["baseOutputDirectory"], json::parse(R"({"outputUriPrefix":"gs://b/out"})"));
  EXPECT_EQ(out["webAccessUris"]["workerpool0-0"], "https://abc.notebooks.googleusercontent.com");
  EXPECT_FALSE(out.contains("satisfiesPzs"));
}

TEST(WireCodecTest, EncodeUnknownEnumValueAsNumber) {
  CustomJob job;
  job.state = static_cast<JobState>(42);
  EXPECT_EQ(EncodeCustomJob(job)["state"], 42);
}

TEST(WireCodecTest, EncodeRpcStatus) {
  EXPECT_EQ(EncodeRpcStatus({1, "Job cancelled"}),
            json::parse(R"({"code":1,"message":"Job cancelled"})"));
  EXPECT_EQ(EncodeRpcStatus({13, ""}), json::parse(R"({"code":13})"));
  EXPECT_EQ(EncodeRpcStatus({}), json::object());
}

// ---- Round trips -------------------------------------------------------------------------------

TEST(WireCodecTest, FullJobRoundTrips) {
  const CustomJob original = FullJob();
  const json encoded = EncodeCustomJob(original);
  auto decoded = DecodeCustomJob(encoded, OutputOnlyFields::kKeep);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(EncodeCustomJob(*decoded), encoded);
  // Spot checks on the model itself, beyond JSON equality.
  EXPECT_EQ(decoded->create_time, original.create_time);
  EXPECT_EQ(decoded->job_spec.scheduling->max_wait_duration, milliseconds(1500));
  EXPECT_EQ(decoded->job_spec.worker_pool_specs[2].replica_count, 9'000'000'000);
  EXPECT_TRUE(decoded->job_spec.worker_pool_specs[1].IsPlaceholder());
  EXPECT_EQ(decoded->job_spec.worker_pool_specs[0].machine_spec->reservation_affinity->values,
            std::vector<std::string>{"res-1"});
  EXPECT_EQ(decoded->job_spec.worker_pool_specs[0].nfs_mounts[0].server, "10.0.0.2");
  EXPECT_EQ(decoded->job_spec.worker_pool_specs[0].lustre_mounts[0].volume_handle, "vol-1");
  EXPECT_EQ(decoded->job_spec.worker_pool_specs[0].machine_spec->multihost_gpu_node_count, 2);
  EXPECT_EQ(decoded->job_spec.psc_interface_config->dns_peering_configs[0].domain,
            "corp.example.com.");
  EXPECT_EQ(decoded->labels, original.labels);
}

TEST(WireCodecTest, SpecRoundTripsThroughStorageForm) {
  const CustomJobSpec original = FullJob().job_spec;
  const json stored = EncodeCustomJobSpec(original);
  auto decoded = DecodeCustomJobSpec(json::parse(stored.dump()), "jobSpec");
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(EncodeCustomJobSpec(*decoded), stored);
}

TEST(WireCodecTest, EncodeOfDecodeIsStable) {
  for (const char* body : {kGcloudBody, kNodeSdkBody}) {
    auto first = Decode(body);
    ASSERT_TRUE(first.ok()) << first.status().message();
    const json once = EncodeCustomJob(*first);
    auto second = DecodeCustomJob(once);
    ASSERT_TRUE(second.ok()) << second.status().message();
    EXPECT_EQ(EncodeCustomJob(*second), once);
  }
}

TEST(WireCodecTest, DecodeCustomJobSpecIsStrictAndPathRelative) {
  ExpectInvalid(
      DecodeCustomJobSpec(json::parse(R"({"workerPoolSpecs":[],"bogus":1})"), "jobSpec").status(),
      "Invalid JSON payload received. Unknown name \"bogus\" at 'custom_job.job_spec': "
      "Cannot find field.",
      "jobSpec.bogus");
  EXPECT_FALSE(DecodeCustomJobSpec(json::array(), "jobSpec").ok());
}

// ---- Newer v1 fields and the v1beta1 superset ---------------------------------------------------

// A create body with the v1 fields newer than the first codec: pscInterfaceConfig (CustomJobSpec)
// and lustreMounts (WorkerPoolSpec).
constexpr char kPscLustreBody[] = R"({"displayName":"j","jobSpec":{
  "workerPoolSpecs":[{"machineSpec":{"machineType":"n2-standard-8"},"replicaCount":"1",
    "containerSpec":{"imageUri":"img"},
    "lustreMounts":[{"instanceIp":"10.90.1.4","volumeHandle":"p/us-central1-a/l1",
                     "filesystem":"lfs","mountPoint":"scratch"}]}],
  "pscInterfaceConfig":{"networkAttachment":"na-1",
    "dnsPeeringConfigs":[{"domain":"corp.example.com.","targetProject":"host",
                          "targetNetwork":"vpc-a"}]}}})";

TEST(WireCodecTest, PscInterfaceConfigAndLustreMountsDecodeOnV1) {
  auto job = DecodeCustomJob(json::parse(kPscLustreBody), OutputOnlyFields::kIgnore,
                             UnknownFields::kReject, ApiVersion::kV1);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const CustomJobSpec& spec = job->job_spec;
  ASSERT_TRUE(spec.psc_interface_config.has_value());
  EXPECT_EQ(spec.psc_interface_config->network_attachment, "na-1");
  ASSERT_EQ(spec.psc_interface_config->dns_peering_configs.size(), 1u);
  EXPECT_EQ(spec.psc_interface_config->dns_peering_configs[0].domain, "corp.example.com.");
  EXPECT_EQ(spec.psc_interface_config->dns_peering_configs[0].target_project, "host");
  EXPECT_EQ(spec.psc_interface_config->dns_peering_configs[0].target_network, "vpc-a");
  ASSERT_EQ(spec.worker_pool_specs[0].lustre_mounts.size(), 1u);
  const LustreMount& m = spec.worker_pool_specs[0].lustre_mounts[0];
  EXPECT_EQ(m.instance_ip, "10.90.1.4");
  EXPECT_EQ(m.volume_handle, "p/us-central1-a/l1");
  EXPECT_EQ(m.filesystem, "lfs");
  EXPECT_EQ(m.mount_point, "scratch");
  // Encoded back (for either version) it is the body's jobSpec again.
  const json body = json::parse(kPscLustreBody);
  EXPECT_EQ(EncodeCustomJob(*job, ApiVersion::kV1)["jobSpec"], body["jobSpec"]);
  EXPECT_EQ(EncodeCustomJobSpec(spec), body["jobSpec"]);
}

TEST(WireCodecTest, PscAndLustreAcceptSnakeCase) {
  auto job = Decode(R"({"job_spec":{"worker_pool_specs":[{"lustre_mounts":[{"instance_ip":"1.2.3.4",
      "volume_handle":"v","filesystem":"f","mount_point":"m"}]}],
      "psc_interface_config":{"network_attachment":"na","dns_peering_configs":[{"domain":"a.",
      "target_project":"p","target_network":"n"}]}}})");
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->job_spec.worker_pool_specs[0].lustre_mounts[0].instance_ip, "1.2.3.4");
  EXPECT_EQ(job->job_spec.psc_interface_config->dns_peering_configs[0].target_network, "n");
  // A pool with only lustreMounts is not a placeholder: it keeps its mounts.
  EXPECT_FALSE(job->job_spec.worker_pool_specs[0].IsPlaceholder());
}

TEST(WireCodecTest, PscAndLustreUnknownFieldsAndTypes) {
  ExpectInvalid(DecodePool(R"({"lustreMounts":[{"instanceIp":"1.2.3.4","server":"x"}]})").status(),
                "Invalid JSON payload received. Unknown name \"server\" at "
                "'custom_job.job_spec.worker_pool_specs[0].lustre_mounts[0]': Cannot find field.",
                "jobSpec.workerPoolSpecs[0].lustreMounts[0].server");
  ExpectInvalid(
      Decode(R"({"jobSpec":{"pscInterfaceConfig":{"dnsPeeringConfigs":[{"domain":7}]}}})").status(),
      "Invalid value at 'custom_job.job_spec.psc_interface_config.dns_peering_configs[0].domain' "
      "(TYPE_STRING), 7",
      "jobSpec.pscInterfaceConfig.dnsPeeringConfigs[0].domain");
  EXPECT_FALSE(DecodePool(R"({"lustreMounts":{"instanceIp":"1.2.3.4"}})").ok());
}

constexpr char kBetaPool[] = R"({"machineSpec":{"machineType":"a4x-highgpu-4g",
    "acceleratorType":"NVIDIA_GB200","acceleratorCount":4,"multihostGpuNodeCount":2,
    "minGpuDriverVersion":"570.86.15"},"replicaCount":"1","containerSpec":{"imageUri":"img"}})";

StatusOr<CustomJob> DecodeAt(ApiVersion version, const std::string& pool) {
  return DecodeCustomJob(
      json::parse(R"({"displayName":"j","jobSpec":{"workerPoolSpecs":[)" + pool + "]}}"),
      OutputOnlyFields::kIgnore, UnknownFields::kReject, version);
}

TEST(WireCodecTest, V1RejectsV1beta1MachineSpecFields) {
  ExpectInvalid(DecodeAt(ApiVersion::kV1, kBetaPool).status(),
                "Invalid JSON payload received. Unknown name \"minGpuDriverVersion\" at "
                "'custom_job.job_spec.worker_pool_specs[0].machine_spec': Cannot find field.",
                "jobSpec.workerPoolSpecs[0].machineSpec.minGpuDriverVersion");
  ExpectInvalid(
      DecodeAt(ApiVersion::kV1, R"({"machineSpec":{"multihost_gpu_node_count":2}})").status(),
      "Invalid JSON payload received. Unknown name \"multihost_gpu_node_count\" at "
      "'custom_job.job_spec.worker_pool_specs[0].machine_spec': Cannot find field.",
      "jobSpec.workerPoolSpecs[0].machineSpec.multihost_gpu_node_count");
}

TEST(WireCodecTest, V1beta1AcceptsItsMachineSpecFields) {
  auto job = DecodeAt(ApiVersion::kV1beta1, kBetaPool);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const MachineSpec& ms = *job->job_spec.worker_pool_specs[0].machine_spec;
  EXPECT_EQ(ms.multihost_gpu_node_count, 2);
  EXPECT_EQ(ms.min_gpu_driver_version, "570.86.15");
  EXPECT_EQ(ms.NodesPerReplica(), 2);
  // int32 on the wire: a number (a decimal string is accepted too).
  EXPECT_TRUE(
      DecodeAt(ApiVersion::kV1beta1, R"({"machineSpec":{"multihostGpuNodeCount":"3"}})").ok());
  EXPECT_FALSE(
      DecodeAt(ApiVersion::kV1beta1, R"({"machineSpec":{"multihostGpuNodeCount":1.5}})").ok());
  const json beta = EncodeCustomJob(*job, ApiVersion::kV1beta1);
  const json& machine = beta["jobSpec"]["workerPoolSpecs"][0]["machineSpec"];
  EXPECT_EQ(machine["multihostGpuNodeCount"], 2);
  EXPECT_EQ(machine["minGpuDriverVersion"], "570.86.15");
}

TEST(WireCodecTest, V1ResponsesLeaveV1beta1FieldsOut) {
  auto job = DecodeAt(ApiVersion::kV1beta1, kBetaPool);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const json v1 = EncodeCustomJob(*job, ApiVersion::kV1);
  const json& machine = v1["jobSpec"]["workerPoolSpecs"][0]["machineSpec"];
  EXPECT_FALSE(machine.contains("multihostGpuNodeCount"));
  EXPECT_FALSE(machine.contains("minGpuDriverVersion"));
  EXPECT_EQ(machine["acceleratorType"], "NVIDIA_GB200");
  // What a v1 client gets decodes as v1 again.
  EXPECT_TRUE(
      DecodeCustomJob(v1, OutputOnlyFields::kKeep, UnknownFields::kReject, ApiVersion::kV1).ok());
}

TEST(WireCodecTest, StorageFormKeepsV1beta1Fields) {
  auto job = DecodeAt(ApiVersion::kV1beta1, kBetaPool);
  ASSERT_TRUE(job.ok()) << job.status().message();
  // Storage writes and reads with the defaults: the superset, whatever route created the job.
  auto stored =
      DecodeCustomJobSpec(json::parse(EncodeCustomJobSpec(job->job_spec).dump()), "jobSpec");
  ASSERT_TRUE(stored.ok()) << stored.status().message();
  EXPECT_EQ(stored->worker_pool_specs[0].machine_spec->multihost_gpu_node_count, 2);
  EXPECT_EQ(stored->worker_pool_specs[0].machine_spec->min_gpu_driver_version, "570.86.15");
}

// ---- Reader pieces -----------------------------------------------------------------------------

TEST(JsonReaderTest, FieldPathsInBothSpellings) {
  FieldPath root("custom_job");
  EXPECT_EQ(root.json(), "");
  EXPECT_EQ(root.proto(), "custom_job");
  FieldPath pool = root.Field("jobSpec").Field("workerPoolSpecs").Index(2).Field("replicaCount");
  EXPECT_EQ(pool.json(), "jobSpec.workerPoolSpecs[2].replicaCount");
  EXPECT_EQ(pool.proto(), "custom_job.job_spec.worker_pool_specs[2].replica_count");
  FieldPath parsed("custom_job", "jobSpec.workerPoolSpecs[0]");
  EXPECT_EQ(parsed.proto(), "custom_job.job_spec.worker_pool_specs[0]");
  EXPECT_EQ(ToSnakeCase("bootDiskSizeGb"), "boot_disk_size_gb");
}

TEST(JsonReaderTest, ReusableForOtherResources) {
  // The PersistentResource codec will root its paths at 'persistent_resource'.
  const json body = json::parse(R"({"resourcePools":[{"id":"p","replicaCount":"2"}],"x":1})");
  ObjectReader reader(body, FieldPath("persistent_resource"));
  std::vector<int64_t> counts;
  reader.GetObjectList("resourcePools", "google.cloud.aiplatform.v1.ResourcePool",
                       [&](ObjectReader& pool, size_t) {
                         std::string id;
                         pool.GetString("id", &id);
                         pool.GetInt64("replicaCount", &counts.emplace_back());
                       });
  ExpectInvalid(reader.Finish(),
                "Invalid JSON payload received. Unknown name \"x\" at 'persistent_resource': "
                "Cannot find field.",
                "x");
  EXPECT_EQ(counts, std::vector<int64_t>{2});
}

TEST(JsonReaderTest, GettersReportPresence) {
  const json body = json::parse(R"({"a":"x","b":null})");
  ObjectReader reader(body, FieldPath("m"));
  std::string a = "unchanged", b = "unchanged", c = "unchanged";
  EXPECT_TRUE(reader.GetString("a", &a));
  EXPECT_FALSE(reader.GetString("b", &b));
  EXPECT_FALSE(reader.GetString("c", &c));
  EXPECT_EQ(a, "x");
  EXPECT_EQ(b, "unchanged");
  EXPECT_TRUE(reader.Finish().ok());
}

// ---- Timestamps --------------------------------------------------------------------------------

TEST(TimeFormatTest, FormatTimestamp) {
  EXPECT_EQ(FormatTimestamp(FromUnixMicros(0)), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatTimestamp(Utc(2024, 2, 29, 23, 59, 59)), "2024-02-29T23:59:59Z");
  EXPECT_EQ(FormatTimestamp(Utc(2024, 1, 2, 3, 4, 5) + milliseconds(120)),
            "2024-01-02T03:04:05.120Z");
  EXPECT_EQ(FormatTimestamp(Utc(2024, 1, 2, 3, 4, 5) + microseconds(123456)),
            "2024-01-02T03:04:05.123456Z");
  EXPECT_EQ(FormatTimestamp(Utc(2024, 1, 2) + microseconds(1)), "2024-01-02T00:00:00.000001Z");
  EXPECT_EQ(FormatTimestamp(FromUnixMicros(-1)), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(FormatTimestamp(Utc(1, 1, 1)), "0001-01-01T00:00:00Z");
  EXPECT_EQ(FormatTimestamp(Utc(9999, 12, 31, 23, 59, 59)), "9999-12-31T23:59:59Z");
}

TEST(TimeFormatTest, ParseTimestamp) {
  EXPECT_EQ(*ParseTimestamp("2024-01-02T03:04:05Z"), Utc(2024, 1, 2, 3, 4, 5));
  EXPECT_EQ(*ParseTimestamp("2024-01-02T03:04:05.5Z"),
            Utc(2024, 1, 2, 3, 4, 5) + milliseconds(500));
  EXPECT_EQ(*ParseTimestamp("2024-01-02T03:04:05.123456Z"),
            Utc(2024, 1, 2, 3, 4, 5) + microseconds(123456));
  // Nanoseconds below the microsecond are truncated (Timestamp holds microseconds).
  EXPECT_EQ(*ParseTimestamp("2024-01-02T03:04:05.123456789Z"),
            Utc(2024, 1, 2, 3, 4, 5) + microseconds(123456));
  // gcloud stream-logs' first lower bound.
  EXPECT_EQ(*ParseTimestamp("1970-01-01T01:00:00.000000000Z"), FromUnixMicros(3'600'000'000));
  EXPECT_EQ(*ParseTimestamp("2024-01-02T04:04:05+01:00"), Utc(2024, 1, 2, 3, 4, 5));
  EXPECT_EQ(*ParseTimestamp("2024-01-01T22:04:05-05:30"), Utc(2024, 1, 2, 3, 34, 5));
  EXPECT_EQ(*ParseTimestamp("2024-01-02t03:04:05z"), Utc(2024, 1, 2, 3, 4, 5));
  EXPECT_EQ(*ParseTimestamp("1969-12-31T23:59:59.999999Z"), FromUnixMicros(-1));
  EXPECT_EQ(*ParseTimestamp("2024-02-29T00:00:00Z"), Utc(2024, 2, 29));
}

TEST(TimeFormatTest, ParseTimestampRejects) {
  for (const char* text :
       {"", "2024-01-02", "2024-01-02T03:04:05", "2024-01-02 03:04:05Z", "2024-1-02T03:04:05Z",
        "2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-32T00:00:00Z",
        "2024-01-02T24:00:00Z", "2024-01-02T03:60:00Z", "2024-01-02T03:04:60Z",
        "2024-01-02T03:04:05.Z", "2024-01-02T03:04:05.1234567890Z", "2024-01-02T03:04:05+0100",
        "2024-01-02T03:04:05+24:00", "2024-01-02T03:04:05Zjunk", "0000-01-01T00:00:00Z",
        "0001-01-01T00:00:00+00:01", "1704164645"}) {
    auto parsed = ParseTimestamp(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument);
  }
}

TEST(TimeFormatTest, TimestampRoundTrips) {
  for (int64_t us : {int64_t{0}, int64_t{1}, int64_t{1704164645123456}, int64_t{-86400000001}}) {
    EXPECT_EQ(*ParseTimestamp(FormatTimestamp(FromUnixMicros(us))), FromUnixMicros(us)) << us;
  }
}

// ---- Durations ---------------------------------------------------------------------------------

TEST(TimeFormatTest, FormatDuration) {
  EXPECT_EQ(FormatDuration(seconds(3600)), "3600s");
  EXPECT_EQ(FormatDuration(seconds(0)), "0s");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1.500s");
  EXPECT_EQ(FormatDuration(microseconds(1000001)), "1.000001s");
  EXPECT_EQ(FormatDuration(nanoseconds(100)), "0.000000100s");
  EXPECT_EQ(FormatDuration(milliseconds(-100)), "-0.100s");
  EXPECT_EQ(FormatDuration(seconds(-3)), "-3s");
  EXPECT_EQ(FormatDuration(nanoseconds(INT64_MIN)), "-9223372036.854775808s");
}

TEST(TimeFormatTest, ParseDuration) {
  EXPECT_EQ(*ParseDuration("3600s"), seconds(3600));
  EXPECT_EQ(*ParseDuration("1.5s"), milliseconds(1500));
  EXPECT_EQ(*ParseDuration("-0.1s"), milliseconds(-100));
  EXPECT_EQ(*ParseDuration("0s"), seconds(0));
  EXPECT_EQ(*ParseDuration("0.000000001s"), nanoseconds(1));
  EXPECT_EQ(*ParseDuration("1.000001s"), microseconds(1000001));
  EXPECT_EQ(*ParseDuration("9223372036.854775807s"), nanoseconds(INT64_MAX));
}

TEST(TimeFormatTest, ParseDurationRejects) {
  for (const char* text :
       {"", "s", "1h", "1.5", "1.s", ".5s", "1.0000000001s", "+1s", " 1s", "1s ", "1S", "1e3s",
        "--1s", "9223372037s", "9223372036.854775808s", "99999999999999999999999s"}) {
    auto parsed = ParseDuration(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument);
  }
}

TEST(TimeFormatTest, DurationRoundTrips) {
  for (int64_t ns : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{1'500'000'000},
                     int64_t{604'800'000'000'000}, INT64_MAX}) {
    EXPECT_EQ(*ParseDuration(FormatDuration(nanoseconds(ns))), nanoseconds(ns)) << ns;
  }
}

// ---- Depth scan --------------------------------------------------------------------------------

TEST(JsonDepthTest, CountsNesting) {
  EXPECT_TRUE(JsonDepthWithin("{}", 1));
  EXPECT_TRUE(JsonDepthWithin("5", 0));
  EXPECT_FALSE(JsonDepthWithin("{}", 0));
  EXPECT_TRUE(JsonDepthWithin(R"({"a":[1],"b":{"c":2}})", 2));
  EXPECT_FALSE(JsonDepthWithin(R"({"a":[[1]]})", 2));
  // body > jobSpec > workerPoolSpecs > pool > containerSpec > env > entry.
  EXPECT_TRUE(JsonDepthWithin(kNodeSdkBody, 7));
  EXPECT_FALSE(JsonDepthWithin(kNodeSdkBody, 6));
}

TEST(JsonDepthTest, IgnoresBracketsInStrings) {
  EXPECT_TRUE(JsonDepthWithin(R"({"a":"[[[[{{{{"})", 1));
  EXPECT_TRUE(JsonDepthWithin(R"({"a":"\"[[[[\\"})", 1));
  // After an escaped backslash the quote does close the string, so the '[' counts.
  EXPECT_FALSE(JsonDepthWithin(R"({"a":"\\",[[]]})", 2));
}

TEST(JsonDepthTest, StrayClosersDoNotBankDepth) { EXPECT_FALSE(JsonDepthWithin("]]]]][[[", 2)); }

TEST(JsonDepthTest, RejectsHugeDepthQuickly) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  EXPECT_FALSE(JsonDepthWithin(deep, 64));
  EXPECT_TRUE(JsonDepthWithin(deep, 100'000));
}

// ---- Enum tables and the model -----------------------------------------------------------------

TEST(EnumsTest, NamesAndNumbers) {
  EXPECT_EQ(JobStateName(JobState::kQueued), "JOB_STATE_QUEUED");
  EXPECT_EQ(JobStateName(JobState::kPartiallySucceeded), "JOB_STATE_PARTIALLY_SUCCEEDED");
  EXPECT_EQ(ParseJobStateName("JOB_STATE_CANCELLING"), JobState::kCancelling);
  EXPECT_EQ(ParseJobStateName("RUNNING"), std::nullopt);
  EXPECT_EQ(AcceleratorTypeName(AcceleratorType::kNvidiaH100Mega80gb), "NVIDIA_H100_MEGA_80GB");
  EXPECT_EQ(AcceleratorTypeName(AcceleratorType::kNvidiaRtxPro6000), "NVIDIA_RTX_PRO_6000");
  EXPECT_EQ(ParseAcceleratorTypeName("NVIDIA_A100_80GB"), AcceleratorType::kNvidiaA100_80gb);
  EXPECT_EQ(ParseAcceleratorTypeName("TPU_V5P"), std::nullopt);
  EXPECT_EQ(ParseAcceleratorTypeName("TPU_V6E"), std::nullopt);
  EXPECT_EQ(SchedulingStrategyName(SchedulingStrategy::kFlexStart), "FLEX_START");
  EXPECT_EQ(ParseSchedulingStrategyName("STRATEGY_UNSPECIFIED"), SchedulingStrategy::kUnspecified);
  EXPECT_EQ(ReservationAffinityTypeName(ReservationAffinityType::kNoReservation), "NO_RESERVATION");
  EXPECT_EQ(ParseReservationAffinityTypeName("SPECIFIC_RESERVATION"),
            ReservationAffinityType::kSpecificReservation);
  EXPECT_EQ(JobStateName(static_cast<JobState>(99)), "");
}

TEST(EnumsTest, TablesAreConsistent) {
  for (const EnumTable* table : {&JobStateTable(), &AcceleratorTypeTable(),
                                 &SchedulingStrategyTable(), &ReservationAffinityTypeTable()}) {
    EXPECT_EQ(table->entries().front().number, 0) << table->full_name();
    for (const EnumEntry& entry : table->entries()) {
      EXPECT_EQ(table->NumberOf(entry.name), entry.number);
      EXPECT_EQ(table->NameOf(entry.number), entry.name);
    }
  }
  EXPECT_EQ(AcceleratorTypeTable().entries().size(), 19u);
  EXPECT_EQ(SchedulingStrategyTable().ValidNames(),
            "STRATEGY_UNSPECIFIED, ON_DEMAND, LOW_COST, STANDARD, SPOT, FLEX_START");
}

TEST(CustomJobModelTest, TerminalStates) {
  for (JobState state : {JobState::kSucceeded, JobState::kFailed, JobState::kCancelled,
                         JobState::kExpired, JobState::kPartiallySucceeded}) {
    EXPECT_TRUE(IsTerminal(state)) << JobStateName(state);
  }
  for (JobState state :
       {JobState::kUnspecified, JobState::kQueued, JobState::kPending, JobState::kRunning,
        JobState::kCancelling, JobState::kPaused, JobState::kUpdating}) {
    EXPECT_FALSE(IsTerminal(state)) << JobStateName(state);
  }
}

}  // namespace
}  // namespace trainyard
