#pragma once
// The capacity a fleet offers, as the scheduler and the simulator see it: pools of interchangeable
// nodes, each a zone × machine type × consumption model (× reservation), with prices and the
// behaviour of that kind of capacity. Loaded from payloads/fleets/*.json (workers/sim/fleet_file).
//
// A pool counts *units*: a node for GPU and CPU machine types, a whole slice (hosts_per_unit
// hosts) for TPU pools, which are pre-carved into slices of one topology like GKE node pools.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/fleet/dws_queue_model.h"
#include "services/fleet/spot_availability.h"
#include "services/fleet/startup_model.h"
#include "services/fleet/zone_capacity.h"
#include "services/model/consumption_model.h"
#include "services/model/custom_job.h"
#include "services/time.h"

namespace trainyard {

struct CapacityPool {
  std::string id;  // "us-central1-a/a3-megagpu-8g/SPOT" or ".../RESERVATION/r-name"
  std::string region;
  std::string zone;
  std::string machine_type;
  ConsumptionModel model = ConsumptionModel::kOnDemand;
  // Reservations: the name reservationAffinity targets, the projects (ids) that may use it
  // (empty: any project), the term ("1y", "3y", "calendar"), and for calendar mode the window
  // outside which the nodes are not usable.
  std::string reservation;
  std::vector<std::string> projects;
  std::string term;
  std::optional<Timestamp> window_start;
  std::optional<Timestamp> window_end;
  // A window given relative to the fleet's epoch (for fleets that outlive any fixed date);
  // Fleet::SetEpoch turns it into window_start/window_end.
  std::optional<Duration> window_after;
  std::optional<Duration> window_length;
  std::string tpu_topology;  // TPU pools: the slice shape of every unit
  int tpu_chips = 0;         // TPU pools: chips per slice (from the topology)
  int hosts_per_unit = 1;
  // The Slurm partition its nodes are (`serve --runtime=slurm`); empty: the cluster's default.
  std::string slurm_partition;
  int units = 0;  // total capacity (for FLEX_START: the most DWS provisions this fleet at once)
  // Elastic CPU capacity (the fleet file's elasticCpu): every CPU-only machine type (n1, n2, e2,
  // c3 …, no GPU) that no explicit pool of the zone lists, without a node count: the project's
  // CPUS quota is the bound, as in a real region. machine_type is empty; there are no node rows,
  // every admission boots fresh VMs, and each is priced by its machine type's list price.
  bool elastic = false;
  // An attached-accelerator pool (catalogPools), machine_type AttachedPoolType(…): N1 VMs of any
  // shape with this GPU attached, as many per VM as the job asks, each VM priced by the job's
  // shape; or cloud-tpu hosts of this TPU generation (TPU_V2, TPU_V3), one v2-8/v3-8 host a unit.
  AcceleratorType attached = AcceleratorType::kUnspecified;
  int cohort = -1;  // index into Fleet::cohorts when a cohort owns the pool
  // Whether its nodes stay booted, with their image, between jobs (the fleet file's keepBooted,
  // default off). Vertex provisions a CustomJob's VMs for that job and deletes them after: a
  // reservation guarantees capacity, not a booted VM holding your image (only a persistent
  // resource keeps them, and its nodes are warm through the resource, not the pool). Set it for
  // capacity that is kept up by other means, e.g. a GKE node pool with a minimum size.
  bool keep_booted = false;
  // Nodes per block (the fleet file's blockSize; 0: none): a rack's worth under a compact
  // placement policy. A gang inside one block runs at full speed; the admission prefers one.
  int block_nodes = 0;
  double price_per_node_hour = 0;
  double spot_preemptions_per_node_hour = 0;  // SPOT: hazard per node-hour
  // Any pool: node failure hazard (repaired). Unset: the fleet's per-accelerator rate.
  std::optional<double> failures_per_node_hour;
  // FLEX_START: how long a request waits in the zone's DWS queue for this machine type.
  DwsQueueModel dws_queue;
  // SPOT, ON_DEMAND and FLEX_START: what the pool can be had of over time (the fleet file's
  // availability; none: always all of it), and its steps as Fleet::SetEpoch draws them from the
  // fleet's seed. For spot a fall reclaims the nodes beyond it; for on-demand it is a stockout
  // (running VMs stay, new ones are had only up to it); for DWS flex-start a request waits until
  // the whole of it can be had at once, so a bigger one, or one behind others, waits longer.
  std::optional<SpotAvailability> availability;
  std::vector<CapacityStep> capacity_steps;
  // ON_DEMAND and SPOT: the zone's capacity of the type this pool shares with the other model
  // (Fleet::zone_capacity; -1: none). Its capacity_steps are then the zone's, at most its units.
  int zone_capacity = -1;

  int nodes() const { return elastic ? 0 : units * hosts_per_unit; }
  // What a job placed here runs on: the pool's machine type, or the job's (`asked`) on a pool
  // that holds many (elastic, or GPUs attached to any N1 shape).
  const std::string& MachineTypeFor(const std::string& asked) const {
    return elastic || attached != AcceleratorType::kUnspecified ? asked : machine_type;
  }
  // One node-hour of `machine_type` here (with `attached_gpus` on an attached pool): the pool's
  // price, or the list price of the shape on a pool of many.
  double NodeHourPrice(const std::string& machine_type, int attached_gpus) const;
  // The name of an elastic VM before its number: "us-central1-a-n1-standard-4-ON_DEMAND-j42-"
  // for job 42 ("r7-" for resource 7). A job's or resource's VMs of one shape are numbered on
  // from 0 across its pools, so no two share a name.
  std::string ElasticVmPrefix(const std::string& machine_type, const std::string& owner) const;
  // Units usable at `now` by `project`, ignoring what is in use: calendar windows and capacity
  // over time (spot, on-demand stockouts, DWS caps). When a DWS request is granted is the
  // request's (dws_queue), not the pool's.
  int UnitsAvailableAt(Timestamp now, Timestamp epoch) const;
  bool UsableBy(std::string_view project_id) const;
};

struct QuotaConfig {
  // metric ("NVIDIA_H100_MEGA_80GB", "PREEMPTIBLE_NVIDIA_H100_80GB", "TPU_V5P", "CPUS") → limit.
  std::map<std::string, int64_t> defaults;
  std::map<std::string, std::map<std::string, int64_t>> per_project;  // project id → overrides
  // Missing metric: unlimited.
  std::optional<int64_t> Limit(const std::string& project_id, const std::string& metric) const;
};

// A cohort (Kueue's Cohort): projects that share the pools the fleet file gives it. Capacity is
// counted per resource, "<machineType>/<MODEL>" (CohortResource), in units (nodes, or TPU slices)
// across the cohort's pools. Each member has a nominal share of a resource; it may borrow what the
// others leave unused, up to its borrowing limit, and lends at most its lending limit of its own
// nominal (the rest it can always have back). When every member wants more than its nominal, the
// capacity is shared by weight (dominant-resource shares). Project quotas stay hard caps on top.
struct CohortMember {
  std::string project;
  double weight = 1;
  std::map<std::string, int64_t> nominal;          // resource → units; absent: 0
  std::map<std::string, int64_t> borrowing_limit;  // absent: may borrow all the others lend
  std::map<std::string, int64_t> lending_limit;    // absent: lends all of its nominal

  int64_t Nominal(const std::string& resource) const;
};

struct Cohort {
  std::string name;
  std::vector<std::string> pools;  // pool ids
  std::vector<CohortMember> members;
  std::map<std::string, int64_t> capacity;  // resource → units of its pools

  const CohortMember* Member(std::string_view project) const;

  // What the cohort has at one moment. `capacity` above is what its pools have at most; a
  // calendar-mode reservation is usable only inside its window and capacity over time only as its
  // series allows, and a member's nominal share is a share of what is there: scaled down with it.
  struct Now {
    const Cohort* cohort = nullptr;
    std::map<std::string, int64_t> capacity;  // resource → units usable now

    int64_t Capacity(const std::string& resource) const;
    int64_t Nominal(const CohortMember& member, const std::string& resource) const;
  };
  Now At(const std::vector<CapacityPool>& fleet_pools, Timestamp now, Timestamp epoch) const;
};

// "a3-megagpu-8g/RESERVATION": what a cohort pool counts towards, and what a job of that type
// under that model asks of it.
std::string CohortResource(const CapacityPool& pool);
std::string CohortResource(const std::string& machine_type, ConsumptionModel model);

struct Fleet {
  std::string name;
  uint64_t seed = 1;
  Timestamp epoch{};  // capacity over time counts from here (the simulator's virtual epoch)
  std::map<std::string, Duration> boot_time;  // machine type (or "default") → boot + driver
  double image_pull_gbps = 10;
  std::map<std::string, double> image_size_gb;  // image uri (or "default") → size
  StartupSpread startup_spread;  // how far a node's boot and pull stray from the figures above
  ProgramStartupModel program_startup;  // a run's start-up once its nodes are ready
  Duration spot_notice = std::chrono::seconds(30);
  // A job preempted for another (priority, reclaim, fair sharing) runs on this long after its
  // notice, as a pod's terminationGracePeriodSeconds (30 s by default) lets it; the preemptor
  // waits PREEMPTING meanwhile. 0: victims stop at once.
  Duration termination_grace = std::chrono::seconds(30);
  // A failed node's repair, the median of its draw (startup_spread.repair_p95_ratio the tail).
  Duration repair_time = std::chrono::minutes(10);
  // Unexpected interruptions per accelerator-hour, for every pool that sets no rate of its own
  // (docs/capacity-model.md, "Failures"); 0: none.
  double failures_per_accelerator_hour = 0;
  // A queued job that can never fit this fleet (NEVER_FITS) fails after waiting this long
  // (RESOURCE_EXHAUSTED, like a Vertex stockout); 0: it waits for a fleet change forever.
  Duration never_fits_timeout = std::chrono::hours(1);
  // An autoscaled persistent resource gives back nodes idle this long, down to its minimum.
  Duration resource_idle_timeout = std::chrono::minutes(10);
  QuotaConfig quotas;
  std::vector<CapacityPool> pools;
  std::vector<Cohort> cohorts;
  // Zones whose on-demand and spot of a machine type draw from one capacity, and how much the
  // zones of a region move together (0: independently, 1: as one).
  std::vector<ZoneCapacity> zone_capacity;
  double zone_correlation = 0;

  // Fixes the virtual time capacity series and relative calendar windows count from, and draws each
  // pool's and zone's capacity over time from the fleet's seed (so call it after the seed and the
  // pools are final).
  void SetEpoch(Timestamp epoch);
  const CapacityPool* FindPool(std::string_view id) const;
  int PoolIndex(std::string_view id) const;  // -1 when unknown
  // Units `pool` offers at `now` given what the fleet holds of each pool (`used`, by pool index):
  // UnitsAvailableAt, and for a spot pool sharing its zone's capacity, no more than on-demand
  // leaves of it.
  int64_t UnitsOffered(int pool, Timestamp now, const std::vector<int64_t>& used) const;

  Duration BootTime(std::string_view machine_type) const;
  // A node of `pool`'s failures per node-hour: the pool's own rate, else the fleet's
  // per-accelerator rate times the accelerators (GPUs, TPU chips) one node carries.
  double NodeFailureRate(const CapacityPool& pool) const;
  double ImageSizeGb(std::string_view image_uri) const;
  Duration ImagePullTime(std::string_view image_uri) const;
};

struct NodeRef {
  std::string pool_id;
  int64_t ordinal = 0;
};
// The node of `fleet` named `name` (services/fleet/node_state.h NodeName); nullopt when no pool
// has it.
std::optional<NodeRef> FindNode(const Fleet& fleet, std::string_view name);

// List price of one node-hour of `machine_type` under `model`: the catalog's figures for it
// (chips_per_unit_host, when not 0, for its chips), priced by services/cost/price.h; 0 for a name
// the catalog lacks. term matters for reservations only.
double ListPricePerNodeHour(std::string_view machine_type, ConsumptionModel model,
                            std::string_view term, int chips_per_unit_host);
// The same for an N1 VM with `count` GPUs of `attached` type, or a cloud-tpu host of the TPU
// generation `attached` (count: its cores).
double ListPricePerNodeHour(std::string_view machine_type, AcceleratorType attached, int count,
                            ConsumptionModel model);
// The pool type an attached accelerator runs on: "n1+NVIDIA_TESLA_T4" for any N1 shape with T4s,
// "cloud-tpu+TPU_V3" for cloud-tpu with TPU_V3.
std::string AttachedPoolType(std::string_view machine_type, AcceleratorType attached);

}  // namespace trainyard
