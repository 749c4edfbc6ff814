#pragma once
// What a Slurm job of Trainyard runs: one batch script whose single `srun` starts one task per
// replica, and a task script that gives each task (by SLURM_PROCID) its replica's command and
// distributed environment. No I/O: the runtime writes the text where the nodes can read it.
//
// Why a wrapper per task rather than the command itself:
// - Trainyard's failure rules, not Slurm's, decide what a replica's exit means (restart it in
//   place up to 5 times, retry the job up to 3). So a task that exits does not end the step: the
//   wrapper writes the exit status to `exit.<n>` in the replica's directory and waits for the
//   runtime to ask for run n+1 (`restart.<n+1>`), keeping the allocation, as Vertex restarts a
//   container on the same VM. The job ends when the runtime cancels it.
// - Where replicas run is known only once Slurm has allocated nodes: addresses in the environment
//   (CLUSTER_SPEC, TF_CONFIG, MASTER_ADDR …) are planned with placeholders, @TY_HOST_<k>@ for the
//   node of task k, which the script fills from SLURM_JOB_NODELIST (per component of a
//   heterogeneous job, SLURM_JOB_NODELIST_HET_GROUP_<g>) before it starts anything.
// - The exit files, the `started.<n>` markers and output.log live on the shared directory the
//   runtime reads (a Slurm cluster's shared filesystem; the same disk on a one-node cluster), so
//   what a replica did survives the server and slurmrestd alike.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "services/runtime/replica_plan.h"

namespace trainyard::slurm {

// The placeholder planned for task k's host.
std::string HostPlaceholder(int task);

// One word for sh: `text` single-quoted, with every @TY_HOST_<k>@ in it spliced in as "$TY_HOST_k"
// (so a CLUSTER_SPEC keeps its JSON and gets real hostnames).
std::string ShellWord(std::string_view text);

struct TaskScriptInput {
  std::filesystem::path attempt_dir;  // shared: each replica works in attempt_dir/<task name>
  std::vector<Replica> replicas;      // task k is replicas[k]
  int tasks_per_node = 1;             // a component's j-th task runs on its node j / tasks_per_node
  // Tasks per component of a heterogeneous job, in task order (they add up to the replicas);
  // empty or one: a job of one component.
  std::vector<int> component_tasks;
};

// The script every task runs (sh).
std::string TaskScript(const TaskScriptInput& input);
// The batch script: one srun step of every component's tasks (component_tasks as above), which
// number 0… across the components.
std::string BatchScript(const std::filesystem::path& task_script,
                        const std::vector<int>& component_tasks);

}  // namespace trainyard::slurm
