#pragma once
// SQL that names the states it reads and writes instead of writing their numbers: `:job_queued`,
// `:node_ready`, `:resource_provisioning` (the prefix, then the state's proto name in lower
// case). Each becomes a smallint parameter after the statement's own `$1`…`$k`, bound to the
// enum's number when the statement is built: a renumbered enum cannot leave a stale number in a
// statement, and a misspelt state aborts when the constant is made (at start-up, so every test
// run catches it). `tests/check_layers` refuses a state number written in storage's SQL.
#include <string>
#include <string_view>
#include <vector>

#include "storage/pg.h"

namespace trainyard::storage {

class StateSql {
 public:
  explicit StateSql(std::string_view text);
  std::string_view text() const { return text_; }
  // The statement with `params` as $1…$k (exactly k of them) and the states after them.
  pg::Statement With(pg::Params params) const;

 private:
  std::string text_;
  size_t positional_ = 0;            // k: the highest $N of the text as written
  std::vector<std::string> states_;  // the numbers of $k+1…
};

// The states a job never leaves (kTerminalJobStates, the domain's one list) as a smallint[]
// parameter: a query that tells ended jobs apart binds it rather than spelling them.
std::string TerminalJobStatesParam();
// The node states that hold capacity (NodeStateMachine::IsLive), the same way.
std::string LiveNodeStatesParam();

}  // namespace trainyard::storage
