#pragma once
// Opaque page tokens. A token carries the keyset position (create_time, id) of the last job on the
// page and a fingerprint of the filter, so a token replayed with another filter is refused rather
// than silently skipping or repeating jobs.
#include <string>

#include "api/http_types.h"
#include "services/admin/admin_repository.h"
#include "services/jobs/job_repository.h"
#include "services/logs/insert_id.h"
#include "services/status.h"

namespace trainyard::api {

// What a list's token is bound to: the collection the request lists (its path without the API
// version, so /v1 and /ui share tokens) and its filter. A token from another project, location or
// collection is refused like one from another filter.
std::string PageScope(const HttpRequest& request, const std::string& filter);

std::string EncodePageToken(const JobCursor& cursor, const std::string& filter);
StatusOr<JobCursor> DecodePageToken(const std::string& token, const std::string& filter);

// The same for the admin node list, keyed by (pool id, ordinal).
std::string EncodeNodePageToken(const NodeCursor& cursor, const std::string& filter);
StatusOr<NodeCursor> DecodeNodePageToken(const std::string& token, const std::string& filter);

// The same for job logs: the insertId of the page's last entry (it carries its time, so it is a
// complete position). `filter` is every request input the page depends on.
std::string EncodeLogPageToken(const InsertId& last, const std::string& filter);
StatusOr<InsertId> DecodeLogPageToken(const std::string& token, const std::string& filter);

}  // namespace trainyard::api
