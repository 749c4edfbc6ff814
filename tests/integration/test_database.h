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

}  // namespace trainyard::testing
