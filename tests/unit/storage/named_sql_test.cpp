#include "storage/named_sql.h"

#include <gtest/gtest.h>

namespace trainyard::storage {
namespace {

TEST(NamedSqlTest, EachNameIsOneNumberInOrderOfFirstUseAndCastsAndQuotesStay) {
  NamedSql sql(
      "UPDATE t SET a = :to::smallint, b = 'x:y' || :note, since = 'epoch'::timestamptz "
      "WHERE id = :id AND a <> :to::smallint");
  EXPECT_EQ(sql.text(),
            "UPDATE t SET a = $1::smallint, b = 'x:y' || $2, since = 'epoch'::timestamptz "
            "WHERE id = $3 AND a <> $1::smallint");
  EXPECT_EQ(sql.names(), (std::vector<std::string>{"to", "note", "id"}));
}

TEST(NamedSqlTest, ValuesAreBoundByNameWhateverTheOrderTheyAreSetIn) {
  static const NamedSql sql("SELECT :b, :a, :b");
  pg::Statement s = NamedParams(sql).Set("a", "1").Set("b", std::nullopt).Build();
  EXPECT_EQ(s.sql, "SELECT $1, $2, $1");
  ASSERT_EQ(s.params.size(), 2u);
  EXPECT_EQ(s.params[0], std::nullopt);
  EXPECT_EQ(s.params[1], "1");
}

TEST(NamedSqlDeathTest, AStatementWithANameLeftUnboundOrATypoNeverRuns) {
  static const NamedSql sql("SELECT :a, :b");
  EXPECT_DEATH(NamedParams(sql).Set("a", "1").Build(), ":b was never set");
  EXPECT_DEATH(NamedParams(sql).Set("c", "1"), "no parameter :c");
}

}  // namespace
}  // namespace trainyard::storage
