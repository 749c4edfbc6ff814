#include "services/jobs/workload_model.h"

#include <charconv>
#include <cmath>
#include <map>
#include <span>

#include "services/jobs/catalog.h"
#include "services/model/duration_text.h"

namespace trainyard {
namespace {

constexpr std::string_view kDuration = "TRAINYARD_SIM_DURATION";
constexpr std::string_view kSteps = "TRAINYARD_SIM_STEPS";
constexpr std::string_view kStepTime = "TRAINYARD_SIM_STEP_TIME";
constexpr std::string_view kParams = "TRAINYARD_MODEL_PARAMS";
constexpr std::string_view kTokens = "TRAINYARD_TRAIN_TOKENS";
constexpr std::string_view kBatch = "TRAINYARD_GLOBAL_BATCH_SIZE";
constexpr std::string_view kSeqLen = "TRAINYARD_SEQ_LEN";
constexpr std::string_view kPrecision = "TRAINYARD_PRECISION";
constexpr std::string_view kMfu = "TRAINYARD_MFU";
constexpr std::string_view kCheckpointInterval = "TRAINYARD_CHECKPOINT_INTERVAL";
constexpr std::string_view kEmergencyCheckpoint = "TRAINYARD_EMERGENCY_CHECKPOINT_TIME";
constexpr std::string_view kCheckpointSave = "TRAINYARD_CHECKPOINT_SAVE_TIME";
constexpr std::string_view kCheckpointRestore = "TRAINYARD_CHECKPOINT_RESTORE_TIME";
constexpr std::string_view kSlowHost = "TRAINYARD_SIM_SLOW_HOST";
constexpr std::string_view kSlowHostFactor = "TRAINYARD_SIM_SLOW_HOST_FACTOR";
constexpr std::string_view kRunTimeKnobs[] = {kDuration, kSteps,  kStepTime,  kParams, kTokens,
                                              kBatch,    kSeqLen, kPrecision, kMfu};

constexpr double kGpuMfu = 0.4;
constexpr double kTpuMfu = 0.5;
// Far beyond any run we could simulate (31 years), and inside Duration's range (nanoseconds in an
// int64_t: 292 years).
constexpr double kMaxRunSeconds = 1e9;

// The knobs as set: name → (index in env, value).
struct Knobs {
  std::string env_path;  // jobSpec.workerPoolSpecs[0].containerSpec.env
  std::map<std::string_view, std::pair<size_t, std::string>> set;

  const std::string* Value(std::string_view name) const {
    auto it = set.find(name);
    return it == set.end() ? nullptr : &it->second.second;
  }
  Status Invalid(std::string_view name, const std::string& description) const {
    size_t index = set.at(name).first;
    return InvalidField(env_path + "[" + std::to_string(index) + "].value",
                        std::string(name) + " " + description);
  }
};

Knobs ReadKnobs(const CustomJobSpec& spec, std::span<const std::string_view> names) {
  Knobs knobs;
  if (spec.worker_pool_specs.empty()) return knobs;
  const WorkerPoolSpec& primary = spec.worker_pool_specs[0];
  const std::vector<EnvVar>* env = nullptr;
  if (primary.container_spec) {
    env = &primary.container_spec->env;
    knobs.env_path = "jobSpec.workerPoolSpecs[0].containerSpec.env";
  } else if (primary.python_package_spec) {
    env = &primary.python_package_spec->env;
    knobs.env_path = "jobSpec.workerPoolSpecs[0].pythonPackageSpec.env";
  }
  if (env == nullptr) return knobs;
  for (std::string_view name : names) {
    for (size_t i = 0; i < env->size(); ++i) {
      if ((*env)[i].name == name) knobs.set[name] = {i, (*env)[i].value};
    }
  }
  return knobs;
}

std::optional<double> ParsePositive(const std::string& text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
      value <= 0) {
    return std::nullopt;
  }
  return value;
}

std::optional<int64_t> ParsePositiveInt(const std::string& text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

// Every knob that is set must parse, whichever one decides.
Status CheckValues(const Knobs& k) {
  for (std::string_view name : {kDuration, kStepTime}) {
    const std::string* v = k.Value(name);
    if (v != nullptr && !ParseDurationText(*v)) {
      return k.Invalid(
          name, "must be a duration in seconds like \"3600s\" or \"1.5s\" (got \"" + *v + "\")");
    }
  }
  for (std::string_view name : {kSteps, kBatch, kSeqLen}) {
    const std::string* v = k.Value(name);
    if (v != nullptr && !ParsePositiveInt(*v)) {
      return k.Invalid(name, "must be a positive integer (got \"" + *v + "\")");
    }
  }
  for (std::string_view name : {kParams, kTokens}) {
    const std::string* v = k.Value(name);
    if (v != nullptr && !ParsePositive(*v)) {
      return k.Invalid(name, "must be a positive number like \"7e9\" (got \"" + *v + "\")");
    }
  }
  if (const std::string* v = k.Value(kPrecision); v != nullptr && !ParsePrecision(*v)) {
    return k.Invalid(kPrecision, "must be bf16 or fp8 (got \"" + *v + "\")");
  }
  if (const std::string* v = k.Value(kMfu)) {
    auto mfu = ParsePositive(*v);
    if (!mfu || *mfu > 1) {
      return k.Invalid(kMfu, "must be a fraction in (0, 1], e.g. \"0.4\" (got \"" + *v + "\")");
    }
  }
  return Status::Ok();
}

// Knobs as large as a double allows give inf or NaN: both end up in range (NaN as 0).
Duration Seconds(double s) {
  if (!(s > 0)) return Duration{};
  return std::chrono::duration_cast<Duration>(
      std::chrono::duration<double>(std::min(s, kMaxRunSeconds)));
}

// Σ chips × peak × MFU over the worker pools; an error names the knob whose choice fails.
StatusOr<double> DeliveredFlops(const CustomJobSpec& spec, const Knobs& k) {
  Precision precision = Precision::kBf16;
  if (const std::string* v = k.Value(kPrecision)) precision = *ParsePrecision(*v);
  std::optional<double> mfu_knob;
  if (const std::string* v = k.Value(kMfu)) mfu_knob = ParsePositive(*v);
  double total = 0;
  for (const WorkerPoolSpec& wp : spec.worker_pool_specs) {
    if (wp.IsPlaceholder() || !wp.machine_spec) continue;
    const MachineSpec& ms = *wp.machine_spec;
    const MachineType* machine = FindMachineType(ms.machine_type);
    if (machine == nullptr) continue;  // the validator reports it
    // A multi-host GPU replica spans NodesPerReplica() machines, each with its own GPUs.
    const double replicas =
        static_cast<double>(std::max<int64_t>(wp.replica_count, 1) * ms.NodesPerReplica());
    double chips = 0;
    std::optional<double> peak;
    std::string chip;
    if (machine->is_tpu && machine->tpu_family.empty()) {  // cloud-tpu: 2 cores per chip
      chips = ms.accelerator_count / 2.0;
      chip = ms.accelerator_type == AcceleratorType::kTpuV3 ? "v3" : "v2";
      peak = TpuPeakFlops(chip, precision);
      chip = "TPU " + chip;
    } else if (machine->is_tpu) {
      auto slice = ResolveTpuTopology(*machine, ms.tpu_topology);
      if (!slice.ok()) continue;  // the validator reports it
      chips = slice->chips;
      peak = TpuPeakFlops(machine->tpu_family, precision);
      chip = "TPU " + std::string(machine->tpu_family);
    } else {
      AcceleratorType type = machine->accelerator;
      int count = machine->accelerator_count;
      if (type == AcceleratorType::kUnspecified) {
        type = ms.accelerator_type;
        count = ms.accelerator_count;
      }
      if (type == AcceleratorType::kUnspecified || count == 0) continue;  // CPU only
      chips = count;
      peak = GpuPeakFlops(type, precision);
      chip = AcceleratorName(type);
    }
    if (!peak) {
      if (precision == Precision::kFp8 && k.Value(kPrecision) != nullptr) {
        return k.Invalid(kPrecision, "fp8 is not available on " + chip + "; use bf16");
      }
      return k.Invalid(kParams, "needs a known peak FLOP/s, and the catalog has none for " + chip +
                                    "; set TRAINYARD_SIM_DURATION or TRAINYARD_SIM_STEP_TIME");
    }
    double mfu = mfu_knob.value_or(machine->is_tpu ? kTpuMfu : kGpuMfu);
    total += replicas * chips * *peak * mfu;
  }
  if (total <= 0) {
    return k.Invalid(kParams,
                     "needs accelerators: the worker pools have no GPU or TPU to run the model on");
  }
  return total;
}

// Multislice: the TPU slices the job runs (over its TPU pools) and the chips of each.
struct Slices {
  int64_t count = 0;
  int chips = 0;
};
Slices TpuSlices(const CustomJobSpec& spec) {
  Slices out;
  for (const WorkerPoolSpec& wp : spec.worker_pool_specs) {
    if (wp.IsPlaceholder() || !wp.machine_spec) continue;
    const MachineType* machine = FindMachineType(wp.machine_spec->machine_type);
    if (machine == nullptr || !machine->is_tpu || machine->tpu_family.empty()) continue;
    auto slice = ResolveTpuTopology(*machine, wp.machine_spec->tpu_topology);
    if (!slice.ok()) continue;
    out.count += std::max<int64_t>(wp.replica_count, 1);
    out.chips = slice->chips;
  }
  return out;
}

// What one step spends exchanging gradients between slices over DCN (Multislice): inside a slice
// the all-reduce rides ICI and is part of the MFU; across slices each slice's share of a ring
// all-reduce of the bf16 gradients (2 bytes a parameter), 2 (S-1)/S of them, crosses its
// hosts' DCN links at kDcnGbpsPerChip a chip, not overlapped with compute (an upper bound).
Duration DcnTimePerStep(double params, const Slices& slices) {
  if (slices.count < 2 || slices.chips <= 0) return Duration{};
  const double s = static_cast<double>(slices.count);
  const double bits = 2 * (s - 1) / s * 2 * params * 8;
  return Seconds(bits / (slices.chips * kDcnGbpsPerChip * 1e9));
}

StatusOr<WorkloadEstimate> FromModel(const CustomJobSpec& spec, const Knobs& k) {
  const double params = *ParsePositive(*k.Value(kParams));
  std::optional<int64_t> steps;
  if (const std::string* v = k.Value(kSteps)) steps = ParsePositiveInt(*v);
  std::optional<double> tokens_per_step;
  if (k.Value(kBatch) != nullptr && k.Value(kSeqLen) != nullptr) {
    tokens_per_step = static_cast<double>(*ParsePositiveInt(*k.Value(kBatch))) *
                      static_cast<double>(*ParsePositiveInt(*k.Value(kSeqLen)));
  }
  double tokens = 0;
  if (const std::string* v = k.Value(kTokens)) {
    tokens = *ParsePositive(*v);
  } else if (steps && tokens_per_step) {
    tokens = static_cast<double>(*steps) * *tokens_per_step;
  } else {
    return k.Invalid(kParams,
                     "needs the tokens to train on: TRAINYARD_TRAIN_TOKENS, or TRAINYARD_SIM_STEPS "
                     "with TRAINYARD_GLOBAL_BATCH_SIZE and TRAINYARD_SEQ_LEN");
  }
  TY_ASSIGN_OR_RETURN(double flops_per_second, DeliveredFlops(spec, k));
  WorkloadEstimate e;
  e.run = ModelTrainingTime(params, tokens, flops_per_second);
  e.flops = 6 * params * tokens;
  e.basis = "model";
  if (!steps && tokens_per_step) steps = static_cast<int64_t>(std::ceil(tokens / *tokens_per_step));
  if (steps) {
    const Duration dcn = DcnTimePerStep(params, TpuSlices(spec));
    e.step_time = Seconds(e.flops / flops_per_second / static_cast<double>(*steps)) + dcn;
    e.run += dcn * *steps;
  }
  return e;
}

}  // namespace

Duration ModelTrainingTime(double params, double tokens, double flops_per_second) {
  if (flops_per_second <= 0) return Seconds(kMaxRunSeconds);
  return Seconds(6 * params * tokens / flops_per_second);
}

StatusOr<std::optional<WorkloadEstimate>> EstimateWorkload(const CustomJobSpec& spec) {
  Knobs k = ReadKnobs(spec, kRunTimeKnobs);
  if (k.set.empty()) return std::optional<WorkloadEstimate>{};
  TY_RETURN_IF_ERROR(CheckValues(k));
  if (const std::string* v = k.Value(kDuration)) {
    return std::optional<WorkloadEstimate>{
        WorkloadEstimate{*ParseDurationText(*v), std::nullopt, 0, std::string(kDuration)}};
  }
  if (k.Value(kSteps) != nullptr && k.Value(kStepTime) != nullptr) {
    int64_t steps = *ParsePositiveInt(*k.Value(kSteps));
    Duration step = *ParseDurationText(*k.Value(kStepTime));
    double seconds = std::chrono::duration<double>(step).count() * static_cast<double>(steps);
    return std::optional<WorkloadEstimate>{WorkloadEstimate{Seconds(seconds), step, 0, "steps"}};
  }
  if (k.Value(kStepTime) != nullptr) {
    return k.Invalid(kStepTime, "needs TRAINYARD_SIM_STEPS: the run time is steps × step time");
  }
  if (k.Value(kParams) == nullptr) {
    // Model inputs without the model: say which knob is missing rather than ignore them.
    std::string_view first = k.set.begin()->first;
    for (std::string_view name : {kSteps, kTokens, kBatch, kSeqLen, kPrecision, kMfu}) {
      if (k.Value(name) != nullptr) {
        first = name;
        break;
      }
    }
    return k.Invalid(first, first == kSteps
                                ? "needs TRAINYARD_SIM_STEP_TIME, or TRAINYARD_MODEL_PARAMS with "
                                  "TRAINYARD_GLOBAL_BATCH_SIZE and TRAINYARD_SEQ_LEN"
                                : "takes effect only with TRAINYARD_MODEL_PARAMS (the model's "
                                  "parameter count, e.g. \"7e9\")");
  }
  TY_ASSIGN_OR_RETURN(WorkloadEstimate e, FromModel(spec, k));
  return std::optional<WorkloadEstimate>{std::move(e)};
}

StatusOr<Duration> CheckpointInterval(const CustomJobSpec& spec) {
  const std::string_view names[] = {kCheckpointInterval};
  Knobs k = ReadKnobs(spec, names);
  const std::string* v = k.Value(kCheckpointInterval);
  if (v == nullptr) return kDefaultCheckpointInterval;
  std::optional<Duration> interval = ParseDurationText(*v);
  if (!interval) {
    return k.Invalid(kCheckpointInterval,
                     "must be a duration in seconds like \"600s\", or \"0s\" for a job that "
                     "never checkpoints (got \"" +
                         *v + "\")");
  }
  return *interval;
}

StatusOr<std::optional<Duration>> EmergencyCheckpointTime(const CustomJobSpec& spec) {
  const std::string_view names[] = {kEmergencyCheckpoint};
  Knobs k = ReadKnobs(spec, names);
  const std::string* v = k.Value(kEmergencyCheckpoint);
  if (v == nullptr) return std::optional<Duration>{};
  std::optional<Duration> save = ParseDurationText(*v);
  if (!save || *save <= Duration{}) {
    return k.Invalid(kEmergencyCheckpoint,
                     "must be how long an emergency save takes, a duration in seconds like "
                     "\"20s\" (got \"" +
                         *v + "\")");
  }
  return std::optional<Duration>(*save);
}

namespace {

// The machines the job runs on: every replica's nodes, a TPU slice's hosts.
int64_t HostsOf(const CustomJobSpec& spec) {
  int64_t hosts = 0;
  for (const WorkerPoolSpec& wp : spec.worker_pool_specs) {
    if (wp.IsPlaceholder() || !wp.machine_spec) continue;
    const MachineSpec& ms = *wp.machine_spec;
    int64_t per_replica = ms.NodesPerReplica();
    if (const MachineType* machine = FindMachineType(ms.machine_type);
        machine != nullptr && machine->is_tpu && !machine->tpu_family.empty()) {
      if (auto slice = ResolveTpuTopology(*machine, ms.tpu_topology); slice.ok()) {
        per_replica = std::max<int64_t>(1, slice->chips / std::max(1, machine->tpu_chips_per_host));
      }
    }
    hosts += std::max<int64_t>(wp.replica_count, 1) * per_replica;
  }
  return std::max<int64_t>(hosts, 1);
}

}  // namespace

StatusOr<CheckpointCost> CheckpointCosts(const CustomJobSpec& spec) {
  const std::string_view names[] = {kCheckpointSave, kCheckpointRestore, kParams};
  Knobs k = ReadKnobs(spec, names);
  CheckpointCost out;
  if (const std::string* params = k.Value(kParams); params != nullptr) {
    if (std::optional<double> p = ParsePositive(*params)) {
      const double bits = *p * kCheckpointBytesPerParam * 8;
      out.save = out.restore =
          Seconds(bits / (static_cast<double>(HostsOf(spec)) * kCheckpointGbpsPerHost * 1e9));
    }
  }
  for (auto [name, into] :
       {std::pair{kCheckpointSave, &out.save}, std::pair{kCheckpointRestore, &out.restore}}) {
    const std::string* v = k.Value(name);
    if (v == nullptr) continue;
    std::optional<Duration> d = ParseDurationText(*v);
    if (!d || *d < Duration{}) {
      return k.Invalid(name, "must be a duration in seconds like \"30s\" (got \"" + *v + "\")");
    }
    *into = *d;
  }
  return out;
}

StatusOr<UtilizationKnobs> UtilizationKnobsOf(const CustomJobSpec& spec) {
  UtilizationKnobs out;
  const std::string_view names[] = {kSlowHost, kSlowHostFactor};
  Knobs k = ReadKnobs(spec, names);
  if (const std::string* v = k.Value(kSlowHost)) {
    int64_t index = -1;
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), index);
    if (ec != std::errc() || end != v->data() + v->size() || index < 0) {
      return k.Invalid(kSlowHost, "must be a host index, 0 or more (got \"" + *v + "\")");
    }
    out.slow_host = index;
  }
  if (const std::string* v = k.Value(kSlowHostFactor)) {
    auto factor = ParsePositive(*v);
    if (!factor || *factor >= 1) {
      return k.Invalid(kSlowHostFactor,
                       "must be a fraction in (0, 1), e.g. \"0.6\" (got \"" + *v + "\")");
    }
    if (!out.slow_host) {
      return k.Invalid(kSlowHostFactor, "takes effect only with TRAINYARD_SIM_SLOW_HOST");
    }
    out.slow_factor = *factor;
  }
  // The run-time knobs were checked by EstimateWorkload; here they only inform the model.
  Knobs run = ReadKnobs(spec, kRunTimeKnobs);
  if (const std::string* v = run.Value(kParams)) out.params = ParsePositive(*v);
  if (const std::string* v = run.Value(kMfu)) out.mfu = ParsePositive(*v);
  auto estimate = EstimateWorkload(spec);
  if (estimate.ok() && *estimate) out.step_time = (*estimate)->step_time;
  return out;
}

}  // namespace trainyard
