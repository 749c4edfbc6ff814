#include "api/wire/enums.h"

#include <array>

#include "services/jobs/job_state_names.h"

namespace trainyard {
namespace {

// From the one list of job-state names (services/jobs/job_state_names.h).
constexpr std::array<EnumEntry, kJobStateSpellings.size()> kJobStates = [] {
  std::array<EnumEntry, kJobStateSpellings.size()> out{};
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = EnumEntry{kJobStateSpellings[i].name, static_cast<int>(kJobStateSpellings[i].state)};
  }
  return out;
}();

// Proto order (by number). Deliberately no TPU_V5P/TPU_V6E: they do not exist in the API, and
// accepting them would let a body through that real Vertex rejects.
constexpr std::array<EnumEntry, 19> kAcceleratorTypes = {{
    {"ACCELERATOR_TYPE_UNSPECIFIED", 0},
    {"NVIDIA_TESLA_K80", 1},
    {"NVIDIA_TESLA_P100", 2},
    {"NVIDIA_TESLA_V100", 3},
    {"NVIDIA_TESLA_P4", 4},
    {"NVIDIA_TESLA_T4", 5},
    {"TPU_V2", 6},
    {"TPU_V3", 7},
    {"NVIDIA_TESLA_A100", 8},
    {"NVIDIA_A100_80GB", 9},
    {"TPU_V4_POD", 10},
    {"NVIDIA_L4", 11},
    {"TPU_V5_LITEPOD", 12},
    {"NVIDIA_H100_80GB", 13},
    {"NVIDIA_H100_MEGA_80GB", 14},
    {"NVIDIA_H200_141GB", 15},
    {"NVIDIA_B200", 16},
    {"NVIDIA_GB200", 17},
    {"NVIDIA_RTX_PRO_6000", 18},
}};

constexpr std::array<EnumEntry, 6> kSchedulingStrategies = {{
    {"STRATEGY_UNSPECIFIED", 0},
    {"ON_DEMAND", 1},
    {"LOW_COST", 2},
    {"STANDARD", 3},
    {"SPOT", 4},
    {"FLEX_START", 6},
}};

constexpr std::array<EnumEntry, 4> kReservationAffinityTypes = {{
    {"TYPE_UNSPECIFIED", 0},
    {"NO_RESERVATION", 1},
    {"ANY_RESERVATION", 2},
    {"SPECIFIC_RESERVATION", 3},
}};

// From the one list of resource-state names (services/model/persistent_resource.h).
constexpr std::array<EnumEntry, kResourceStateSpellings.size()> kResourceStates = [] {
  std::array<EnumEntry, kResourceStateSpellings.size()> out{};
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = EnumEntry{kResourceStateSpellings[i].name,
                       static_cast<int>(kResourceStateSpellings[i].state)};
  }
  return out;
}();

constexpr EnumTable kJobStateTable("google.cloud.aiplatform.v1.JobState", kJobStates);
constexpr EnumTable kAcceleratorTypeTable("google.cloud.aiplatform.v1.AcceleratorType",
                                          kAcceleratorTypes);
constexpr EnumTable kSchedulingStrategyTable("google.cloud.aiplatform.v1.Scheduling.Strategy",
                                             kSchedulingStrategies);
constexpr EnumTable kReservationAffinityTypeTable(
    "google.cloud.aiplatform.v1.ReservationAffinity.Type", kReservationAffinityTypes);
constexpr EnumTable kResourceStateTable("google.cloud.aiplatform.v1.PersistentResource.State",
                                        kResourceStates);

template <typename E>
std::string_view NameIn(const EnumTable& table, E value) {
  return table.NameOf(static_cast<int>(value)).value_or("");
}

template <typename E>
std::optional<E> ParseIn(const EnumTable& table, std::string_view name) {
  std::optional<int> number = table.NumberOf(name);
  if (!number) return std::nullopt;
  return static_cast<E>(*number);
}

}  // namespace

std::optional<int> EnumTable::NumberOf(std::string_view name) const {
  for (const EnumEntry& entry : entries_) {
    if (entry.name == name) return entry.number;
  }
  return std::nullopt;
}

std::optional<std::string_view> EnumTable::NameOf(int number) const {
  for (const EnumEntry& entry : entries_) {
    if (entry.number == number) return entry.name;
  }
  return std::nullopt;
}

std::string EnumTable::ValidNames() const {
  std::string names;
  for (const EnumEntry& entry : entries_) {
    if (!names.empty()) names += ", ";
    names += entry.name;
  }
  return names;
}

const EnumTable& JobStateTable() { return kJobStateTable; }
const EnumTable& AcceleratorTypeTable() { return kAcceleratorTypeTable; }
const EnumTable& SchedulingStrategyTable() { return kSchedulingStrategyTable; }
const EnumTable& ReservationAffinityTypeTable() { return kReservationAffinityTypeTable; }
const EnumTable& ResourceStateTable() { return kResourceStateTable; }

std::string_view ResourceStateName(ResourceState state) {
  return NameIn(kResourceStateTable, state);
}

std::string_view JobStateName(JobState state) { return NameIn(kJobStateTable, state); }
std::optional<JobState> ParseJobStateName(std::string_view name) {
  return ParseIn<JobState>(kJobStateTable, name);
}

std::string_view AcceleratorTypeName(AcceleratorType type) {
  return NameIn(kAcceleratorTypeTable, type);
}
std::optional<AcceleratorType> ParseAcceleratorTypeName(std::string_view name) {
  return ParseIn<AcceleratorType>(kAcceleratorTypeTable, name);
}

std::string_view SchedulingStrategyName(SchedulingStrategy strategy) {
  return NameIn(kSchedulingStrategyTable, strategy);
}
std::optional<SchedulingStrategy> ParseSchedulingStrategyName(std::string_view name) {
  return ParseIn<SchedulingStrategy>(kSchedulingStrategyTable, name);
}

std::string_view ReservationAffinityTypeName(ReservationAffinityType type) {
  return NameIn(kReservationAffinityTypeTable, type);
}
std::optional<ReservationAffinityType> ParseReservationAffinityTypeName(std::string_view name) {
  return ParseIn<ReservationAffinityType>(kReservationAffinityTypeTable, name);
}

}  // namespace trainyard
