#include "services/telemetry/utilization_metrics.h"

namespace trainyard {
namespace {

struct Figure {
  const char* name;
  const char* help;
  double HostSample::*value;
};

constexpr Figure kFigures[] = {
    {"trainyard_accelerator_duty_cycle",
     "Share of time the host's accelerators ran work, 0 to 1 (Cloud TPU duty_cycle, "
     "DCGM_FI_DEV_GPU_UTIL).",
     &HostSample::duty_cycle},
    {"trainyard_accelerator_tensor_core_utilization",
     "Share of the tensor/matrix units' peak in use, 0 to 1 (Cloud TPU tensorcore_utilization, "
     "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE).",
     &HostSample::tensor_core_utilization},
    {"trainyard_accelerator_memory_used_bytes",
     "HBM (GPU framebuffer) in use over the host's accelerators (Cloud TPU memory_used, "
     "DCGM_FI_DEV_FB_USED).",
     &HostSample::memory_used_bytes},
    {"trainyard_accelerator_memory_total_bytes",
     "HBM (GPU framebuffer) of the host's accelerators (Cloud TPU memory_total).",
     &HostSample::memory_total_bytes},
    {"trainyard_host_cpu_utilization", "Share of the host's vCPUs in use, 0 to 1.",
     &HostSample::host_cpu_utilization},
    {"trainyard_host_network_bytes_per_second",
     "Bytes the host sends and receives per second (gradient exchange, checkpoints, input).",
     &HostSample::network_bytes_per_second},
};

}  // namespace

Status WriteUtilizationFamilies(UtilizationService& utilization, metrics::Exposition& e) {
  TY_ASSIGN_OR_RETURN(std::vector<JobUtilization> jobs, utilization.Running());
  for (const Figure& f : kFigures) {
    e.Family(f.name, "gauge", f.help);
    for (const JobUtilization& job : jobs) {
      if (job.hosts.empty()) continue;
      const std::string& gang = job.hosts.front().host;
      for (const HostUtilization& h : job.hosts) {
        e.Sample(f.name,
                 {{"host", h.host},
                  {"zone", h.zone},
                  {"machine_type", h.machine_type},
                  {"accelerator", h.shape.accelerator},
                  {"gang", gang}},
                 h.sample.*f.value);
      }
    }
  }
  e.Family("trainyard_accelerator_outlier", "gauge",
           "1 for a host of a running job whose duty cycle or tensor-core use is off the job's "
           "median by more than 0.15 (jobs of 3 hosts or more); absent otherwise.");
  for (const JobUtilization& job : jobs) {
    for (const HostUtilization& h : job.hosts) {
      if (!h.outlier) continue;
      e.Sample("trainyard_accelerator_outlier",
               {{"host", h.host},
                {"zone", h.zone},
                {"machine_type", h.machine_type},
                {"accelerator", h.shape.accelerator},
                {"gang", job.hosts.front().host}},
               1);
    }
  }
  return Status::Ok();
}

}  // namespace trainyard
