#pragma once
// The field rules jobs and persistent resources share (labels, machine and disk specs, resource
// ids), defined once in services/jobs/custom_job_validator.cpp. Each returns INVALID_ARGUMENT with
// one FieldViolation at `path` (camelCase), like ValidateCustomJob.
#include <map>
#include <string>
#include <string_view>

#include "services/model/custom_job.h"
#include "services/status.h"

namespace trainyard {

Status ValidateLabelsField(const std::map<std::string, std::string>& labels);
Status ValidateMachineSpecField(const MachineSpec& spec, const std::string& path);
Status ValidateDiskSpecField(const DiskSpec& disk, const std::string& path);
// 1-63 characters, [a-z]([a-z0-9-]*[a-z0-9])?: persistent resource and pool ids.
bool IsResourceIdText(std::string_view s);

}  // namespace trainyard
