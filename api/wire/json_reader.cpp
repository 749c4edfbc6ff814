#include "api/wire/json_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "services/model/duration_text.h"

namespace trainyard {
namespace {

using nlohmann::json;
using std::chrono::days;
using std::chrono::floor;
using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using std::chrono::sys_days;

constexpr std::string_view kPayloadPrefix = "Invalid JSON payload received. ";
constexpr std::string_view kTimestampType = "type.googleapis.com/google.protobuf.Timestamp";
constexpr std::string_view kDurationType = "type.googleapis.com/google.protobuf.Duration";
constexpr int64_t kNanosPerSecond = 1'000'000'000;
// Keeps error messages bounded whatever a client sends.
constexpr size_t kMaxShownChars = 80;

// ---- Time formatting and parsing ---------------------------------------------------------------

// "", ".123", ".123456" or ".123456789": the fewest of 0, 3, 6, 9 digits that are exact.
std::string FormatNanosFraction(int64_t nanos) {
  if (nanos == 0) return "";
  char buf[16];
  if (nanos % 1'000'000 == 0) {
    std::snprintf(buf, sizeof buf, ".%03d", static_cast<int>(nanos / 1'000'000));
  } else if (nanos % 1'000 == 0) {
    std::snprintf(buf, sizeof buf, ".%06d", static_cast<int>(nanos / 1'000));
  } else {
    std::snprintf(buf, sizeof buf, ".%09d", static_cast<int>(nanos));
  }
  return buf;
}

// A forward-only scanner over fixed-format text.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  bool AtEnd() const { return pos_ == text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  // Exactly `count` digits.
  bool Fixed(int count, int* out) {
    int value = 0;
    for (int i = 0; i < count; ++i) {
      if (!IsDigit(Peek())) return false;
      value = value * 10 + (text_[pos_++] - '0');
    }
    *out = value;
    return true;
  }
  // 1 to 9 digits after a '.', scaled to nanoseconds.
  bool Fraction(int64_t* nanos) {
    int64_t value = 0;
    int count = 0;
    while (IsDigit(Peek())) {
      if (++count > 9) return false;
      value = value * 10 + (text_[pos_++] - '0');
    }
    if (count == 0) return false;
    for (int i = count; i < 9; ++i) value *= 10;
    *nanos = value;
    return true;
  }
  // One or more digits, failing on uint64 overflow.
  bool Unsigned(uint64_t* out) {
    uint64_t value = 0;
    bool any = false;
    while (IsDigit(Peek())) {
      const uint64_t digit = static_cast<uint64_t>(text_[pos_++] - '0');
      if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
      value = value * 10 + digit;
      any = true;
    }
    *out = value;
    return any;
  }

 private:
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

  std::string_view text_;
  size_t pos_ = 0;
};

Status BadTimestamp(std::string_view text) {
  return InvalidArgument("invalid Timestamp \"" + std::string(text.substr(0, kMaxShownChars)) +
                         "\": expected RFC 3339 such as 2024-01-02T03:04:05.5Z or "
                         "2024-01-02T04:04:05+01:00, years 0001-9999");
}

Status BadDuration(std::string_view text) {
  return InvalidArgument("invalid Duration \"" + std::string(text.substr(0, kMaxShownChars)) +
                         "\": expected seconds with up to 9 fraction digits and an \"s\" suffix, "
                         "such as \"3600s\" or \"1.5s\", within about 292 years");
}

struct Clock {
  int hour = 0, minute = 0, second = 0;
};

// "HH:MM:SS".
bool ScanClock(Scanner& s, Clock* c) {
  return s.Fixed(2, &c->hour) && s.Consume(':') && s.Fixed(2, &c->minute) && s.Consume(':') &&
         s.Fixed(2, &c->second) && c->hour < 24 && c->minute < 60 && c->second < 60;
}

// "Z" or "+HH:MM"/"-HH:MM" as an offset east of UTC.
bool ScanOffset(Scanner& s, minutes* offset) {
  if (s.Consume('Z') || s.Consume('z')) {
    *offset = minutes(0);
    return true;
  }
  int sign = s.Consume('+') ? 1 : (s.Consume('-') ? -1 : 0);
  int hh = 0, mm = 0;
  if (sign == 0 || !s.Fixed(2, &hh) || !s.Consume(':') || !s.Fixed(2, &mm)) return false;
  if (hh > 23 || mm > 59) return false;
  *offset = minutes(sign * (hh * 60 + mm));
  return true;
}

// ---- Reader helpers ----------------------------------------------------------------------------

// A JSON value as Vertex quotes it in "Invalid value" messages, cut short when long.
std::string RenderValue(const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      return "{...}";
    case json::value_t::array:
      return "[...]";
    case json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      std::string shown = s.size() > kMaxShownChars ? s.substr(0, kMaxShownChars) + "..." : s;
      return json(shown).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    default:
      return value.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

std::string_view JsonTypeName(const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::null:
      return "null";
    default:
      return "number";
  }
}

std::optional<int64_t> ParseDecimal(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// A JSON integer, an integral float (proto3 JSON allows 1.0 and 1e2) or a decimal string, as int64.
std::optional<int64_t> IntegralValue(const json& value) {
  if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) {
    double d = value.get<double>();
    // 2^63 is exact in a double; anything at or above it does not fit.
    if (!std::isfinite(d) || d != std::trunc(d) || d < -0x1p63 || d >= 0x1p63) return std::nullopt;
    return static_cast<int64_t>(d);
  }
  if (value.is_string()) return ParseDecimal(value.get_ref<const std::string&>());
  return std::nullopt;
}

}  // namespace

// ---- Time --------------------------------------------------------------------------------------

std::string FormatTimestamp(Timestamp t) {
  const auto day = floor<days>(t);
  const std::chrono::year_month_day ymd(day);
  const std::chrono::hh_mm_ss<microseconds> hms(t - day);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  return std::string(buf) + FormatNanosFraction(hms.subseconds().count() * 1000) + "Z";
}

std::string FormatDuration(Duration d) {
  const int64_t ns = d.count();
  // Unsigned arithmetic so that the most negative value has a magnitude too.
  const uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  const uint64_t secs = magnitude / kNanosPerSecond;
  const int64_t nanos = static_cast<int64_t>(magnitude % kNanosPerSecond);
  return (ns < 0 ? "-" : "") + std::to_string(secs) + FormatNanosFraction(nanos) + "s";
}

StatusOr<Timestamp> ParseTimestamp(std::string_view text) {
  Scanner s(text);
  int y = 0, mo = 0, d = 0;
  Clock clock;
  int64_t nanos = 0;
  minutes offset(0);
  bool ok = s.Fixed(4, &y) && s.Consume('-') && s.Fixed(2, &mo) && s.Consume('-') &&
            s.Fixed(2, &d) && (s.Consume('T') || s.Consume('t')) && ScanClock(s, &clock) &&
            (!s.Consume('.') || s.Fraction(&nanos)) && ScanOffset(s, &offset) && s.AtEnd();
  const std::chrono::year_month_day ymd{std::chrono::year(y), std::chrono::month(mo),
                                        std::chrono::day(d)};
  if (!ok || y < 1 || !ymd.ok()) return BadTimestamp(text);
  const Timestamp local = sys_days(ymd) + hours(clock.hour) + minutes(clock.minute) +
                          seconds(clock.second) + microseconds(nanos / 1000);
  const Timestamp utc = local - offset;
  const Timestamp min = sys_days(std::chrono::year(1) / 1 / 1);
  const Timestamp max = sys_days(std::chrono::year(10000) / 1 / 1) - microseconds(1);
  if (utc < min || utc > max) return BadTimestamp(text);
  return utc;
}

StatusOr<Duration> ParseDuration(std::string_view text) {
  std::optional<Duration> value = ParseDurationText(text, /*allow_negative=*/true);
  if (!value) return BadDuration(text);
  return *value;
}

// ---- Paths -------------------------------------------------------------------------------------

std::string ToSnakeCase(std::string_view json_name) {
  std::string out;
  out.reserve(json_name.size() + 8);
  bool in_brackets = false;
  for (char c : json_name) {
    if (c == '[') in_brackets = true;
    if (c == ']') in_brackets = false;
    if (!in_brackets && c >= 'A' && c <= 'Z') {
      out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

FieldPath::FieldPath(std::string proto_root, std::string_view json_path)
    : json_(json_path), proto_(std::move(proto_root)) {
  if (!json_path.empty()) proto_ += "." + ToSnakeCase(json_path);
}

FieldPath FieldPath::Field(std::string_view json_name) const {
  std::string json = json_.empty() ? std::string(json_name) : json_ + "." + std::string(json_name);
  return FieldPath(Spelled{}, std::move(json), proto_ + "." + ToSnakeCase(json_name));
}

FieldPath FieldPath::Index(size_t index) const {
  const std::string suffix = "[" + std::to_string(index) + "]";
  return FieldPath(Spelled{}, json_ + suffix, proto_ + suffix);
}

FieldPath FieldPath::Key(std::string_view map_key) const {
  return FieldPath(Spelled{}, json_ + "." + std::string(map_key),
                   proto_ + "." + std::string(map_key));
}

Status InvalidPayload(const FieldPath& field, std::string message) {
  Status status(Code::kInvalidArgument, message);
  if (!field.json().empty()) status.WithViolation(field.json(), std::move(message));
  return status;
}

// ---- ObjectReader ------------------------------------------------------------------------------

ObjectReader::ObjectReader(const nlohmann::json& object, FieldPath path)
    : object_(object), path_(std::move(path)) {
  if (!object_.is_object()) {
    Fail(InvalidPayload(path_, std::string(kPayloadPrefix) + "Expected a JSON object at '" +
                                   path_.proto() + "', got " + std::string(JsonTypeName(object_)) +
                                   "."));
    return;
  }
  for (auto it = object_.begin(); it != object_.end() && !underscored_keys_; ++it) {
    underscored_keys_ = it.key().find('_') != std::string::npos;
  }
}

void ObjectReader::Fail(Status status) {
  if (error_.ok()) error_ = std::move(status);
}

ObjectReader::Member ObjectReader::Find(std::string_view name) {
  if (!error_.ok()) return {};
  auto it = object_.find(name);
  // A snake_case twin has an underscore. In an object with no such key (clients mostly send
  // camelCase) it is neither spelled nor looked up: for each field of every create and of every
  // stored spec read, that was a string built and a lookup, a twentieth of a create's thread.
  if (underscored_keys_) {
    const std::string snake = ToSnakeCase(name);
    auto snake_it = snake == name ? object_.end() : object_.find(snake);
    if (it != object_.end() && snake_it != object_.end()) {
      Fail(InvalidPayload(path_.Field(name), std::string(kPayloadPrefix) + "Field \"" + snake +
                                                 "\" at '" + path_.proto() +
                                                 "' is given twice, as \"" + std::string(name) +
                                                 "\" and \"" + snake + "\"."));
      return {};
    }
    if (it == object_.end()) it = snake_it;
  }
  if (it == object_.end()) return {};
  consumed_.push_back(&it.key());
  if (it->is_null()) return {};  // proto3 JSON: null means the field is not set
  return {&*it, it.key()};
}

// Vertex's wording for a list given to a singular field.
bool ObjectReader::RejectList(std::string_view name, const Member& member) {
  if (!member.value->is_array()) return false;
  Fail(
      InvalidPayload(path_.Field(name), std::string(kPayloadPrefix) + "Unknown name \"" +
                                            std::string(member.key) + "\" at '" + path_.proto() +
                                            "': Proto field is not repeating, cannot start list."));
  return true;
}

void ObjectReader::FailValueAt(const FieldPath& at, std::string_view type, const json& value,
                               std::string_view detail) {
  std::string message =
      "Invalid value at '" + at.proto() + "' (" + std::string(type) + "), " + RenderValue(value);
  if (!detail.empty()) message += ": " + std::string(detail);
  Fail(InvalidPayload(at, std::move(message)));
}

void ObjectReader::FailValue(std::string_view name, std::string_view type, const json& value,
                             std::string_view detail) {
  FailValueAt(path_.Field(name), type, value, detail);
}

bool ObjectReader::GetString(std::string_view name, std::string* out) {
  Member m = Find(name);
  if (!m.value || RejectList(name, m)) return false;
  if (!m.value->is_string()) {
    FailValue(name, "TYPE_STRING", *m.value);
    return false;
  }
  *out = m.value->get<std::string>();
  return true;
}

bool ObjectReader::GetBool(std::string_view name, bool* out) {
  Member m = Find(name);
  if (!m.value || RejectList(name, m)) return false;
  if (!m.value->is_boolean()) {
    FailValue(name, "TYPE_BOOL", *m.value);
    return false;
  }
  *out = m.value->get<bool>();
  return true;
}

bool ObjectReader::GetInt32(std::string_view name, int32_t* out) {
  Member m = Find(name);
  if (!m.value || RejectList(name, m)) return false;
  std::optional<int64_t> value = IntegralValue(*m.value);
  if (!value || *value < std::numeric_limits<int32_t>::min() ||
      *value > std::numeric_limits<int32_t>::max()) {
    FailValue(name, "TYPE_INT32", *m.value);
    return false;
  }
  *out = static_cast<int32_t>(*value);
  return true;
}

bool ObjectReader::GetInt64(std::string_view name, int64_t* out) {
  Member m = Find(name);
  if (!m.value || RejectList(name, m)) return false;
  std::optional<int64_t> value = IntegralValue(*m.value);
  if (!value) {
    FailValue(name, "TYPE_INT64", *m.value);
    return false;
  }
  *out = *value;
  return true;
}

bool ObjectReader::GetDouble(std::string_view name, double* out) {
  Member m = Find(name);
  if (!m.value || RejectList(name, m)) return false;
  if (m.value->is_number()) {
    *out = m.value->get<double>();
    return true;
  }
  if (m.value->is_string()) {
    const std::string& text = m.value->get_ref<const std::string&>();
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) {
      *out = value;
      return true;
    }
  }
  FailValue(name, "TYPE_DOUBLE", *m.value);
  return false;
}

bool ObjectReader::GetEnumNumber(std::string_view name, const EnumTable& table, int* out) {
  Member m = Find(name);
  if (!m.value || RejectList(name, m)) return false;
  std::optional<int> number;
  if (m.value->is_string()) {
    number = table.NumberOf(m.value->get_ref<const std::string&>());
  } else if (m.value->is_number_integer()) {
    std::optional<int64_t> wide = IntegralValue(*m.value);
    if (wide && *wide >= std::numeric_limits<int>::min() &&
        *wide <= std::numeric_limits<int>::max() && table.NameOf(static_cast<int>(*wide))) {
      number = static_cast<int>(*wide);
    }
  }
  if (!number) {
    FailValue(name, "type.googleapis.com/" + std::string(table.full_name()), *m.value,
              "valid values are " + table.ValidNames());
    return false;
  }
  *out = *number;
  return true;
}

bool ObjectReader::GetDuration(std::string_view name, Duration* out) {
  Member m = Find(name);
  if (!m.value || RejectList(name, m)) return false;
  if (!m.value->is_string()) {
    FailValue(name, kDurationType, *m.value);
    return false;
  }
  StatusOr<Duration> parsed = ParseDuration(m.value->get_ref<const std::string&>());
  if (!parsed.ok()) {
    FailValue(name, kDurationType, *m.value, parsed.status().message());
    return false;
  }
  *out = *parsed;
  return true;
}

bool ObjectReader::GetDuration(std::string_view name, std::optional<Duration>* out) {
  Duration value{};
  if (!GetDuration(name, &value)) return false;
  *out = value;
  return true;
}

bool ObjectReader::GetTimestamp(std::string_view name, Timestamp* out) {
  Member m = Find(name);
  if (!m.value || RejectList(name, m)) return false;
  if (!m.value->is_string()) {
    FailValue(name, kTimestampType, *m.value);
    return false;
  }
  StatusOr<Timestamp> parsed = ParseTimestamp(m.value->get_ref<const std::string&>());
  if (!parsed.ok()) {
    FailValue(name, kTimestampType, *m.value, parsed.status().message());
    return false;
  }
  *out = *parsed;
  return true;
}

bool ObjectReader::GetTimestamp(std::string_view name, std::optional<Timestamp>* out) {
  Timestamp value{};
  if (!GetTimestamp(name, &value)) return false;
  *out = value;
  return true;
}

bool ObjectReader::GetStringList(std::string_view name, std::vector<std::string>* out) {
  Member m = Find(name);
  if (!m.value) return false;
  if (!m.value->is_array()) {
    FailValue(name, "TYPE_STRING", *m.value);
    return false;
  }
  const FieldPath field = path_.Field(name);
  for (size_t i = 0; i < m.value->size(); ++i) {
    const json& item = (*m.value)[i];
    if (!item.is_string()) {
      FailValueAt(field.Index(i), "TYPE_STRING", item);
      return false;
    }
    out->push_back(item.get<std::string>());
  }
  return true;
}

bool ObjectReader::GetStringMap(std::string_view name, std::map<std::string, std::string>* out) {
  Member m = Find(name);
  if (!m.value || RejectList(name, m)) return false;
  if (!m.value->is_object()) {
    FailValue(name, "map<string, string>", *m.value);
    return false;
  }
  const FieldPath field = path_.Field(name);
  for (auto it = m.value->begin(); it != m.value->end(); ++it) {
    if (!it->is_string()) {
      FailValueAt(field.Key(it.key()), "TYPE_STRING", *it);
      return false;
    }
    (*out)[it.key()] = it->get<std::string>();
  }
  return true;
}

bool ObjectReader::GetObject(std::string_view name, std::string_view message_type,
                             const ObjectFn& read) {
  Member m = Find(name);
  if (!m.value || RejectList(name, m)) return false;
  if (!m.value->is_object()) {
    FailValue(name, "type.googleapis.com/" + std::string(message_type), *m.value);
    return false;
  }
  ObjectReader child(*m.value, path_.Field(name));
  child.ignore_unknown_ = ignore_unknown_;
  read(child);
  Status status = child.Finish();
  if (!status.ok()) {
    Fail(std::move(status));
    return false;
  }
  return true;
}

bool ObjectReader::GetObjectList(std::string_view name, std::string_view message_type,
                                 const ObjectListFn& read) {
  Member m = Find(name);
  if (!m.value) return false;
  const std::string type = "type.googleapis.com/" + std::string(message_type);
  if (!m.value->is_array()) {
    FailValue(name, type, *m.value);
    return false;
  }
  const FieldPath field = path_.Field(name);
  for (size_t i = 0; i < m.value->size(); ++i) {
    const json& item = (*m.value)[i];
    if (!item.is_object()) {
      FailValueAt(field.Index(i), type, item);
      return false;
    }
    ObjectReader child(item, field.Index(i));
    child.ignore_unknown_ = ignore_unknown_;
    read(child, i);
    Status status = child.Finish();
    if (!status.ok()) {
      Fail(std::move(status));
      return false;
    }
  }
  return true;
}

bool ObjectReader::Skip(std::string_view name) { return Find(name).value != nullptr; }

Status ObjectReader::Finish() {
  if (!error_.ok() || !object_.is_object() || ignore_unknown_) return error_;
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (std::find(consumed_.begin(), consumed_.end(), &it.key()) != consumed_.end()) continue;
    return InvalidPayload(path_.Field(it.key()), std::string(kPayloadPrefix) + "Unknown name \"" +
                                                     it.key() + "\" at '" + path_.proto() +
                                                     "': Cannot find field.");
  }
  return Status::Ok();
}

}  // namespace trainyard
