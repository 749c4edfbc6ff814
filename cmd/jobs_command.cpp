// `trainyard jobs …`: custom jobs from the command line, through the SDK.
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "api/wire/enums.h"
#include "cmd/client_commands.h"
#include "cmd/job_output.h"

namespace trainyard::cmd {
namespace {

struct JobsFlags {
  ClientFlags client;
  std::string file;
  std::string name;
  bool wait = false;
  double timeout_seconds = 0;  // 0: no deadline
  std::string filter;
  int page_size = 0;
  bool follow = false;
  std::string task;
};

void PrintRaw(const nlohmann::json& raw) { std::cout << raw.dump(2) << "\n"; }

// Waits for a job, printing one line per change (human) or only the final job (--json).
int WaitAndReport(sdk::Client& client, const JobsFlags& flags, const std::string& name) {
  const auto& timing = client.options().timing;
  const auto start = timing.now();
  auto elapsed = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(timing.now() - start);
  };
  sdk::WaitOptions options;
  if (flags.timeout_seconds > 0) {
    options.timeout = std::chrono::milliseconds(static_cast<int64_t>(flags.timeout_seconds * 1000));
  }
  if (!flags.client.json) {
    options.on_change = [&](const sdk::Job& job) { PrintWaitLine(std::cout, elapsed(), job); };
  }
  auto job = client.WaitJob(name, options);
  if (!job.ok()) return PrintWaitError(job.status());
  if (flags.client.json) {
    PrintRaw(job->raw);
  } else {
    PrintJobOutcome(std::cout, elapsed(), *job);
  }
  return ExitCodeFor(job->state());
}

int Create(sdk::Client& client, const JobsFlags& flags, const CLI::App& verb) {
  int exit_code = kExitOk;
  auto body = ReadJsonFile(verb, flags.file, "a CustomJob", &exit_code);
  if (!body) return exit_code;
  auto job = client.CreateJob(*body);
  if (!job.ok()) return PrintError(job.status());
  if (!flags.wait) {
    if (flags.client.json) {
      PrintRaw(job->raw);
    } else {
      std::cout << "Created " << job->name() << " (" << JobStateName(job->state()) << ")\n";
    }
    return kExitOk;
  }
  if (!flags.client.json) std::cout << "Created " << job->name() << "\n";
  return WaitAndReport(client, flags, job->name());
}

int Get(sdk::Client& client, const JobsFlags& flags) {
  auto job = client.GetJob(flags.name);
  if (!job.ok()) return PrintError(job.status());
  if (flags.client.json) {
    PrintRaw(job->raw);
  } else {
    PrintJob(std::cout, *job);
  }
  return kExitOk;
}

int List(sdk::Client& client, const JobsFlags& flags) {
  sdk::JobList list = client.ListJobs({flags.filter, flags.page_size});
  std::vector<sdk::Job> jobs;
  for (;;) {
    auto next = list.Next();
    if (!next.ok()) return PrintError(next.status());
    if (!*next) break;
    jobs.push_back(std::move(**next));
  }
  if (flags.client.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const sdk::Job& job : jobs) all.push_back(job.raw);
    PrintRaw({{"customJobs", std::move(all)}});
  } else {
    PrintJobTable(std::cout, jobs);
  }
  return kExitOk;
}

int Cancel(sdk::Client& client, const JobsFlags& flags) {
  if (Status s = client.CancelJob(flags.name); !s.ok()) return PrintError(s);
  if (flags.client.json) {
    PrintRaw(nlohmann::json::object());
  } else {
    std::cout << "Cancellation requested for " << client.ResourceName(flags.name, "customJobs")
              << "\n";
  }
  return kExitOk;
}

int Delete(sdk::Client& client, const JobsFlags& flags) {
  auto op = client.DeleteJob(flags.name);
  if (!op.ok()) return PrintError(op.status());
  if (flags.client.json) {
    PrintRaw(op->raw);
    return kExitOk;
  }
  if (op->done) {
    if (auto result = sdk::OperationResult(*op); !result.ok()) return PrintError(result.status());
  }
  std::cout << "Deleted " << client.ResourceName(flags.name, "customJobs") << " (operation "
            << op->name << (op->done ? ", done" : ", running") << ")\n";
  return kExitOk;
}

// Every entry of the job's log, then (with --follow) new ones until the job has ended.
int Logs(sdk::Client& client, const JobsFlags& flags) {
  sdk::StreamJobLogsOptions options;
  options.task = flags.task;
  options.follow = flags.follow;
  Status s = client.StreamJobLogs(flags.name, options,
                                  [&](const LogEntry& entry, const nlohmann::json& raw) {
                                    if (flags.client.json) {
                                      std::cout << raw.dump() << "\n";
                                    } else {
                                      PrintLogEntry(std::cout, entry);
                                    }
                                    std::cout.flush();  // a follower reads lines as they come
                                  });
  return s.ok() ? kExitOk : PrintError(s);
}

using JobsVerbBody = std::function<int(sdk::Client&, const JobsFlags&, const CLI::App&)>;

CLI::App* AddVerb(CLI::App& jobs, CommandRun* run, std::shared_ptr<JobsFlags> flags,
                  const std::string& name, const std::string& help, JobsVerbBody body) {
  std::shared_ptr<const ClientFlags> client_flags(flags, &flags->client);
  return AddClientVerb(jobs, run, client_flags, name, help,
                       [flags, body](sdk::Client& client, const CLI::App& verb) {
                         return body(client, *flags, verb);
                       });
}

}  // namespace

void AddJobsCommand(CLI::App& app, CommandRun* run) {
  auto flags = std::make_shared<JobsFlags>();
  CLI::App* jobs = app.add_subcommand("jobs", "Submit, inspect, wait for and cancel custom jobs");
  jobs->require_subcommand(1);
  jobs->footer(std::string(kExitCodesHelp) +
               "\nEndpoint, project and location come from the flags or TRAINYARD_ENDPOINT, "
               "TRAINYARD_PROJECT, TRAINYARD_LOCATION.");
  AddClientFlags(*jobs, flags->client);
  auto add_timeout = [&](CLI::App* verb) {
    verb->add_option("--timeout", flags->timeout_seconds,
                     "give up waiting after this many seconds (exit 5); default: no limit")
        ->check(CLI::PositiveNumber);
  };
  auto add_name = [&](CLI::App* verb) {
    verb->add_option("NAME", flags->name, "job name (projects/…/customJobs/ID) or ID")->required();
  };

  CLI::App* create = AddVerb(
      *jobs, run, flags, "create", "Create a job from a CustomJob JSON file",
      [](sdk::Client& c, const JobsFlags& f, const CLI::App& v) { return Create(c, f, v); });
  create->add_option("-f,--file", flags->file, "CustomJob JSON file (- for stdin)")->required();
  create->add_flag("--wait", flags->wait, "wait until the job ends; exit code as for `wait`");
  add_timeout(create);

  CLI::App* get =
      AddVerb(*jobs, run, flags, "get", "Show one job",
              [](sdk::Client& c, const JobsFlags& f, const CLI::App&) { return Get(c, f); });
  add_name(get);

  CLI::App* list =
      AddVerb(*jobs, run, flags, "list", "List jobs (all pages)",
              [](sdk::Client& c, const JobsFlags& f, const CLI::App&) { return List(c, f); });
  list->add_option("--filter", flags->filter,
                   "AIP-160 filter, e.g. 'state=JOB_STATE_SUCCEEDED AND labels.team=nlp'");
  list->add_option("--page-size", flags->page_size, "jobs per request (the list follows pages)")
      ->check(CLI::Range(1, 100));

  CLI::App* cancel =
      AddVerb(*jobs, run, flags, "cancel", "Request cancellation of a job",
              [](sdk::Client& c, const JobsFlags& f, const CLI::App&) { return Cancel(c, f); });
  add_name(cancel);

  CLI::App* del =
      AddVerb(*jobs, run, flags, "delete", "Delete a job that has ended",
              [](sdk::Client& c, const JobsFlags& f, const CLI::App&) { return Delete(c, f); });
  add_name(del);

  CLI::App* wait =
      AddVerb(*jobs, run, flags, "wait",
              "Wait until a job ends, one line per change of state, reason or queue position",
              [](sdk::Client& c, const JobsFlags& f, const CLI::App&) {
                return WaitAndReport(c, f, f.name);
              });
  add_name(wait);
  add_timeout(wait);

  CLI::App* logs =
      AddVerb(*jobs, run, flags, "logs",
              "Print a job's log, one line per entry: TIMESTAMP SEVERITY TASK MESSAGE",
              [](sdk::Client& c, const JobsFlags& f, const CLI::App&) { return Logs(c, f); });
  add_name(logs);
  logs->add_flag("-f,--follow", flags->follow,
                 "keep printing new entries until the job has ended and no more arrive");
  logs->add_option("--task", flags->task,
                   "only this task's entries: workerpool0-0, …, or service (the job's own)");
}

}  // namespace trainyard::cmd
