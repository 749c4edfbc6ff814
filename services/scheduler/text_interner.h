#pragma once
// One shared copy per distinct text, for texts remade often and compared more often: a verdict's
// message is rebuilt each time its job is evaluated and compared with the one last reported. When
// both are the interner's copy, that compare is a pointer's, and it reads neither text (the
// reported one sits wherever it was made, among a deep queue's allocations).
//
// Texts are kept for two generations: what was not asked for in the last two goes, so the
// interner holds about one cycle's distinct messages.
#include <functional>
#include <string_view>
#include <unordered_set>

#include "services/scheduler/shared_text.h"

namespace trainyard {

class TextInterner {
 public:
  // The copy of `text` the interner holds, which from now on is `text` if it had none.
  SharedText Intern(const SharedText& text) {
    if (text.empty()) return text;
    if (auto it = current_.find(text); it != current_.end()) return *it;
    if (auto node = previous_.extract(text); !node.empty()) {
      return *current_.insert(std::move(node)).position;
    }
    return *current_.insert(text).first;
  }

  // A new generation begins: texts not asked for since the last one began are dropped.
  void Age() {
    previous_ = std::move(current_);
    current_.clear();
  }

  size_t size() const { return current_.size() + previous_.size(); }

 private:
  struct Hash {
    size_t operator()(const SharedText& t) const { return std::hash<std::string_view>{}(t.str()); }
  };
  std::unordered_set<SharedText, Hash> current_;
  std::unordered_set<SharedText, Hash> previous_;
};

}  // namespace trainyard
