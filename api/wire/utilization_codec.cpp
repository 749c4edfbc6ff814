#include "api/wire/utilization_codec.h"

#include <cmath>

#include "api/wire/enums.h"
#include "api/wire/json_reader.h"

namespace trainyard {

using json = nlohmann::json;

json EncodeJobUtilization(const JobUtilization& u) {
  json hosts = json::array();
  json outliers = json::array();
  for (const HostUtilization& h : u.hosts) {
    hosts.push_back({{"host", h.host},
                     {"zone", h.zone},
                     {"machineType", h.machine_type},
                     {"accelerator", h.shape.accelerator},
                     {"acceleratorCount", h.shape.chips},
                     {"dutyCycle", h.sample.duty_cycle},
                     {"tensorCoreUtilization", h.sample.tensor_core_utilization},
                     {"memoryUsedBytes", std::llround(h.sample.memory_used_bytes)},
                     {"memoryTotalBytes", std::llround(h.sample.memory_total_bytes)},
                     {"hostCpuUtilization", h.sample.host_cpu_utilization},
                     {"networkBytesPerSecond", std::llround(h.sample.network_bytes_per_second)},
                     {"outlier", h.outlier}});
    if (h.outlier) outliers.push_back(h.host);
  }
  json out = {{"name", u.name},
              {"state", JobStateName(u.state)},
              {"sampleTime", FormatTimestamp(u.time)},
              {"hosts", hosts},
              {"outliers", outliers}};
  if (!u.hosts.empty()) {
    out["medianDutyCycle"] = u.median_duty_cycle;
    out["medianTensorCoreUtilization"] = u.median_tensor_core_utilization;
  }
  return out;
}

}  // namespace trainyard
