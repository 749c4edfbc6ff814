// The what-if replay's child process: its own process group under limits, the replicas' user when
// the server is root, its stderr lines read as they come, and ended at once by a cancel or its
// wall time.
#include "cmd/simulate/simulate_child.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

namespace trainyard::simulate {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<SimulateChild> StartShell(const std::string& script, const ChildLimits& limits,
                                          const std::optional<ChildUser>& user = std::nullopt) {
  auto child = SimulateChild::Start("/bin/sh", {"-c", script}, "/", user, limits);
  EXPECT_TRUE(child.ok()) << child.status().message();
  return child.ok() ? std::move(child).value() : nullptr;
}

TEST(SimulateChildTest, ItsStderrLinesArriveInOrderAndItsExitCodeIsKept) {
  auto child = StartShell("echo one >&2; echo two >&2; exit 2", {});
  ASSERT_NE(child, nullptr);
  std::vector<std::string> lines;
  const ChildOutcome outcome = child->Wait([&](const std::string& l) { lines.push_back(l); });
  EXPECT_EQ(outcome.kind, ChildOutcome::Kind::kExited);
  EXPECT_EQ(outcome.code, 2);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(outcome.last_line, "two");
}

TEST(SimulateChildTest, ItRunsUnderItsMemoryAndCpuLimits) {
  ChildLimits limits;
  limits.memory_bytes = uint64_t{1} << 30;
  limits.cpu_seconds = 77;
  auto child = StartShell("cat /proc/self/limits >&2", limits);
  ASSERT_NE(child, nullptr);
  std::string all;
  child->Wait([&](const std::string& l) { all += l + "\n"; });
  EXPECT_NE(all.find("Max cpu time              77"), std::string::npos) << all;
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_NE(all.find("Max address space         1073741824"), std::string::npos) << all;
#endif
}

TEST(SimulateChildTest, ACancelEndsItAtOnceAndItsProcessIsGone) {
  auto child = StartShell("echo started >&2; exec sleep 600", {});
  ASSERT_NE(child, nullptr);
  std::thread canceller;
  const ChildOutcome outcome = child->Wait([&](const std::string& l) {
    if (l == "started" && !canceller.joinable()) {
      canceller = std::thread([&] { child->Cancel(); });
    }
  });
  canceller.join();
  EXPECT_EQ(outcome.kind, ChildOutcome::Kind::kCancelled);
}

TEST(SimulateChildTest, ItIsEndedAtItsWallTime) {
  ChildLimits limits;
  limits.wall = 200ms;
  auto child = StartShell("exec sleep 600", limits);
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(child->Wait(nullptr).kind, ChildOutcome::Kind::kTimedOut);
}

TEST(SimulateChildTest, ARootServerRunsItAsTheReplicasUser) {
  auto user = WhatIfUser("trainyard-run");
  if (geteuid() != 0) {
    ASSERT_TRUE(user.ok());
    EXPECT_FALSE(user->has_value()) << "a server that is not root has no one to drop to";
    return;
  }
  ASSERT_TRUE(user.ok()) << user.status().message() << " (scripts/setup creates the user)";
  ASSERT_TRUE(user->has_value());
  auto child = StartShell("id -u >&2; id -G >&2", {}, *user);
  ASSERT_NE(child, nullptr);
  std::vector<std::string> lines;
  EXPECT_EQ(child->Wait([&](const std::string& l) { lines.push_back(l); }).code, 0);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], std::to_string((*user)->uid));
  EXPECT_EQ(lines[1], std::to_string((*user)->gid)) << "no supplementary groups of root's";
  EXPECT_EQ(WhatIfUser("no-such-user-here").status().code(), Code::kFailedPrecondition);
}

// A clone in root's home: the server's binary sits behind a folder only root may enter, yet the
// replicas' user still runs it (the server hands it over open, not by its path).
TEST(SimulateChildTest, TheReplicasUserRunsAProgramItCouldNotReachByPath) {
  if (geteuid() != 0) GTEST_SKIP() << "dropping to another user needs root";
  auto user = WhatIfUser("trainyard-run");
  ASSERT_TRUE(user.ok() && user->has_value()) << "scripts/setup creates the user";
  const std::filesystem::path home =
      std::filesystem::temp_directory_path() / ("child-home-" + std::to_string(getpid()));
  std::filesystem::create_directories(home);
  std::filesystem::permissions(home, std::filesystem::perms::owner_all);  // 0700, root's
  std::filesystem::copy_file("/bin/sh", home / "sh");
  auto child = SimulateChild::Start((home / "sh").string(), {"-c", "id -u >&2"}, "/", *user, {});
  ASSERT_TRUE(child.ok()) << child.status().message();
  std::vector<std::string> lines;
  const ChildOutcome outcome = (*child)->Wait([&](const std::string& l) { lines.push_back(l); });
  std::filesystem::remove_all(home);
  EXPECT_EQ(outcome.code, 0) << "exit 127: the program was sought by its path";
  EXPECT_EQ(lines, (std::vector<std::string>{std::to_string((*user)->uid)}));
}

}  // namespace
}  // namespace trainyard::simulate
