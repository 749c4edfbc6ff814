#include "services/scheduler/text_interner.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

TEST(TextInternerTest, EqualTextsComeBackAsOneSharedCopy) {
  TextInterner interner;
  SharedText first = interner.Intern(std::string("no capacity in us-central1-a"));
  SharedText again = interner.Intern(std::string("no capacity in us-central1-a"));
  EXPECT_TRUE(first.SharesWith(again));
  SharedText other = interner.Intern(std::string("no capacity in us-central1-b"));
  EXPECT_FALSE(first.SharesWith(other));
  EXPECT_EQ(other, "no capacity in us-central1-b");
  EXPECT_TRUE(interner.Intern(SharedText()).empty());
  EXPECT_EQ(interner.size(), 2u);
}

TEST(TextInternerTest, ATextAskedForEachGenerationKeepsItsCopyAndAnUnusedOneGoes) {
  TextInterner interner;
  SharedText kept = interner.Intern(std::string("kept"));
  interner.Intern(std::string("dropped"));
  interner.Age();
  EXPECT_TRUE(kept.SharesWith(interner.Intern(std::string("kept"))));
  interner.Age();
  EXPECT_TRUE(kept.SharesWith(interner.Intern(std::string("kept"))));
  EXPECT_EQ(interner.size(), 1u);  // "dropped" was not asked for in two generations
  // Its holders keep their text; a new ask makes a new copy.
  SharedText again = interner.Intern(std::string("dropped"));
  EXPECT_EQ(again, "dropped");
  EXPECT_EQ(interner.size(), 2u);
}

}  // namespace
}  // namespace trainyard
