#pragma once
// How long a simulated job RUNs. Explicit knobs in the env of workerPoolSpecs[0] win; otherwise a
// compute model: a dense transformer's training costs 6 × params × tokens FLOPs, delivered at
// Σ chips × peak FLOP/s (catalog) × MFU over every worker pool, so the run time falls near-linearly
// with replicas and halves with fp8 where the chips have it.
//
// Knobs, in the order they decide (docs/runtimes.md has the table):
//   TRAINYARD_SIM_DURATION       the run time itself ("3600s")
//   TRAINYARD_SIM_STEPS          optimizer steps; × TRAINYARD_SIM_STEP_TIME ("1.5s") when set
//   TRAINYARD_MODEL_PARAMS       parameters ("7e9"); turns the model on
//   TRAINYARD_TRAIN_TOKENS       tokens trained on ("1e9"); else steps × global batch × seq len
//   TRAINYARD_GLOBAL_BATCH_SIZE  sequences per step
//   TRAINYARD_SEQ_LEN            tokens per sequence
//   TRAINYARD_PRECISION          bf16 (default) or fp8
//   TRAINYARD_MFU                model FLOPs utilisation in (0, 1]; default 0.4 GPUs, 0.5 TPUs
//
// And what an interruption costs: TRAINYARD_CHECKPOINT_INTERVAL ("600s", the default; "0s": the
// job never checkpoints). A gang stopped by a preemption, a node failure or a whole-job retry
// restarts from its last checkpoint; the work since then is lost and done again.
#include <optional>
#include <string>

#include "services/model/custom_job.h"
#include "services/status.h"

namespace trainyard {

struct WorkloadEstimate {
  Duration run{};
  std::optional<Duration> step_time;  // when steps are known
  double flops = 0;                   // the model's total training FLOPs; 0 for explicit knobs
  std::string basis;                  // what decided: "TRAINYARD_SIM_DURATION", "steps", "model"
};

// nullopt when the job sets none of the knobs (the runtime's default run time applies). A bad
// value, or a set of knobs that does not determine a run time, is INVALID_ARGUMENT naming
// jobSpec.workerPoolSpecs[0].containerSpec.env[i].value (or pythonPackageSpec.env).
StatusOr<std::optional<WorkloadEstimate>> EstimateWorkload(const CustomJobSpec& spec);

inline constexpr Duration kDefaultCheckpointInterval = std::chrono::minutes(10);

// DCN bandwidth a TPU chip's host gives the slice for Multislice traffic: TPU v5p's published
// 50 Gb/s a chip (docs/capacity-model.md, cloud.google.com/tpu/docs/v5p); taken for every
// generation, as Google publishes no other. The model charges each step of a Multislice job its
// gradients' exchange between slices at this bandwidth, when it knows the steps.
inline constexpr double kDcnGbpsPerChip = 50;

// How often the job saves a checkpoint, in run time: TRAINYARD_CHECKPOINT_INTERVAL or the
// default. A bad value is INVALID_ARGUMENT naming the env entry.
StatusOr<Duration> CheckpointInterval(const CustomJobSpec& spec);

// TRAINYARD_EMERGENCY_CHECKPOINT_TIME: the workload saves its state when a preemption notice
// comes, taking this long (nullopt: it does not). When the save fits in the notice the run loses
// only the notice, not the work since its last periodic checkpoint (Orbax's emergency
// checkpointing, GKE's preemption notice handling). A bad value is INVALID_ARGUMENT naming the
// env entry.
StatusOr<std::optional<Duration>> EmergencyCheckpointTime(const CustomJobSpec& spec);

// What the job's periodic checkpoints cost in run time (ML Goodput's
// UNPRODUCTIVE_CHECKPOINT_SAVE_TIME and _RESTORE_TIME): a synchronous save after each interval of
// work, and a restore when a run resumes from a checkpoint. TRAINYARD_CHECKPOINT_SAVE_TIME and
// TRAINYARD_CHECKPOINT_RESTORE_TIME set them; else, for a job with TRAINYARD_MODEL_PARAMS, the
// training state (kCheckpointBytesPerParam a parameter) written to or read from storage by every
// host at kCheckpointGbpsPerHost; else none. A bad value is INVALID_ARGUMENT naming the env entry.
StatusOr<CheckpointCost> CheckpointCosts(const CustomJobSpec& spec);

// Mixed-precision Adam keeps fp32 master weights, momentum and variance: 12 bytes a parameter
// (the ZeRO paper's K = 12), which is what a checkpoint must hold to resume training.
inline constexpr double kCheckpointBytesPerParam = 12;
// Chosen, as Google publishes no per-VM Cloud Storage figure: each host writes (and reads) its
// shard at 10 Gb/s, the same regional-storage rate as the image pull (imagePullGbps).
inline constexpr double kCheckpointGbpsPerHost = 10;

// What the simulated accelerator metrics (services/telemetry) need of a job: its model size and
// step time when known, its MFU knob, and a straggler to show. TRAINYARD_SIM_SLOW_HOST names a
// host by its index in the job's host list (0 first) and TRAINYARD_SIM_SLOW_HOST_FACTOR (default
// 0.6) the share of its peers' speed it computes at. A bad value is INVALID_ARGUMENT naming the
// env entry.
struct UtilizationKnobs {
  std::optional<double> params;
  std::optional<Duration> step_time;
  std::optional<double> mfu;
  std::optional<int64_t> slow_host;
  double slow_factor = 0.6;
};
StatusOr<UtilizationKnobs> UtilizationKnobsOf(const CustomJobSpec& spec);

// 6 × params × tokens / (flops_per_second): the compute-bound training time.
Duration ModelTrainingTime(double params, double tokens, double flops_per_second);

}  // namespace trainyard
