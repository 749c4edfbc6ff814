// The local runtime's isolation decisions (workers/local/replica_sandbox.h): when `serve` refuses
// to run replicas, what it warns about, what replicas must not see, and each replica's cgroup
// limits from its machine type.
#include "workers/local/replica_sandbox.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace trainyard::local {
namespace {
namespace fs = std::filesystem;

SandboxOptions Isolated() {
  SandboxOptions options;
  options.user = ReplicaUser{"trainyard-run", 999, 995};
  options.bwrap = "/usr/bin/bwrap";
  return options;
}

SandboxOptions WithoutBwrap(SandboxOptions options) {
  options.bwrap.clear();
  options.no_bwrap = "bubblewrap is not installed";
  return options;
}

SandboxOptions NotRoot(SandboxOptions options) {
  options.user.reset();
  return options;
}

fs::path TestDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir =
      fs::temp_directory_path() / ("ty-sandbox-" + std::to_string(getpid()) + "-" + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string Read(const fs::path& file) {
  std::ifstream in(file);
  std::string text;
  std::getline(in, text);
  return text;
}

TEST(CheckIsolation, TokensNeedBubblewrapAndSaySo) {
  const Status refused = CheckIsolation(WithoutBwrap(Isolated()), true, false);
  EXPECT_EQ(refused.code(), Code::kFailedPrecondition);
  EXPECT_NE(refused.message().find("bubblewrap is not installed"), std::string::npos)
      << refused.message();
  EXPECT_NE(refused.message().find("/proc/<pid>/environ"), std::string::npos);
  // --allow-unsandboxed-replicas is for a server that is not root, not for a missing sandbox.
  EXPECT_FALSE(CheckIsolation(WithoutBwrap(Isolated()), true, true).ok());
}

TEST(CheckIsolation, WithoutTokensAnythingRunsWithWarnings) {
  EXPECT_TRUE(CheckIsolation(WithoutBwrap(Isolated()), false, false).ok());
  EXPECT_TRUE(CheckIsolation(NotRoot(WithoutBwrap(Isolated())), false, false).ok());
  EXPECT_TRUE(CheckIsolation(NotRoot(Isolated()), false, false).ok());
}

TEST(CheckIsolation, TokensOnAServerThatIsNotRootNeedTheFlag) {
  const Status refused = CheckIsolation(NotRoot(Isolated()), true, false);
  EXPECT_EQ(refused.code(), Code::kFailedPrecondition);
  EXPECT_NE(refused.message().find("--allow-unsandboxed-replicas"), std::string::npos)
      << refused.message();
  EXPECT_NE(refused.message().find("not root"), std::string::npos);
  EXPECT_TRUE(CheckIsolation(NotRoot(Isolated()), true, true).ok());
}

TEST(CheckIsolation, TokensRunWhereReplicasAreIsolated) {
  EXPECT_TRUE(CheckIsolation(Isolated(), true, false).ok());
}

TEST(IsolationWarnings, NoneWhereReplicasAreIsolated) {
  EXPECT_TRUE(IsolationWarnings(Isolated()).empty());
}

TEST(IsolationWarnings, WithoutBubblewrapSaysWhyAndWhatIsExposed) {
  const auto warnings = IsolationWarnings(WithoutBwrap(Isolated()));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].event, "replicas_unsandboxed");
  EXPECT_NE(warnings[0].text.find("bubblewrap is not installed"), std::string::npos);
  EXPECT_NE(warnings[0].text.find("environ"), std::string::npos);
}

TEST(IsolationWarnings, AServerThatIsNotRootSaysWhomReplicasRunAs) {
  const auto warnings = IsolationWarnings(NotRoot(Isolated()));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].event, "replicas_run_as_server_user");
  EXPECT_NE(warnings[0].text.find("uid " + std::to_string(geteuid())), std::string::npos);
  EXPECT_EQ(IsolationWarnings(NotRoot(WithoutBwrap(Isolated()))).size(), 2u);
}

TEST(HiddenFromReplicas, TheDataDirectoryThatHoldsTheReplicas) {
  EXPECT_EQ(HiddenFromReplicas("/srv/ty", "/srv/ty/replicas"), std::vector<fs::path>{"/srv/ty"});
  EXPECT_EQ(HiddenFromReplicas("/srv/ty/", "/srv/ty/./replicas"),
            std::vector<fs::path>{"/srv/ty/"});
}

TEST(HiddenFromReplicas, TheReplicasAloneWhenTheyLieElsewhere) {
  const fs::path moved = "/var/lib/trainyard/replicas/0123456789abcdef";
  EXPECT_EQ(HiddenFromReplicas("/root/.trainyard", moved), std::vector<fs::path>{moved});
  EXPECT_EQ(HiddenFromReplicas("/srv/ty", "/srv/ty-other/replicas"),
            std::vector<fs::path>{"/srv/ty-other/replicas"});
  EXPECT_EQ(HiddenFromReplicas("", "/tmp/x"), std::vector<fs::path>{"/tmp/x"});
}

TEST(CgroupLimitsFor, MemoryAndPidsFromTheMachineType) {
  MachineSpec small;
  small.machine_type = "n2-standard-8";  // 8 vCPUs, 32 GB
  EXPECT_EQ(CgroupLimitsFor(small).memory_bytes, uint64_t{32} << 30);
  EXPECT_EQ(CgroupLimitsFor(small).pids, 1024u);  // the floor: 64 x 8 is less
  MachineSpec big;
  big.machine_type = "a3-highgpu-8g";  // 208 vCPUs, 1872 GB
  EXPECT_EQ(CgroupLimitsFor(big).memory_bytes, uint64_t{1872} << 30);
  EXPECT_EQ(CgroupLimitsFor(big).pids, 64u * 208);
}

TEST(CgroupLimitsFor, AReplicaSpanningNodesHasAllOfThem) {
  MachineSpec spec;
  spec.machine_type = "a3-highgpu-8g";
  spec.multihost_gpu_node_count = 2;
  EXPECT_EQ(CgroupLimitsFor(spec).memory_bytes, uint64_t{2 * 1872} << 30);
  EXPECT_EQ(CgroupLimitsFor(spec).pids, 2u * 64 * 208);
}

TEST(CgroupLimitsFor, NoneForAnUnknownMachineType) {
  MachineSpec spec;
  spec.machine_type = "no-such-machine";
  EXPECT_EQ(CgroupLimitsFor(spec).memory_bytes, 0u);
  EXPECT_EQ(CgroupLimitsFor(spec).pids, 0u);
}

TEST(MakeCgroup, WritesTheLimitsItIsGiven) {
  // A folder stands in for cgroupfs, where the kernel makes these files with the cgroup.
  const fs::path cgroup = TestDir() / "job-attempt-0-workerpool0-0-42";
  fs::create_directories(cgroup);
  std::ofstream(cgroup / "memory.max") << "max";
  std::ofstream(cgroup / "pids.max") << "max";
  ASSERT_TRUE(MakeCgroup(cgroup, CgroupLimits{uint64_t{32} << 30, 1024}).ok());
  EXPECT_EQ(Read(cgroup / "memory.max"), std::to_string(uint64_t{32} << 30));
  EXPECT_EQ(Read(cgroup / "pids.max"), "1024");
  fs::remove_all(cgroup.parent_path());
}

TEST(MakeCgroup, WithoutLimitsWritesNone) {
  const fs::path cgroup = TestDir() / "job-attempt-0-workerpool0-0-43";
  ASSERT_TRUE(MakeCgroup(cgroup).ok());
  EXPECT_TRUE(fs::is_directory(cgroup));
  EXPECT_FALSE(fs::exists(cgroup / "memory.max"));
  EXPECT_FALSE(fs::exists(cgroup / "pids.max"));
  fs::remove_all(cgroup.parent_path());
}

TEST(MakeCgroup, ALimitTheCgroupCannotTakeIsAnError) {
  // No memory.max: the memory controller is not enabled there.
  const fs::path cgroup = TestDir() / "job-attempt-0-workerpool0-0-44";
  const Status made = MakeCgroup(cgroup, CgroupLimits{uint64_t{1} << 30, 0});
  EXPECT_FALSE(made.ok());
  EXPECT_NE(made.message().find("memory.max"), std::string::npos) << made.message();
  fs::remove_all(cgroup.parent_path());
}

TEST(MakeServerFolder, ClosedToEveryoneButTheServer) {
  const fs::path folder = TestDir() / "jobs";
  ASSERT_TRUE(MakeServerFolder(folder, NotRoot(Isolated())).ok());
  struct stat st {};
  ASSERT_EQ(stat(folder.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, geteuid());
  // An existing folder (a server before this one made it 0755) is closed too.
  ASSERT_EQ(chmod(folder.c_str(), 0755), 0);
  ASSERT_TRUE(MakeServerFolder(folder, NotRoot(Isolated())).ok());
  ASSERT_EQ(stat(folder.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  fs::remove_all(folder.parent_path());
}

TEST(ProbeBwrap, AMissingBinarySaysHowToInstallIt) {
  const std::string why = ProbeBwrap("/nonexistent/bwrap", std::nullopt);
  EXPECT_NE(why.find("not installed"), std::string::npos) << why;
  EXPECT_NE(why.find("scripts/setup"), std::string::npos) << why;
}

TEST(ProbeBwrap, ABinaryThatFailsIsReportedWithItsOwnWords) {
  // /bin/false stands in for a bwrap that cannot make a sandbox here.
  const std::string why = ProbeBwrap("/bin/false", std::nullopt);
  EXPECT_NE(why.find("cannot start a sandbox"), std::string::npos) << why;
}

}  // namespace
}  // namespace trainyard::local
