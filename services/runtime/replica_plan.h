#pragma once
// The replicas of a CustomJob and the distributed environment of each (docs/runtimes.md): one
// pure function shared by every runtime (simulator, local processes, Slurm), so a training script
// sees the same CLUSTER_SPEC, TF_CONFIG and PyTorch variables wherever it runs. No I/O here: where
// a replica listens is the runtime's business and comes in through ReplicaPlanOptions::endpoint.
//
// Decisions (each one is where Vertex is silent or where a runtime would otherwise guess):
//
// * Pool 0 is required. Vertex documents workerPoolSpecs[0] as the primary and "required", and the
//   validator rejects a `{}` pool 0 at create, so PlanReplicas does too (INVALID_ARGUMENT on
//   jobSpec.workerPoolSpecs[0]) rather than promote some other replica to primary: a job that
//   reaches here without one is a bug elsewhere, and a silently chosen primary would decide the
//   job's outcome. `{}` pools after the first keep their positions (a `{}` pool 2 with evaluators
//   in pool 3 still gives "workerpool3" / "evaluator").
//
// * TPU slices: every host of a multi-host slice runs the program, so a slice is one replica per
//   host (workerpool0-0 … workerpool0-{hosts-1}), each with TPU_WORKER_ID (its host index) and
//   TPU_WORKER_HOSTNAMES (all hosts, comma-separated, in index order; GKE's convention, as Vertex
//   runs on GKE). Single-host TPU replicas get them too (TPU_WORKER_ID=0), so code need not
//   branch. cloud-tpu (v2/v3) has one host per 8 TensorCores of acceleratorCount.
//
// * TF_CONFIG only for multi-replica jobs, counted as Vertex counts them: the sum of replicaCount
//   over the pools. A TPU slice is one Vertex replica (a TPU job is one pool, replicaCount 1), so
//   its hosts get no TF_CONFIG: a "chief" of four hosts would be malformed for TensorFlow, and TPU
//   frameworks find their peers through TPU_WORKER_HOSTNAMES instead. CLUSTER_SPEC, which is ours
//   to shape per pool, does list every host.
//
// * PyTorch launcher variables (Vertex does not promise them; legacy AI Platform and the prebuilt
//   PyTorch images provide them): MASTER_ADDR = host of workerpool0-0, MASTER_PORT,
//   WORLD_SIZE = replicas of pools 0-2, RANK = NODE_RANK = replicas of earlier pools + index,
//   LOCAL_WORLD_SIZE = accelerators per node. Evaluators (pool 3) are not in the world, as TF
//   leaves them out of TF_CONFIG's cluster: they get MASTER_ADDR, MASTER_PORT, WORLD_SIZE and
//   LOCAL_WORLD_SIZE but no RANK or NODE_RANK, so an evaluator that calls init_process_group by
//   mistake fails at once instead of taking a rank a trainer owns and hanging the world.
//
// * The user's env of the pool against ours, by name:
//   - The service wins for what describes the cluster and the replica's identity: CLUSTER_SPEC,
//     TF_CONFIG, CLOUD_ML_PROJECT_ID, CLOUD_ML_JOB_ID, MASTER_ADDR, WORLD_SIZE, RANK, NODE_RANK,
//     TPU_WORKER_ID, TPU_WORKER_HOSTNAMES. These differ per replica or must agree across pools,
//     and a pool's env is one value for all its replicas, so a user value there can only be wrong
//     for some replica (every worker would claim the same RANK). The user's entry is dropped when
//     we set the name; when we do not (TF_CONFIG on a single replica, RANK on an evaluator, TPU_*
//     off TPUs) it passes through untouched.
//   - MASTER_PORT: pool 0's user value, if any, is applied to every replica; otherwise
//     options.master_port. Pool 0 is where the master listens, so a port the user picked there
//     (to avoid a clash, say) must be the one workers dial; a worker pool's own MASTER_PORT is
//     replaced, since it cannot change where the master listens.
//   - The user wins for per-node knobs and output locations: LOCAL_WORLD_SIZE (running fewer
//     processes than GPUs is legitimate) and AIP_MODEL_DIR, AIP_CHECKPOINT_DIR,
//     AIP_TENSORBOARD_LOG_DIR (someone who writes a directory explicitly means it).
//   Env order: our variables first, in a fixed order, then the user's remaining entries in theirs.
//
// * Determinism: the same job and options give the same plan, byte for byte. The hostname hash is
//   splitmix64 of the job id (not std::hash, which may differ between library builds).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "services/model/custom_job.h"
#include "services/status.h"

namespace trainyard {

struct ReplicaEndpoint {
  std::string host;
  int port = 2222;
};

struct ReplicaPlanOptions {
  int64_t project_number = 0;  // CLOUD_ML_PROJECT_ID is the project NUMBER
  int64_t job_id = 0;          // CLOUD_ML_JOB_ID
  // Where each replica listens, as other replicas address it (CLUSTER_SPEC, TF_CONFIG,
  // MASTER_ADDR, TPU_WORKER_HOSTNAMES); `index` is the host index for TPU slices. Unset: the
  // replica's hostname (below) and port 2222, as on Vertex. The local-process runtime passes
  // 127.0.0.1 and a distinct free port per replica. Must return a non-empty host and a port in
  // 1..65535 (else INTERNAL: it is our runtime's bug, not the job's).
  std::function<ReplicaEndpoint(int pool, int index)> endpoint;
  int master_port = 23456;  // MASTER_PORT (the local runtime passes a free port)
  // The CustomJobSpec in its wire JSON, embedded raw as "job" in CLUSTER_SPEC and TF_CONFIG. The
  // encoder lives in api/wire, which services must not depend on, so the caller encodes it
  // (EncodeCustomJobSpec(spec).dump()). Must be one JSON object; empty means `{}`.
  std::string job_spec_json;
};

// How a runtime spells a job's spec for CLUSTER_SPEC: the wire's encoder, which sits above the
// runtimes, handed down by whoever builds them (cmd/app). None: `{}`.
using JobSpecEncoder = std::function<std::string(const CustomJobSpec& spec)>;

struct Replica {
  int pool = 0;   // worker pool position (= role: 0 chief/primary, 1 workers, 2 ps, 3 evaluators)
  int index = 0;  // replica index within the pool (TPU: host index within the slice)
  std::string task_name;  // "workerpool{pool}-{index}" (log task_name, webAccessUris key)
  // "cmle-training-workerpool{pool}-{hash}-{index}", whatever the endpoint: unique per replica
  // even when every replica listens on 127.0.0.1, so runtimes can name containers and logs by it.
  std::string hostname;
  ReplicaEndpoint endpoint;
  bool primary = false;  // workerpool0-0: its exit decides the job (docs/runtimes.md)
  // The container to run: from containerSpec (image, command, args) or pythonPackageSpec
  // (executorImageUri; command = {"python3", "-m", pythonModule}, args; the runtime installs
  // package_uris before it starts the command).
  std::string image_uri;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<std::string> package_uris;
  std::vector<EnvVar> env;  // the distributed environment, then the pool's user env
};

// Replicas in pool order, then index order. INVALID_ARGUMENT naming the field for a job that
// cannot be planned: no workerPoolSpecs, a `{}` pool 0, more than 4 pools, a pool without
// containerSpec/pythonPackageSpec (or without its image or pythonModule) or machineSpec, an
// unknown machine type, a TPU topology the catalog cannot resolve, a cloud-tpu pool with
// replicaCount other than 1 (one slice), or replicaCount outside 0..1000 (0 = not sent = 1).
// A TPU pool runs replicaCount slices of its topology, a process per host; with more than one
// slice in the job (Multislice) each host also gets MEGASCALE_COORDINATOR_ADDRESS (slice 0's first
// host, port 8081), MEGASCALE_NUM_SLICES, MEGASCALE_SLICE_ID and MEGASCALE_PORT.
StatusOr<std::vector<Replica>> PlanReplicas(const CustomJob& job,
                                            const ReplicaPlanOptions& options);

// For runtimes that run commands rather than images (local, Slurm): INVALID_ARGUMENT naming the
// first pool whose replicas have no command. `runs` says where commands run ("the local runtime
// runs a command on this host"). Checked for every replica before any starts: a half-launched
// gang is worse than none.
Status RequireCommands(const std::vector<Replica>& replicas, std::string_view runs);

// The stable short hex in default hostnames: 10 hex digits derived from the job id, the same on
// every run and machine.
std::string JobHostHash(int64_t job_id);

}  // namespace trainyard
