#include "storage/named_sql.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace trainyard::storage {
namespace {

bool NameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool NamePart(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string ReplaceNames(std::string_view text,
                         const std::function<std::string(std::string_view name)>& replace) {
  std::string out;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\'') quoted = !quoted;
    const bool name = !quoted && c == ':' && (i == 0 || text[i - 1] != ':') &&
                      i + 1 < text.size() && NameStart(text[i + 1]);
    if (!name) {
      out += c;
      continue;
    }
    size_t end = i + 1;
    while (end < text.size() && NamePart(text[end])) ++end;
    out += replace(text.substr(i + 1, end - i - 1));
    i = end - 1;
  }
  return out;
}

NamedSql::NamedSql(std::string_view text) {
  text_ = ReplaceNames(text, [this](std::string_view name) {
    auto [it, added] = index_.try_emplace(std::string(name), names_.size());
    if (added) names_.push_back(std::string(name));
    return "$" + std::to_string(it->second + 1);
  });
}

std::optional<size_t> NamedSql::IndexOf(std::string_view name) const {
  auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

NamedParams& NamedParams::Set(std::string_view name, std::optional<std::string> value) {
  if (std::optional<size_t> i = sql_.IndexOf(name)) {
    values_[*i] = std::move(value);
    set_[*i] = true;
    return *this;
  }
  std::fprintf(stderr, "NamedParams: no parameter :%.*s in the statement\n",
               static_cast<int>(name.size()), name.data());
  std::abort();
}

pg::Statement NamedParams::Build() {
  for (size_t i = 0; i < set_.size(); ++i) {
    if (!set_[i]) {
      std::fprintf(stderr, "NamedParams: :%s was never set\n", sql_.names()[i].c_str());
      std::abort();
    }
  }
  return pg::Statement{sql_.text(), std::move(values_)};
}

}  // namespace trainyard::storage
