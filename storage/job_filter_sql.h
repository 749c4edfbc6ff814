#pragma once
// Compiles a parsed customJobs list filter into a PostgreSQL WHERE fragment over custom_jobs
// (display_name text, state smallint, create_time timestamptz, labels jsonb). Every user value
// travels as a bind parameter; nothing the user typed is spliced into the SQL text.
#include <string>
#include <vector>

#include "services/jobs/job_filter.h"

namespace trainyard {

struct SqlFragment {
  std::string sql;
  std::vector<std::string> params;  // text-format values for $n, in order
};

// Appends "(…)" SQL for the expression to out.sql. Its parameters are numbered from first_param
// ($first_param, $first_param+1, …) and appended to out.params in the same order, so a caller
// passes first_param = out.params.size() + 1 when the fragment continues a query it built there.
// A job without label k fails "labels.k=v" and "labels.k:v*" but passes "labels.k!=v" and their
// negations, as users read them (the SQL takes care of labels->>'k' being NULL).
void AppendFilterSql(const FilterExpr& expr, int first_param, SqlFragment& out);

}  // namespace trainyard
