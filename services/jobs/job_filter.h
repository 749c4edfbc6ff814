#pragma once
// The parsed form of a customJobs list filter (AIP-160 subset). api/ parses the text into this
// tree, storage/ compiles it to SQL; neither knows the other's syntax.
#include <memory>
#include <string>
#include <vector>

#include "services/model/custom_job.h"

namespace trainyard {

enum class FilterField { kDisplayName, kState, kCreateTime, kLabel };

enum class FilterOp { kEq, kNe, kLt, kLe, kGt, kGe, kHas };

struct FilterComparison {
  FilterField field = FilterField::kDisplayName;
  std::string label_key;  // for kLabel: the k of labels.k
  FilterOp op = FilterOp::kEq;
  // kDisplayName / kLabel value. With kHas, '*' in it is a wildcard; "labels.k:*" is presence.
  std::string text;
  JobState state = JobState::kUnspecified;  // kState
  Timestamp time{};                         // kCreateTime
};

struct FilterExpr {
  enum class Kind { kAnd, kOr, kNot, kCompare };
  Kind kind = Kind::kCompare;
  std::vector<FilterExpr> children;  // kAnd/kOr: ≥2; kNot: 1
  FilterComparison comparison;       // kCompare
};

}  // namespace trainyard
