#include "services/fleet/startup_model.h"

#include <algorithm>
#include <cmath>

#include "services/fleet/failure_model.h"
#include "services/fleet/fleet.h"
#include "services/jobs/catalog.h"

namespace trainyard {
namespace {

// The standard normal's 95th percentile: a log-normal's sigma is ln(p95 ÷ median) ÷ this.
constexpr double kZ95 = 1.6448536269514722;

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

Duration FromSeconds(double s) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

double Uniform(const Fleet& fleet, HazardStream stream, const CapacityPool& pool,
               const StartupKey& key) {
  // Holds and jobs number apart; the draw is strictly inside (0, 1) for the quantile.
  const int64_t ordinal = key.resource ? -key.id : key.id;
  const double u = HazardDraw(fleet.seed, stream, pool.id, ordinal, key.version);
  return std::clamp(u, 1e-12, 1 - 1e-12);
}

}  // namespace

double NormalQuantile(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  if (p < kLow) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - kLow) return -NormalQuantile(1 - p);
  const double q = p - 0.5;
  const double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

Duration SlowestOf(double u, int64_t nodes, Duration median, double p95_ratio) {
  if (nodes <= 0 || median <= Duration::zero()) return Duration::zero();
  if (p95_ratio <= 1) return median;
  const double sigma = std::log(p95_ratio) / kZ95;
  // The maximum of n draws is below x with probability F(x)^n: its quantile at u is F⁻¹(u^(1/n)).
  const double q = std::pow(u, 1.0 / static_cast<double>(nodes));
  const double z = NormalQuantile(std::clamp(q, 1e-15, 1 - 1e-15));
  return FromSeconds(Seconds(median) * std::exp(sigma * z));
}

Duration DrawRepair(const Fleet& fleet, std::string_view pool_id, int64_t ordinal, Timestamp at) {
  const double u = std::clamp(HazardDraw(fleet.seed, HazardStream::kRepair, pool_id, ordinal,
                                         CompletedTicks(fleet.epoch, at)),
                              1e-12, 1 - 1e-12);
  return SlowestOf(u, 1, fleet.repair_time, fleet.startup_spread.repair_p95_ratio);
}

Duration ProgramStartup(const Fleet& fleet, int64_t hosts) {
  if (hosts <= 0) return Duration::zero();
  const ProgramStartupModel& m = fleet.program_startup;
  // In whole microseconds, what the placement keeps: both stores then split runs alike.
  return std::chrono::duration_cast<std::chrono::microseconds>(FromSeconds(
      Seconds(m.base) + Seconds(m.per_doubling) * std::log2(static_cast<double>(hosts))));
}

Duration DrawBoot(const Fleet& fleet, const CapacityPool& pool, std::string_view machine_type,
                  int64_t nodes, const StartupKey& key) {
  double median = Seconds(fleet.BootTime(machine_type));
  const MachineType* machine = FindMachineType(machine_type);
  if (machine != nullptr && machine->is_tpu && pool.hosts_per_unit > 1) {
    median *= 1 + fleet.startup_spread.tpu_slice_growth_per_doubling *
                      std::log2(static_cast<double>(pool.hosts_per_unit));
  }
  return SlowestOf(Uniform(fleet, HazardStream::kStartupBoot, pool, key), nodes,
                   FromSeconds(median), fleet.startup_spread.boot_p95_ratio);
}

Duration DrawImagePull(const Fleet& fleet, const CapacityPool& pool, std::string_view machine_type,
                       std::string_view image_uri, int64_t nodes, const StartupKey& key) {
  double gbps = fleet.image_pull_gbps;
  if (const MachineType* machine = FindMachineType(machine_type);
      machine != nullptr && machine->network_gbps > 0) {
    gbps = std::min(gbps, static_cast<double>(machine->network_gbps));
  }
  if (gbps <= 0) return Duration::zero();
  const double median = fleet.ImageSizeGb(image_uri) * 8 / gbps;
  return SlowestOf(Uniform(fleet, HazardStream::kStartupPull, pool, key), nodes,
                   FromSeconds(median), fleet.startup_spread.pull_p95_ratio);
}

}  // namespace trainyard
