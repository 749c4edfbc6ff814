#include "storage/job_row.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "api/wire/custom_job_codec.h"
#include "services/cost/accrual.h"
#include "services/jobs/priority_label.h"
#include "storage/job_transition_sql.h"

namespace trainyard::storage {

StatusOr<JobRecord> DecodeJobRow(const pg::Result& r, int row) {
  JobRecord rec;
  rec.id = r.GetInt64(row, 0);
  rec.project_number = r.GetInt64(row, 1);
  rec.location = std::string(r.Get(row, 2));
  CustomJob& job = rec.job;
  job.name = JobName(rec.project_number, rec.location, rec.id);
  job.display_name = std::string(r.Get(row, 3));
  job.state = static_cast<JobState>(r.GetInt64(row, 4));
  if (!r.IsNull(row, 5)) {  // left out by the reader (TY_JOB_COLUMNS_OF)
    auto spec_json = nlohmann::json::parse(r.Get(row, 5), nullptr, false);
    auto spec = DecodeCustomJobSpec(spec_json, "jobSpec");
    if (!spec.ok()) {
      return Internal("stored job " + job.name +
                      " has an unreadable spec: " + spec.status().message());
    }
    job.job_spec = std::move(spec).value();
  } else {
    rec.without_spec = true;
  }
  auto labels =
      r.IsNull(row, 6) ? nlohmann::json() : nlohmann::json::parse(r.Get(row, 6), nullptr, false);
  if (labels.is_object()) {
    for (auto& [k, v] : labels.items()) {
      if (v.is_string()) job.labels[k] = v.get<std::string>();
    }
  }
  if (!r.IsNull(row, 7)) {
    auto enc = nlohmann::json::parse(r.Get(row, 7), nullptr, false);
    if (enc.is_object() && enc.contains("kmsKeyName") && enc["kmsKeyName"].is_string()) {
      job.encryption_spec = EncryptionSpec{enc["kmsKeyName"].get<std::string>()};
    }
  }
  if (!r.IsNull(row, 8)) {
    job.error = RpcStatus{static_cast<int>(r.GetInt64(row, 8)), std::string(r.Get(row, 9))};
  }
  job.create_time = OptionalTime(r, row, 10);
  job.start_time = OptionalTime(r, row, 11);
  job.end_time = OptionalTime(r, row, 12);
  job.update_time = OptionalTime(r, row, 13);
  rec.next_action_at = OptionalTime(r, row, 14);
  rec.version = r.GetInt64(row, 15);
  rec.project_id = std::string(r.Get(row, 16));
  rec.change_seq = r.IsNull(row, 17) ? 0 : r.GetInt64(row, 17);
  rec.change_xid = std::strtoull(std::string(r.Get(row, 27)).c_str(), nullptr, 10);
  rec.hourly_price_micros = r.GetInt64(row, 20);
  rec.cost_micros = r.GetInt64(row, 21);
  SchedulingStatus status;
  if (auto priority = ParsePriorityLabel(job.labels); priority.ok()) status.priority = *priority;
  if (!r.IsNull(row, 18)) DecodePlacement(r.Get(row, 18), status);
  status.admitted_at = OptionalTime(r, row, 19);
  status.hourly_price_usd = cost::Usd(rec.hourly_price_micros);
  status.cost_usd = cost::Usd(rec.cost_micros);
  rec.checkpointed = std::chrono::microseconds(r.GetInt64(row, 25));
  rec.spot_restarts = static_cast<int>(r.GetInt64(row, 26));
  status.spot_restarts = rec.spot_restarts;
  rec.attempt = static_cast<int>(r.GetInt64(row, 28));
  if (!r.IsNull(row, 29)) rec.run = DecodeJobRun(r.Get(row, 29), rec.attempt);
  status.attempt = rec.attempt;
  if (rec.run) status.replicas = rec.run->replicas;
  if (!r.IsNull(row, 22)) status.reason_code = std::string(r.Get(row, 22));
  if (!r.IsNull(row, 23)) status.reason_message = std::string(r.Get(row, 23));
  if (!r.IsNull(row, 24)) status.queue_position = r.GetInt64(row, 24);
  rec.state_since = OptionalTime(r, row, 30);
  auto micros = [&](int column) { return std::chrono::microseconds(r.GetInt64(row, column)); };
  status.goodput = JobGoodput{micros(31), micros(32), micros(33), micros(34),
                              micros(35), micros(39), micros(40)};
  rec.checkpoint_interval = micros(36);
  rec.checkpoint_cost = CheckpointCost{micros(37), micros(38)};
  status.goodput.program_startup = micros(41);
  job.trainyard = std::move(status);
  return rec;
}

StatusOr<std::vector<JobRecord>> DecodeJobRows(const pg::Result& r) {
  std::vector<JobRecord> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) {
    TY_ASSIGN_OR_RETURN(JobRecord rec, DecodeJobRow(r, i));
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace trainyard::storage
