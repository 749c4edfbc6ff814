// X-Request-Id: a well-formed one is echoed, anything else is replaced by 128 random bits in hex.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/api_service.h"

namespace trainyard::api {
namespace {

std::string IdFor(const std::string* header) {
  HttpRequest r;
  if (header != nullptr) r.headers["x-request-id"] = *header;
  return RequestIdFor(r);
}

bool IsGenerated(const std::string& id) {
  return id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(RequestIdForTest, AWellFormedHeaderIsKept) {
  const std::string longest(64, 'z');
  for (const std::string& id : std::vector<std::string>{
           "a", "abc.DEF_123-x", "3f2c9a1e-4b7d-4c1a-9e2f-0a1b2c3d4e5f", "...", "-_-", longest}) {
    EXPECT_EQ(IdFor(&id), id);
  }
}

TEST(RequestIdForTest, ATooLongHeaderIsReplaced) {
  const std::string too_long(65, 'a');
  std::string id = IdFor(&too_long);
  EXPECT_TRUE(IsGenerated(id)) << id;
  EXPECT_NE(id, too_long);
}

TEST(RequestIdForTest, BadCharactersAreReplaced) {
  for (const std::string& bad :
       std::vector<std::string>{"a b", "a/b", "a:b", "a\"b", "a\nb", "a\rb", "<script>",
                                "id\xc3\xa9", "a%20b", "a,b", std::string("a\0b", 3)}) {
    std::string id = IdFor(&bad);
    EXPECT_TRUE(IsGenerated(id)) << "[" << bad << "] -> " << id;
  }
}

TEST(RequestIdForTest, AnEmptyOrMissingHeaderGetsAFreshId) {
  const std::string empty;
  EXPECT_TRUE(IsGenerated(IdFor(&empty)));
  EXPECT_TRUE(IsGenerated(IdFor(nullptr)));
}

TEST(RequestIdForTest, GeneratedIdsDiffer) {
  // 128 random bits each: a repeat means the generator is not random.
  EXPECT_NE(IdFor(nullptr), IdFor(nullptr));
  const std::string bad = "not valid!";
  EXPECT_NE(IdFor(&bad), IdFor(&bad));
}

}  // namespace
}  // namespace trainyard::api
