#include "services/runtime/replica_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "api/wire/custom_job_codec.h"

namespace trainyard {
namespace {

using nlohmann::json;

constexpr int64_t kProject = 100000000001;
constexpr int64_t kJobId = 1234567890123456789;

// A job as a user submits it: the jobSpec's wire JSON, decoded by the server's own codec.
CustomJob JobFrom(const json& spec) {
  auto decoded = DecodeCustomJobSpec(spec, "jobSpec");
  EXPECT_TRUE(decoded.ok()) << decoded.status().message();
  CustomJob job;
  job.name = "projects/" + std::to_string(kProject) + "/locations/us-central1/customJobs/" +
             std::to_string(kJobId);
  job.display_name = "t";
  if (decoded.ok()) job.job_spec = *decoded;
  return job;
}

ReplicaPlanOptions Options(const CustomJob& job) {
  ReplicaPlanOptions o;
  o.project_number = kProject;
  o.job_id = kJobId;
  o.job_spec_json = EncodeCustomJobSpec(job.job_spec).dump();
  return o;
}

std::vector<Replica> Plan(const CustomJob& job, const ReplicaPlanOptions& options) {
  auto plan = PlanReplicas(job, options);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return plan.ok() ? *plan : std::vector<Replica>{};
}

std::vector<Replica> Plan(const CustomJob& job) { return Plan(job, Options(job)); }

// The environment as the process sees it; fails the test on a duplicate name, which would make
// the value depend on how a runtime builds its environ.
std::map<std::string, std::string> Env(const Replica& r) {
  std::map<std::string, std::string> out;
  for (const EnvVar& e : r.env) {
    EXPECT_TRUE(out.emplace(e.name, e.value).second) << r.task_name << ": duplicate " << e.name;
  }
  return out;
}

json JsonVar(const Replica& r, const std::string& name) {
  auto env = Env(r);
  auto it = env.find(name);
  if (it == env.end()) {
    ADD_FAILURE() << r.task_name << ": no " << name;
    return json();
  }
  return json::parse(it->second);
}

std::string FieldOf(const Status& s) {
  return s.violations().empty() ? "" : s.violations().front().field;
}

json ContainerPool(const std::string& machine, int replicas, json extra = json::object()) {
  json p = {{"machineSpec", {{"machineType", machine}}},
            {"replicaCount", std::to_string(replicas)},
            {"containerSpec", {{"imageUri", "us-docker.pkg.dev/p/r/trainer:1"}}}};
  p.update(extra);
  return p;
}

std::string Host(int pool, int index) {
  return "cmle-training-workerpool" + std::to_string(pool) + "-" + JobHostHash(kJobId) + "-" +
         std::to_string(index);
}

TEST(ReplicaPlanTest, HostHashIsStableShortHex) {
  // Pinned: the hash must not change between runs, builds or machines, or a restarted runtime
  // would give a running job's replicas new names.
  EXPECT_EQ(JobHostHash(kJobId), JobHostHash(kJobId));
  EXPECT_TRUE(std::regex_match(JobHostHash(kJobId), std::regex("[0-9a-f]{10}")));
  EXPECT_EQ(JobHostHash(0), "397b1dcdaf");  // splitmix64(0) = 0xe220a8397b1dcdaf
  EXPECT_EQ(JobHostHash(kJobId), "e77e231db2");
  EXPECT_NE(JobHostHash(kJobId), JobHostHash(kJobId + 1));
}

// Chief (2 T4 on N1) + two CPU workers: every variable of every replica.
TEST(ReplicaPlanTest, ChiefAndTwoWorkersGetTheWholeEnvironment) {
  json spec = {{"workerPoolSpecs",
                {ContainerPool("n1-standard-8", 1,
                               {{"machineSpec",
                                 {{"machineType", "n1-standard-8"},
                                  {"acceleratorType", "NVIDIA_TESLA_T4"},
                                  {"acceleratorCount", 2}}},
                                {"containerSpec",
                                 {{"imageUri", "trainer:1"},
                                  {"command", {"python", "train.py"}},
                                  {"args", {"--epochs=3"}},
                                  {"env", {{{"name", "FOO"}, {"value", "bar"}}}}}}}),
                 ContainerPool("n1-standard-4", 2)}}};
  CustomJob job = JobFrom(spec);
  std::vector<Replica> plan = Plan(job);
  ASSERT_EQ(plan.size(), 3u);

  const json cluster = {{"workerpool0", {Host(0, 0) + ":2222"}},
                        {"workerpool1", {Host(1, 0) + ":2222", Host(1, 1) + ":2222"}}};
  const json tf_cluster = {{"chief", cluster["workerpool0"]}, {"worker", cluster["workerpool1"]}};
  const json job_json = EncodeCustomJobSpec(job.job_spec);

  struct Want {
    int pool, index;
    std::string tf_type;
    int rank;
    std::string local_world_size;
  };
  const Want want[] = {{0, 0, "chief", 0, "2"}, {1, 0, "worker", 1, "1"}, {1, 1, "worker", 2, "1"}};
  for (size_t k = 0; k < 3; ++k) {
    const Replica& r = plan[k];
    const Want& w = want[k];
    SCOPED_TRACE(r.task_name);
    EXPECT_EQ(r.pool, w.pool);
    EXPECT_EQ(r.index, w.index);
    EXPECT_EQ(r.task_name, "workerpool" + std::to_string(w.pool) + "-" + std::to_string(w.index));
    EXPECT_EQ(r.hostname, Host(w.pool, w.index));
    EXPECT_EQ(r.endpoint.host, r.hostname);
    EXPECT_EQ(r.endpoint.port, 2222);
    EXPECT_EQ(r.primary, k == 0);

    auto env = Env(r);
    json cs = json::parse(env.at("CLUSTER_SPEC"));
    EXPECT_EQ(
        cs,
        (json{
            {"cluster", cluster},
            {"environment", "cloud"},
            {"task",
             {{"type", "workerpool" + std::to_string(w.pool)}, {"index", w.index}, {"trial", ""}}},
            {"job", job_json}}));
    json tf = json::parse(env.at("TF_CONFIG"));
    EXPECT_EQ(tf, (json{{"cluster", tf_cluster},
                        {"task", {{"type", w.tf_type}, {"index", w.index}, {"trial", ""}}},
                        {"environment", "cloud"},
                        {"job", job_json}}));
    std::map<std::string, std::string> rest = env;
    rest.erase("CLUSTER_SPEC");
    rest.erase("TF_CONFIG");
    std::map<std::string, std::string> expected = {
        {"CLOUD_ML_PROJECT_ID", "100000000001"},
        {"CLOUD_ML_JOB_ID", "1234567890123456789"},
        {"MASTER_ADDR", Host(0, 0)},
        {"MASTER_PORT", "23456"},
        {"WORLD_SIZE", "3"},
        {"RANK", std::to_string(w.rank)},
        {"NODE_RANK", std::to_string(w.rank)},
        {"LOCAL_WORLD_SIZE", w.local_world_size},
    };
    if (w.pool == 0) expected["FOO"] = "bar";  // the pool's own env, and only that pool's
    EXPECT_EQ(rest, expected);
  }
  EXPECT_EQ(plan[0].image_uri, "trainer:1");
  EXPECT_EQ(plan[0].command, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_EQ(plan[0].args, (std::vector<std::string>{"--epochs=3"}));
  EXPECT_EQ(plan[1].image_uri, "us-docker.pkg.dev/p/r/trainer:1");
  EXPECT_TRUE(plan[1].command.empty());
}

TEST(ReplicaPlanTest, BuiltInGpusAreTheLocalWorldSize) {
  auto plan = Plan(JobFrom({{"workerPoolSpecs", {ContainerPool("a3-highgpu-8g", 1)}}}));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(Env(plan[0]).at("LOCAL_WORLD_SIZE"), "8");
}

// ct5lp-hightpu-4t + 4x4 = 16 chips on 4 hosts: every host runs the program.
TEST(ReplicaPlanTest, TpuV5eSliceRunsOneReplicaPerHost) {
  json spec = {
      {"workerPoolSpecs",
       {ContainerPool(
           "ct5lp-hightpu-4t", 1,
           {{"machineSpec", {{"machineType", "ct5lp-hightpu-4t"}, {"tpuTopology", "4x4"}}}})}}};
  auto plan = Plan(JobFrom(spec));
  ASSERT_EQ(plan.size(), 4u);
  const std::string hostnames = Host(0, 0) + "," + Host(0, 1) + "," + Host(0, 2) + "," + Host(0, 3);
  for (int i = 0; i < 4; ++i) {
    const Replica& r = plan[i];
    SCOPED_TRACE(r.task_name);
    EXPECT_EQ(r.pool, 0);
    EXPECT_EQ(r.index, i);
    EXPECT_EQ(r.task_name, "workerpool0-" + std::to_string(i));
    EXPECT_EQ(r.primary, i == 0);
    auto env = Env(r);
    EXPECT_EQ(env.at("TPU_WORKER_ID"), std::to_string(i));
    EXPECT_EQ(env.at("TPU_WORKER_HOSTNAMES"), hostnames);
    EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "4");  // chips per host
    EXPECT_EQ(env.at("WORLD_SIZE"), "4");
    EXPECT_EQ(env.at("RANK"), std::to_string(i));
    EXPECT_EQ(env.at("MASTER_ADDR"), Host(0, 0));
    // One Vertex replica (replicaCount 1): TF_CONFIG would need a chief of four hosts.
    EXPECT_EQ(env.count("TF_CONFIG"), 0u);
    json cs = JsonVar(r, "CLUSTER_SPEC");
    EXPECT_EQ(cs["cluster"]["workerpool0"].size(), 4u);
    EXPECT_EQ(cs["cluster"]["workerpool0"][i], Host(0, i) + ":2222");
    EXPECT_EQ(cs["task"]["index"], i);
    EXPECT_EQ(env.count("MEGASCALE_NUM_SLICES"), 0u) << "one slice: no Multislice variables";
  }
}

// Multislice: a slice in pool 0 and two more in pool 1, a process per host. Each host knows its
// slice's hosts, its slice among all, and slice 0's first host as the coordinator (port 8081), as
// XPK and JobSet tell MaxText and JAX.
TEST(ReplicaPlanTest, MultisliceHostsKnowTheirSliceAndTheCoordinator) {
  json tpu = {{"machineSpec", {{"machineType", "ct5lp-hightpu-4t"}, {"tpuTopology", "4x4"}}}};
  json spec = {
      {"workerPoolSpecs",
       {ContainerPool("ct5lp-hightpu-4t", 1, tpu), ContainerPool("ct5lp-hightpu-4t", 2, tpu)}}};
  auto plan = Plan(JobFrom(spec));
  ASSERT_EQ(plan.size(), 12u) << "3 slices of 4 hosts";
  for (const Replica& r : plan) {
    SCOPED_TRACE(r.task_name);
    auto env = Env(r);
    const int slice = r.pool == 0 ? 0 : 1 + r.index / 4;
    EXPECT_EQ(env.at("MEGASCALE_NUM_SLICES"), "3");
    EXPECT_EQ(env.at("MEGASCALE_SLICE_ID"), std::to_string(slice));
    EXPECT_EQ(env.at("MEGASCALE_COORDINATOR_ADDRESS"), Host(0, 0) + ":8081");
    EXPECT_EQ(env.at("MEGASCALE_PORT"), "8081");
    EXPECT_EQ(env.at("TPU_WORKER_ID"), std::to_string(r.index % 4));
    const int first = r.index / 4 * 4;
    EXPECT_EQ(env.at("TPU_WORKER_HOSTNAMES"), Host(r.pool, first) + "," + Host(r.pool, first + 1) +
                                                  "," + Host(r.pool, first + 2) + "," +
                                                  Host(r.pool, first + 3));
    EXPECT_EQ(env.at("WORLD_SIZE"), "12");
    EXPECT_EQ(env.count("TF_CONFIG"), 0u) << "TF_CONFIG's chief and workers are not TPU slices";
  }
  EXPECT_EQ(plan[4].task_name, "workerpool1-0");
}

TEST(ReplicaPlanTest, CloudTpuPodHasOneHostPerEightCores) {
  json spec = {{"workerPoolSpecs",
                {ContainerPool("cloud-tpu", 1,
                               {{"machineSpec",
                                 {{"machineType", "cloud-tpu"},
                                  {"acceleratorType", "TPU_V3"},
                                  {"acceleratorCount", 32}}}})}}};
  auto plan = Plan(JobFrom(spec));
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(Env(plan[3]).at("TPU_WORKER_ID"), "3");
  EXPECT_EQ(Env(plan[3]).at("LOCAL_WORLD_SIZE"), "4");
}

TEST(ReplicaPlanTest, SingleHostTpuGetsWorkerIdZero) {
  auto plan = Plan(JobFrom({{"workerPoolSpecs", {ContainerPool("ct5lp-hightpu-8t", 1)}}}));
  ASSERT_EQ(plan.size(), 1u);
  auto env = Env(plan[0]);
  EXPECT_EQ(env.at("TPU_WORKER_ID"), "0");
  EXPECT_EQ(env.at("TPU_WORKER_HOSTNAMES"), Host(0, 0));
  EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "8");
}

TEST(ReplicaPlanTest, BaseOutputDirectoryGivesModelCheckpointAndLogDirs) {
  for (std::string base : {"gs://bucket/run-1", "gs://bucket/run-1/"}) {
    SCOPED_TRACE(base);
    json spec = {{"workerPoolSpecs", {ContainerPool("n1-standard-4", 1)}},
                 {"baseOutputDirectory", {{"outputUriPrefix", base}}}};
    auto plan = Plan(JobFrom(spec));
    ASSERT_EQ(plan.size(), 1u);
    auto env = Env(plan[0]);
    EXPECT_EQ(env.at("AIP_MODEL_DIR"), "gs://bucket/run-1/model/");
    EXPECT_EQ(env.at("AIP_CHECKPOINT_DIR"), "gs://bucket/run-1/checkpoints/");
    EXPECT_EQ(env.at("AIP_TENSORBOARD_LOG_DIR"), "gs://bucket/run-1/logs/");
  }
  auto plan = Plan(JobFrom({{"workerPoolSpecs", {ContainerPool("n1-standard-4", 1)}}}));
  ASSERT_EQ(plan.size(), 1u);
  auto env = Env(plan[0]);
  EXPECT_EQ(env.count("AIP_MODEL_DIR"), 0u);
  EXPECT_EQ(env.count("AIP_CHECKPOINT_DIR"), 0u);
  EXPECT_EQ(env.count("AIP_TENSORBOARD_LOG_DIR"), 0u);
}

TEST(ReplicaPlanTest, SingleReplicaHasClusterSpecButNoTfConfig) {
  CustomJob job = JobFrom({{"workerPoolSpecs", {ContainerPool("n1-standard-4", 1)}}});
  auto plan = Plan(job);
  ASSERT_EQ(plan.size(), 1u);
  auto env = Env(plan[0]);
  EXPECT_EQ(env.count("TF_CONFIG"), 0u);
  EXPECT_TRUE(plan[0].primary);
  EXPECT_EQ(env.at("WORLD_SIZE"), "1");
  EXPECT_EQ(env.at("RANK"), "0");
  EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "1");  // CPU only
  EXPECT_EQ(env.count("TPU_WORKER_ID"), 0u);
  json cs = JsonVar(plan[0], "CLUSTER_SPEC");
  EXPECT_EQ(cs["cluster"], (json{{"workerpool0", {Host(0, 0) + ":2222"}}}));
  EXPECT_EQ(cs["task"], (json{{"type", "workerpool0"}, {"index", 0}, {"trial", ""}}));
  EXPECT_EQ(cs["job"], EncodeCustomJobSpec(job.job_spec));
}

TEST(ReplicaPlanTest, ReplicaCountNotSentMeansOne) {
  json pool = ContainerPool("n1-standard-4", 1);
  pool.erase("replicaCount");
  auto plan = Plan(JobFrom({{"workerPoolSpecs", {pool}}}));
  EXPECT_EQ(plan.size(), 1u);
}

// Vertex: workerPoolSpecs[0] is the primary and required; the validator rejects `{}` there too.
TEST(ReplicaPlanTest, EmptyPrimaryPoolIsRejected) {
  CustomJob job =
      JobFrom({{"workerPoolSpecs", {json::object(), ContainerPool("n1-standard-4", 2)}}});
  auto plan = PlanReplicas(job, Options(job));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(FieldOf(plan.status()), "jobSpec.workerPoolSpecs[0]");
}

// gcloud sends `{}` for a skipped pool: positions (roles) stay, the skipped pool has no replicas.
TEST(ReplicaPlanTest, SkippedPoolKeepsPositionsAndEvaluatorsStayOutOfTheWorld) {
  json spec = {{"workerPoolSpecs",
                {ContainerPool("n1-standard-4", 1), ContainerPool("n1-standard-4", 2),
                 json::object(), ContainerPool("n1-standard-4", 1)}}};
  auto plan = Plan(JobFrom(spec));
  ASSERT_EQ(plan.size(), 4u);
  const Replica& evaluator = plan[3];
  EXPECT_EQ(evaluator.pool, 3);
  EXPECT_EQ(evaluator.task_name, "workerpool3-0");
  EXPECT_EQ(evaluator.hostname, Host(3, 0));
  json cs = JsonVar(evaluator, "CLUSTER_SPEC");
  EXPECT_EQ(cs["cluster"].size(), 3u);
  EXPECT_FALSE(cs["cluster"].contains("workerpool2"));
  EXPECT_EQ(cs["cluster"]["workerpool3"], (json{Host(3, 0) + ":2222"}));
  EXPECT_EQ(cs["task"]["type"], "workerpool3");
  json tf = JsonVar(evaluator, "TF_CONFIG");
  EXPECT_EQ(tf["task"], (json{{"type", "evaluator"}, {"index", 0}, {"trial", ""}}));
  EXPECT_EQ(tf["cluster"].size(), 2u);  // chief and worker: no ps configured, evaluators never
  EXPECT_TRUE(tf["cluster"].contains("chief"));
  EXPECT_TRUE(tf["cluster"].contains("worker"));

  for (const Replica& r : plan) EXPECT_EQ(Env(r).at("WORLD_SIZE"), "3") << r.task_name;
  EXPECT_EQ(Env(plan[2]).at("RANK"), "2");
  auto env = Env(evaluator);
  EXPECT_EQ(env.count("RANK"), 0u);
  EXPECT_EQ(env.count("NODE_RANK"), 0u);
  EXPECT_EQ(env.at("MASTER_ADDR"), Host(0, 0));
}

TEST(ReplicaPlanTest, ParameterServersAreRankedAfterWorkers) {
  json spec = {{"workerPoolSpecs",
                {ContainerPool("n1-standard-4", 1), ContainerPool("n1-standard-4", 2),
                 ContainerPool("n1-standard-4", 2)}}};
  auto plan = Plan(JobFrom(spec));
  ASSERT_EQ(plan.size(), 5u);
  EXPECT_EQ(Env(plan[4]).at("RANK"), "4");
  EXPECT_EQ(Env(plan[4]).at("WORLD_SIZE"), "5");
  json tf = JsonVar(plan[3], "TF_CONFIG");
  EXPECT_EQ(tf["task"]["type"], "ps");
  EXPECT_EQ(tf["task"]["index"], 0);
  EXPECT_EQ(tf["cluster"]["ps"].size(), 2u);
}

// The local-process runtime: every replica on 127.0.0.1, each on its own port.
TEST(ReplicaPlanTest, CustomEndpointsFlowIntoClusterSpecAndMasterAddr) {
  CustomJob job =
      JobFrom({{"workerPoolSpecs",
                {ContainerPool("n1-standard-4", 1), ContainerPool("n1-standard-4", 2)}}});
  ReplicaPlanOptions options = Options(job);
  options.endpoint = [](int pool, int index) {
    return ReplicaEndpoint{"127.0.0.1", 30000 + pool * 10 + index};
  };
  options.master_port = 41000;
  auto plan = Plan(job, options);
  ASSERT_EQ(plan.size(), 3u);
  const json cluster = {{"workerpool0", {"127.0.0.1:30000"}},
                        {"workerpool1", {"127.0.0.1:30010", "127.0.0.1:30011"}}};
  for (const Replica& r : plan) {
    SCOPED_TRACE(r.task_name);
    EXPECT_EQ(r.endpoint.host, "127.0.0.1");
    EXPECT_EQ(r.endpoint.port, 30000 + r.pool * 10 + r.index);
    // The hostname stays the Vertex-style one: unique even when every endpoint is 127.0.0.1.
    EXPECT_EQ(r.hostname, Host(r.pool, r.index));
    EXPECT_EQ(JsonVar(r, "CLUSTER_SPEC")["cluster"], cluster);
    EXPECT_EQ(JsonVar(r, "TF_CONFIG")["cluster"]["worker"], cluster["workerpool1"]);
    auto env = Env(r);
    EXPECT_EQ(env.at("MASTER_ADDR"), "127.0.0.1");
    EXPECT_EQ(env.at("MASTER_PORT"), "41000");
  }
}

TEST(ReplicaPlanTest, BadEndpointIsOurBugNotTheJobs) {
  CustomJob job = JobFrom({{"workerPoolSpecs", {ContainerPool("n1-standard-4", 1)}}});
  ReplicaPlanOptions options = Options(job);
  options.endpoint = [](int, int) { return ReplicaEndpoint{"127.0.0.1", 0}; };
  auto plan = PlanReplicas(job, options);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), Code::kInternal);
}

TEST(ReplicaPlanTest, PythonPackageRunsTheModuleInTheExecutorImage) {
  json spec = {{"workerPoolSpecs",
                {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
                  {"replicaCount", "1"},
                  {"pythonPackageSpec",
                   {{"executorImageUri", "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-13:latest"},
                    {"packageUris", {"gs://bucket/trainer-0.1.tar.gz"}},
                    {"pythonModule", "trainer.task"},
                    {"args", {"--lr=0.1"}},
                    {"env", {{{"name", "FOO"}, {"value", "1"}}}}}}}}}};
  auto plan = Plan(JobFrom(spec));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].image_uri, "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-13:latest");
  EXPECT_EQ(plan[0].command, (std::vector<std::string>{"python3", "-m", "trainer.task"}));
  EXPECT_EQ(plan[0].args, (std::vector<std::string>{"--lr=0.1"}));
  EXPECT_EQ(plan[0].package_uris, (std::vector<std::string>{"gs://bucket/trainer-0.1.tar.gz"}));
  EXPECT_EQ(Env(plan[0]).at("FOO"), "1");
}

TEST(ReplicaPlanTest, UserEnvYieldsOnClusterIdentityButWinsOnKnobs) {
  json chief_env = {{{"name", "CLUSTER_SPEC"}, {"value", "{}"}},
                    {{"name", "RANK"}, {"value", "7"}},
                    {{"name", "CLOUD_ML_JOB_ID"}, {"value", "1"}},
                    {{"name", "MASTER_PORT"}, {"value", "29500"}},
                    {{"name", "LOCAL_WORLD_SIZE"}, {"value", "1"}},
                    {{"name", "AIP_MODEL_DIR"}, {"value", "/mnt/model"}},
                    {{"name", "TF_CONFIG"}, {"value", "mine"}}};
  json worker_env = {{{"name", "MASTER_PORT"}, {"value", "1234"}},
                     {{"name", "TPU_WORKER_ID"}, {"value", "5"}}};
  json spec = {{"workerPoolSpecs",
                {ContainerPool("n1-standard-4", 1,
                               {{"containerSpec", {{"imageUri", "t:1"}, {"env", chief_env}}}}),
                 ContainerPool("n1-standard-4", 1,
                               {{"containerSpec", {{"imageUri", "t:1"}, {"env", worker_env}}}})}},
               {"baseOutputDirectory", {{"outputUriPrefix", "gs://b/o"}}}};
  auto plan = Plan(JobFrom(spec));
  ASSERT_EQ(plan.size(), 2u);
  auto chief = Env(plan[0]);  // Env() also checks that no name appears twice
  EXPECT_TRUE(JsonVar(plan[0], "CLUSTER_SPEC").contains("cluster"));
  EXPECT_TRUE(JsonVar(plan[0], "TF_CONFIG").contains("cluster"));
  EXPECT_EQ(chief.at("RANK"), "0");
  EXPECT_EQ(chief.at("CLOUD_ML_JOB_ID"), "1234567890123456789");
  EXPECT_EQ(chief.at("MASTER_PORT"), "29500");
  EXPECT_EQ(chief.at("LOCAL_WORLD_SIZE"), "1");
  EXPECT_EQ(chief.at("AIP_MODEL_DIR"), "/mnt/model");
  EXPECT_EQ(chief.at("AIP_CHECKPOINT_DIR"), "gs://b/o/checkpoints/");
  auto worker = Env(plan[1]);
  EXPECT_EQ(worker.at("MASTER_PORT"), "29500");  // where the master listens, not the pool's own
  EXPECT_EQ(worker.at("TPU_WORKER_ID"), "5");    // not ours to set off TPUs: passes through

  // A single replica gets no TF_CONFIG from us, so the user's passes through.
  CustomJob single =
      JobFrom({{"workerPoolSpecs",
                {ContainerPool("n1-standard-4", 1,
                               {{"containerSpec", {{"imageUri", "t:1"}, {"env", chief_env}}}})}}});
  auto one = Plan(single);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(Env(one[0]).at("TF_CONFIG"), "mine");
}

TEST(ReplicaPlanTest, SamePlanEveryTime) {
  CustomJob job =
      JobFrom({{"workerPoolSpecs",
                {ContainerPool("n1-standard-4", 1), ContainerPool("n1-standard-4", 3)}}});
  auto a = Plan(job);
  auto b = Plan(job);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].hostname, b[i].hostname);
    ASSERT_EQ(a[i].env.size(), b[i].env.size());
    for (size_t j = 0; j < a[i].env.size(); ++j) {
      EXPECT_EQ(a[i].env[j].name, b[i].env[j].name);
      EXPECT_EQ(a[i].env[j].value, b[i].env[j].value);
    }
  }
}

TEST(ReplicaPlanTest, UnplannableJobsNameTheField) {
  struct Case {
    json spec;
    std::string field;
  };
  json no_machine = ContainerPool("n1-standard-4", 1);
  no_machine.erase("machineSpec");
  json no_task = ContainerPool("n1-standard-4", 1);
  no_task.erase("containerSpec");
  json five = json::array();
  for (int i = 0; i < 5; ++i) five.push_back(ContainerPool("n1-standard-4", 1));
  const Case cases[] = {
      {{{"workerPoolSpecs", json::array()}}, "jobSpec.workerPoolSpecs"},
      {{{"workerPoolSpecs", five}}, "jobSpec.workerPoolSpecs"},
      {{{"workerPoolSpecs", {no_machine}}}, "jobSpec.workerPoolSpecs[0].machineSpec"},
      {{{"workerPoolSpecs", {ContainerPool("n1-standard-4", 1), no_task}}},
       "jobSpec.workerPoolSpecs[1]"},
      {{{"workerPoolSpecs", {ContainerPool("no-such-machine", 1)}}},
       "jobSpec.workerPoolSpecs[0].machineSpec.machineType"},
      {{{"workerPoolSpecs",
         {ContainerPool("n1-standard-4", 1), ContainerPool("n1-standard-4", 1001)}}},
       "jobSpec.workerPoolSpecs[1].replicaCount"},
      {{{"workerPoolSpecs",
         {ContainerPool(
             "ct5lp-hightpu-4t", 1,
             {{"machineSpec", {{"machineType", "ct5lp-hightpu-4t"}, {"tpuTopology", "3x3"}}}})}}},
       "jobSpec.workerPoolSpecs[0].machineSpec.tpuTopology"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec.dump());
    CustomJob job = JobFrom(c.spec);
    auto plan = PlanReplicas(job, Options(job));
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(FieldOf(plan.status()), c.field);
  }
}

}  // namespace
}  // namespace trainyard
