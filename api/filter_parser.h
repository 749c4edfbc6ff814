#pragma once
// The customJobs list filter (AIP-160 subset) as users type it, turned into the FilterExpr tree
// that storage/ compiles to SQL. Supported: display_name (= != :), state (= !=), create_time (= !=
// < <= >
// >=), labels.<key> (= != :), combined with AND, OR, NOT, '-', parentheses and juxtaposition.
#include <optional>
#include <string_view>

#include "services/jobs/job_filter.h"
#include "services/status.h"

namespace trainyard {

// Empty or whitespace-only text means "no filter" (std::nullopt). Bad text is INVALID_ARGUMENT with
// a message naming the 0-based byte position where parsing broke. Never throws.
StatusOr<std::optional<FilterExpr>> ParseJobFilter(std::string_view text);

}  // namespace trainyard
