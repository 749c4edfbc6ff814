#include "services/scheduler/shared_text.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

TEST(SharedTextTest, CopiesShareOneTextAndAppendingMakesANewOne) {
  SharedText a = std::string("no capacity in us-central1-a");
  SharedText b = a;
  EXPECT_EQ(&a.str(), &b.str());  // a copy is a reference, not another string
  b += "; capacity reserved in us-central1-b";
  EXPECT_EQ(a, "no capacity in us-central1-a");  // the other holder never sees the change
  EXPECT_EQ(b, "no capacity in us-central1-a; capacity reserved in us-central1-b");
  EXPECT_FALSE(a == b);
}

TEST(SharedTextTest, EqualTextsCompareEqualWhetherSharedOrNot) {
  SharedText a = std::string("x");
  SharedText b = std::string("x");
  EXPECT_NE(&a.str(), &b.str());
  EXPECT_EQ(a, b);
  EXPECT_EQ(SharedText(), std::string());
  EXPECT_TRUE(SharedText(std::string()).empty());
  EXPECT_EQ(a.find("x"), 0u);
}

}  // namespace
}  // namespace trainyard
