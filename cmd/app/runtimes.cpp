#include "cmd/app/runtimes.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "api/wire/custom_job_codec.h"
#include "cmd/app/serve_flags.h"
#include "services/log.h"
#include "workers/files/secret_file.h"
#include "workers/local/local_runtime.h"
#include "workers/sim/sim_runtime.h"
#include "workers/slurm/slurm_capacity.h"
#include "workers/slurm/slurm_rest_client.h"
#include "workers/slurm/slurm_runtime.h"

namespace trainyard::app {
namespace {

// CLUSTER_SPEC's "job": the spec in the wire's JSON (the runtimes sit below the wire).
std::string EncodeJobSpec(const CustomJobSpec& spec) { return EncodeCustomJobSpec(spec).dump(); }

// slurmrestd's client, with the token from --slurm-token-file or SLURM_JWT.
StatusOr<std::unique_ptr<slurm::SlurmRestClient>> MakeSlurmClient(const ServeOptions& options) {
  slurm::SlurmRestOptions rest;
  rest.url = options.slurm_url;
  if (rest.url.empty()) return InvalidArgument("--runtime=slurm needs --slurm-url");
  rest.token_file = options.slurm_token_file;
  if (const char* jwt = std::getenv("SLURM_JWT"); jwt != nullptr && rest.token_file.empty()) {
    rest.token = jwt;
  }
  // Whom the jobs run as is the operator's choice, never a default (it used to fall back to root).
  rest.user = options.slurm_user;
  if (rest.user.empty()) {
    return InvalidArgument("--runtime=slurm needs --slurm-user: the Slurm user the jobs run as");
  }
  rest.ca_file = options.slurm_ca_file;
  return slurm::SlurmRestClient::Create(std::move(rest));
}

// The Slurm runtime, with the partitions the fleet file's pools name.
StatusOr<std::unique_ptr<Runtime>> MakeSlurmRuntime(const ServeOptions& options,
                                                    const Fleet& fleet) {
  TY_ASSIGN_OR_RETURN(std::unique_ptr<slurm::SlurmRestClient> client, MakeSlurmClient(options));
  slurm::SlurmRuntimeOptions runtime;
  runtime.shared_dir = std::filesystem::absolute(
      options.slurm_shared_dir.empty() ? std::filesystem::path(options.data_dir) / "slurm"
                                       : std::filesystem::path(options.slurm_shared_dir));
  runtime.state_dir =
      std::filesystem::absolute(std::filesystem::path(options.data_dir) / "slurm-state");
  runtime.user = options.slurm_user;
  TY_ASSIGN_OR_RETURN(runtime.tag_key, files::LoadOrCreateSecret(runtime.state_dir / "tag.key"));
  if (geteuid() == 0) {
    // The jobs run as the Slurm user, so their folders are its; the same uid on every node.
    if (const passwd* pw = getpwnam(options.slurm_user.c_str()); pw != nullptr) {
      runtime.folder_owner = std::make_pair(pw->pw_uid, pw->pw_gid);
    }
  }
  runtime.tasks_per_node = options.slurm_tasks_per_node;
  runtime.encode_job_spec = EncodeJobSpec;
  runtime.launch_lookup_age = std::chrono::milliseconds(options.lease_seconds * 1000 / 4);
  for (const CapacityPool& pool : fleet.pools) {
    if (!pool.slurm_partition.empty()) runtime.partition_of_pool[pool.id] = pool.slurm_partition;
  }
  return std::unique_ptr<Runtime>(
      std::make_unique<slurm::SlurmRuntime>(std::move(client), std::move(runtime)));
}

// The cluster's nodes as slurmrestd says, read once now (a failed read is logged and the reader
// tries again every --slurm-capacity-seconds) and then in the background.
StatusOr<std::unique_ptr<ExternalCapacity>> MakeSlurmCapacity(const ServeOptions& options,
                                                              const Fleet& fleet) {
  TY_ASSIGN_OR_RETURN(std::unique_ptr<slurm::SlurmRestClient> client, MakeSlurmClient(options));
  auto capacity = std::make_unique<slurm::SlurmCapacity>(
      std::move(client), fleet,
      std::chrono::milliseconds(static_cast<int64_t>(options.slurm_capacity_seconds * 1000)),
      options.slurm_tasks_per_node);
  if (Status read = capacity->Refresh(); !read.ok()) {
    LogJson(LogLevel::kWarn, "slurm_capacity_failed", {{"error", read.message()}});
  }
  capacity->Start();
  return std::unique_ptr<ExternalCapacity>(std::move(capacity));
}

// The local runtime, its replicas as isolated as this host allows; refused where they would not
// keep projects apart and the API takes tokens (`tokens`).
StatusOr<std::unique_ptr<Runtime>> MakeLocalRuntime(const ServeOptions& options, bool tokens) {
  local::LocalRuntimeOptions local_options;
  TY_ASSIGN_OR_RETURN(local_options.sandbox, local::DetectSandbox(local::kReplicaUser));
  TY_RETURN_IF_ERROR(
      local::ReviewIsolation(local_options.sandbox, tokens, options.allow_unsandboxed_replicas));
  local_options.data_dir = std::filesystem::absolute(options.data_dir);
  local_options.root = local::ReachableReplicaRoot(
      std::filesystem::absolute(options.data_dir) / "replicas", local_options.sandbox);
  local_options.grace =
      std::chrono::milliseconds(static_cast<int64_t>(options.stop_grace_seconds * 1000));
  local_options.encode_job_spec = EncodeJobSpec;
  return std::unique_ptr<Runtime>(std::make_unique<local::LocalRuntime>(local_options));
}

}  // namespace

RuntimeEntry SimulatorEntry(bool training_log) {
  RuntimeEntry entry;
  entry.make = [training_log](const Fleet&) -> StatusOr<std::unique_ptr<Runtime>> {
    sim::SimTimings timings;
    timings.training_log = training_log;
    return std::unique_ptr<Runtime>(std::make_unique<sim::SimRuntime>(timings));
  };
  entry.simulated_startup = true;
  return entry;
}

RuntimeEntry LocalEntry(const ServeOptions& options) {
  RuntimeEntry entry;
  entry.make = [&options](const Fleet&) {
    return MakeLocalRuntime(options, ApiTakesTokens(options));
  };
  entry.runs_commands_on_host = true;
  return entry;
}

RuntimeEntry SlurmEntry(const ServeOptions& options) {
  RuntimeEntry entry;
  entry.make = [&options](const Fleet& fleet) { return MakeSlurmRuntime(options, fleet); };
  entry.capacity = [&options](const Fleet& fleet) { return MakeSlurmCapacity(options, fleet); };
  return entry;
}

RuntimeRegistry ServeRuntimes(const ServeOptions& options) {
  RuntimeRegistry registry;
  registry.Register("sim", SimulatorEntry());
  registry.Register("local", LocalEntry(options));
  registry.Register("slurm", SlurmEntry(options));
  return registry;
}

RuntimeRegistry SimulateRuntimes() {
  RuntimeRegistry registry;
  // `simulate` keeps no job logs (storage/memory/unkept_ports.h): its simulator prints none.
  registry.Register("sim", SimulatorEntry(/*training_log=*/false));
  return registry;
}

}  // namespace trainyard::app
