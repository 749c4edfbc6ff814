#pragma once
// Real PostgreSQL for integration tests, cheap enough to give every test its own database.
//
// The first call in a test binary starts one throwaway cluster (non-durable, in a mkdtemp
// directory, stopped and removed at exit) and applies the embedded migrations once into the
// template database `ty_template`. Each FreshDatabase() is then a `CREATE DATABASE t_<n> TEMPLATE
// ty_template`: a fully migrated, empty, isolated database for the price of a file copy.
//
//   TEST(JobRepositoryTest, InsertsAJob) {
//     auto conn = pg::Connection::Connect(trainyard::testing::FreshDatabase());
//     ...
//   }
#include <string>

#include "storage/embedded_postgres.h"

namespace trainyard::testing {

// conninfo of a new database with every embedded migration applied; never the same one twice.
// Thread-safe. Aborts the test binary if the cluster cannot start: no integration test can run
// then.
std::string FreshDatabase();

// conninfo of the cluster's `postgres` database, for tests that act on other sessions
// (pg_terminate_backend, pg_locks) or create databases of their own.
std::string AdminConninfo();

// The shared cluster itself.
const EmbeddedPostgres& SharedCluster();

// Returns once every job write committed in `conninfo`'s database is visible to the scheduler's
// change feed, or what kept it from being so within 60 s. The feed shows a change only once no
// older transaction is open anywhere in the cluster (storage/pg_scheduler_store.cpp), so an
// autovacuum in another database can hide a create from one pass: a server sees it on the next,
// but a test that asserts what one pass decides waits for it first.
std::string AwaitChangeFeed(const std::string& conninfo);

}  // namespace trainyard::testing
