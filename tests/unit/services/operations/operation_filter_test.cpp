// The operations list filter: only `done`, in the spellings AIP-160 clients write.
#include <gtest/gtest.h>

#include "services/operations/operation_service.h"

namespace trainyard {
namespace {

TEST(OperationFilterTest, DoneInEverySpelling) {
  for (const char* yes : {"done", "done=true", "done = true", "done:true", " done: true "}) {
    auto f = ParseOperationFilter(yes);
    ASSERT_TRUE(f.ok()) << yes;
    EXPECT_EQ(*f, std::optional<bool>(true)) << yes;
  }
  for (const char* no : {"NOT done", "-done", "done=false", "done = false"}) {
    auto f = ParseOperationFilter(no);
    ASSERT_TRUE(f.ok()) << no;
    EXPECT_EQ(*f, std::optional<bool>(false)) << no;
  }
  auto none = ParseOperationFilter("  ");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(OperationFilterTest, AnythingElseIsA400NamingTheFilter) {
  for (const char* bad : {"name=x", "done=maybe", "done AND x"}) {
    auto f = ParseOperationFilter(bad);
    ASSERT_FALSE(f.ok()) << bad;
    EXPECT_EQ(f.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(f.status().violations().at(0).field, "filter");
  }
}

}  // namespace
}  // namespace trainyard
