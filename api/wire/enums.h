#pragma once
// Name <-> number tables for the proto enums of the CustomJob wire. One table per enum serves the
// JSON codecs (names out, names or numbers in), the list-filter parser and error messages that
// list the valid names, so a new enum value is added in exactly one place.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "services/model/custom_job.h"
#include "services/model/persistent_resource.h"

namespace trainyard {

struct EnumEntry {
  std::string_view name;  // exactly as the proto spells it, e.g. "NVIDIA_H100_MEGA_80GB"
  int number;             // the proto number, which clients may send instead of the name
};

// One proto enum: its full name (for "type.googleapis.com/..." in errors) and its values.
class EnumTable {
 public:
  constexpr EnumTable(std::string_view full_name, std::span<const EnumEntry> entries)
      : full_name_(full_name), entries_(entries) {}

  // e.g. "google.cloud.aiplatform.v1.AcceleratorType".
  std::string_view full_name() const { return full_name_; }
  std::span<const EnumEntry> entries() const { return entries_; }

  std::optional<int> NumberOf(std::string_view name) const;
  std::optional<std::string_view> NameOf(int number) const;
  // "A, B, C" in proto order, for error messages.
  std::string ValidNames() const;

 private:
  std::string_view full_name_;
  std::span<const EnumEntry> entries_;
};

const EnumTable& JobStateTable();
const EnumTable& AcceleratorTypeTable();
const EnumTable& SchedulingStrategyTable();
const EnumTable& ReservationAffinityTypeTable();
const EnumTable& ResourceStateTable();  // PersistentResource.State
std::string_view ResourceStateName(ResourceState state);

// The *Name functions return "" for a value outside the enum (only reachable by a cast); the
// Parse*Name functions accept the exact proto name only.
std::string_view JobStateName(JobState state);
std::optional<JobState> ParseJobStateName(std::string_view name);

std::string_view AcceleratorTypeName(AcceleratorType type);
std::optional<AcceleratorType> ParseAcceleratorTypeName(std::string_view name);

std::string_view SchedulingStrategyName(SchedulingStrategy strategy);
std::optional<SchedulingStrategy> ParseSchedulingStrategyName(std::string_view name);

std::string_view ReservationAffinityTypeName(ReservationAffinityType type);
std::optional<ReservationAffinityType> ParseReservationAffinityTypeName(std::string_view name);

}  // namespace trainyard
