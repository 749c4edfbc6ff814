#pragma once
// Strict proto3-JSON reading, shared by every decoder of the wire (CustomJob today,
// PersistentResource and Operation later). The proto3 JSON mapping lets parsers accept both the
// lowerCamelCase json_name and the snake_case proto name, `null` for "not set", int64 as number or
// string, and enums as name or number; Vertex additionally rejects unknown fields. Every error is
// an INVALID_ARGUMENT worded like Vertex's front end, so clients see the messages they know, with
// a camelCase field violation path. Nothing here throws.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/wire/enums.h"
#include "services/status.h"
#include "services/time.h"

namespace trainyard {

// RFC 3339 in UTC with "Z" and 0, 3 or 6 fraction digits (as protobuf does; Timestamp has
// microsecond precision), e.g. "2024-01-02T03:04:05.120Z".
std::string FormatTimestamp(Timestamp t);
// Protobuf's Duration JSON form: seconds with 0, 3, 6 or 9 fraction digits, e.g. "3600s",
// "1.500s", "-0.000000100s".
std::string FormatDuration(Duration d);
// RFC 3339 with "Z" or a numeric offset and 0-9 fraction digits, years 0001-9999. Digits below
// the microsecond are truncated, since Timestamp cannot hold them.
StatusOr<Timestamp> ParseTimestamp(std::string_view text);
// "-?<digits>(.<1-9 digits>)?s". Negative values parse; rejecting them is validation's job.
StatusOr<Duration> ParseDuration(std::string_view text);

// The proto spelling of a lowerCamelCase JSON name or path: "workerPoolSpecs[0].replicaCount" ->
// "worker_pool_specs[0].replica_count". Text inside [...] is kept as is.
std::string ToSnakeCase(std::string_view json_name);

// A location in a request body in both spellings: json() is the camelCase path used for field
// violations ("jobSpec.workerPoolSpecs[0]", "" for the root), proto() is the snake_case path that
// Vertex's messages quote ("custom_job.job_spec.worker_pool_specs[0]").
class FieldPath {
 public:
  // proto_root names the root message ("custom_job"); json_path is a camelCase path below it.
  explicit FieldPath(std::string proto_root, std::string_view json_path = "");

  FieldPath Field(std::string_view json_name) const;
  FieldPath Index(size_t index) const;
  FieldPath Key(std::string_view map_key) const;  // map entries: "labels.team"

  const std::string& json() const { return json_; }
  const std::string& proto() const { return proto_; }

 private:
  struct Spelled {};  // both spellings given; keeps this apart from the public constructor
  FieldPath(Spelled, std::string json, std::string proto)
      : json_(std::move(json)), proto_(std::move(proto)) {}

  std::string json_;
  std::string proto_;
};

// INVALID_ARGUMENT with `message`, plus a violation at field.json() (none for the root).
Status InvalidPayload(const FieldPath& field, std::string message);

// Reads one JSON object. Each Get* looks the field up by its camelCase name or snake_case twin,
// marks it consumed and returns true when it was present, non-null and valid (only then is *out
// written). A missing or null field returns false and is not an error. The first error is kept
// and later getters do nothing; Finish() returns it, or else reports the first unconsumed key.
class ObjectReader {
 public:
  using ObjectFn = std::function<void(ObjectReader&)>;
  using ObjectListFn = std::function<void(ObjectReader&, size_t index)>;

  // Keeps a reference: `object` must outlive the reader. A non-object is recorded as an error.
  ObjectReader(const nlohmann::json& object, FieldPath path);
  ObjectReader(const ObjectReader&) = delete;
  ObjectReader& operator=(const ObjectReader&) = delete;

  bool GetString(std::string_view name, std::string* out);
  bool GetBool(std::string_view name, bool* out);
  // JSON integer, integral float or decimal string, range-checked.
  bool GetInt32(std::string_view name, int32_t* out);
  bool GetInt64(std::string_view name, int64_t* out);
  // JSON number (proto3 JSON also allows a decimal string for a double).
  bool GetDouble(std::string_view name, double* out);
  // Enum name, or a JSON integer that is a value of `table`.
  bool GetEnumNumber(std::string_view name, const EnumTable& table, int* out);
  template <typename E>
  bool GetEnum(std::string_view name, const EnumTable& table, E* out) {
    int number = 0;
    if (!GetEnumNumber(name, table, &number)) return false;
    *out = static_cast<E>(number);
    return true;
  }
  bool GetDuration(std::string_view name, Duration* out);
  bool GetDuration(std::string_view name, std::optional<Duration>* out);
  bool GetTimestamp(std::string_view name, Timestamp* out);
  bool GetTimestamp(std::string_view name, std::optional<Timestamp>* out);
  // Appends the elements to *out.
  bool GetStringList(std::string_view name, std::vector<std::string>* out);
  // Inserts the entries into *out (map<string, string>).
  bool GetStringMap(std::string_view name, std::map<std::string, std::string>* out);
  // A nested message: `read` gets a reader for it, which is then finished (unknown keys checked).
  // message_type is the proto full name, e.g. "google.cloud.aiplatform.v1.MachineSpec".
  bool GetObject(std::string_view name, std::string_view message_type, const ObjectFn& read);
  // A repeated message: `read` is called once per element, in order; null elements are errors.
  bool GetObjectList(std::string_view name, std::string_view message_type,
                     const ObjectListFn& read);
  // Consumes a field without decoding it (any JSON value), e.g. google.rpc.Status.details.
  bool Skip(std::string_view name);

  // Unknown keys are then accepted here and in every nested reader: a client reading a newer
  // server's responses keeps the raw JSON for them rather than failing (Vertex itself rejects
  // them).
  void IgnoreUnknownFields() { ignore_unknown_ = true; }

  // Records `status` unless an error is already recorded.
  void Fail(Status status);
  bool ok() const { return error_.ok(); }
  const FieldPath& path() const { return path_; }

  // The first error, else INVALID_ARGUMENT for the first unknown key (in key order):
  //   Invalid JSON payload received. Unknown name "fooBar" at 'custom_job.job_spec': Cannot find
  //   field.
  // with violation "jobSpec.fooBar".
  Status Finish();

 private:
  struct Member {
    const nlohmann::json* value = nullptr;  // null when absent, JSON null, or after an error
    std::string_view key;                   // the spelling the client used
  };

  Member Find(std::string_view name);
  bool RejectList(std::string_view name, const Member& member);
  void FailValue(std::string_view name, std::string_view type, const nlohmann::json& value,
                 std::string_view detail = "");
  void FailValueAt(const FieldPath& at, std::string_view type, const nlohmann::json& value,
                   std::string_view detail = "");

  const nlohmann::json& object_;
  FieldPath path_;
  Status error_;
  // The keys read, as the object's own (it outlives the reader): a few a message, so a vector.
  std::vector<const std::string*> consumed_;
  bool underscored_keys_ = false;  // some key could be a snake_case spelling
  bool ignore_unknown_ = false;
};

}  // namespace trainyard
