// Persistent resources end to end below the API, on a real PostgreSQL and the manual clock: the
// resource service writes the change with its operation, the scheduler places the hold, the
// leader's reconciler carries the work out and finishes the operation.
#include <gtest/gtest.h>

#include <future>

#include "storage/pg_admin_store.h"
#include "tests/integration/resource_jobs.h"
#include "tests/integration/sim_fixture.h"
#include "tests/integration/small_job.h"

namespace trainyard {
namespace {

using std::chrono::seconds;
using testing::H100;

// Zone a: 2 reserved A3 High nodes for demo kept booted (keepBooted: no boot to wait out), 4 on
// demand (cold: 60 s boot, 8 s pull).
constexpr const char* kFleet = R"({
  "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-highgpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y", "keepBooted": true,
     "projects": ["demo"], "nodes": 2, "pricePerNodeHour": 30},
    {"machineType": "a3-highgpu-8g", "model": "ON_DEMAND", "nodes": 4, "pricePerNodeHour": 88}]}]})";

const ParentRef kParent{"demo", "us-central1"};

class ResourceServiceTest : public testing::SimFixture {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet)); }

  Operation CreateResource(const std::string& id, int64_t replicas) {
    PersistentResource r;
    r.display_name = id;
    ResourcePool pool;
    pool.machine_spec = H100();
    pool.replica_count = replicas;
    r.resource_pools.push_back(pool);
    auto op = resource_service_->Create(kParent, id, r);
    EXPECT_TRUE(op.ok()) << op.status().message();
    return op.ok() ? *op : Operation{};
  }

  // PATCHes the replicaCount of the resource's one pool.
  StatusOr<Operation> Resize(const std::string& id, int64_t replicas) {
    PersistentResource update;
    update.resource_pools.push_back(ResourcePool{"", H100(), replicas, {}, {}, 0});
    return resource_service_->Patch(ResourceRef{kParent, id}, update,
                                    {"resourcePools.replicaCount"});
  }

  StatusOr<PersistentResource> Resource(const std::string& id) {
    return resource_service_->Get(ResourceRef{kParent, id});
  }

  ResourceState StateOf(const std::string& id) {
    auto r = Resource(id);
    return r.ok() ? r->state : ResourceState::kUnspecified;
  }

  Operation Reread(const Operation& op) {
    auto read = operation_service_->Get(OperationRef{kParent, "", "", std::to_string(op.id)});
    EXPECT_TRUE(read.ok()) << read.status().message();
    return read.ok() ? *read : Operation{};
  }

  static CustomJob Gang(const std::string& resource, int64_t replicas) {
    return testing::H100Gang(resource, replicas);
  }

  StatusOr<CustomJob> CreateOn(const std::string& resource, int64_t replicas) {
    return service_->Create(kParent, Gang(resource, replicas), "");
  }

  // Passes a minute apart until `id` is RUNNING, at most five.
  void UntilRunning(const std::string& id) {
    for (int i = 0; i < 5 && StateOf(id) != ResourceState::kRunning; ++i) {
      Step();
      clock_.Advance(seconds(60));
    }
    auto r = Resource(id);
    ASSERT_EQ(StateOf(id), ResourceState::kRunning)
        << (r.ok() && r->trainyard ? r->trainyard->reason_message : r.status().message());
  }

  // A resource of one pool of `machine` that autoscales between `least` and `most`, RUNNING at
  // its minimum.
  void CreateAutoscaled(const std::string& id, const MachineSpec& machine, int64_t least,
                        int64_t most) {
    PersistentResource r;
    ResourcePool pool;
    pool.machine_spec = machine;
    pool.autoscaling_spec = ResourceAutoscaling{least, most};
    r.resource_pools.push_back(pool);
    ASSERT_TRUE(resource_service_->Create(kParent, id, r).ok());
    ASSERT_NO_FATAL_FAILURE(UntilRunning(id));
    ASSERT_EQ(Resource(id)->resource_pools[0].replica_count, least);
  }

  // A few passes for an autoscaling give-back to land: then `id` is RUNNING at `replicas`.
  void ExpectGivenBackTo(const std::string& id, int64_t replicas) {
    Step();
    Step();
    Step();
    auto shrunk = Resource(id);
    ASSERT_TRUE(shrunk.ok());
    EXPECT_EQ(shrunk->resource_pools[0].replica_count, replicas);
    EXPECT_EQ(shrunk->state, ResourceState::kRunning);
  }

  int64_t Count(const std::string& where) {
    auto conn = pool_->Acquire();
    auto r = (*conn)->Exec("SELECT count(*) FROM nodes WHERE " + where);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->GetInt64(0, 0) : -1;
  }
};

TEST_F(ResourceServiceTest, WarmReservationsMakeItRunningAndFinishTheOperation) {
  Operation op = CreateResource("pr1", 2);
  EXPECT_FALSE(op.done);
  EXPECT_EQ(op.parent, "persistentResources/pr1");
  EXPECT_EQ(op.metadata_type, kCreatePersistentResourceMetadata);
  EXPECT_EQ(StateOf("pr1"), ResourceState::kProvisioning);

  Step();  // placed on the warm reservation: nothing to boot
  Step();  // the reconciler sees it ready
  auto r = Resource("pr1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, ResourceState::kRunning);
  ASSERT_TRUE(r->start_time.has_value());
  ASSERT_TRUE(r->trainyard.has_value());
  ASSERT_EQ(r->trainyard->pools.size(), 1u);
  EXPECT_EQ(r->trainyard->pools[0].consumption_model, "RESERVATION");
  EXPECT_EQ(Count("resource_uid IS NOT NULL AND state = 2"), 2);

  Operation done = Reread(op);
  EXPECT_TRUE(done.done);
  ASSERT_TRUE(done.response_json.has_value());
  auto response = nlohmann::json::parse(*done.response_json);
  EXPECT_EQ(response["@type"], "type.googleapis.com/google.cloud.aiplatform.v1.PersistentResource");
  EXPECT_EQ(response["state"], "RUNNING");

  // The id is taken now.
  PersistentResource again;
  again.resource_pools.push_back(ResourcePool{"", H100(), 1, {}, {}, 0});
  EXPECT_EQ(resource_service_->Create(kParent, "pr1", again).status().code(), Code::kAlreadyExists);
}

TEST_F(ResourceServiceTest, OnDemandNodesBootBeforeItRuns) {
  Operation op = CreateResource("pr1", 3);  // more than the reservation has
  Step();
  auto placed = Resource("pr1");
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(placed->state, ResourceState::kProvisioning);
  ASSERT_EQ(placed->trainyard->pools.size(), 1u);
  EXPECT_EQ(placed->trainyard->pools[0].consumption_model, "ON_DEMAND");
  EXPECT_EQ(Count("resource_uid IS NOT NULL AND state = 1"), 3);  // PROVISIONING

  clock_.Advance(seconds(59));
  Step();
  EXPECT_EQ(StateOf("pr1"), ResourceState::kProvisioning);
  EXPECT_FALSE(Reread(op).done);
  clock_.Advance(seconds(1));
  Step();
  EXPECT_EQ(StateOf("pr1"), ResourceState::kRunning);
  EXPECT_TRUE(Reread(op).done);
  EXPECT_EQ(Count("resource_uid IS NOT NULL AND state = 2"), 3);
}

// What a persistent resource is for: its jobs skip the boot and, once the image is there, the
// pull that every ordinary job waits out (Vertex documents 5-10 minutes of start-up avoided).
// Measured as users see it, from the jobs' createTime and startTime, on a fleet that keeps nothing
// booted.
TEST_F(ResourceServiceTest, AWarmResourceStartsAJobAtLeastFiveTimesFasterThanAnOrdinaryJob) {
  std::string fleet = kFleet;
  const std::string kept = R"( "keepBooted": true,)";
  fleet.erase(fleet.find(kept), kept.size());
  StopFleet();
  ASSERT_NO_FATAL_FAILURE(StartFleet(fleet.c_str()));

  CreateResource("pr1", 1);
  Step();
  clock_.Advance(seconds(60));  // the reserved node boots for the resource
  Step();
  ASSERT_EQ(StateOf("pr1"), ResourceState::kRunning);
  auto waited = [&](const CustomJob& job) {
    CustomJob read = Get(job);
    EXPECT_EQ(read.state, JobState::kSucceeded);
    return read.start_time && read.create_time ? *read.start_time - *read.create_time
                                               : Duration::max();
  };
  auto run_to_end = [&](const CustomJob& job) {
    for (int i = 0; i < 100 && !IsTerminal(Get(job).state); ++i) {
      clock_.Advance(seconds(1));
      Step();
    }
    return waited(job);
  };
  auto first = CreateOn("pr1", 1);  // pulls the image onto the resource's node
  ASSERT_TRUE(first.ok());
  Step();
  clock_.Advance(seconds(600));
  run_to_end(*first);

  auto warm = CreateOn("pr1", 1);
  ASSERT_TRUE(warm.ok());
  auto ordinary = service_->Create(kParent, Gang("", 1), "");
  ASSERT_TRUE(ordinary.ok());
  Step();
  clock_.Advance(seconds(600));
  const Duration warm_wait = run_to_end(*warm);
  const Duration ordinary_wait = run_to_end(*ordinary);
  EXPECT_EQ(ordinary_wait, seconds(68)) << "an on-demand node boots (60s) and pulls (8s)";
  EXPECT_LE(warm_wait * 5, ordinary_wait);
}

TEST_F(ResourceServiceTest, ItsJobsStartWarmAndOtherJobsNeverGetItsNodes) {
  CreateResource("pr1", 2);
  Step();
  Step();
  ASSERT_EQ(StateOf("pr1"), ResourceState::kRunning);

  // A job that does not name the resource cannot have the reservation the resource holds.
  auto outside = service_->Create(kParent, Gang("", 2), "");
  ASSERT_TRUE(outside.ok());

  auto first = CreateOn("pr1", 2);
  ASSERT_TRUE(first.ok()) << first.status().message();
  Step();
  CustomJob on = Get(*first);
  EXPECT_EQ(on.state, JobState::kPending);
  ASSERT_TRUE(on.trainyard.has_value());
  EXPECT_EQ(on.trainyard->pools[0].consumption_model, "RESERVATION");
  // Booted already: only the image pull (10 GB at 10 Gb/s); the resource bills, not the job.
  EXPECT_EQ(on.trainyard->startup, seconds(8));
  EXPECT_EQ(on.trainyard->hourly_price_usd, 0);
  CustomJob off = Get(*outside);
  ASSERT_TRUE(off.trainyard.has_value());
  EXPECT_EQ(off.trainyard->pools[0].consumption_model, "ON_DEMAND");

  // Both replicas busy: the next job on the resource waits with its reason.
  auto second = CreateOn("pr1", 1);
  ASSERT_TRUE(second.ok());
  Step();
  CustomJob waiting = Get(*second);
  EXPECT_EQ(waiting.state, JobState::kQueued);
  EXPECT_EQ(waiting.trainyard->reason_code, "NO_CAPACITY");
  EXPECT_NE(waiting.trainyard->reason_message.find("persistent resource pr1"), std::string::npos)
      << waiting.trainyard->reason_message;
  auto shown = Resource("pr1");
  EXPECT_EQ(shown->resource_pools[0].used_replica_count, 2);

  // Once the first ends, the second starts on a node that has its image: no pull at all.
  for (int i = 0; i < 20 && Get(*first).state != JobState::kSucceeded; ++i) {
    clock_.Advance(seconds(60));
    Step();
  }
  ASSERT_EQ(Get(*first).state, JobState::kSucceeded);
  Step();
  CustomJob warm = Get(*second);
  ASSERT_TRUE(warm.trainyard.has_value());
  EXPECT_NE(warm.state, JobState::kQueued);
  EXPECT_EQ(warm.trainyard->startup, Duration{});
}

TEST_F(ResourceServiceTest, AJobMustMatchAnExistingResourceOfItsProject) {
  CreateResource("pr1", 2);
  auto missing = CreateOn("nope", 1);
  ASSERT_EQ(missing.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(missing.status().violations().at(0).field, "jobSpec.persistentResourceId");

  auto too_many = CreateOn("pr1", 4);
  ASSERT_EQ(too_many.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(too_many.status().violations().at(0).field, "jobSpec.workerPoolSpecs[1].replicaCount");

  CustomJob job = testing::SmallJob("mismatch");  // n1-standard-4, not the resource's machine
  job.job_spec.persistent_resource_id = "pr1";
  auto mismatch = service_->Create(kParent, job, "");
  ASSERT_EQ(mismatch.status().code(), Code::kInvalidArgument);
  EXPECT_NE(mismatch.status().message().find("n1-standard-4"), std::string::npos);
  EXPECT_NE(mismatch.status().message().find("a3-highgpu-8g"), std::string::npos);

  // Another project does not see demo's resource.
  auto elsewhere = service_->Create(
      ParentRef{"other", "us-central1"},
      [&] {
        CustomJob j = job;
        j.job_spec.worker_pool_specs[0].machine_spec = H100();
        return j;
      }(),
      "");
  EXPECT_EQ(elsewhere.status().code(), Code::kInvalidArgument);
}

TEST_F(ResourceServiceTest, DeleteCancelsItsJobsThenGivesItsNodesBack) {
  CreateResource("pr1", 2);
  Step();
  Step();
  clock_.Advance(std::chrono::minutes(30));  // it bills its two nodes meanwhile
  auto job = CreateOn("pr1", 2);
  ASSERT_TRUE(job.ok());
  Step();
  ASSERT_EQ(Get(*job).state, JobState::kPending);

  auto op = resource_service_->Delete(ResourceRef{kParent, "pr1"});
  ASSERT_TRUE(op.ok()) << op.status().message();
  EXPECT_FALSE(op->done);
  EXPECT_EQ(op->metadata_type, kDeleteOperationMetadata);
  EXPECT_EQ(StateOf("pr1"), ResourceState::kStopping);
  EXPECT_EQ(resource_service_->Delete(ResourceRef{kParent, "pr1"}).status().code(),
            Code::kFailedPrecondition);
  EXPECT_EQ(CreateOn("pr1", 1).status().code(), Code::kFailedPrecondition);

  for (int i = 0; i < 5 && Resource("pr1").ok(); ++i) Step();
  EXPECT_EQ(Resource("pr1").status().code(), Code::kNotFound);
  EXPECT_EQ(Get(*job).state, JobState::kCancelled);
  Operation done = Reread(*op);
  EXPECT_TRUE(done.done);
  EXPECT_EQ(nlohmann::json::parse(done.response_json.value_or("{}")),
            nlohmann::json::parse(kEmptyResponseJson));
  EXPECT_EQ(Count("resource_uid IS NOT NULL"), 0);
  EXPECT_EQ(Count("keep_warm AND state = 2"), 2);  // the reservation is warm and free again

  // Its cost outlives it: what it billed from placement to deletion, no more.
  storage::PgAdminStore admin(*pool_);
  auto conn = pool_->Acquire();
  ASSERT_TRUE(conn.ok());
  auto number = (*conn)->Exec("SELECT number FROM projects WHERE project_id = 'demo'");
  ASSERT_TRUE(number.ok() && number->rows() == 1);
  const int64_t project = number->GetInt64(0, 0);
  clock_.Advance(std::chrono::hours(1));
  auto costs = admin.ResourceCosts(project, clock_.Now());
  ASSERT_TRUE(costs.ok()) << costs.status().message();
  ASSERT_EQ(costs->size(), 1u);
  EXPECT_EQ((*costs)[0].name, "projects/" + std::to_string(project) +
                                  "/locations/us-central1/persistentResources/pr1");
  EXPECT_TRUE((*costs)[0].deleted_at.has_value());
  EXPECT_GT((*costs)[0].total_micros, 0);
  auto later = admin.ResourceCosts(project, clock_.Now() + std::chrono::hours(5));
  ASSERT_TRUE(later.ok());
  EXPECT_EQ((*later)[0].total_micros, (*costs)[0].total_micros);
}

TEST_F(ResourceServiceTest, CancellingTheCreateEndsItCancelled) {
  // Every A3 High node is taken by other work: the resource waits with a reason.
  CreateResource("big", 4);
  Step();
  Operation op = CreateResource("pr1", 4);
  Step();
  auto waiting = Resource("pr1");
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(waiting->state, ResourceState::kProvisioning);
  EXPECT_EQ(waiting->trainyard->reason_code, "NO_CAPACITY");

  ASSERT_TRUE(
      operation_service_->Cancel(OperationRef{kParent, "", "", std::to_string(op.id)}).ok());
  Step();
  EXPECT_EQ(Resource("pr1").status().code(), Code::kNotFound);
  Operation done = Reread(op);
  EXPECT_TRUE(done.done);
  ASSERT_TRUE(done.error.has_value());
  EXPECT_EQ(done.error->code, static_cast<int>(Code::kCancelled));
}

TEST_F(ResourceServiceTest, ACapacityThatNeverFitsEndsInErrorAfterTheTimeout) {
  Operation op = CreateResource("pr1", 7);  // no pool has 7
  Step();
  EXPECT_EQ(Resource("pr1")->trainyard->reason_code, "NEVER_FITS");
  clock_.Advance(std::chrono::hours(1));
  Step();
  auto r = Resource("pr1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, ResourceState::kError);
  ASSERT_TRUE(r->error.has_value());
  EXPECT_EQ(r->error->code, static_cast<int>(Code::kResourceExhausted));
  Operation done = Reread(op);
  EXPECT_TRUE(done.done);
  ASSERT_TRUE(done.error.has_value());
  EXPECT_EQ(done.error->code, static_cast<int>(Code::kResourceExhausted));
  // An ERROR resource can still be deleted.
  ASSERT_TRUE(resource_service_->Delete(ResourceRef{kParent, "pr1"}).ok());
  Step();
  EXPECT_EQ(Resource("pr1").status().code(), Code::kNotFound);
}

TEST_F(ResourceServiceTest, AnotherLeaderFinishesTheOperationAfterAKill) {
  Operation op = CreateResource("pr1", 3);
  Step();  // placed on cold on-demand nodes; they boot for 60 s
  ASSERT_EQ(Count("resource_uid IS NOT NULL AND state = 1"), 3);
  // The server dies: its connections (and with them the lead) go; nothing it held in memory
  // counts. Another server over the same database takes over.
  plane_.reset();
  adapters_.reset();
  app::PgAdapters adapters(*pool_, conninfo_, JobLogRetention{});
  auto next = app::ControlPlane::Build(adapters.ports(), fleet_, clock_, runtime_, {});
  ASSERT_TRUE(next.ok()) << next.status().message();
  // The test reads through the new server's services from here on.
  resource_service_ = &(*next)->resources();
  operation_service_ = &(*next)->operations();
  service_ = &(*next)->jobs();
  clock_.Advance(seconds(60));
  ASSERT_NO_FATAL_FAILURE(WaitForFeed());
  auto pass = (*next)->scheduler().RunOnce();
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  EXPECT_TRUE(pass->leading);
  EXPECT_EQ(StateOf("pr1"), ResourceState::kRunning);
  EXPECT_TRUE(Reread(op).done);
}

TEST_F(ResourceServiceTest, WaitReturnsOnceTheWorkIsDone) {
  Operation op = CreateResource("pr1", 3);
  const OperationRef ref{kParent, "", "", std::to_string(op.id)};
  auto quick = operation_service_->Wait(ref, std::chrono::milliseconds(0));
  ASSERT_TRUE(quick.ok());
  EXPECT_FALSE(quick->done);

  auto waited = std::async(std::launch::async, [&] {
    return operation_service_->Wait(ref, std::chrono::milliseconds(30000));
  });
  Step();
  clock_.Advance(seconds(60));
  Step();
  auto result = waited.get();
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(result->done);
}

// Waits are bounded: past the service's waiters a :wait answers at once with the operation as it
// is (WaitOperation is best effort), so waits never hold every request thread.
TEST_F(ResourceServiceTest, AWaitPastTheWaitersAnswersAtOnce) {
  OperationService one_waiter(*projects_, *operations_, clock_, /*max_waiters=*/1);
  Operation op = CreateResource("pr1", 3);
  const OperationRef ref{kParent, "", "", std::to_string(op.id)};
  auto first = std::async(std::launch::async,
                          [&] { return one_waiter.Wait(ref, std::chrono::milliseconds(30000)); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (one_waiter.waiting() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_EQ(one_waiter.waiting(), 1);

  auto second = one_waiter.Wait(ref, std::chrono::milliseconds(30000));
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_FALSE(second->done);
  EXPECT_EQ(one_waiter.waiting(), 1);  // the first still waits

  Step();
  clock_.Advance(seconds(60));
  Step();
  auto result = first.get();
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(result->done);
  EXPECT_EQ(one_waiter.waiting(), 0);
}

TEST_F(ResourceServiceTest, PatchResizesInPlaceAndRenamesAtOnce) {
  CreateResource("pr1", 2);
  Step();
  Step();
  ASSERT_EQ(StateOf("pr1"), ResourceState::kRunning);

  PersistentResource update;
  update.display_name = "renamed";
  auto renamed = resource_service_->Patch(ResourceRef{kParent, "pr1"}, update, {"displayName"});
  ASSERT_TRUE(renamed.ok()) << renamed.status().message();
  EXPECT_TRUE(renamed->done);  // no fleet work
  EXPECT_EQ(Resource("pr1")->display_name, "renamed");

  EXPECT_EQ(
      resource_service_->Patch(ResourceRef{kParent, "pr1"}, update, {"network"}).status().code(),
      Code::kInvalidArgument);

  // The reservation has no third node: the pool waits in UPDATING until it could grow.
  update.resource_pools.push_back(ResourcePool{"", H100(), 3, {}, {}, 0});
  auto grow =
      resource_service_->Patch(ResourceRef{kParent, "pr1"}, update, {"resourcePools.replicaCount"});
  ASSERT_TRUE(grow.ok()) << grow.status().message();
  EXPECT_FALSE(grow->done);
  EXPECT_EQ(StateOf("pr1"), ResourceState::kUpdating);
  Step();
  EXPECT_EQ(StateOf("pr1"), ResourceState::kUpdating);
  EXPECT_EQ(Resource("pr1")->trainyard->reason_code, "NO_CAPACITY");

  // Shrinking supersedes it and happens at once: idle nodes go back to the reservation.
  update.resource_pools[0].replica_count = 1;
  auto shrink =
      resource_service_->Patch(ResourceRef{kParent, "pr1"}, update, {"resourcePools.replicaCount"});
  EXPECT_EQ(shrink.status().code(), Code::kFailedPrecondition);  // only while RUNNING
  EXPECT_TRUE(Reread(*renamed).done);
}

TEST_F(ResourceServiceTest, ShrinkingGivesIdleNodesBack) {
  CreateResource("pr1", 2);
  Step();
  Step();
  auto shrink = Resize("pr1", 1);
  ASSERT_TRUE(shrink.ok()) << shrink.status().message();
  Step();
  Step();
  auto r = Resource("pr1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, ResourceState::kRunning);
  EXPECT_EQ(r->resource_pools[0].replica_count, 1);
  EXPECT_EQ(r->trainyard->pools[0].units, 1);
  EXPECT_EQ(Count("resource_uid IS NOT NULL"), 1);
  EXPECT_TRUE(Reread(*shrink).done);
}

TEST_F(ResourceServiceTest, RebootBootsIdleNodesAgainAndKeepsTheirCaches) {
  CreateResource("pr1", 2);
  Step();
  Step();
  auto job = CreateOn("pr1", 2);
  ASSERT_TRUE(job.ok());
  for (int i = 0; i < 20 && Get(*job).state != JobState::kSucceeded; ++i) {
    clock_.Advance(seconds(60));
    Step();
  }
  ASSERT_EQ(Get(*job).state, JobState::kSucceeded);
  EXPECT_EQ(Count("resource_uid IS NOT NULL AND image_cache = '{train:1}'"), 2);

  auto op = resource_service_->Reboot(ResourceRef{kParent, "pr1"});
  ASSERT_TRUE(op.ok()) << op.status().message();
  EXPECT_EQ(op->metadata_type, kRebootPersistentResourceMetadata);
  EXPECT_EQ(StateOf("pr1"), ResourceState::kRebooting);
  Step();
  EXPECT_EQ(Count("resource_uid IS NOT NULL AND state = 1"), 2);
  clock_.Advance(seconds(60));
  Step();
  EXPECT_EQ(StateOf("pr1"), ResourceState::kRunning);
  EXPECT_TRUE(Reread(*op).done);
  EXPECT_EQ(Count("resource_uid IS NOT NULL AND state = 2 AND image_cache = '{train:1}'"), 2);
}

TEST_F(ResourceServiceTest, OperationsListByDoneInPagesAndNestedNamesMustMatch) {
  Operation a = CreateResource("pr1", 2);
  Operation b = CreateResource("pr2", 3);
  Step();
  Step();  // pr1 RUNNING (warm); pr2 still booting
  ListOperationsRequest list{kParent, "", "", "done=true", 100, std::nullopt};
  auto done = operation_service_->List(list);
  ASSERT_TRUE(done.ok());
  ASSERT_EQ(done->operations.size(), 1u);
  EXPECT_EQ(done->operations[0].id, a.id);
  list.filter = "done = false";
  auto open = operation_service_->List(list);
  ASSERT_EQ(open->operations.size(), 1u);
  EXPECT_EQ(open->operations[0].id, b.id);
  list.filter = "name=x";
  EXPECT_EQ(operation_service_->List(list).status().code(), Code::kInvalidArgument);

  list.filter = "";
  list.page_size = 1;
  auto first = operation_service_->List(list);
  ASSERT_TRUE(first.ok() && first->next.has_value());
  list.after = first->next;
  auto second = operation_service_->List(list);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->operations.size(), 1u);
  EXPECT_NE(second->operations[0].id, first->operations[0].id);
  EXPECT_FALSE(second->next.has_value());

  // Nested under its own resource it is found; under another one it is not.
  const std::string id = std::to_string(a.id);
  EXPECT_TRUE(
      operation_service_->Get(OperationRef{kParent, "persistentResources", "pr1", id}).ok());
  EXPECT_EQ(operation_service_->Get(OperationRef{kParent, "persistentResources", "pr2", id})
                .status()
                .code(),
            Code::kNotFound);
  ASSERT_TRUE(operation_service_->Delete(OperationRef{kParent, "", "", id}).ok());
  EXPECT_EQ(operation_service_->Get(OperationRef{kParent, "", "", id}).status().code(),
            Code::kNotFound);
}

TEST_F(ResourceServiceTest, AutoscalingGrowsForWaitingJobsAndShrinksWhenIdle) {
  ASSERT_NO_FATAL_FAILURE(CreateAutoscaled("auto", H100(), 1, 3));  // starts at its minimum, 1

  // A gang of 2 waits; the pool grows by what it lacks (1), boots it, and the job starts.
  auto job = CreateOn("auto", 2);
  ASSERT_TRUE(job.ok()) << job.status().message();
  Step();
  EXPECT_EQ(Get(*job).state, JobState::kQueued);
  Step();
  EXPECT_EQ(StateOf("auto"), ResourceState::kUpdating);
  EXPECT_EQ(Resource("auto")->resource_pools[0].replica_count, 2);
  for (int i = 0; i < 5 && Get(*job).state == JobState::kQueued; ++i) {
    clock_.Advance(seconds(60));
    Step();
  }
  EXPECT_NE(Get(*job).state, JobState::kQueued);
  EXPECT_EQ(Count("resource_uid IS NOT NULL"), 2);

  // Once the job is done and its nodes idle past the fleet's resourceIdleTimeout (10 min), the
  // pool gives back down to its minimum.
  for (int i = 0; i < 30 && Get(*job).state != JobState::kSucceeded; ++i) {
    clock_.Advance(seconds(60));
    Step();
  }
  ASSERT_EQ(Get(*job).state, JobState::kSucceeded);
  clock_.Advance(std::chrono::minutes(9));
  Step();
  EXPECT_EQ(Resource("auto")->resource_pools[0].replica_count, 2);
  clock_.Advance(std::chrono::minutes(2));
  ASSERT_NO_FATAL_FAILURE(ExpectGivenBackTo("auto", 1));
  EXPECT_EQ(Count("resource_uid IS NOT NULL"), 1);
}

TEST_F(ResourceServiceTest, AGrowingResourcesBootingNodeWaitsForItsBootBeforeAJobTakesIt) {
  // Project "other" owns no reservation: its resource's nodes are on demand and boot (60 s).
  const ParentRef other{"other", "us-central1"};
  PersistentResource r;
  ResourcePool pool;
  pool.machine_spec = H100();
  pool.autoscaling_spec = ResourceAutoscaling{1, 2};
  r.resource_pools.push_back(pool);
  ASSERT_TRUE(resource_service_->Create(other, "auto", r).ok());
  auto state = [&] {
    auto got = resource_service_->Get(ResourceRef{other, "auto"});
    return got.ok() ? got->state : ResourceState::kUnspecified;
  };
  for (int i = 0; i < 5 && state() != ResourceState::kRunning; ++i) {
    Step();
    clock_.Advance(seconds(60));
  }
  ASSERT_EQ(state(), ResourceState::kRunning);

  // A gang of 2 makes it grow by a node, which boots. While it boots the job is not admitted: no
  // cycle plans onto the booting node what its commit then finds short (each such skip makes the
  // leader read the whole change feed again).
  auto job = service_->Create(other, Gang("auto", 2), "");
  ASSERT_TRUE(job.ok()) << job.status().message();
  auto job_state = [&] { return Get(*job, "other").state; };
  int passes = 0;
  for (; passes < 15 && job_state() == JobState::kQueued; ++passes) {
    ASSERT_NO_FATAL_FAILURE(WaitForFeed());
    auto pass = scheduler_->RunOnce();
    ASSERT_TRUE(pass.ok()) << pass.status().message();
    EXPECT_EQ(pass->committed.skipped, 0) << "pass " << passes;
    ASSERT_TRUE(executor_->RunOnce().ok());
    clock_.Advance(seconds(20));
  }
  EXPECT_NE(job_state(), JobState::kQueued);
  EXPECT_GE(passes, 3) << "it waited for the boot";
  EXPECT_EQ(Count("resource_uid IS NOT NULL"), 2);
}

TEST_F(ResourceServiceTest, RebootStopsTheJobsOnItAndTheyResumeWhenTheNodesAreBack) {
  CreateResource("pr1", 2);
  Step();
  Step();
  auto job = CreateOn("pr1", 2);
  ASSERT_TRUE(job.ok());
  for (int i = 0; i < 5 && Get(*job).state != JobState::kRunning; ++i) {
    clock_.Advance(seconds(10));
    Step();
  }
  ASSERT_EQ(Get(*job).state, JobState::kRunning);

  auto op = resource_service_->Reboot(ResourceRef{kParent, "pr1"});
  ASSERT_TRUE(op.ok()) << op.status().message();
  Step();
  CustomJob stopped = Get(*job);
  EXPECT_EQ(stopped.state, JobState::kPending);
  EXPECT_NE(stopped.trainyard->reason_message.find("rebooting"), std::string::npos)
      << stopped.trainyard->reason_message;
  EXPECT_EQ(Count("resource_uid IS NOT NULL AND state = 5"), 2);  // down until booted

  // Back after the boot (60 s): the resource RUNNING, the job running again to its end.
  for (int i = 0; i < 5 && StateOf("pr1") != ResourceState::kRunning; ++i) {
    clock_.Advance(seconds(30));
    Step();
  }
  EXPECT_EQ(StateOf("pr1"), ResourceState::kRunning);
  EXPECT_TRUE(Reread(*op).done);
  for (int i = 0; i < 30 && Get(*job).state != JobState::kSucceeded; ++i) {
    clock_.Advance(seconds(60));
    Step();
  }
  EXPECT_EQ(Get(*job).state, JobState::kSucceeded);
  EXPECT_EQ(Count("resource_uid IS NOT NULL AND state = 2 AND image_cache = '{train:1}'"), 2);
}

// A failed node the resource holds (and no job) is out of service for its jobs: the scheduler
// leaves it out of the resource's free units, so a gang that needs it waits with its reason
// instead of being admitted onto it and skipped at commit.
TEST_F(ResourceServiceTest, AFailedIdleNodeIsNotOfferedToItsJobs) {
  CreateResource("pr1", 2);
  Step();
  Step();
  ASSERT_EQ(StateOf("pr1"), ResourceState::kRunning);
  {
    auto conn = pool_->Acquire();
    ASSERT_TRUE(conn.ok());
    auto failed = (*conn)->Exec(
        "UPDATE nodes SET state = 5 WHERE ctid IN (SELECT ctid FROM nodes WHERE resource_uid IS "
        "NOT NULL ORDER BY ordinal LIMIT 1)");
    ASSERT_TRUE(failed.ok()) << failed.status().message();
  }
  auto gang = CreateOn("pr1", 2);
  ASSERT_TRUE(gang.ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_NO_FATAL_FAILURE(WaitForFeed());
    auto pass = scheduler_->RunOnce();
    ASSERT_TRUE(pass.ok()) << pass.status().message();
    EXPECT_EQ(pass->committed.skipped, 0);
  }
  CustomJob waiting = Get(*gang);
  EXPECT_EQ(waiting.state, JobState::kQueued);
  EXPECT_EQ(waiting.trainyard->reason_code, "NO_CAPACITY");

  auto one = CreateOn("pr1", 1);  // the healthy node takes a job of one
  ASSERT_TRUE(one.ok());
  Step();
  EXPECT_EQ(Get(*one).state, JobState::kPending);
  EXPECT_EQ(Get(*gang).state, JobState::kQueued);
}

// Vertex's scheduling settings decide what a reboot does to each job on the resource: with
// disableRetries it fails, with restartJobOnWorkerRestart the whole job is retried (a new
// attempt), and otherwise its replicas restart in place.
TEST_F(ResourceServiceTest, RebootTreatsEachJobByItsSchedulingSettings) {
  CreateResource("pr1", 2);
  Step();
  Step();
  auto on_one_node = [&](bool disable_retries, bool restart_job) {
    CustomJob job = Gang("pr1", 1);
    job.job_spec.scheduling = Scheduling{};
    job.job_spec.scheduling->disable_retries = disable_retries;
    job.job_spec.scheduling->restart_job_on_worker_restart = restart_job;
    return service_->Create(kParent, job, "");
  };
  auto no_retries = on_one_node(true, false);
  auto whole_job = on_one_node(false, true);
  ASSERT_TRUE(no_retries.ok()) << no_retries.status().message();
  ASSERT_TRUE(whole_job.ok()) << whole_job.status().message();
  for (int i = 0; i < 5 && Get(*whole_job).state != JobState::kRunning; ++i) {
    clock_.Advance(seconds(10));
    Step();
  }
  ASSERT_EQ(Get(*no_retries).state, JobState::kRunning);
  ASSERT_EQ(Get(*whole_job).state, JobState::kRunning);

  ASSERT_TRUE(resource_service_->Reboot(ResourceRef{kParent, "pr1"}).ok());
  Step();
  CustomJob failed = Get(*no_retries);
  EXPECT_EQ(failed.state, JobState::kFailed);
  ASSERT_TRUE(failed.error.has_value());
  EXPECT_EQ(failed.error->code, 14);
  EXPECT_NE(failed.error->message.find("disableRetries"), std::string::npos)
      << failed.error->message;
  CustomJob retried = Get(*whole_job);
  EXPECT_EQ(retried.state, JobState::kPending);
  EXPECT_NE(retried.trainyard->reason_message.find("whole job restarts (retry 1 of 3)"),
            std::string::npos)
      << retried.trainyard->reason_message;
  // Both nodes reboot: the failed job's given back, the retried job's held for it.
  EXPECT_EQ(Count("resource_uid IS NOT NULL AND state = 1 AND job_id IS NULL"), 1);
  EXPECT_EQ(Count("resource_uid IS NOT NULL AND state = 5 AND job_id IS NOT NULL"), 1);

  for (int i = 0; i < 30 && Get(*whole_job).state != JobState::kSucceeded; ++i) {
    clock_.Advance(seconds(60));
    Step();
  }
  EXPECT_EQ(Get(*whole_job).state, JobState::kSucceeded);
  EXPECT_EQ(Get(*whole_job).trainyard->attempt, 1);
}

// Six on-demand A3 High nodes, of which demo's GPU quota lets it hold three.
constexpr const char* kQuotaFleet = R"({
  "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "quotas": {"projects": {"demo": {"NVIDIA_H100_80GB": 24}}},
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-highgpu-8g", "model": "ON_DEMAND", "nodes": 6, "pricePerNodeHour": 88}]}]})";

class ResourceQuotaTest : public ResourceServiceTest {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartFleet(kQuotaFleet)); }
};

// Free nodes are not enough: a resize takes no node beyond the project's quota, and says so.
TEST_F(ResourceQuotaTest, AResizeWaitsForQuotaItDoesNotHave) {
  CreateResource("pr1", 2);
  ASSERT_NO_FATAL_FAILURE(UntilRunning("pr1"));
  auto grow = Resize("pr1", 4);
  ASSERT_TRUE(grow.ok()) << grow.status().message();
  Step();
  Step();
  auto r = Resource("pr1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, ResourceState::kUpdating);
  EXPECT_EQ(r->trainyard->reason_code, "QUOTA_EXCEEDED");
  EXPECT_NE(r->trainyard->reason_message.find("NVIDIA_H100_80GB"), std::string::npos)
      << r->trainyard->reason_message;
  EXPECT_EQ(r->trainyard->pools[0].units, 2);
  EXPECT_EQ(Count("resource_uid IS NOT NULL"), 2);
  EXPECT_FALSE(Reread(*grow).done);
}

// Autoscaling grows toward what the waiting jobs need only as far as the quota lets it.
TEST_F(ResourceQuotaTest, AutoscalingStopsAtTheQuota) {
  ASSERT_NO_FATAL_FAILURE(CreateAutoscaled("auto", H100(), 1, 4));

  auto job = CreateOn("auto", 4);  // needs 4 nodes; the quota allows 3
  ASSERT_TRUE(job.ok()) << job.status().message();
  for (int i = 0; i < 6; ++i) {
    Step();
    clock_.Advance(seconds(60));
  }
  EXPECT_EQ(Resource("auto")->resource_pools[0].replica_count, 3)
      << Get(*job).trainyard->reason_message << " / "
      << Resource("auto")->trainyard->reason_message;
  EXPECT_EQ(Count("resource_uid IS NOT NULL"), 3);
  EXPECT_EQ(Get(*job).state, JobState::kQueued);
}

// CPU-only machine types on elastic capacity (no node rows): VMs are made for what holds them.
constexpr const char* kElasticFleet = R"({
  "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "elasticCpu": true, "zones": [{"zone": "us-central1-a", "pools": []}]})";

class ResourceElasticTest : public ResourceServiceTest {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartFleet(kElasticFleet)); }

  static MachineSpec Cpu() {
    MachineSpec m;
    m.machine_type = "n1-standard-4";
    return m;
  }

  StatusOr<Operation> ResizeCpu(const std::string& id, int64_t replicas) {
    PersistentResource update;
    update.resource_pools.push_back(ResourcePool{"", Cpu(), replicas, {}, {}, 0});
    return resource_service_->Patch(ResourceRef{kParent, id}, update,
                                    {"resourcePools.replicaCount"});
  }
};

// A resource of CPU VMs resizes as one of GPU nodes does: growing makes VMs (boots them, bills
// them at their list price) and shrinking deletes the last ones. It waited in UPDATING forever
// before ("0 free nodes"): elastic capacity has no free nodes to find, only VMs to make.
TEST_F(ResourceElasticTest, AResourceOfCpuVmsGrowsAndShrinks) {
  PersistentResource r;
  ResourcePool pool;
  pool.machine_spec = Cpu();
  pool.replica_count = 1;
  r.resource_pools.push_back(pool);
  ASSERT_TRUE(resource_service_->Create(kParent, "cpu", r).ok());
  ASSERT_NO_FATAL_FAILURE(UntilRunning("cpu"));
  const std::string uid_prefix = Resource("cpu")->trainyard->pools[0].nodes.at(0);
  ASSERT_EQ(uid_prefix.back(), '0');
  const std::string prefix = uid_prefix.substr(0, uid_prefix.size() - 1);
  const double price_of_one = Resource("cpu")->trainyard->hourly_price_usd;
  ASSERT_GT(price_of_one, 0);

  auto grow = ResizeCpu("cpu", 3);
  ASSERT_TRUE(grow.ok()) << grow.status().message();
  ASSERT_NO_FATAL_FAILURE(UntilRunning("cpu"));
  auto grown = Resource("cpu");
  EXPECT_EQ(grown->trainyard->pools[0].units, 3);
  EXPECT_EQ(grown->trainyard->pools[0].nodes,
            (std::vector<std::string>{prefix + "0", prefix + "1", prefix + "2"}));
  EXPECT_NEAR(grown->trainyard->hourly_price_usd, 3 * price_of_one, 0.01);
  EXPECT_TRUE(Reread(*grow).done);

  auto shrink = ResizeCpu("cpu", 2);
  ASSERT_TRUE(shrink.ok()) << shrink.status().message();
  ASSERT_NO_FATAL_FAILURE(UntilRunning("cpu"));
  EXPECT_EQ(Resource("cpu")->trainyard->pools[0].nodes,
            (std::vector<std::string>{prefix + "0", prefix + "1"}));
  EXPECT_NEAR(Resource("cpu")->trainyard->hourly_price_usd, 2 * price_of_one, 0.01);
  EXPECT_EQ(Count("true"), 0);  // no node rows, before or after
}

// Autoscaling on CPU VMs, as on GPU nodes: two jobs wait for a resource of one VM, it grows to
// two, and once both are done and the VMs idle past resourceIdleTimeout (10 min) it shrinks back.
TEST_F(ResourceElasticTest, AutoscalingGrowsForWaitingJobsAndShrinksWhenIdle) {
  ASSERT_NO_FATAL_FAILURE(CreateAutoscaled("auto", Cpu(), 1, 3));

  std::vector<CustomJob> jobs;
  for (int i = 0; i < 2; ++i) {
    CustomJob job = testing::SmallJob("on-auto");
    job.job_spec.persistent_resource_id = "auto";
    auto created = service_->Create(kParent, job, "");
    ASSERT_TRUE(created.ok()) << created.status().message();
    jobs.push_back(*created);
  }
  int64_t most = 0;
  auto done = [&] {
    return Get(jobs[0]).state == JobState::kSucceeded && Get(jobs[1]).state == JobState::kSucceeded;
  };
  for (int i = 0; i < 60 && !done(); ++i) {
    Step();
    most = std::max(most, Resource("auto")->resource_pools[0].replica_count);
    clock_.Advance(seconds(60));
  }
  ASSERT_TRUE(done());
  EXPECT_EQ(most, 2);
  ASSERT_EQ(Resource("auto")->resource_pools[0].replica_count, 2);

  Step();  // the VMs have idled a minute or two: kept
  EXPECT_EQ(Resource("auto")->resource_pools[0].replica_count, 2);
  clock_.Advance(std::chrono::minutes(11));
  ASSERT_NO_FATAL_FAILURE(ExpectGivenBackTo("auto", 1));
  EXPECT_EQ(Resource("auto")->trainyard->pools[0].nodes.size(), 1u);
}

// Two on-demand TPU v5e 4x4 slices (four hosts each).
constexpr const char* kTpuFleet = R"({
  "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "ct5lp-hightpu-4t", "tpuTopology": "4x4", "model": "ON_DEMAND",
     "slices": 2}]}]})";

class ResourceTpuTest : public ResourceServiceTest {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartFleet(kTpuFleet)); }

  static MachineSpec Slice(const std::string& topology) {
    MachineSpec m;
    m.machine_type = "ct5lp-hightpu-4t";
    m.tpu_topology = topology;
    return m;
  }
};

// A TPU pool holds whole multi-host slices: one replica is one 4x4 slice of four hosts, and a job
// on the resource runs on them only if it asks for the same slice.
TEST_F(ResourceTpuTest, APoolHoldsWholeSlicesAndItsJobsRunOnThem) {
  PersistentResource r;
  ResourcePool pool;
  pool.machine_spec = Slice("4x4");
  pool.replica_count = 1;
  r.resource_pools.push_back(pool);
  auto op = resource_service_->Create(kParent, "tpu", r);
  ASSERT_TRUE(op.ok()) << op.status().message();
  for (int i = 0; i < 5 && StateOf("tpu") != ResourceState::kRunning; ++i) {
    Step();
    clock_.Advance(seconds(60));
  }
  ASSERT_EQ(StateOf("tpu"), ResourceState::kRunning);
  EXPECT_EQ(Count("resource_uid IS NOT NULL"), 4);  // one slice, four hosts
  EXPECT_EQ(Resource("tpu")->trainyard->pools[0].nodes.size(), 4u);

  CustomJob other = Gang("tpu", 1);
  other.job_spec.worker_pool_specs[0].machine_spec = Slice("2x4");
  auto mismatch = service_->Create(kParent, other, "");
  ASSERT_EQ(mismatch.status().code(), Code::kInvalidArgument);
  EXPECT_NE(mismatch.status().message().find("2x4"), std::string::npos)
      << mismatch.status().message();
  EXPECT_NE(mismatch.status().message().find("4x4"), std::string::npos)
      << mismatch.status().message();

  CustomJob job = Gang("tpu", 1);
  job.job_spec.worker_pool_specs[0].machine_spec = Slice("4x4");
  auto created = service_->Create(kParent, job, "");
  ASSERT_TRUE(created.ok()) << created.status().message();
  for (int i = 0; i < 30 && Get(*created).state != JobState::kSucceeded; ++i) {
    Step();
    clock_.Advance(seconds(60));
  }
  CustomJob done = Get(*created);
  EXPECT_EQ(done.state, JobState::kSucceeded);
  ASSERT_FALSE(done.trainyard->pools.empty());
  EXPECT_EQ(done.trainyard->pools[0].nodes, Resource("tpu")->trainyard->pools[0].nodes);
  EXPECT_EQ(Count("resource_uid IS NULL AND job_id IS NOT NULL"), 0);  // nothing else taken
}

}  // namespace
}  // namespace trainyard
