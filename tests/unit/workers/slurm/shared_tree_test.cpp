#include "workers/slurm/shared_tree.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "workers/files/text_file.h"

namespace trainyard::slurm {
namespace {
namespace fs = std::filesystem;

// Who owns a path and how, not following a link: what an attack through a link would change.
struct Stat {
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;
  bool operator==(const Stat&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Stat& s) {
  return os << "uid " << s.uid << " gid " << s.gid << " mode " << std::oct << s.mode << std::dec;
}
Stat StatOf(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return Stat{st.st_uid, st.st_gid, st.st_mode};
}

// The tree's root, and beside it (outside the tree) a folder and a file the server must never
// touch for a job: where a job's links point.
class SharedTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() /
            ("ty-tree-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    fs::create_directories(root_dir());
    fs::create_directories(outside());
    chmod(outside().c_str(), 0755);
    std::ofstream(outside() / "file") << "not the job's\n";
    auto root = OpenTreeRoot(root_dir());
    ASSERT_TRUE(root.ok()) << root.status().message();
    root_ = std::move(root).value();
  }
  void TearDown() override { fs::remove_all(base_); }

  fs::path root_dir() const { return base_ / "shared"; }
  fs::path outside() const { return base_ / "outside"; }
  fs::path In(const std::string& relative) const { return root_dir() / relative; }

  fs::path base_;
  files::UniqueFd root_;
};

TEST_F(SharedTreeTest, AnAttemptFolderIsMadeAfreshTheServersAndOpen) {
  auto made = MakeAttemptFolders(root_.get(), 7, 0);
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_TRUE(fs::is_directory(In("jobs/7/attempt-0")));
  EXPECT_EQ(StatOf(In("jobs/7/attempt-0")).uid, geteuid());
  ASSERT_TRUE(WriteNewFileAt(made->attempt.get(), "task.sh", "echo hi\n").ok());
  EXPECT_EQ(files::ReadFile(In("jobs/7/attempt-0/task.sh")), "echo hi\n");
  EXPECT_TRUE(MakeAttemptFolders(root_.get(), 7, 1).ok()) << "the job's folder is there: fine";
}

// The attack of issue 48: the job's folder is the Slurm user's, so a job can leave
// attempt-<next> -> /etc for the server, as root, to chown to it on the retry.
TEST_F(SharedTreeTest, AnAttemptFolderPlantedAsALinkIsRefusedAndWhereItPointsIsUntouched) {
  ASSERT_TRUE(MakeAttemptFolders(root_.get(), 7, 0).ok());
  fs::create_directory_symlink(outside(), In("jobs/7/attempt-1"));
  const Stat before = StatOf(outside());
  auto made = MakeAttemptFolders(root_.get(), 7, 1);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), Code::kAlreadyExists) << made.status().message();
  EXPECT_NE(made.status().message().find("jobs/7/attempt-1"), std::string::npos);
  EXPECT_EQ(StatOf(outside()), before);
  EXPECT_TRUE(fs::is_symlink(In("jobs/7/attempt-1"))) << "left as it was";
}

TEST_F(SharedTreeTest, AnAttemptFolderAlreadyThereIsRefusedNotReused) {
  fs::create_directories(In("jobs/7/attempt-0"));
  auto made = MakeAttemptFolders(root_.get(), 7, 0);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), Code::kAlreadyExists);
  EXPECT_NE(made.status().message().find("not reused"), std::string::npos)
      << made.status().message();
}

TEST_F(SharedTreeTest, AJobFolderOrJobsFolderThatIsALinkIsNotWalkedThrough) {
  fs::create_directories(In("jobs"));
  fs::create_directory_symlink(outside(), In("jobs/8"));
  auto made = MakeAttemptFolders(root_.get(), 8, 0);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(made.status().message().find("jobs/8 is a symbolic link"), std::string::npos)
      << made.status().message();
  EXPECT_FALSE(fs::exists(outside() / "attempt-0"));

  fs::remove_all(In("jobs"));
  fs::create_directory_symlink(outside(), In("jobs"));
  EXPECT_EQ(MakeAttemptFolders(root_.get(), 9, 0).status().code(), Code::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(outside() / "9"));
}

TEST_F(SharedTreeTest, TheRootIsARealFolderOfTheServersOwn) {
  const fs::path link = base_ / "link";
  fs::create_directory_symlink(root_dir(), link);
  auto opened = OpenTreeRoot(link);
  EXPECT_EQ(opened.status().code(), Code::kFailedPrecondition) << opened.status().message();
  EXPECT_EQ(OpenTreeRoot(base_ / "missing").status().code(), Code::kNotFound);
  if (geteuid() != 0) GTEST_SKIP() << "giving the root to another user needs root";
  ASSERT_EQ(chown(root_dir().c_str(), 65534, 65534), 0);
  opened = OpenTreeRoot(root_dir());
  EXPECT_EQ(opened.status().code(), Code::kFailedPrecondition) << "another user's root";
  EXPECT_NE(opened.status().message().find("not owned by the server"), std::string::npos)
      << opened.status().message();
}

TEST_F(SharedTreeTest, FoldersAreHandedOverThroughTheirDescriptors) {
  if (geteuid() != 0) GTEST_SKIP() << "handing a folder to another user needs root";
  auto made = MakeAttemptFolders(root_.get(), 7, 0);
  ASSERT_TRUE(made.ok()) << made.status().message();
  const FolderOwner nobody{65534, 65534};
  ASSERT_TRUE(MakePrivate(made->job.get(), nobody, "jobs/7").ok());
  ASSERT_TRUE(MakePrivate(made->attempt.get(), nobody, "jobs/7/attempt-0").ok());
  for (const char* d : {"jobs/7", "jobs/7/attempt-0"}) {
    const Stat s = StatOf(In(d));
    EXPECT_EQ(s.uid, 65534u) << d;
    EXPECT_EQ(s.gid, 65534u) << d;
    EXPECT_EQ(s.mode & 07777, 0700u) << d;
  }
  EXPECT_EQ(StatOf(In("jobs")).uid, 0u) << "jobs/ stays the server's";
}

TEST_F(SharedTreeTest, AnAttemptGivenUpBeforeItsSubmitLeavesNoFolder) {
  auto made = MakeAttemptFolders(root_.get(), 7, 0);
  ASSERT_TRUE(made.ok());
  ASSERT_TRUE(WriteNewFileAt(made->attempt.get(), "task.sh", "x").ok());
  RemoveAttemptFolder(*made, 0, {"task.sh"});
  EXPECT_FALSE(fs::exists(In("jobs/7/attempt-0")));
  EXPECT_TRUE(MakeAttemptFolders(root_.get(), 7, 0).ok()) << "so the next launch makes it";
}

TEST_F(SharedTreeTest, AFileIsReadOnlyThroughRealFoldersAndOnlyWhenRegular) {
  fs::create_directories(In("jobs/7/attempt-0/workerpool0-0"));
  std::ofstream(In("jobs/7/attempt-0/workerpool0-0/output.log")) << "mine\n";
  files::UniqueFd fd(
      OpenRegularInTree(root_dir(), In("jobs/7/attempt-0/workerpool0-0/output.log")));
  ASSERT_TRUE(fd.valid()) << std::strerror(errno);
  EXPECT_EQ(files::ReadUpTo(fd.get(), 100), "mine\n");

  auto refused = [&](const std::string& relative) {
    files::UniqueFd opened(OpenRegularInTree(root_dir(), In(relative)));
    return opened.valid() ? 0 : errno;
  };
  // The output itself a link (to a file outside the tree the job could not read).
  fs::create_directories(In("jobs/7/attempt-0/workerpool0-1"));
  fs::create_symlink(outside() / "file", In("jobs/7/attempt-0/workerpool0-1/output.log"));
  EXPECT_EQ(refused("jobs/7/attempt-0/workerpool0-1/output.log"), ELOOP);
  // A folder on the way a link: the file's own name is a plain file where it points.
  std::ofstream(outside() / "output.log") << "not the job's\n";
  fs::create_directory_symlink(outside(), In("jobs/7/attempt-0/workerpool1-0"));
  EXPECT_EQ(refused("jobs/7/attempt-0/workerpool1-0/output.log"), ELOOP);
  ASSERT_EQ(mkfifo(In("jobs/7/attempt-0/workerpool0-0/fifo").c_str(), 0600), 0);
  EXPECT_EQ(refused("jobs/7/attempt-0/workerpool0-0/fifo"), EINVAL) << "and no blocking open";
  EXPECT_EQ(refused("jobs/7/attempt-0/workerpool0-0/none"), ENOENT);
  EXPECT_EQ(refused("../outside/file"), EINVAL) << "nothing outside the tree";
}

TEST_F(SharedTreeTest, ReadsAndMarkersInAFolderFollowNoLink) {
  auto made = MakeAttemptFolders(root_.get(), 7, 0);
  ASSERT_TRUE(made.ok());
  const int dir = made->attempt.get();
  std::ofstream(In("jobs/7/attempt-0/exit.0")) << "3\n";
  fs::create_symlink(outside() / "file", In("jobs/7/attempt-0/exit.1"));
  EXPECT_EQ(ReadRegularAt(dir, "exit.0"), "3\n");
  EXPECT_EQ(ReadRegularAt(dir, "exit.1"), "") << "a link is not read";
  EXPECT_TRUE(IsRegularAt(dir, "exit.0"));
  EXPECT_FALSE(IsRegularAt(dir, "exit.1"));

  ASSERT_TRUE(MarkAt(dir, "restart.1").ok());
  EXPECT_TRUE(MarkAt(dir, "restart.1").ok()) << "asked again: it is there, which is all it says";
  fs::create_symlink(outside() / "marker", In("jobs/7/attempt-0/restart.2"));
  EXPECT_EQ(MarkAt(dir, "restart.2").code(), Code::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(outside() / "marker")) << "nothing made where the link points";

  fs::create_symlink(outside() / "file", In("jobs/7/attempt-0/task.sh"));
  EXPECT_EQ(WriteNewFileAt(dir, "task.sh", "evil").code(), Code::kAlreadyExists);
  EXPECT_EQ(files::ReadFile(outside() / "file"), "not the job's\n");
}

}  // namespace
}  // namespace trainyard::slurm
