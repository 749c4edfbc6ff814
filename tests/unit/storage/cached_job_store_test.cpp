// A list through the cached store: the page's ids and versions first, then only the rows not kept
// at those versions; a page that moved between the two reads is read whole. The store beneath is
// the in-memory one, counted; the feed that invalidates kept rows is driven by hand.
#include "storage/cached_job_store.h"

#include <gtest/gtest.h>

#include "storage/job_record_cache.h"
#include "storage/memory/memory_job_store.h"

namespace trainyard::storage {
namespace {

// The memory store, counting what a list asked of it; `moved_` bumps a row's version between the
// list of versions and the read of the rows, as a writer committing in between would.
class CountingStore final : public JobRepository {
 public:
  explicit CountingStore(JobRepository& inner) : inner_(inner) {}

  Status Insert(const JobRecord& r, const std::string& id) override { return inner_.Insert(r, id); }
  StatusOr<JobRecord> Get(int64_t p, const std::string& l, int64_t id) override {
    return inner_.Get(p, l, id);
  }
  StatusOr<std::vector<JobRecord>> List(const ListJobsQuery& q) override {
    ++whole_lists;
    return inner_.List(q);
  }
  StatusOr<std::vector<JobVersion>> ListVersions(const ListJobsQuery& q) override {
    return inner_.ListVersions(q);
  }
  StatusOr<std::vector<JobRecord>> ByIds(const std::vector<int64_t>& ids) override {
    rows_read += static_cast<int>(ids.size());
    auto rows = inner_.ByIds(ids);
    if (rows.ok()) {
      for (JobRecord& r : *rows) {
        if (r.id == moved) ++r.version;
      }
    }
    return rows;
  }
  StatusOr<bool> ApplyTransition(const StateUpdate& u) override {
    return inner_.ApplyTransition(u);
  }
  StatusOr<std::vector<bool>> ApplyTransitions(const std::vector<StateUpdate>& u) override {
    return inner_.ApplyTransitions(u);
  }
  Status DeleteWithOperation(int64_t p, const std::string& l, int64_t id, int64_t v,
                             const Operation& op) override {
    return inner_.DeleteWithOperation(p, l, id, v, op);
  }

  int whole_lists = 0;
  int rows_read = 0;
  int64_t moved = 0;

 private:
  JobRepository& inner_;
};

class CachedJobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_.SetLive(true);
    for (int64_t id = 1; id <= 3; ++id) {
      JobRecord r;
      r.id = id;
      r.project_number = 7;
      r.location = "us-central1";
      r.job.name = "projects/7/locations/us-central1/customJobs/" + std::to_string(id);
      r.job.create_time = Timestamp{} + std::chrono::seconds(id);
      r.job.update_time = r.job.create_time;
      ASSERT_TRUE(memory_.Insert(r, "").ok());
    }
    query_.project_number = 7;
    query_.location = "us-central1";
  }

  std::vector<int64_t> ListedIds() {
    auto rows = cached_.List(query_);
    EXPECT_TRUE(rows.ok()) << rows.status().message();
    std::vector<int64_t> ids;
    if (rows.ok()) {
      for (const JobRecord& r : *rows) ids.push_back(r.id);
    }
    return ids;
  }

  memory::MemoryDatabase db_;
  memory::MemoryJobStore memory_{db_};
  CountingStore counting_{memory_};
  JobRecordCache cache_{100};
  CachedJobStore cached_{counting_, cache_};
  ListJobsQuery query_;
};

TEST_F(CachedJobStoreTest, ARepeatedListReadsNoRowItKeeps) {
  EXPECT_EQ(ListedIds(), (std::vector<int64_t>{3, 2, 1}));
  EXPECT_EQ(counting_.rows_read, 3);
  EXPECT_EQ(ListedIds(), (std::vector<int64_t>{3, 2, 1}));
  EXPECT_EQ(counting_.rows_read, 3);
  EXPECT_EQ(counting_.whole_lists, 0);
}

TEST_F(CachedJobStoreTest, APollSharesTheKeptRowInsteadOfCopyingIt) {
  auto first = cached_.GetShared(7, "us-central1", 2);
  auto again = cached_.GetShared(7, "us-central1", 2);
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(first->get(), again->get());
  EXPECT_EQ(cached_.GetShared(8, "us-central1", 2).status().code(), Code::kNotFound)
      << "kept, but under another parent";
}

TEST_F(CachedJobStoreTest, AChangedRowIsReadAgainAtItsNewVersion) {
  ListedIds();
  // Another writer's change: the store has version 2, the feed drops the kept row.
  db_.FindJobLocked(2)->record.version = 2;
  cache_.Invalidate(2);
  auto rows = cached_.List(query_);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ((*rows)[1].version, 2);
  EXPECT_EQ(counting_.rows_read, 4);
}

TEST_F(CachedJobStoreTest, ARowKeptAtAnOlderVersionThanListedIsNotServed) {
  ListedIds();
  // The change is committed but the feed has not told this process yet.
  db_.FindJobLocked(1)->record.version = 5;
  auto rows = cached_.List(query_);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->back().version, 5);
}

TEST_F(CachedJobStoreTest, APageThatMovedBetweenItsTwoReadsIsReadWhole) {
  counting_.moved = 2;
  EXPECT_EQ(ListedIds(), (std::vector<int64_t>{3, 2, 1}));
  EXPECT_EQ(counting_.whole_lists, 1);
}

TEST_F(CachedJobStoreTest, WithoutAFeedEveryListIsReadWhole) {
  cache_.SetLive(false);
  ListedIds();
  ListedIds();
  EXPECT_EQ(counting_.whole_lists, 2);
  EXPECT_EQ(counting_.rows_read, 0);
}

}  // namespace
}  // namespace trainyard::storage
