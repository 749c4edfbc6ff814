#include "storage/state_sql.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "services/fleet/node_state.h"
#include "services/fleet/node_state_machine.h"
#include "services/jobs/job_state_names.h"
#include "services/model/custom_job.h"
#include "services/model/persistent_resource.h"
#include "storage/named_sql.h"
#include "storage/row_codec.h"

namespace trainyard::storage {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "job_queued" → "1", … for every state of jobs, nodes and persistent resources.
const std::map<std::string, std::string, std::less<>>& StateNumbers() {
  static const auto* numbers = [] {
    auto* m = new std::map<std::string, std::string, std::less<>>();
    for (const JobStateSpelling& s : kJobStateSpellings) {
      (*m)["job_" + Lower(s.name.substr(std::string_view("JOB_STATE_").size()))] =
          std::to_string(static_cast<int>(s.state));
    }
    for (NodeState state : kAllNodeStates) {
      (*m)["node_" + Lower(NodeStateName(state))] = std::to_string(static_cast<int>(state));
    }
    for (const ResourceStateSpelling& s : kResourceStateSpellings) {
      (*m)["resource_" + Lower(s.name)] = std::to_string(static_cast<int>(s.state));
    }
    return m;
  }();
  return *numbers;
}

[[noreturn]] void Refuse(const char* what, std::string_view detail) {
  std::fprintf(stderr, "StateSql: %s: %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

}  // namespace

StateSql::StateSql(std::string_view text) {
  // First the highest $N as written: the states are numbered after it.
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\'') quoted = !quoted;
    if (quoted || text[i] != '$') continue;
    size_t n = 0, j = i + 1;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      n = n * 10 + static_cast<size_t>(text[j] - '0');
      ++j;
    }
    positional_ = std::max(positional_, n);
  }
  std::map<std::string, size_t, std::less<>> index;  // state name → its $N
  text_ = ReplaceNames(text, [&](std::string_view key) {
    auto number = StateNumbers().find(key);
    if (number == StateNumbers().end()) Refuse("no such state", key);
    auto [it, added] = index.try_emplace(std::string(key), positional_ + states_.size() + 1);
    if (added) states_.push_back(number->second);
    return "$" + std::to_string(it->second) + "::smallint";
  });
}

pg::Statement StateSql::With(pg::Params params) const {
  if (params.size() != positional_) {
    Refuse("wrong number of parameters for", text_);
  }
  params.insert(params.end(), states_.begin(), states_.end());
  return pg::Statement{text_, std::move(params)};
}

std::string TerminalJobStatesParam() {
  std::vector<int> states;
  for (JobState s : kTerminalJobStates) states.push_back(static_cast<int>(s));
  return NumberArray(states);
}

std::string LiveNodeStatesParam() {
  std::vector<int> states;
  for (NodeState s : kAllNodeStates) {
    if (NodeStateMachine::IsLive(s)) states.push_back(static_cast<int>(s));
  }
  return NumberArray(states);
}

}  // namespace trainyard::storage
