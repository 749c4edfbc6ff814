#pragma once
// SQL with named parameters (`:id`, `:to`) instead of a long row of `$1`…`$27` whose order every
// caller must get right. Each name becomes its `$N` once, in order of first appearance; a value is
// bound by its name, and a statement whose names are not all bound is refused. The text is made
// once (keep the NamedSql in a static), so the statement is still prepared once per connection.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/pg.h"

namespace trainyard::storage {

// `text` with every `:name` token outside quotes (a letter or _ first, then letters, digits, _;
// `::type` casts are left alone) replaced by what `replace` returns for the name.
std::string ReplaceNames(std::string_view text,
                         const std::function<std::string(std::string_view name)>& replace);

class NamedSql {
 public:
  // `text`'s `:name` tokens (a letter or _ first, then letters, digits, _) outside quotes; `::type`
  // casts are left alone.
  explicit NamedSql(std::string_view text);
  const std::string& text() const { return text_; }
  const std::vector<std::string>& names() const { return names_; }
  // The index of `name` in names(), or nullopt.
  std::optional<size_t> IndexOf(std::string_view name) const;

 private:
  std::string text_;
  std::vector<std::string> names_;  // names_[i] is $(i+1)
  std::map<std::string, size_t, std::less<>> index_;
};

class NamedParams {
 public:
  explicit NamedParams(const NamedSql& sql) : sql_(sql), values_(sql.names().size()) {}
  // `name` must be one of the statement's (a typo is a programming error: it aborts in tests).
  NamedParams& Set(std::string_view name, std::optional<std::string> value);
  // The statement with every value in its place; every name must have been set.
  pg::Statement Build();

 private:
  const NamedSql& sql_;
  std::vector<std::optional<std::string>> values_;
  std::vector<bool> set_ = std::vector<bool>(values_.size(), false);
};

}  // namespace trainyard::storage
