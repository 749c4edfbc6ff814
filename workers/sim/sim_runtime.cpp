#include "workers/sim/sim_runtime.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "services/jobs/gang_network.h"
#include "services/jobs/workload_model.h"
#include "services/runtime/replica_plan.h"

namespace trainyard::sim {
namespace {

const std::vector<EnvVar>* PrimaryEnv(const CustomJob& job) {
  const auto& pools = job.job_spec.worker_pool_specs;
  if (pools.empty()) return nullptr;
  if (pools[0].container_spec) return &pools[0].container_spec->env;
  if (pools[0].python_package_spec) return &pools[0].python_package_spec->env;
  return nullptr;
}

std::optional<std::string> Knob(const CustomJob& job, std::string_view name) {
  if (const auto* env = PrimaryEnv(job)) {
    for (const EnvVar& var : *env) {
      if (var.name == name) return var.value;
    }
  }
  return std::nullopt;
}

int ExitCode(const CustomJob& job) {
  int code = 0;
  if (auto text = Knob(job, "TRAINYARD_SIM_EXIT_CODE")) {
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), code);
    if (ec != std::errc{} || end != text->data() + text->size()) code = 0;
  }
  return code;
}

// A replica's handle is when it starts (its nodes booted, the image pulled) and when its work
// ends, in virtual microseconds: "start:end".
struct Span {
  Timestamp start{};
  Timestamp end{};
};

std::string SpanHandle(Span span) {
  return std::to_string(ToUnixMicros(span.start)) + ":" + std::to_string(ToUnixMicros(span.end));
}

std::optional<Span> SpanOf(std::string_view handle) {
  auto number = [](std::string_view text) -> std::optional<int64_t> {
    int64_t micros = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), micros);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return micros;
  };
  size_t colon = handle.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto start = number(handle.substr(0, colon));
  auto end = number(handle.substr(colon + 1));
  if (!start || !end) return std::nullopt;
  return Span{FromUnixMicros(*start), FromUnixMicros(*end)};
}

Timestamp After(Timestamp now, Duration d) {
  return now + std::chrono::duration_cast<std::chrono::microseconds>(d);
}

}  // namespace

// The knobs, else the compute model, else the default. Jobs stored before a knob was validated
// fall back to the default rather than fail. A straggler (TRAINYARD_SIM_SLOW_HOST) slows the whole
// gang: a synchronous step ends when its slowest host's does, so the run stretches by 1 / its
// share of its peers' speed; a multi-node gang's all-reduce adds its share (gang_network.h).
Duration SimRunTime(const CustomJob& job, const SimTimings& timings) {
  auto estimate = EstimateWorkload(job.job_spec);
  Duration run = estimate.ok() && *estimate ? (*estimate)->run : timings.run;
  if (auto knobs = UtilizationKnobsOf(job.job_spec);
      knobs.ok() && knobs->slow_host && knobs->slow_factor > 0) {
    // In whole microseconds, what a timestamp holds.
    run = std::chrono::duration_cast<std::chrono::microseconds>(run / knobs->slow_factor);
  }
  // A multi-node gang all-reduces between its nodes each step, slower across blocks: a modelled
  // run pays all of it, a measured one what crossing blocks adds.
  int blocks = 0;
  if (job.trainyard) {
    for (const PlacedPoolStatus& pool : job.trainyard->pools)
      blocks = std::max(blocks, pool.blocks);
  }
  const bool modelled = estimate.ok() && *estimate && (*estimate)->basis == "model";
  run = WithGangNetwork(run, job.job_spec, blocks, modelled);
  return run;
}

namespace {

// The placement's program start-up: every run pays it before its first step.
Duration ProgramStartup(const JobRecord& job) {
  return job.job.trainyard ? job.job.trainyard->program_startup : Duration{};
}

// How long a run takes that resumes after `saved` more work was checkpointed in the current one:
// the program's start-up, the restore of that checkpoint (when there is one), the work left, and a
// save after each checkpoint interval of it but the last (SplitRun's arithmetic, from the other
// side).
Duration RunLength(const JobRecord& job, const SimTimings& timings, Duration saved) {
  const Duration total = SimRunTime(job.job, timings);
  const Duration done = job.checkpointed + saved;
  const Duration left = done < total ? total - done : Duration{};
  Duration length = ProgramStartup(job) + left;
  if (done > Duration{}) length += job.checkpoint_cost.restore;
  if (job.checkpoint_interval > Duration{} && left > Duration{}) {
    const int64_t saves = (left - Duration(1)) / job.checkpoint_interval;  // ⌈left / I⌉ - 1
    length += saves * job.checkpoint_cost.save;
  }
  return std::chrono::duration_cast<std::chrono::microseconds>(length);
}

}  // namespace

// Simulated replicas start in no wall time: no lease can run out under a launch.
StatusOr<JobRun> SimRuntime::Launch(const JobRecord& job, int attempt, Timestamp now,
                                    LeaseDeadline) {
  ReplicaPlanOptions options;
  options.project_number = job.project_number;
  options.job_id = job.id;
  TY_ASSIGN_OR_RETURN(std::vector<Replica> replicas, PlanReplicas(job.job, options));
  // Right after admission the replicas start when the model says their nodes have booted and
  // pulled the image, however late the executor got to them (so the job's startTime does not
  // depend on --sim-speed or on polling); a job retried or resumed later starts at once on nodes
  // that are up.
  Timestamp start = now;
  const auto& admitted_at = job.job.trainyard ? job.job.trainyard->admitted_at : std::nullopt;
  if (job.job.state == JobState::kPending && admitted_at && job.state_since &&
      *job.state_since <= *admitted_at) {  // PENDING since its admission: its first launch
    start = After(*admitted_at, job.job.trainyard->startup);
  } else if (admitted_at) {
    start = std::max(now, After(*admitted_at, job.job.trainyard->startup));
  }
  // A job stopped by a preemption, a repair or a retry resumes from its last checkpoint.
  const Span span{start, After(start, RunLength(job, timings_, Duration{}))};
  JobRun run;
  run.attempt = attempt;
  for (const Replica& r : replicas) {
    run.replicas.push_back(ReplicaRun{r.task_name,
                                      start > now ? ReplicaPhase::kPending : ReplicaPhase::kRunning,
                                      std::nullopt, 0, SpanHandle(span)});
  }
  return run;
}

StatusOr<Observation> SimRuntime::Observe(const JobRecord& job, Timestamp now) {
  Observation out;
  if (!job.run) return out;
  for (const ReplicaRun& r : job.run->replicas) {
    ReplicaObservation seen{r.task_name, r.phase, r.exit_code, r.handle, std::nullopt};
    if (job.job.state == JobState::kCancelling) {
      seen.phase = ReplicaPhase::kExited;
      seen.exit_code = 128 + 15;  // SIGTERM
    } else if (std::optional<Span> span = SpanOf(r.handle)) {
      Timestamp next = span->end;
      if (now >= span->end) {
        seen.phase = ReplicaPhase::kExited;
        seen.exit_code = r.task_name == "workerpool0-0" ? ExitCode(job.job) : 0;
      } else if (now < span->start) {
        seen.phase = ReplicaPhase::kPending;  // booting, pulling the image
        next = span->start;
      } else {
        seen.phase = ReplicaPhase::kRunning;
      }
      if (seen.phase != ReplicaPhase::kPending) seen.running_since = span->start;
      if (r.task_name == "workerpool0-0" && seen.phase != ReplicaPhase::kExited &&
          ExitCode(job.job) == 0) {
        out.succeeds_at = span->end;
      }
      if (seen.phase != ReplicaPhase::kExited) {
        out.next_change = out.next_change ? std::min(*out.next_change, next) : next;
      }
    }
    out.replicas.push_back(std::move(seen));
  }
  return out;
}

StatusOr<std::string> SimRuntime::RestartReplica(const JobRecord& job, const ReplicaRun&,
                                                 Timestamp now, LeaseDeadline) {
  // A replica restarted in place resumes from the gang's last checkpoint: what the saves completed
  // since the job was last RUNNING hold is kept, the rest is done again.
  Duration saved{};
  if (job.job.state == JobState::kRunning && job.state_since && now > *job.state_since) {
    saved = SplitRun(now - *job.state_since, job.checkpointed > Duration{}, job.checkpoint_interval,
                     job.checkpoint_cost, ProgramStartup(job))
                .kept;
  }
  return SpanHandle(Span{now, After(now, RunLength(job, timings_, saved))});
}

namespace {

// Progress lines: one per simulated minute of the run, at most ten. A run shorter than a minute is
// a test stub rather than training, and prints only how it ended: a benchmark of ten thousand
// one-second jobs writes one line per job, not a dozen.
int StepLines(Duration run) {
  const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(run).count();
  return static_cast<int>(std::clamp<int64_t>(minutes, 0, 10));
}

std::string Format(const char* format, auto... values) {
  char buffer[256];
  std::snprintf(buffer, sizeof(buffer), format, values...);
  return buffer;
}

int64_t TotalSteps(const CustomJob& job) {
  if (auto steps = Knob(job, "TRAINYARD_SIM_STEPS")) {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(steps->data(), steps->data() + steps->size(), n);
    if (ec == std::errc{} && end == steps->data() + steps->size() && n > 0) return n;
  }
  return 1000;
}

int64_t Replicas(const JobRecord& job) {
  return job.run && !job.run->replicas.empty() ? static_cast<int64_t>(job.run->replicas.size()) : 1;
}

}  // namespace

void SimRuntime::Applied(const JobRecord& job, const JobTransition& t) {
  if (!timings_.training_log) return;
  std::vector<LogLine> lines;
  auto line = [&](Timestamp at, LogSeverity severity, std::string text) {
    lines.push_back(LogLine{job.id, at, severity, "workerpool0-0", std::move(text)});
  };
  const CustomJob& spec = job.job;
  // A run that started and ended between two looks (JobTransition::via) prints both.
  const std::optional<Timestamp> started = t.entered(JobState::kRunning);
  if (started && t.from() == JobState::kPending && StepLines(SimRunTime(spec, timings_)) > 0) {
    line(*started, LogSeverity::kInfo,
         Format("starting training of %s on %lld replica(s), image %s", spec.display_name.c_str(),
                static_cast<long long>(Replicas(job)),
                PrimaryImage(spec.job_spec).value_or("").c_str()));
  }
  const bool ended = (t.from() == JobState::kRunning || started) &&
                     (t.to() == JobState::kSucceeded || t.to() == JobState::kFailed);
  if (ended) {
    const Duration run = SimRunTime(spec, timings_);
    const Timestamp start =
        std::max(spec.start_time.value_or(t.start_time().value_or(t.at())),
                 t.at() - std::chrono::duration_cast<std::chrono::microseconds>(run));
    const auto span = t.at() - start;
    const int64_t steps = TotalSteps(spec);
    // Deterministic per job: the same job prints the same curve.
    const double offset = static_cast<double>(job.id % 97) / 970.0;
    const double seconds = std::max(1e-3, std::chrono::duration<double>(run).count());
    const double tokens_per_second =
        static_cast<double>(steps) * 4096.0 * static_cast<double>(Replicas(job)) / seconds;
    const int step_lines = StepLines(run);
    for (int i = 1; i <= step_lines; ++i) {
      const double done = static_cast<double>(i) / step_lines;
      const Timestamp at = start + span * i / step_lines;
      if (t.to() == JobState::kFailed && i == step_lines) break;
      const auto step = static_cast<long long>(std::llround(done * static_cast<double>(steps)));
      line(at, LogSeverity::kInfo,
           Format("step %lld/%lld loss=%.4f tokens/s=%.0f", step, static_cast<long long>(steps),
                  0.9 + offset + 2.2 * std::exp(-3.0 * done), tokens_per_second));
      if (i % 5 == 0) {
        line(at, LogSeverity::kInfo, Format("saved checkpoint at step %lld", step));
      }
    }
    if (t.to() == JobState::kSucceeded) {
      line(t.at(), LogSeverity::kInfo, "training finished");
    } else {
      line(t.at(), LogSeverity::kError,
           t.error() ? t.error()->message : std::string("training failed"));
    }
  }
  if (lines.empty()) return;
  std::lock_guard lock(mu_);
  pending_.insert(pending_.end(), std::make_move_iterator(lines.begin()),
                  std::make_move_iterator(lines.end()));
}

std::vector<LogLine> SimRuntime::CollectLogs(Timestamp) {
  std::lock_guard lock(mu_);
  collected_ = pending_.size();
  return pending_;
}

void SimRuntime::LogsStored() {
  std::lock_guard lock(mu_);
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(collected_));
  collected_ = 0;
}

}  // namespace trainyard::sim
