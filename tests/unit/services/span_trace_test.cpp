#include "services/span_trace.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

using std::chrono::microseconds;
using std::chrono::system_clock;

// bench/create_tail.py splits each line on its first four spaces and matches a statement by its
// opening words, so a statement's line breaks and indentation must not reach the file.
TEST(SpanLineTest, FoldsAStatementOntoOneLineAfterItsTimesAndWho) {
  system_clock::time_point start{microseconds(1'700'000'000'000'123)};
  system_clock::time_point end{microseconds(1'700'000'000'000'456)};
  EXPECT_EQ(SpanLine(start, end, 4242, 3, "WITH j AS (INSERT INTO\n      custom_jobs (id)"),
            "1700000000000123 1700000000000456 4242 3 WITH j AS (INSERT INTO custom_jobs (id)\n");
}

TEST(SpanLineTest, CutsLongStatementsAtSixtyCharacters) {
  system_clock::time_point at{microseconds(5)};
  std::string line = SpanLine(at, at, -1, 0, std::string(500, 'x'));
  EXPECT_EQ(line, "5 5 -1 0 " + std::string(60, 'x') + "\n");
}

}  // namespace
}  // namespace trainyard
