#include "workers/slurm/task_script.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace trainyard::slurm {
namespace {
namespace fs = std::filesystem;

// What sh makes of `word` with TY_HOST_3=node7 and TY_HOST_10=node9 set: the test runs the shell,
// not a copy of its quoting rules.
std::string AsShellSeesIt(const std::string& word) {
  std::string command = "TY_HOST_3=node7; TY_HOST_10=node9; printf %s " + word;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "<popen failed>";
  std::string out;
  std::array<char, 256> buffer{};
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
  pclose(pipe);
  return out;
}

TEST(TaskScriptTest, AWordKeepsItsTextAndTakesTheNodeForEachPlaceholder) {
  const std::string spec =
      R"({"cluster":{"workerpool0":[")" + HostPlaceholder(3) + R"(:2222"]},"it's":"$HOME `x`"})";
  EXPECT_EQ(AsShellSeesIt(ShellWord(spec)),
            R"({"cluster":{"workerpool0":["node7:2222"]},"it's":"$HOME `x`"})");
  EXPECT_EQ(AsShellSeesIt(ShellWord(HostPlaceholder(10))), "node9");
  EXPECT_EQ(AsShellSeesIt(ShellWord("")), "");
  // Not placeholders: left as they are.
  EXPECT_EQ(AsShellSeesIt(ShellWord("a@TY_HOST_@b @TY_HOST_3 x@y@")),
            "a@TY_HOST_@b @TY_HOST_3 x@y@");
}

TEST(TaskScriptTest, EachTaskRunsItsReplicaAndNodesFillByBlocks) {
  TaskScriptInput input;
  input.attempt_dir = "/shared/jobs/7/attempt-0";
  input.tasks_per_node = 2;
  for (int k = 0; k < 3; ++k) {
    Replica r;
    r.task_name = "workerpool" + std::to_string(k == 0 ? 0 : 1) + "-" + std::to_string(k);
    r.command = {"python3", "-m", "trainer"};
    r.args = {"--rank=" + std::to_string(k)};
    r.env = {{"MASTER_ADDR", HostPlaceholder(0)}, {"ODD-NAME", "v"}};
    input.replicas.push_back(r);
  }
  const std::string script = TaskScript(input);
  EXPECT_NE(script.find("TY_HOST_0=$TY_NODE_0_0\nTY_HOST_1=$TY_NODE_0_0\nTY_HOST_2=$TY_NODE_0_1\n"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("2)\n  task='workerpool1-2'"), std::string::npos) << script;
  EXPECT_NE(script.find("'--rank=2'"), std::string::npos);
  // env(1) takes a name that `export` would refuse.
  EXPECT_NE(script.find("'ODD-NAME=v'"), std::string::npos);
  EXPECT_NE(script.find("'MASTER_ADDR='\"$TY_HOST_0\""), std::string::npos) << script;
  EXPECT_EQ(BatchScript("/shared/jobs/7/attempt-0/task.sh", {3}),
            "#!/bin/sh\n# Written by Trainyard: every replica is a task of this one step.\nexec "
            "srun --ntasks=3 --kill-on-bad-exit=0 sh '/shared/jobs/7/attempt-0/task.sh'\n");
}

// A heterogeneous job: the chief on one partition, two workers on another. Run through sh as
// task 0, with Slurm's per-component node lists and a stand-in for `scontrol show hostnames`.
TEST(TaskScriptTest, EachComponentsTasksTakeTheNodesOfItsOwnAllocation) {
  const fs::path dir =
      fs::temp_directory_path() /
      ("ty-task-script-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(dir);
  fs::create_directories(dir / "bin");
  {
    std::ofstream scontrol(dir / "bin" / "scontrol");
    scontrol << "#!/bin/sh\n# show hostnames LIST\necho \"$3\" | tr , '\\n'\n";
  }
  fs::permissions(dir / "bin" / "scontrol", fs::perms::owner_all);
  TaskScriptInput input;
  input.attempt_dir = dir / "attempt-0";
  // Two tasks a node: one list for all would put task 1 beside the chief.
  input.tasks_per_node = 2;
  input.component_tasks = {1, 2};
  for (int k = 0; k < 3; ++k) {
    Replica r;
    r.task_name = "workerpool" + std::to_string(k == 0 ? 0 : 1) + "-" + std::to_string(k);
    r.command = {"sh", "-c", "echo \"$PEERS\""};
    r.env = {{"PEERS", HostPlaceholder(0) + " " + HostPlaceholder(1) + " " + HostPlaceholder(2)}};
    input.replicas.push_back(r);
  }
  { std::ofstream(dir / "task.sh") << TaskScript(input); }
  const std::string command = "PATH=" + (dir / "bin").string() +
                              ":$PATH SLURM_PROCID=0 SLURM_JOB_NODELIST=chief,w1,w2 "
                              "SLURM_JOB_NODELIST_HET_GROUP_0=chief "
                              "SLURM_JOB_NODELIST_HET_GROUP_1=w1,w2 sh " +
                              (dir / "task.sh").string();
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream log(dir / "attempt-0" / "workerpool0-0" / "output.log");
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line, "chief w1 w1");
  EXPECT_EQ(BatchScript("/t.sh", {1, 2}),
            "#!/bin/sh\n# Written by Trainyard: every replica is a task of this one step.\nexec "
            "srun --het-group=0 --ntasks=1 --kill-on-bad-exit=0 sh '/t.sh' : --het-group=1 "
            "--ntasks=2 --kill-on-bad-exit=0 sh '/t.sh'\n");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainyard::slurm
