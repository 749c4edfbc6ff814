#include "tests/integration/test_database.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "storage/migrator.h"
#include "storage/pg.h"

namespace trainyard::testing {
namespace {

constexpr char kTemplate[] = "ty_template";

[[noreturn]] void Die(const std::string& what, const Status& st) {
  std::fprintf(stderr, "integration test database: %s: %s: %s\n", what.c_str(), CodeName(st.code()),
               st.message().c_str());
  std::abort();
}

class TestCluster {
 public:
  static TestCluster& Get() {
    static TestCluster cluster;
    return cluster;
  }

  std::string Fresh() {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string name = "t_" + std::to_string(++databases_);
    auto created = admin_->ExecScript("CREATE DATABASE " + pg::QuoteIdentifier(name) +
                                      " TEMPLATE " + kTemplate);
    if (!created.ok()) Die("creating " + name, created.status());
    return pg_->conninfo_for(name);
  }

  std::string Admin() const { return pg_->conninfo_for("postgres"); }
  const EmbeddedPostgres& cluster() const { return *pg_; }

 private:
  TestCluster() {
    // Our destructor logs through spdlog; constructing its registry first makes it outlive us.
    spdlog::default_logger();

    char tmpl[] = "/tmp/ty-itest-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) Die("mkdtemp", Internal("cannot create a temporary directory"));
    dir_ = tmpl;
    // mkdtemp gives 0700; when we are root the cluster runs as `postgres`, which must pass through.
    chmod(dir_.c_str(), 0711);

    EmbeddedPostgres::Options options;
    options.data_dir = dir_;
    options.durable = false;  // a throwaway cluster; fsync would only slow every test down
    auto pg = EmbeddedPostgres::Start(options);
    if (!pg.ok()) Die("starting PostgreSQL in " + dir_, pg.status());
    pg_ = std::move(pg).value();

    pg::SessionOptions session;
    session.statement_timeout = std::chrono::minutes(1);  // CREATE DATABASE under a loaded CI box
    auto admin = pg::Connection::Connect(Admin(), session);
    if (!admin.ok()) Die("connecting", admin.status());
    admin_ = std::move(admin).value();

    auto created = admin_->ExecScript(std::string("CREATE DATABASE ") + kTemplate);
    if (!created.ok()) Die("creating the template database", created.status());
    {
      auto conn = pg::Connection::Connect(pg_->conninfo_for(kTemplate), session);
      if (!conn.ok()) Die("connecting to the template database", conn.status());
      Status migrated = ApplyMigrations(**conn, EmbeddedMigrations());
      if (!migrated.ok()) Die("migrating the template database", migrated);
    }  // closed: CREATE DATABASE ... TEMPLATE refuses a template with open sessions
    // Nobody may connect to the template by accident and so block every FreshDatabase().
    auto locked = admin_->ExecScript(std::string("ALTER DATABASE ") + kTemplate +
                                     " WITH IS_TEMPLATE true ALLOW_CONNECTIONS false");
    if (!locked.ok()) Die("locking the template database", locked.status());
  }

  ~TestCluster() {
    admin_.reset();
    if (pg_) {
      Status st = pg_->Stop();
      if (!st.ok()) {
        std::fprintf(stderr, "integration test database: stop: %s\n", st.message().c_str());
        return;  // keep the directory: the cluster may still be running in it
      }
      pg_.reset();
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string dir_;
  std::unique_ptr<EmbeddedPostgres> pg_;
  std::mutex mu_;
  std::unique_ptr<pg::Connection> admin_;  // guarded by mu_ after construction
  int databases_ = 0;                      // guarded by mu_
};

}  // namespace

std::string FreshDatabase() { return TestCluster::Get().Fresh(); }

std::string AdminConninfo() { return TestCluster::Get().Admin(); }

const EmbeddedPostgres& SharedCluster() { return TestCluster::Get().cluster(); }

std::string AwaitChangeFeed(const std::string& conninfo) {
  auto conn = pg::Connection::Connect(conninfo);
  if (!conn.ok()) return "change feed: " + conn.status().message();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    auto r = (*conn)->Exec(
        "SELECT NOT EXISTS (SELECT 1 FROM custom_jobs "
        "WHERE change_xid >= pg_snapshot_xmin(pg_current_snapshot()))");
    if (!r.ok()) return "change feed: " + r.status().message();
    if (r->GetBool(0, 0)) return {};
    if (std::chrono::steady_clock::now() > deadline) {
      return "change feed: a committed write still hidden after 60 s";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling, with a deadline
  }
}

}  // namespace trainyard::testing
