// The customJobs list filter: text → FilterExpr (api/filter_parser) and FilterExpr → SQL
// (storage/job_filter_sql).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "api/filter_parser.h"
#include "services/time.h"
#include "storage/job_filter_sql.h"

namespace trainyard {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---------------------------------------------------------------------------------------------
// A compact rendering of the tree, so the tables can state expected structure in one string:
//   (AND (OR a b) (NOT c)), comparisons as `field op value`.

const char* OpString(FilterOp op) {
  switch (op) {
    case FilterOp::kEq:
      return "=";
    case FilterOp::kNe:
      return "!=";
    case FilterOp::kLt:
      return "<";
    case FilterOp::kLe:
      return "<=";
    case FilterOp::kGt:
      return ">";
    case FilterOp::kGe:
      return ">=";
    case FilterOp::kHas:
      return ":";
  }
  return "?";
}

std::string Dump(const FilterExpr& e);

std::string DumpComparison(const FilterComparison& c) {
  const std::string op = OpString(c.op);
  switch (c.field) {
    case FilterField::kDisplayName:
      return "display_name " + op + " \"" + c.text + "\"";
    case FilterField::kState:
      return "state " + op + " " + std::to_string(int(c.state));
    case FilterField::kCreateTime:
      return "create_time " + op + " " + FormatUtcMicros(c.time);
    case FilterField::kLabel:
      return "labels." + c.label_key + " " + op + " \"" + c.text + "\"";
  }
  return "?";
}

std::string DumpNode(const char* name, const FilterExpr& e) {
  std::string s = std::string("(") + name;
  for (const FilterExpr& child : e.children) s += " " + Dump(child);
  return s + ")";
}

std::string Dump(const FilterExpr& e) {
  switch (e.kind) {
    case FilterExpr::Kind::kAnd:
      return DumpNode("AND", e);
    case FilterExpr::Kind::kOr:
      return DumpNode("OR", e);
    case FilterExpr::Kind::kNot:
      return DumpNode("NOT", e);
    case FilterExpr::Kind::kCompare:
      return DumpComparison(e.comparison);
  }
  return "?";
}

// Parses and renders; a failure renders as "ERROR: <message>" so mismatches show the reason.
std::string ParseDump(std::string_view text) {
  StatusOr<std::optional<FilterExpr>> parsed = ParseJobFilter(text);
  if (!parsed.ok()) return "ERROR: " + parsed.status().message();
  if (!parsed->has_value()) return "<none>";
  return Dump(**parsed);
}

Status ParseError(std::string_view text) {
  StatusOr<std::optional<FilterExpr>> parsed = ParseJobFilter(text);
  if (parsed.ok()) return Status::Ok();
  return parsed.status();
}

// Shorthands for the tables.
constexpr const char* kRun = "state=JOB_STATE_RUNNING";
const std::string R = "state = 3";  // how kRun dumps

// ---------------------------------------------------------------------------------------------
// Parser: accepted filters

struct ParseCase {
  std::string filter;
  std::string want;
};

void PrintTo(const ParseCase& c, std::ostream* os) { *os << c.filter; }

class ParseAccepts : public ::testing::TestWithParam<ParseCase> {};

TEST_P(ParseAccepts, BuildsTree) {
  EXPECT_EQ(ParseDump(GetParam().filter), GetParam().want) << "filter: " << GetParam().filter;
}

INSTANTIATE_TEST_SUITE_P(
    Fields, ParseAccepts,
    ::testing::Values(
        // display_name
        ParseCase{R"(display_name="exp")", R"(display_name = "exp")"},
        ParseCase{R"(display_name=exp)", R"(display_name = "exp")"},
        ParseCase{R"(displayName="exp")", R"(display_name = "exp")"},
        ParseCase{R"(display_name!="a b")", R"(display_name != "a b")"},
        ParseCase{R"(display_name != exp)", R"(display_name != "exp")"},
        ParseCase{R"(display_name:"exp_*")", R"(display_name : "exp_*")"},
        ParseCase{R"(display_name:*run*)", R"(display_name : "*run*")"},
        ParseCase{R"(display_name:*)", R"(display_name : "*")"},
        ParseCase{R"(displayName:"exp")", R"(display_name = "exp")"},  // no '*': equality
        ParseCase{R"(display_name = "spaced")", R"(display_name = "spaced")"},
        ParseCase{"display_name\t=\n\"tabs\"", R"(display_name = "tabs")"},
        ParseCase{R"(display_name="")", R"(display_name = "")"},
        ParseCase{R"(display_name="a\"b\\c")", R"(display_name = "a"b\c")"},
        ParseCase{R"(display_name="a(b) OR c:d=e")", R"(display_name = "a(b) OR c:d=e")"},
        ParseCase{R"(display_name=AND)", R"(display_name = "AND")"},  // values are not keywords
        ParseCase{R"(display_name=-x)", R"(display_name = "-x")"},
        ParseCase{R"(display_name=a:b)", R"(display_name = "a:b")"},
        ParseCase{"display_name=\"h\xC3\xA9llo\"", "display_name = \"h\xC3\xA9llo\""},
        // state
        ParseCase{"state=JOB_STATE_RUNNING", "state = 3"},
        ParseCase{R"(state="JOB_STATE_FAILED")", "state = 5"},
        ParseCase{"state!=JOB_STATE_CANCELLED", "state != 7"},
        ParseCase{"state = JOB_STATE_QUEUED", "state = 1"},
        // create_time
        ParseCase{"create_time=2024-05-01T12:00:00Z", "create_time = 2024-05-01T12:00:00.000000Z"},
        ParseCase{"create_time!=2024-05-01T12:00:00Z",
                  "create_time != 2024-05-01T12:00:00.000000Z"},
        ParseCase{"create_time<2024-05-01T12:00:00Z", "create_time < 2024-05-01T12:00:00.000000Z"},
        ParseCase{"create_time<=2024-05-01T12:00:00Z",
                  "create_time <= 2024-05-01T12:00:00.000000Z"},
        ParseCase{"create_time>2024-05-01T12:00:00Z", "create_time > 2024-05-01T12:00:00.000000Z"},
        ParseCase{"create_time>=2024-05-01T12:00:00Z",
                  "create_time >= 2024-05-01T12:00:00.000000Z"},
        ParseCase{"createTime>\"2024-05-01T12:00:00Z\"",
                  "create_time > 2024-05-01T12:00:00.000000Z"},
        ParseCase{"create_time >= 2024-05-01T12:00:00Z",
                  "create_time >= 2024-05-01T12:00:00.000000Z"},
        ParseCase{"create_time>2024-05-01T14:00:00+02:00",
                  "create_time > 2024-05-01T12:00:00.000000Z"},
        ParseCase{"create_time>2024-05-01T06:30:00-05:30",
                  "create_time > 2024-05-01T12:00:00.000000Z"},
        ParseCase{"create_time>2024-05-01T00:30:00+01:00",
                  "create_time > 2024-04-30T23:30:00.000000Z"},  // offset crosses midnight
        ParseCase{"create_time>2024-05-01T12:00:00.5Z",
                  "create_time > 2024-05-01T12:00:00.500000Z"},
        ParseCase{"create_time>2024-05-01T12:00:00.123456Z",
                  "create_time > 2024-05-01T12:00:00.123456Z"},
        ParseCase{"create_time>2024-05-01T12:00:00.123456789Z",  // truncated to microseconds
                  "create_time > 2024-05-01T12:00:00.123456Z"},
        ParseCase{"create_time>2024-05-01T12:00:00.000001+00:00",
                  "create_time > 2024-05-01T12:00:00.000001Z"},
        ParseCase{"create_time>2024-05-01t12:00:00z", "create_time > 2024-05-01T12:00:00.000000Z"},
        ParseCase{"create_time>2024-02-29T23:59:59Z", "create_time > 2024-02-29T23:59:59.000000Z"},
        ParseCase{"create_time>1969-12-31T23:59:59.999999Z",
                  "create_time > 1969-12-31T23:59:59.999999Z"},
        ParseCase{"create_time>0001-01-01T00:00:00Z", "create_time > 0001-01-01T00:00:00.000000Z"},
        ParseCase{"create_time<9999-12-31T23:59:59.999999Z",
                  "create_time < 9999-12-31T23:59:59.999999Z"},
        // labels
        ParseCase{"labels.team=ml", R"(labels.team = "ml")"},
        ParseCase{R"(labels.team="ml infra")", R"(labels.team = "ml infra")"},
        ParseCase{"labels.team!=ml", R"(labels.team != "ml")"},
        ParseCase{"labels.team:*", R"(labels.team : "*")"},
        ParseCase{"labels.team:\"*\"", R"(labels.team : "*")"},
        ParseCase{"labels.team:ml*", R"(labels.team : "ml*")"},
        ParseCase{"labels.team:ml", R"(labels.team = "ml")"},  // no '*': equality
        ParseCase{"labels.team=\"\"", R"(labels.team = "")"},
        ParseCase{"labels.cost-center_1=a", R"(labels.cost-center_1 = "a")"},
        ParseCase{"labels.a.b=c", R"(labels.a.b = "c")"},
        ParseCase{"labels.Team=ml", R"(labels.Team = "ml")"}));

INSTANTIATE_TEST_SUITE_P(
    Logic, ParseAccepts,
    ::testing::Values(
        ParseCase{"", "<none>"}, ParseCase{"   \t\n ", "<none>"},
        ParseCase{"  state=JOB_STATE_RUNNING  ", R},
        ParseCase{"state=JOB_STATE_RUNNING AND labels.a=b", "(AND " + R + R"( labels.a = "b"))"},
        ParseCase{"state=JOB_STATE_RUNNING labels.a=b", "(AND " + R + R"( labels.a = "b"))"},
        ParseCase{"state=JOB_STATE_RUNNING\tlabels.a=b", "(AND " + R + R"( labels.a = "b"))"},
        ParseCase{"state=JOB_STATE_RUNNING OR labels.a=b", "(OR " + R + R"( labels.a = "b"))"},
        ParseCase{"labels.a=1 AND labels.b=2 AND labels.c=3",
                  R"((AND labels.a = "1" labels.b = "2" labels.c = "3"))"},
        ParseCase{"labels.a=1 OR labels.b=2 OR labels.c=3",
                  R"((OR labels.a = "1" labels.b = "2" labels.c = "3"))"},
        // OR binds tighter than AND (AIP-160), whichever side the AND is on.
        ParseCase{"labels.a=1 AND labels.b=2 OR labels.c=3",
                  R"((AND labels.a = "1" (OR labels.b = "2" labels.c = "3")))"},
        ParseCase{"labels.a=1 OR labels.b=2 AND labels.c=3",
                  R"((AND (OR labels.a = "1" labels.b = "2") labels.c = "3"))"},
        ParseCase{"labels.a=1 OR labels.b=2 labels.c=3",
                  R"((AND (OR labels.a = "1" labels.b = "2") labels.c = "3"))"},
        ParseCase{"labels.a=1 labels.b=2 OR labels.c=3",
                  R"((AND labels.a = "1" (OR labels.b = "2" labels.c = "3")))"},
        ParseCase{"(labels.a=1 AND labels.b=2) OR labels.c=3",
                  R"((OR (AND labels.a = "1" labels.b = "2") labels.c = "3"))"},
        ParseCase{"labels.a=1 AND (labels.b=2 AND labels.c=3)",
                  R"((AND labels.a = "1" (AND labels.b = "2" labels.c = "3")))"},
        ParseCase{"((labels.a=1))", R"(labels.a = "1")"},
        ParseCase{"( labels.a=1 )", R"(labels.a = "1")"},
        ParseCase{"(labels.a=1)(labels.b=2)", R"((AND labels.a = "1" labels.b = "2"))"},
        // Negation.
        ParseCase{"NOT labels.a=1", R"((NOT labels.a = "1"))"},
        ParseCase{"-labels.a=1", R"((NOT labels.a = "1"))"},
        ParseCase{"NOT(labels.a=1)", R"((NOT labels.a = "1"))"},
        ParseCase{"NOT (labels.a=1 OR labels.b=2)", R"((NOT (OR labels.a = "1" labels.b = "2")))"},
        ParseCase{"-(labels.a=1 labels.b=2)", R"((NOT (AND labels.a = "1" labels.b = "2")))"},
        ParseCase{"NOT NOT labels.a=1", R"((NOT (NOT labels.a = "1")))"},
        ParseCase{"--labels.a=1", R"((NOT (NOT labels.a = "1")))"},
        ParseCase{"NOT labels.a=1 OR labels.b=2", R"((OR (NOT labels.a = "1") labels.b = "2"))"},
        ParseCase{"labels.a=1 AND NOT labels.b=2 OR labels.c=3",
                  R"((AND labels.a = "1" (OR (NOT labels.b = "2") labels.c = "3")))"},
        ParseCase{"labels.a=1 -labels.b=2", R"((AND labels.a = "1" (NOT labels.b = "2")))"},
        ParseCase{"-labels.team:*", R"((NOT labels.team : "*"))"},
        // Everything at once.
        ParseCase{
            "displayName:\"exp_*\" AND (state=JOB_STATE_RUNNING OR state=JOB_STATE_PENDING) "
            "AND NOT labels.team=ml AND createTime>=\"2024-05-01T00:00:00Z\"",
            R"((AND display_name : "exp_*" (OR state = 3 state = 2) (NOT labels.team = "ml") )"
            "create_time >= 2024-05-01T00:00:00.000000Z)"}));

TEST(ParseJobFilter, EveryStateNameMapsToItsProtoNumber) {
  const std::vector<std::pair<std::string, JobState>> names = {
      {"JOB_STATE_UNSPECIFIED", JobState::kUnspecified},
      {"JOB_STATE_QUEUED", JobState::kQueued},
      {"JOB_STATE_PENDING", JobState::kPending},
      {"JOB_STATE_RUNNING", JobState::kRunning},
      {"JOB_STATE_SUCCEEDED", JobState::kSucceeded},
      {"JOB_STATE_FAILED", JobState::kFailed},
      {"JOB_STATE_CANCELLING", JobState::kCancelling},
      {"JOB_STATE_CANCELLED", JobState::kCancelled},
      {"JOB_STATE_PAUSED", JobState::kPaused},
      {"JOB_STATE_EXPIRED", JobState::kExpired},
      {"JOB_STATE_UPDATING", JobState::kUpdating},
      {"JOB_STATE_PARTIALLY_SUCCEEDED", JobState::kPartiallySucceeded},
  };
  for (const auto& [name, state] : names) {
    StatusOr<std::optional<FilterExpr>> parsed = ParseJobFilter("state=\"" + name + "\"");
    ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status().message();
    EXPECT_EQ((*parsed)->comparison.field, FilterField::kState);
    EXPECT_EQ((*parsed)->comparison.state, state) << name;
  }
}

TEST(ParseJobFilter, TimestampIsExactUnixMicros) {
  StatusOr<std::optional<FilterExpr>> parsed =
      ParseJobFilter("create_time<2024-05-01T14:00:00.25+02:00");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(ToUnixMicros((*parsed)->comparison.time), 1714564800250000);
  EXPECT_EQ((*parsed)->comparison.op, FilterOp::kLt);
}

TEST(ParseJobFilter, LabelComparisonKeepsKeyAndText) {
  StatusOr<std::optional<FilterExpr>> parsed = ParseJobFilter(R"(labels.team:"ml-*")");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const FilterComparison& cmp = (*parsed)->comparison;
  EXPECT_EQ(cmp.field, FilterField::kLabel);
  EXPECT_EQ(cmp.label_key, "team");
  EXPECT_EQ(cmp.op, FilterOp::kHas);
  EXPECT_EQ(cmp.text, "ml-*");
}

// ---------------------------------------------------------------------------------------------
// Parser: rejected filters. `want` is the full message unless it starts with '~', in which case
// the rest is a substring of it.

struct RejectCase {
  std::string filter;
  std::string want;
};

void PrintTo(const RejectCase& c, std::ostream* os) { *os << c.filter; }

class ParseRejects : public ::testing::TestWithParam<RejectCase> {};

TEST_P(ParseRejects, SaysWhereItBroke) {
  const RejectCase& c = GetParam();
  const Status status = ParseError(c.filter);
  ASSERT_FALSE(status.ok()) << "accepted: " << c.filter;
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  if (!c.want.empty() && c.want[0] == '~') {
    EXPECT_THAT(status.message(), HasSubstr(c.want.substr(1)));
    EXPECT_THAT(status.message(), StartsWith("invalid filter \""));
  } else {
    EXPECT_EQ(status.message(), c.want);
  }
}

constexpr const char* kAllStates =
    "; expected one of JOB_STATE_UNSPECIFIED, JOB_STATE_QUEUED, JOB_STATE_PENDING, "
    "JOB_STATE_RUNNING, JOB_STATE_SUCCEEDED, JOB_STATE_FAILED, JOB_STATE_CANCELLING, "
    "JOB_STATE_CANCELLED, JOB_STATE_PAUSED, JOB_STATE_EXPIRED, JOB_STATE_UPDATING, "
    "JOB_STATE_PARTIALLY_SUCCEEDED";

INSTANTIATE_TEST_SUITE_P(
    Values, ParseRejects,
    ::testing::Values(
        RejectCase{"state=X",
                   std::string(R"(invalid filter "state=X": unknown state "X" at position 6)") +
                       kAllStates},
        RejectCase{"state=RUNNING", R"(~unknown state "RUNNING" at position 6;)"},
        RejectCase{"state=job_state_running",
                   R"(~unknown state "job_state_running" at position 6)"},
        RejectCase{R"(state = "JOB_STATE_RUNNING ")",
                   R"(~unknown state "JOB_STATE_RUNNING " at position 8)"},
        RejectCase{"display_name=", R"(invalid filter "display_name=": expected a value after )"
                                    R"("=", found end of filter at position 13)"},
        RejectCase{"display_name=)", R"x(~expected a value after "=", found ")" at position 13)x"},
        RejectCase{"display_name==a", R"(~expected a value after "=", found "=" at position 13)"},
        RejectCase{R"(display_name="abc)", R"(~unterminated string at position 13)"},
        RejectCase{R"(display_name="abc\)", R"(~unterminated string at position 13)"},
        RejectCase{R"(display_name="a\nb")",
                   R"(~unsupported escape "\n" (only \" and \\ are allowed) at position 15)"},
        RejectCase{R"(display_name=a=b)", R"(~unexpected "=" at position 14)"},
        RejectCase{"create_time>2024-13-01T00:00:00Z",
                   R"(invalid filter "create_time>2024-13-01T00:00:00Z": invalid timestamp )"
                   R"("2024-13-01T00:00:00Z" at position 12; expected RFC 3339 such as )"
                   "2024-05-01T12:00:00Z or 2024-05-01T14:00:00.5+02:00"},
        RejectCase{R"(create_time > "2024-05-01")",
                   R"(~invalid timestamp "2024-05-01" at position 14;)"}));

INSTANTIATE_TEST_SUITE_P(
    BadTimestamps, ParseRejects,
    ::testing::Values(RejectCase{"create_time>2024-05-01T12:00:00", "~invalid timestamp"},  // zone
                      RejectCase{"create_time>2024-05-01 12:00:00Z",
                                 "~invalid timestamp \"2024-05-01\" at position 12"},
                      RejectCase{"create_time>2024-02-30T12:00:00Z", "~invalid timestamp"},
                      RejectCase{"create_time>2023-02-29T12:00:00Z", "~invalid timestamp"},
                      RejectCase{"create_time>2024-05-01T24:00:00Z", "~invalid timestamp"},
                      RejectCase{"create_time>2024-05-01T12:60:00Z", "~invalid timestamp"},
                      RejectCase{"create_time>2024-05-01T12:00:60Z", "~invalid timestamp"},
                      RejectCase{"create_time>2024-05-01T12:00:00.Z", "~invalid timestamp"},
                      RejectCase{"create_time>2024-05-01T12:00:00.1234567890Z",
                                 "~invalid timestamp"},
                      RejectCase{"create_time>2024-05-01T12:00:00+24:00", "~invalid timestamp"},
                      RejectCase{"create_time>2024-05-01T12:00:00+02:60", "~invalid timestamp"},
                      RejectCase{"create_time>2024-05-01T12:00:00+0200", "~invalid timestamp"},
                      RejectCase{"create_time>2024-05-01T12:00:00Zjunk", "~invalid timestamp"},
                      RejectCase{"create_time>2024-5-01T12:00:00Z", "~invalid timestamp"},
                      RejectCase{"create_time>+2024-05-01T12:00:00Z", "~invalid timestamp"},
                      RejectCase{"create_time>1714564800", "~invalid timestamp"},
                      RejectCase{"create_time>0000-01-01T12:00:00Z", "~invalid timestamp"},
                      RejectCase{"create_time>0001-01-01T00:30:00+01:00", "~invalid timestamp"},
                      RejectCase{"create_time>9999-12-31T23:00:00-02:00", "~invalid timestamp"}));

INSTANTIATE_TEST_SUITE_P(
    FieldsAndOperators, ParseRejects,
    ::testing::Values(
        RejectCase{"foo=1", R"(invalid filter "foo=1": unknown field "foo" at position 0; )"
                            "supported: display_name, state, create_time, labels.<key>"},
        RejectCase{"state=JOB_STATE_RUNNING AND bar:x", R"(~unknown field "bar" at position 28;)"},
        RejectCase{"Display_Name=x", R"(~unknown field "Display_Name" at position 0)"},
        RejectCase{"STATE=JOB_STATE_RUNNING", R"(~unknown field "STATE" at position 0)"},
        RejectCase{"labels=x", R"(~unknown field "labels" at position 0)"},
        RejectCase{"name=x", R"(~unknown field "name" at position 0)"},
        RejectCase{"labels.=x", R"(~missing label key after "labels." at position 7)"},
        RejectCase{R"("display_name"="x")",
                   R"(~expected a field name, found string "display_name" at position 0)"},
        RejectCase{"display_name<\"a\"",
                   R"(invalid filter "display_name<"a"": operator "<" is not supported on )"
                   "display_name at position 12; supported: =, !=, :"},
        RejectCase{"displayName>=a", R"(~operator ">=" is not supported on displayName at )"
                                     "position 11; supported: =, !=, :"},
        RejectCase{"state:JOB_STATE_RUNNING",
                   R"(~operator ":" is not supported on state at position 5; supported: =, !=)"},
        RejectCase{"state<JOB_STATE_RUNNING", R"(~operator "<" is not supported on state)"},
        RejectCase{"state>=JOB_STATE_RUNNING", R"(~operator ">=" is not supported on state)"},
        RejectCase{"create_time:2024-05-01T12:00:00Z",
                   R"(~operator ":" is not supported on create_time at position 11; )"
                   "supported: =, !=, <, <=, >, >="},
        RejectCase{"labels.k<v", R"(~operator "<" is not supported on labels.k at position 8)"},
        RejectCase{"labels.k>=v", R"(~operator ">=" is not supported on labels.k)"},
        RejectCase{"display_name!a", R"(~unexpected "!" (did you mean "!="?) at position 12)"},
        RejectCase{"state", R"(invalid filter "state": expected an operator (=, !=, <, <=, >, )"
                            R"(>=, :) after "state", found end of filter at position 5)"},
        RejectCase{"state JOB_STATE_RUNNING",
                   R"(~after "state", found "JOB_STATE_RUNNING" at position 6)"},
        RejectCase{"display_name (x)", R"(~after "display_name", found "(" at position 13)"}));

INSTANTIATE_TEST_SUITE_P(
    Structure, ParseRejects,
    ::testing::Values(
        RejectCase{
            "(state=JOB_STATE_RUNNING))",
            R"x(invalid filter "(state=JOB_STATE_RUNNING))": unexpected ")" at position 25)x"},
        RejectCase{"state=JOB_STATE_RUNNING)", R"x(~unexpected ")" at position 23)x"},
        RejectCase{"(state=JOB_STATE_RUNNING",
                   R"x(~expected ")" to close the "(" at position 0, found end of filter at )x"
                   "position 24"},
        RejectCase{"labels.a=1 AND ((labels.b=2)",
                   R"x(~expected ")" to close the "(" at position 15, found end of filter at )x"
                   "position 28"},
        RejectCase{"(labels.a=1 =)",
                   R"(~to close the "(" at position 0, found "=" at position 12)"},
        RejectCase{"()", R"x(~unexpected ")" at position 1)x"},
        RejectCase{")", R"x(~unexpected ")" at position 0)x"},
        RejectCase{"AND state=JOB_STATE_RUNNING", R"(~unexpected "AND" at position 0)"},
        RejectCase{"OR state=JOB_STATE_RUNNING", R"(~unexpected "OR" at position 0)"},
        RejectCase{"state=JOB_STATE_RUNNING AND", R"(~unexpected end of filter at position 27)"},
        RejectCase{"state=JOB_STATE_RUNNING OR", R"(~unexpected end of filter at position 26)"},
        RejectCase{"state=JOB_STATE_RUNNING AND AND labels.a=b",
                   R"(~unexpected "AND" at position 28)"},
        RejectCase{"state=JOB_STATE_RUNNING OR OR labels.a=b",
                   R"(~unexpected "OR" at position 27)"},
        RejectCase{"state=JOB_STATE_RUNNING AND OR labels.a=b",
                   R"(~unexpected "OR" at position 28)"},
        RejectCase{"NOT", R"(~unexpected end of filter at position 3)"},
        RejectCase{"NOT )", R"x(~unexpected ")" at position 4)x"},
        RejectCase{"- state=JOB_STATE_RUNNING",
                   R"(~"-" must be directly followed by what it negates at position 0)"},
        RejectCase{"state=JOB_STATE_RUNNING -",
                   R"(~"-" must be directly followed by what it negates at position 24)"},
        RejectCase{"state=JOB_STATE_RUNNING and labels.a=b",
                   R"(~unknown field "and" at position 24)"},
        RejectCase{"state=JOB_STATE_RUNNING =", R"(~unexpected "=" at position 24)"},
        RejectCase{"state=JOB_STATE_RUNNING \"x\"",
                   R"(~expected a field name, found string "x")"}));

// ---------------------------------------------------------------------------------------------
// Parser: hostile input

std::string Repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out.append(s);
  return out;
}

TEST(ParseJobFilterDepth, SixtyFourNestedParenthesesAreFine) {
  const std::string filter = Repeat("(", 64) + "labels.a=1" + Repeat(")", 64);
  EXPECT_EQ(ParseDump(filter), R"(labels.a = "1")");
}

TEST(ParseJobFilterDepth, SixtyFiveNestedParenthesesAreRejectedAtTheExtraOne) {
  const std::string filter = Repeat("(", 65) + "labels.a=1" + Repeat(")", 65);
  const Status status = ParseError(filter);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("parentheses and negations nest deeper than 64 at position 64"));
}

TEST(ParseJobFilterDepth, SixtyFourNegationsAreFine) {
  StatusOr<std::optional<FilterExpr>> parsed =
      ParseJobFilter(Repeat("NOT ", 32) + Repeat("-", 32) + "labels.a=1");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const FilterExpr* node = &**parsed;
  int negations = 0;
  while (node->kind == FilterExpr::Kind::kNot) {
    node = &node->children.front();
    ++negations;
  }
  EXPECT_EQ(negations, 64);
  EXPECT_EQ(Dump(*node), R"(labels.a = "1")");
}

TEST(ParseJobFilterDepth, NegationsAndParenthesesCountTogether) {
  EXPECT_TRUE(ParseError(Repeat("NOT (", 32) + "labels.a=1" + Repeat(")", 32)).ok());
  const Status status = ParseError(Repeat("NOT (", 32) + "-labels.a=1" + Repeat(")", 32));
  EXPECT_THAT(status.message(), HasSubstr("nest deeper than 64 at position 160"));
}

TEST(ParseJobFilterDepth, SixtyFiveNegationsAreRejected) {
  EXPECT_THAT(ParseError(Repeat("NOT ", 65) + "labels.a=1").message(),
              HasSubstr("nest deeper than 64 at position 256"));
  EXPECT_THAT(ParseError(Repeat("-", 65) + "labels.a=1").message(),
              HasSubstr("nest deeper than 64 at position 64"));
}

TEST(ParseJobFilterDepth, DeepHostileInputFailsWithoutBlowingTheStack) {
  EXPECT_THAT(ParseError(Repeat("(", 1000000)).message(), HasSubstr("nest deeper than 64"));
  EXPECT_THAT(ParseError(Repeat("-", 1000000) + "labels.a=1").message(),
              HasSubstr("nest deeper than 64"));
  EXPECT_THAT(ParseError(Repeat("NOT ", 1000000)).message(), HasSubstr("nest deeper than 64"));
}

TEST(ParseJobFilterHostile, LongFlatFiltersParseIteratively) {
  std::string filter = "labels.a=1";
  for (int i = 0; i < 20000; ++i) filter += i % 2 ? " OR labels.a=1" : " AND labels.a=1";
  StatusOr<std::optional<FilterExpr>> parsed = ParseJobFilter(filter);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ((*parsed)->kind, FilterExpr::Kind::kAnd);
}

TEST(ParseJobFilterHostile, EchoedFilterIsTruncated) {
  const std::string filter = "state=X " + Repeat("labels.a=1 ", 10000) + "?";
  const Status status = ParseError(filter);
  ASSERT_FALSE(status.ok());
  EXPECT_LT(status.message().size(), 600u);
  EXPECT_THAT(status.message(), HasSubstr("...\": unknown state \"X\" at position 6"));
}

TEST(ParseJobFilterHostile, EchoedTextIsValidUtf8WithoutControlCharacters) {
  const Status status = ParseError("f\xFFo\x01=1");
  EXPECT_THAT(status.message(), StartsWith("invalid filter \"f?o?=1\": unknown field \"f?o?\""));
  // Valid multi-byte characters survive.
  EXPECT_THAT(ParseError("\xC3\xA9t\xC3\xA9=1").message(),
              HasSubstr("unknown field \"\xC3\xA9t\xC3\xA9\" at position 0"));
}

TEST(ParseJobFilterHostile, NulBytesAreOrdinaryCharacters) {
  const std::string filter("display_name=\"a\0b\"", 18);
  StatusOr<std::optional<FilterExpr>> parsed = ParseJobFilter(filter);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ((*parsed)->comparison.text, std::string("a\0b", 3));
}

// ---------------------------------------------------------------------------------------------
// SQL compiler

struct SqlCase {
  std::string filter;
  std::string sql;
  std::vector<std::string> params;
};

void PrintTo(const SqlCase& c, std::ostream* os) { *os << c.filter; }

SqlFragment Compile(std::string_view filter, int first_param = 1) {
  StatusOr<std::optional<FilterExpr>> parsed = ParseJobFilter(filter);
  SqlFragment out;
  if (!parsed.ok() || !parsed->has_value()) {
    ADD_FAILURE() << "cannot parse " << filter << ": " << parsed.status().message();
    return out;
  }
  AppendFilterSql(**parsed, first_param, out);
  return out;
}

class CompilesTo : public ::testing::TestWithParam<SqlCase> {};

TEST_P(CompilesTo, ExactSqlAndParams) {
  const SqlFragment out = Compile(GetParam().filter);
  EXPECT_EQ(out.sql, GetParam().sql) << "filter: " << GetParam().filter;
  EXPECT_EQ(out.params, GetParam().params) << "filter: " << GetParam().filter;
}

INSTANTIATE_TEST_SUITE_P(
    Comparisons, CompilesTo,
    ::testing::Values(
        SqlCase{"display_name=exp", "(display_name = $1)", {"exp"}},
        SqlCase{"display_name!=exp", "(display_name <> $1)", {"exp"}},
        SqlCase{"display_name:exp", "(display_name = $1)", {"exp"}},
        SqlCase{R"(display_name:"exp*")", R"((display_name LIKE $1 ESCAPE '\'))", {"exp%"}},
        SqlCase{R"(display_name:"*a*b*")", R"((display_name LIKE $1 ESCAPE '\'))", {"%a%b%"}},
        SqlCase{R"(display_name:"100%_a\\b*")",
                R"((display_name LIKE $1 ESCAPE '\'))",
                {R"(100\%\_a\\b%)"}},
        SqlCase{
            R"(display_name="it's; DROP TABLE x")", "(display_name = $1)", {"it's; DROP TABLE x"}},
        SqlCase{"state=JOB_STATE_RUNNING", "(state = $1::smallint)", {"3"}},
        SqlCase{"state!=JOB_STATE_PARTIALLY_SUCCEEDED", "(state <> $1::smallint)", {"11"}},
        SqlCase{"create_time=2024-05-01T12:00:00Z",
                "(create_time = $1::timestamptz)",
                {"2024-05-01T12:00:00.000000Z"}},
        SqlCase{"create_time!=2024-05-01T12:00:00Z",
                "(create_time <> $1::timestamptz)",
                {"2024-05-01T12:00:00.000000Z"}},
        SqlCase{"create_time<2024-05-01T12:00:00Z",
                "(create_time < $1::timestamptz)",
                {"2024-05-01T12:00:00.000000Z"}},
        SqlCase{"create_time<=2024-05-01T12:00:00Z",
                "(create_time <= $1::timestamptz)",
                {"2024-05-01T12:00:00.000000Z"}},
        SqlCase{"create_time>2024-05-01T12:00:00Z",
                "(create_time > $1::timestamptz)",
                {"2024-05-01T12:00:00.000000Z"}},
        SqlCase{"create_time>=2024-05-01T14:00:00.5+02:00",
                "(create_time >= $1::timestamptz)",
                {"2024-05-01T12:00:00.500000Z"}},
        SqlCase{"create_time>1969-12-31T23:59:59.999999Z",
                "(create_time > $1::timestamptz)",
                {"1969-12-31T23:59:59.999999Z"}},
        SqlCase{"create_time>0001-01-01T00:00:00.000001Z",
                "(create_time > $1::timestamptz)",
                {"0001-01-01T00:00:00.000001Z"}},
        SqlCase{"labels.team=ml", "(labels->>$1 = $2)", {"team", "ml"}},
        SqlCase{"labels.team:ml", "(labels->>$1 = $2)", {"team", "ml"}},
        SqlCase{"labels.team!=ml", "(labels->>$1 IS DISTINCT FROM $2)", {"team", "ml"}},
        SqlCase{"labels.team:*", "(labels ? $1)", {"team"}},
        SqlCase{
            R"(labels.team:"m_l*")", R"((labels->>$1 LIKE $2 ESCAPE '\'))", {"team", R"(m\_l%)"}},
        SqlCase{R"(labels.team:"*%")", R"((labels->>$1 LIKE $2 ESCAPE '\'))", {"team", R"(%\%)"}}));

INSTANTIATE_TEST_SUITE_P(
    Logic, CompilesTo,
    ::testing::Values(
        SqlCase{"NOT display_name=a", "((display_name = $1) IS NOT TRUE)", {"a"}},
        SqlCase{"-labels.team:*", "((labels ? $1) IS NOT TRUE)", {"team"}},
        SqlCase{"NOT NOT labels.a=b", "(((labels->>$1 = $2) IS NOT TRUE) IS NOT TRUE)", {"a", "b"}},
        SqlCase{"display_name=a AND state=JOB_STATE_FAILED",
                "(display_name = $1 AND state = $2::smallint)",
                {"a", "5"}},
        SqlCase{"display_name=a OR display_name=b OR display_name=c",
                "(display_name = $1 OR display_name = $2 OR display_name = $3)",
                {"a", "b", "c"}},
        SqlCase{"labels.a=1 AND labels.b=2 OR labels.c=3",
                "(labels->>$1 = $2 AND (labels->>$3 = $4 OR labels->>$5 = $6))",
                {"a", "1", "b", "2", "c", "3"}},
        SqlCase{"NOT (labels.a=1 OR labels.b=2)",
                "((labels->>$1 = $2 OR labels->>$3 = $4) IS NOT TRUE)",
                {"a", "1", "b", "2"}},
        SqlCase{"labels.a=1 -labels.b=2",
                "(labels->>$1 = $2 AND (labels->>$3 = $4) IS NOT TRUE)",
                {"a", "1", "b", "2"}},
        SqlCase{"displayName:\"exp_*\" AND (state=JOB_STATE_RUNNING OR "
                "state=JOB_STATE_PENDING) "
                "AND NOT labels.team=ml AND createTime>=\"2024-05-01T00:00:00Z\"",
                R"((display_name LIKE $1 ESCAPE '\' AND (state = $2::smallint OR )"
                R"(state = $3::smallint) AND (labels->>$4 = $5) IS NOT TRUE AND )"
                "create_time >= $6::timestamptz)",
                {R"(exp\_%)", "3", "2", "team", "ml", "2024-05-01T00:00:00.000000Z"}}));

TEST(AppendFilterSql, NumbersFromFirstParamAndAppends) {
  StatusOr<std::optional<FilterExpr>> parsed =
      ParseJobFilter("labels.team=ml OR display_name:\"x*\"");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  SqlFragment out{"project_number = $1 AND location = $2 AND ", {"42", "us-central1"}};
  AppendFilterSql(**parsed, 3, out);
  EXPECT_EQ(out.sql,
            "project_number = $1 AND location = $2 AND "
            R"((labels->>$3 = $4 OR display_name LIKE $5 ESCAPE '\'))");
  EXPECT_EQ(out.params, (std::vector<std::string>{"42", "us-central1", "team", "ml", "x%"}));
}

FilterExpr Compare(FilterComparison cmp) {
  FilterExpr e;
  e.comparison = std::move(cmp);
  return e;
}

TEST(AppendFilterSql, HandBuiltHasWithoutWildcardIsEquality) {
  FilterComparison cmp;
  cmp.field = FilterField::kDisplayName;
  cmp.op = FilterOp::kHas;
  cmp.text = "exact";
  SqlFragment out;
  AppendFilterSql(Compare(cmp), 1, out);
  EXPECT_EQ(out.sql, "(display_name = $1)");
  EXPECT_EQ(out.params, std::vector<std::string>{"exact"});
}

TEST(AppendFilterSql, DegenerateTreesStillYieldValidSql) {
  FilterExpr empty_and;
  empty_and.kind = FilterExpr::Kind::kAnd;
  FilterExpr empty_or;
  empty_or.kind = FilterExpr::Kind::kOr;
  FilterExpr one_child_or = empty_or;
  FilterComparison cmp;
  cmp.text = "a";
  one_child_or.children.push_back(Compare(cmp));

  SqlFragment out;
  AppendFilterSql(empty_and, 1, out);
  out.sql += " | ";
  AppendFilterSql(empty_or, 1, out);
  out.sql += " | ";
  AppendFilterSql(one_child_or, 1, out);
  EXPECT_EQ(out.sql, "(TRUE) | (FALSE) | (display_name = $1)");
}

TEST(AppendFilterSql, TimestampParamsAreUtcWithMicroseconds) {
  FilterComparison cmp;
  cmp.field = FilterField::kCreateTime;
  cmp.op = FilterOp::kLt;
  cmp.time = FromUnixMicros(1714564800000001);
  SqlFragment out;
  AppendFilterSql(Compare(cmp), 7, out);
  EXPECT_EQ(out.sql, "(create_time < $7::timestamptz)");
  EXPECT_EQ(out.params, std::vector<std::string>{"2024-05-01T12:00:00.000001Z"});

  cmp.time = FromUnixMicros(-1);
  out = {};
  AppendFilterSql(Compare(cmp), 1, out);
  EXPECT_EQ(out.params, std::vector<std::string>{"1969-12-31T23:59:59.999999Z"});
}

TEST(AppendFilterSql, UserTextNeverReachesTheSqlText) {
  const SqlFragment out =
      Compile(R"(display_name:"';--*" OR labels.x:"$1*" OR labels.y="\"" OR labels.z!=')");
  EXPECT_THAT(out.sql, ::testing::Not(HasSubstr("'"
                                                ";")));
  EXPECT_THAT(out.sql, ::testing::Not(HasSubstr("--")));
  EXPECT_THAT(out.sql, EndsWith("labels->>$6 IS DISTINCT FROM $7)"));
  EXPECT_EQ(out.params.size(), 7u);
}

}  // namespace
}  // namespace trainyard
