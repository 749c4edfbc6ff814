#include "workers/slurm/task_script.h"

namespace trainyard::slurm {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHostPrefix = "@TY_HOST_";

std::string SingleQuoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

std::string HostPlaceholder(int task) {
  return std::string(kHostPrefix) + std::to_string(task) + "@";
}

std::string ShellWord(std::string_view text) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t at = text.find(kHostPrefix, start);
    size_t digits = at == std::string_view::npos ? at : at + kHostPrefix.size();
    size_t end = digits;
    while (end != std::string_view::npos && end < text.size() && text[end] >= '0' &&
           text[end] <= '9') {
      ++end;
    }
    const bool placeholder =
        at != std::string_view::npos && end > digits && end < text.size() && text[end] == '@';
    if (!placeholder) {
      // Not ours (or not whole): literal text up to past this '@' and look on.
      size_t literal_end = at == std::string_view::npos ? text.size() : at + 1;
      out += SingleQuoted(text.substr(start, literal_end - start));
      if (at == std::string_view::npos) break;
      start = literal_end;
      continue;
    }
    out += SingleQuoted(text.substr(start, at - start));
    out += "\"$TY_HOST_" + std::string(text.substr(digits, end - digits)) + "\"";
    start = end + 1;
    if (start == text.size()) break;
  }
  return out.empty() ? "''" : out;
}

std::string TaskScript(const TaskScriptInput& input) {
  const int per_node = std::max(1, input.tasks_per_node);
  std::string s =
      "#!/bin/sh\n# Written by Trainyard: one task per replica (workers/slurm/task_script.h).\n";
  s += "dir=" + SingleQuoted(input.attempt_dir.string()) + "\n";
  // Task k's node, from its component's allocation, in the order srun's block layout fills it.
  std::vector<int> components = input.component_tasks;
  if (components.size() <= 1) components = {static_cast<int>(input.replicas.size())};
  size_t k = 0;
  for (size_t g = 0; g < components.size(); ++g) {
    const std::string list = input.component_tasks.size() <= 1
                                 ? "SLURM_JOB_NODELIST"
                                 : "SLURM_JOB_NODELIST_HET_GROUP_" + std::to_string(g);
    const std::string node = "TY_NODE_" + std::to_string(g) + "_";
    s += "i=0\nfor h in $(scontrol show hostnames \"$" + list + "\"); do\n  eval \"" + node +
         "$i=\\$h\"\n  i=$((i + 1))\ndone\n";
    for (int j = 0; j < components[g] && k < input.replicas.size(); ++j, ++k) {
      s += "TY_HOST_" + std::to_string(k) + "=$" + node + std::to_string(j / per_node) + "\n";
    }
  }
  s += "case \"$SLURM_PROCID\" in\n";
  for (size_t k = 0; k < input.replicas.size(); ++k) {
    const Replica& r = input.replicas[k];
    s += std::to_string(k) + ")\n  task=" + SingleQuoted(r.task_name) + "\n  set -- env";
    // env(1) takes any NAME=value, where `export` would refuse a name sh does not allow.
    for (const EnvVar& var : r.env) s += " \\\n    " + ShellWord(var.name + "=" + var.value);
    for (const std::string& word : r.command) s += " \\\n    " + ShellWord(word);
    for (const std::string& word : r.args) s += " \\\n    " + ShellWord(word);
    s += "\n  ;;\n";
  }
  s += "*) echo \"trainyard: no replica for task $SLURM_PROCID\" >&2; exit 2 ;;\nesac\n";
  // The subshell writes the run's exit status itself: the wrapper only watches files, so it
  // never depends on how a shell reaps its background children.
  s += R"sh(work="$dir/$task"
mkdir -p "$work" && cd "$work" || exit 1
n=0
while :; do
  : >"$work/started.$n"
  (
    "$@" >>"$work/output.log" 2>&1 </dev/null
    code=$?
    echo "$code" >"$work/exit.$n.tmp" && mv "$work/exit.$n.tmp" "$work/exit.$n"
  ) &
  child=$!
  next=$((n + 1))
  until [ -e "$work/exit.$n" ]; do
    # A whole-gang restart asks for run n+1 while run n still runs: that run ends first.
    [ -e "$work/restart.$next" ] && pkill -TERM -P "$child" 2>/dev/null
    sleep 0.2
  done
  wait "$child" 2>/dev/null
  # The primary (task 0) exiting 0 ends the job whatever the others do (Vertex's rule, which
  # the supervisor applies too): its task ends, so a one-replica job gives its allocation back
  # without waiting to be cancelled.
  [ "$SLURM_PROCID" = 0 ] && [ "$(cat "$work/exit.$n")" = 0 ] && exit 0
  n=$next
  # The runtime decides: run again in place, or cancel the job.
  until [ -e "$work/restart.$n" ]; do sleep 0.2; done
done
)sh";
  return s;
}

std::string BatchScript(const fs::path& task_script, const std::vector<int>& component_tasks) {
  std::string s =
      "#!/bin/sh\n# Written by Trainyard: every replica is a task of this one step.\nexec srun";
  // A replica that fails must not end the others: Trainyard's rules decide what it means.
  auto tasks = [&](int count) {
    return " --ntasks=" + std::to_string(count) + " --kill-on-bad-exit=0 sh " +
           SingleQuoted(task_script.string());
  };
  if (component_tasks.size() <= 1) {
    return s + tasks(component_tasks.empty() ? 1 : component_tasks[0]) + "\n";
  }
  for (size_t g = 0; g < component_tasks.size(); ++g) {
    s += std::string(g == 0 ? "" : " :") + " --het-group=" + std::to_string(g) +
         tasks(component_tasks[g]);
  }
  return s + "\n";
}

}  // namespace trainyard::slurm
