// The customJobs list filter: parse, then compile to SQL. Whatever the user typed travels as a
// bind parameter, so the SQL text is made of our own vocabulary only and numbers its parameters
// 1..n.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "api/filter_parser.h"
#include "storage/job_filter_sql.h"

namespace {

// What the compiler writes itself: keywords, column names, $n, comparison and jsonb operators
// (->> and the key-exists ?), LIKE's '\' escape clause.
bool OurVocabulary(std::string_view sql) {
  for (char c : sql) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::string_view(" _()$=<>!?,'\\-:.%").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

bool ParametersNumbered(std::string_view sql, size_t count) {
  for (size_t i = sql.find('$'); i != std::string_view::npos; i = sql.find('$', i + 1)) {
    size_t n = 0;
    size_t j = i + 1;
    while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9') n = n * 10 + (sql[j++] - '0');
    if (j == i + 1 || n == 0 || n > count) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto filter = trainyard::ParseJobFilter(text);
  if (!filter.ok() || !filter->has_value()) return 0;
  trainyard::SqlFragment out;
  trainyard::AppendFilterSql(**filter, 1, out);
  if (!OurVocabulary(out.sql) || !ParametersNumbered(out.sql, out.params.size())) {
    std::fprintf(stderr, "filter SQL breaks its rules (%zu parameters): %s\n", out.params.size(),
                 out.sql.c_str());
    std::abort();
  }
  return 0;
}
