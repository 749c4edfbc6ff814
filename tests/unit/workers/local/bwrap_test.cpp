// What a replica's bubblewrap unshares and mounts (workers/local/bwrap.h): the argv is the whole
// sandbox, so each of its parts is checked here; local_isolation_test.sh runs it for real.
#include "workers/local/bwrap.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace trainyard::local {
namespace {

using Argv = std::vector<std::string>;

// Where `run` (consecutive words) starts in `argv`, or -1.
long Find(const Argv& argv, const Argv& run) {
  auto it = std::search(argv.begin(), argv.end(), run.begin(), run.end());
  return it == argv.end() ? -1 : it - argv.begin();
}

const SandboxView kView{{"/data"}, "/data/replicas/jobs/7/attempt-0/workerpool0-0/work"};
const std::string kWork = "/data/replicas/jobs/7/attempt-0/workerpool0-0/work";

TEST(BwrapArgv, UnsharesPidAndIpcAndDiesWithItsParent) {
  const Argv argv = BwrapArgv("/usr/bin/bwrap", kView, {"sh", "-c", "true"});
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(argv[0], "/usr/bin/bwrap");
  EXPECT_GE(Find(argv, {"--unshare-pid"}), 0);
  EXPECT_GE(Find(argv, {"--unshare-ipc"}), 0);
  EXPECT_GE(Find(argv, {"--die-with-parent"}), 0);
  // The keeper's process group is what stop signals: the command must stay in it.
  EXPECT_EQ(Find(argv, {"--new-session"}), -1);
  // The network stays shared: replicas rendezvous over 127.0.0.1.
  EXPECT_EQ(Find(argv, {"--unshare-net"}), -1);
  EXPECT_EQ(Find(argv, {"--unshare-all"}), -1);
}

TEST(BwrapArgv, TheHostReadOnlyWithFreshProcDevAndTmp) {
  const Argv argv = BwrapArgv("/usr/bin/bwrap", kView, {"true"});
  const long root = Find(argv, {"--ro-bind", "/", "/"});
  ASSERT_GE(root, 0);
  // Later mounts go over the read-only root, never under it.
  EXPECT_GT(Find(argv, {"--proc", "/proc"}), root);
  EXPECT_GT(Find(argv, {"--dev", "/dev"}), root);
  EXPECT_GT(Find(argv, {"--tmpfs", "/tmp"}), root);
  EXPECT_EQ(Find(argv, {"--bind", "/", "/"}), -1);
  EXPECT_EQ(Find(argv, {"--dev-bind", "/dev", "/dev"}), -1);
}

TEST(BwrapArgv, HidesTheDataDirectoryThenBindsBackOnlyTheWorkFolder) {
  const Argv argv = BwrapArgv("/usr/bin/bwrap", kView, {"true"});
  const long hidden = Find(argv, {"--tmpfs", "/data"});
  const long bind = Find(argv, {"--bind", kWork, kWork});
  const long read_only = Find(argv, {"--remount-ro", "/data"});
  ASSERT_GE(hidden, 0);
  ASSERT_GE(bind, 0);
  ASSERT_GE(read_only, 0);
  EXPECT_GT(hidden, Find(argv, {"--tmpfs", "/tmp"}));  // a data directory under /tmp stays hidden
  EXPECT_LT(hidden, bind);     // the work folder is bound into the empty tmpfs, not hidden by it
  EXPECT_LT(bind, read_only);  // the folders made on the way to it take nothing afterwards
  EXPECT_GE(Find(argv, {"--chdir", kWork}), 0);
  // The work folder is the only thing bound writable.
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--bind"), 1);
}

TEST(BwrapArgv, EveryHiddenFolderIsCoveredAndMadeReadOnly) {
  const Argv argv = BwrapArgv(
      "/usr/bin/bwrap", SandboxView{{"/data", "/var/lib/trainyard/replicas/ab"}, kWork}, {"true"});
  for (const std::string hidden : {"/data", "/var/lib/trainyard/replicas/ab"}) {
    EXPECT_GE(Find(argv, {"--tmpfs", hidden}), 0) << hidden;
    EXPECT_GE(Find(argv, {"--remount-ro", hidden}), 0) << hidden;
  }
}

TEST(BwrapArgv, TheCommandLastWithItsStopSignalsBack) {
  const Argv command = {"python3", "-m", "trainer", "--flag=1", "--"};
  const Argv argv = BwrapArgv("/usr/bin/bwrap", kView, command);
  const long end = Find(argv, {"--", "/usr/bin/env", "--default-signal=TERM,INT,HUP", "--"});
  ASSERT_GE(end, 0);
  // Nothing of bwrap's after its "--": the command's own words, untouched, close the argv.
  EXPECT_EQ(Argv(argv.begin() + end + 4, argv.end()), command);
  EXPECT_EQ(std::count(argv.begin(), argv.begin() + end, "--"), 0);
}

TEST(BwrapArgv, WithoutAWorkFolderNothingIsBoundWritable) {
  // The start-up probe: the same namespaces and mounts, nothing of a job's.
  const Argv argv = BwrapArgv("/usr/bin/bwrap", SandboxView{}, {"true"});
  EXPECT_EQ(Find(argv, {"--bind"}), -1);
  EXPECT_EQ(Find(argv, {"--chdir"}), -1);
  EXPECT_EQ(Find(argv, {"--remount-ro"}), -1);
  EXPECT_GE(Find(argv, {"--unshare-pid"}), 0);
  EXPECT_EQ(argv.back(), "true");
}

}  // namespace
}  // namespace trainyard::local
