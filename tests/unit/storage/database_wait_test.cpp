// serve --database-wait: an external database that is not up yet is waited for; one that refuses
// the login or does not exist is not.
#include "storage/database_wait.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace trainyard::storage {
namespace {

// A loopback port nothing listens on: bound for a moment to be given one, then closed.
int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string RefusingDatabase() {
  return "host=127.0.0.1 port=" + std::to_string(ClosedPort()) + " dbname=trainyard user=x";
}

TEST(DatabaseWaitTest, OnlyWhatMayComeUpIsWaitedFor) {
  EXPECT_TRUE(ConnectionMayComeUp(
      "cannot connect to the database: connection to server at \"127.0.0.1\", port 5999 failed: "
      "Connection refused\n\tIs the server running on that host and accepting TCP/IP "
      "connections?"));
  EXPECT_TRUE(ConnectionMayComeUp(
      "connection to server on socket \"/run/postgresql/.s.PGSQL.5432\" failed: No such file or "
      "directory"));
  EXPECT_TRUE(ConnectionMayComeUp("FATAL:  the database system is starting up"));
  EXPECT_TRUE(ConnectionMayComeUp("FATAL:  the database system is in recovery mode"));
  EXPECT_FALSE(ConnectionMayComeUp("FATAL:  password authentication failed for user \"x\""));
  EXPECT_FALSE(ConnectionMayComeUp("FATAL:  database \"nope\" does not exist"));
  EXPECT_FALSE(ConnectionMayComeUp("could not translate host name \"db\" to address"));
}

TEST(DatabaseWaitTest, NoWaitIsOneAttemptAndItsError) {
  int asked = 0;
  auto pool = CreatePoolWaiting(RefusingDatabase(), 1, std::chrono::milliseconds(100),
                                {std::chrono::milliseconds(0), [&] { return ++asked > 99; }});
  ASSERT_FALSE(pool.ok());
  EXPECT_NE(pool.status().message().find("Connection refused"), std::string::npos);
  EXPECT_EQ(pool.status().message().find("attempt"), std::string::npos);
  EXPECT_EQ(asked, 1);
}

TEST(DatabaseWaitTest, ARefusedDatabaseIsTriedAgainUntilAStopIsAsked) {
  int asked = 0;
  auto pool = CreatePoolWaiting(RefusingDatabase(), 1, std::chrono::milliseconds(100),
                                {std::chrono::seconds(60), [&] { return ++asked == 2; }});
  ASSERT_FALSE(pool.ok());
  EXPECT_EQ(pool.status().code(), Code::kUnavailable);
  const std::string& why = pool.status().message();
  EXPECT_NE(why.find("Connection refused"), std::string::npos) << why;
  EXPECT_NE(why.find("(2 attempts over "), std::string::npos) << why;
  EXPECT_NE(why.find("then a stop was asked"), std::string::npos) << why;
}

}  // namespace
}  // namespace trainyard::storage
