#pragma once
// An immutable text that every copy shares. Verdict messages are copied far more often than they
// are made: jobs of one shape get the message of the first, and each reported verdict is kept to
// compare with the next. Shared, a copy costs a reference count rather than an allocation, and
// 90,000 parked jobs of a few shapes hold a few messages, not 180,000.
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace trainyard {

class SharedText {
 public:
  SharedText() = default;
  SharedText(std::string text)  // NOLINT: implicit, a verdict's message is assigned from strings
      : text_(text.empty() ? nullptr : std::make_shared<const std::string>(std::move(text))) {}
  SharedText(const char* text) : SharedText(std::string(text)) {}  // NOLINT: as above

  const std::string& str() const { return text_ ? *text_ : Empty(); }
  operator const std::string&() const { return str(); }  // NOLINT: reads as the string it is
  bool empty() const { return !text_; }
  // Whether both hold the one same text (equal without reading it).
  bool SharesWith(const SharedText& other) const { return text_ == other.text_; }
  size_t find(std::string_view part, size_t from = 0) const { return str().find(part, from); }

  // A new text (the shared one is never changed under its other holders).
  SharedText& operator+=(std::string_view more) {
    if (!more.empty()) *this = SharedText(str() + std::string(more));
    return *this;
  }
  friend bool operator==(const SharedText& a, const SharedText& b) {
    return a.text_ == b.text_ || a.str() == b.str();
  }
  friend bool operator==(const SharedText& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, const char* b) { return a.str() == b; }
  friend std::ostream& operator<<(std::ostream& out, const SharedText& t) { return out << t.str(); }

 private:
  static const std::string& Empty() {
    static const std::string empty;
    return empty;
  }
  std::shared_ptr<const std::string> text_;
};

}  // namespace trainyard
